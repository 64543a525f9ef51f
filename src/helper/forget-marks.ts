// A caller that continues a chat itself while no helper runs has nobody to tell, yet a
// first turn running then records its new chat through the helper it starts at its end
// (hand-off.ts), and that may be the very chat the caller continued. So the caller's line
// leaves a mark in the runtime dir: a time on the monotonic clock before which no turn
// may record. A helper that forgot chats leaves one as it stops, for the turns that read
// them before and outlive it. The next helper takes the marks as it begins to listen,
// before any record can reach it. A mark holds a time only, never a chat ID: the cache
// stays in memory.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { monotonicMs } from '../monotonic.js';
import type { RuntimePaths } from './paths.js';

const MARK_PREFIX = 'forget-before.';
/** A mark is one short line; anything longer is not one of ours. */
const MARK_MAX_BYTES = 64;

/**
 * A mark's time; undefined for one not written whole (its line has no end yet: an
 * empty or cut-off file must not read as an earlier time) or not a plain file (a FIFO
 * would block the helper's start). Throws when it is gone, or a symbolic link.
 */
function readMark(file: string): number | undefined {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(MARK_MAX_BYTES);
    const text = buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, MARK_MAX_BYTES, 0));
    const line = /^(\d+(?:\.\d+)?)\n$/.exec(text);
    return line ? Number(line[1]) : undefined;
  } finally {
    fs.closeSync(fd);
  }
}

function marks(paths: RuntimePaths): string[] {
  return fs
    .readdirSync(paths.dir)
    .filter((name) => name.startsWith(MARK_PREFIX))
    .map((name) => path.join(paths.dir, name));
}

/**
 * Leaves a mark refusing the records of turns started by `now`, then removes the other
 * marks it makes redundant (no later), so that lines run with no helper do not pile them up.
 * Throws what stopped it (the dir gone, unwritable).
 */
export function markForgetAll(paths: RuntimePaths, now: number): void {
  const own = path.join(paths.dir, `${MARK_PREFIX}${randomUUID()}`);
  fs.writeFileSync(own, `${now}\n`, { flag: 'wx', mode: 0o600 });
  for (const file of marks(paths)) {
    if (file === own) continue;
    try {
      const time = readMark(file);
      if (time !== undefined && time <= now) fs.rmSync(file, { force: true });
    } catch {
      // Taken meanwhile by a helper.
    }
  }
}

/**
 * Leaves a mark refusing the turns running now, where one could be running: false with
 * no runtime dir (a run makes it as it begins, so none is). Throws what stopped it.
 */
export function markForgetAllNow(paths: RuntimePaths): boolean {
  if (!fs.existsSync(paths.dir)) return false;
  markForgetAll(paths, monotonicMs());
  return true;
}

/**
 * Takes (reads and removes) every mark: the latest time they refuse, at most the clock's
 * reading once they are read; undefined when there is none. A mark not written whole, not
 * a plain file, or dated after now (left from before the machine's last start, when the
 * clock began anew) counts as now: refusing every turn already running costs at most their
 * next turns' resume.
 */
export function takeForgetMarks(paths: RuntimePaths, clock: () => number = monotonicMs): number | undefined {
  let files: string[];
  try {
    files = marks(paths);
  } catch {
    return undefined;
  }
  const times: Array<number | undefined> = [];
  for (const file of files) {
    try {
      times.push(readMark(file));
    } catch (error) {
      // Removed meanwhile by a line it made redundant; anything else (a symbolic link) is not read as a time.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      times.push(undefined);
    }
    try {
      fs.rmSync(file, { force: true });
    } catch {
      // Left for the next helper, where it refuses only turns started before it was written.
    }
  }
  if (times.length === 0) return undefined;
  const now = clock();
  return Math.max(...times.map((time) => Math.min(time ?? now, now)));
}
