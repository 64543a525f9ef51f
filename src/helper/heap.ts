// The helper's JS heap: a process that lives for hours holding about 10 MiB of packed
// digests should not also hold tens of MiB of garbage and code. Its settings are V8
// flags set at run time from the helper's entry: on Node's command line they would
// cost the helper Node's built-in code cache (about 9 ms of its start), and these
// three take effect whenever they are set.
import v8 from 'node:v8';
import vm from 'node:vm';

/** Heap growth since the last collection that makes the next quiet moment collect. */
const COMPACT_GROWTH = 1024 * 1024;

let collect: (() => void) | undefined;
let compactedAt = 0;

/** For the helper process only: a process that merely hosts a HelperServer (a test) keeps its own settings. */
export function tuneHelperHeap(): void {
  // The young generation stays at its first 1 MiB semi-spaces: under load V8 grows them to
  // 16 MiB, all of it resident from then on.
  v8.setFlagsFromString('--semi-space-growth-factor=1');
  // No optimizing compiler: the helper's work is mostly JSON, hashing, hex and sockets in
  // Node's native code, and optimizing its few hot functions made 3.6 MiB more of Node's
  // binary resident, for about a sixth less CPU a request (some 20 µs).
  v8.setFlagsFromString('--no-opt');
  // Collecting garbage on demand without a command-line flag: a context made after the flag has `gc`.
  v8.setFlagsFromString('--expose-gc');
  const gc: unknown = vm.runInNewContext('typeof gc === "function" ? gc : undefined');
  // Should a Node ever refuse, the helper runs as before, collecting when V8 decides.
  if (typeof gc === 'function') collect = gc as () => void;
  compactedAt = v8.getHeapStatistics().total_physical_size;
}

/**
 * Gives back what a burst of requests left behind, when the heap grew by over 1 MiB
 * since the last time: V8 would otherwise keep it until its memory reducer runs, 8 s
 * or more after the last allocation. The first collection frees the garbage, the
 * second the pages it was on (one alone left 4 MiB more resident after benchmark 5's
 * load: 62.6 against 58.3 MiB). Some 10 ms of CPU, at most once per burst.
 */
export function compactHeap(): void {
  if (!collect || v8.getHeapStatistics().total_physical_size < compactedAt + COMPACT_GROWTH) return;
  collect();
  collect();
  compactedAt = v8.getHeapStatistics().total_physical_size;
}
