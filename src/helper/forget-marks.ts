// A caller that continues a chat itself while no helper runs (or none answers it) has
// nobody to tell, yet a first turn running then records its new chat through the helper it
// starts at its end (hand-off.ts), and that may be the very chat the caller continued. So
// the caller's line leaves a mark in the runtime dir: a time on the monotonic clock before
// which no turn may record. And what a helper forgot lives in its memory, yet a turn that
// read a forgotten chat may outlive the helper and record through the next one: so a helper
// notes when it last forgot in `forgot-by.<pid>`, which counts as a mark for any other
// helper that takes marks, whether that process is gone (stopped, killed) or lingers
// (replaced while stalled, or in its last second): only the helper that serves the socket
// takes marks, and one replaced must not take its forgets with it. A helper takes the marks
// as it begins to listen, before any record can reach it, before it answers a lookup or a
// lease, and at each sweep. A mark holds a time and the boot it counts from, never a chat
// ID: the cache stays in memory.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { monotonicMs } from '../monotonic.js';
import { MARK_PREFIX, NOTE_PREFIX, noteOwner, type RuntimePaths } from './paths.js';

/** A mark is one short line; anything longer is not one of ours. */
const MARK_MAX_BYTES = 96;

let boot: string | undefined;

/**
 * The machine's boot, which the monotonic clock counts from: a mark of another boot
 * concerns turns that ended with it. '' where the system does not say (the clock's
 * bound then stands in, see takeForgetMarks). Read when first needed: most runs never are.
 */
function bootId(): string {
  if (boot === undefined) {
    try {
      const id = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
      boot = /^[0-9a-f-]{1,64}$/.test(id) ? id : '';
    } catch {
      boot = '';
    }
  }
  return boot;
}

/**
 * A mark's time; 'garbled' for one not written whole (its line has no end yet: an empty
 * or cut-off file must not read as an earlier time) or not a plain file (a FIFO would
 * block the helper's start); 'void' for one of another boot. Throws when it is gone, or a
 * symbolic link.
 */
function readMark(file: string): number | 'garbled' | 'void' {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) return 'garbled';
    const buffer = Buffer.alloc(MARK_MAX_BYTES);
    const text = buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, MARK_MAX_BYTES, 0));
    const line = /^(\d+(?:\.\d+)?) ([0-9a-f-]*)\n$/.exec(text);
    if (!line) return 'garbled';
    return line[2] === bootId() ? Number(line[1]) : 'void';
  } finally {
    fs.closeSync(fd);
  }
}

const isMark = (name: string): boolean => name.startsWith(MARK_PREFIX);

/**
 * A mark, or another helper's note; this process's own too as it starts (it has forgotten
 * nothing yet: a note with its pid is a gone helper's whose pid came back).
 */
const isMarkOrTheirNote =
  (starting: boolean) =>
  (name: string): boolean => {
    const pid = noteOwner(name);
    return isMark(name) || (pid !== undefined && (starting || pid !== process.pid));
  };

/** The runtime dir's files whose names `keep` picks, as paths. */
function listed(paths: RuntimePaths, keep: (name: string) => boolean): string[] {
  return fs
    .readdirSync(paths.dir)
    .filter(keep)
    .map((name) => path.join(paths.dir, name));
}

/**
 * Notes, for when this helper is gone, that it last forgot chats at `time` (a mark then).
 * Rewritten in place: one cut short by a crash reads as not written whole, which counts as
 * the time it is taken. Throws what stopped it.
 */
export function noteForgot(paths: RuntimePaths, time: number): void {
  const fd = openNote(path.join(paths.dir, `${NOTE_PREFIX}${process.pid}`));
  try {
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, `${time} ${bootId()}\n`, 0);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The note opened for writing in place, never through what someone who could write in the
 * runtime dir while it was open may have left under its name: a symbolic link (we would
 * overwrite the file it leads to), a FIFO (we would block), a file of theirs or one linked
 * elsewhere. Such a thing is removed and the note created anew. Throws what stopped it.
 */
function openNote(file: string): number {
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  try {
    const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
    const stat = fs.fstatSync(fd);
    if (stat.isFile() && stat.nlink === 1 && stat.uid === process.getuid?.()) return fd;
    fs.closeSync(fd);
  } catch {
    // A link (ELOOP), a FIFO nobody reads (ENXIO): removed below; anything else, the exclusive create says.
  }
  fs.rmSync(file, { force: true });
  return fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
}

/**
 * Leaves a mark refusing the records of turns started by `now`, then removes the other
 * marks it makes redundant (no later, or of another boot), so that lines run with no
 * helper do not pile them up. Returns its path; throws what stopped it (the dir gone, unwritable).
 */
export function markForgetAll(paths: RuntimePaths, now: number): string {
  const own = path.join(paths.dir, `${MARK_PREFIX}${randomUUID()}`);
  fs.writeFileSync(own, `${now} ${bootId()}\n`, { flag: 'wx', mode: 0o600 });
  for (const file of listed(paths, isMark)) {
    if (file === own) continue;
    try {
      const mark = readMark(file);
      if (mark === 'void' || (typeof mark === 'number' && mark <= now)) fs.rmSync(file, { force: true });
    } catch {
      // Taken meanwhile by a helper.
    }
  }
  return own;
}

/**
 * Leaves a mark refusing the turns running now, where one could be running: its path, or
 * null with no runtime dir (a run makes it as it begins, so none is). Throws what stopped it.
 */
export function markForgetAllNow(paths: RuntimePaths): string | null {
  if (!fs.existsSync(paths.dir)) return null;
  return markForgetAll(paths, monotonicMs());
}

/** Removes a mark this process left, once a helper has been told directly. */
export function removeMark(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Taken by a helper meanwhile, or left for the next, where it refuses only turns started before it.
  }
}

/**
 * Takes (reads and removes) every mark, and every other helper's note (`starting`: this process's
 * too, see isMarkOrTheirNote): the latest time they refuse, at most the clock's
 * reading once they are read; undefined when there is none. A mark not written whole or
 * not a plain file counts as now, and so does one dated after now where the system names
 * no boot (left from before the machine's last start, when the clock began anew): refusing
 * every turn already running costs at most their next turns' resume. A mark of another boot
 * is removed and counts for nothing: its turns ended with that boot.
 */
export function takeForgetMarks(
  paths: RuntimePaths,
  { starting = false, clock = monotonicMs }: { starting?: boolean; clock?: () => number } = {},
): number | undefined {
  let files: string[];
  try {
    files = listed(paths, isMarkOrTheirNote(starting));
  } catch (error) {
    // No folder, no marks; one that cannot be read (EMFILE...) may hold some: every turn running now is refused.
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : clock();
  }
  // Folded as read: a spread of every time would overflow the stack past about 100,000 marks.
  let latest: number | 'garbled' | undefined;
  for (const file of files) {
    let mark: number | 'garbled' | 'void';
    try {
      mark = readMark(file);
    } catch (error) {
      // Removed meanwhile by a line it made redundant; anything else (a symbolic link) is not read as a time.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      mark = 'garbled';
    }
    try {
      fs.rmSync(file, { force: true });
    } catch {
      // Not ours to remove (a folder someone made): counted, it would refuse every turn at every sweep.
      continue;
    }
    if (mark === 'void') continue;
    latest = latest === 'garbled' || mark === 'garbled' ? 'garbled' : Math.max(latest ?? mark, mark);
  }
  if (latest === undefined) return undefined;
  const now = clock();
  return latest === 'garbled' ? now : Math.min(latest, now);
}
