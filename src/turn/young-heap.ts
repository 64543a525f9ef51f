// A run that reads a large transcript keeps V8's young generation at the size it
// started with (1 MiB semi-spaces). Parsing and hashing 10,000 messages makes V8 grow
// it toward 16 MiB ones, every page of that fresh memory to fault in (page faults are
// most of a long turn's system time), while the parsed messages survive to the old
// generation either way. Set at run time: on the command line such a flag costs the
// run Node's built-in code cache. Set, it still costs that cache to any built-in module
// loaded after it (about twice its compile time): it is set once the transcript is read,
// when a turn has loaded the built-ins it uses (none loads later today; keep it so).
import type * as V8 from 'node:v8';
import { builtin } from '../lazy-builtin.js';

/** Below this a transcript never grows the young generation much: loading node:v8 would cost a small turn more than it saves. */
const LARGE_INPUT_BYTES = 1024 * 1024;

/** Called once the transcript's size is known, before it is parsed. */
export function boundYoungHeap(inputBytes: number): void {
  if (inputBytes < LARGE_INPUT_BYTES) return;
  builtin<typeof V8>('node:v8').setFlagsFromString('--semi-space-growth-factor=1');
}
