// Where the helper's socket and start lock live, and making sure that folder is
// private: created 0700, and an existing one that someone else could have
// prepared (a symlink, not a directory, another owner) is refused, never used.
import fs from 'node:fs';
import path from 'node:path';
import { envValue } from '../env-value.js';

export const SOCKET_NAME = 'helper.sock';
export const LOCK_NAME = 'helper.lock';
/** The names of the other files the runtime dir holds (README, "Its files"): hand-off.ts and forget-marks.ts. */
export const MARKER_PREFIX = 'hand-off.';
export const MARK_PREFIX = 'forget-before.';
export const NOTE_PREFIX = 'forgot-by.';
/** sun_path is 104 bytes on macOS/BSD (108 on Linux), including the closing NUL. */
export const MAX_SOCKET_PATH_BYTES = 103;

/** The helper's socket in the folder `dir` (an absolute path). */
export const socketIn = (dir: string): string => path.join(path.resolve(dir), SOCKET_NAME);
/** Whether a socket path can be bound: the runtime paths and the runtimeDir setting hold it to this alike. */
export const fitsSocketLimit = (socket: string): boolean => Buffer.byteLength(socket) <= MAX_SOCKET_PATH_BYTES;

export interface RuntimePaths {
  dir: string;
  socket: string;
  lock: string;
  /** Which rule chose `dir`, to name it in error messages: a variable, tmpdir, or the config file that set runtimeDir. */
  source: 'CURSOR_RESUME_RUNTIME_DIR' | 'XDG_RUNTIME_DIR' | 'tmpdir' | { file: string };
}

/**
 * Put on an environment (turn/helper-env.ts) whose CURSOR_RESUME_RUNTIME_DIR is the config
 * file's runtimeDir: the file, so that messages name it. A symbol key: no child inherits it.
 */
export const RUNTIME_DIR_FILE = Symbol('the config file that set runtimeDir');

const fileOf = (env: NodeJS.ProcessEnv): unknown => (env as Record<symbol, unknown>)[RUNTIME_DIR_FILE];

/** A source as error messages name it. */
const chosenBy = (source: RuntimePaths['source']): string =>
  typeof source === 'string' ? source : `the runtimeDir setting in ${source.file}`;

/** What to change to choose another folder. */
const toChange = (source: RuntimePaths['source']): string =>
  typeof source === 'string' ? 'CURSOR_RESUME_RUNTIME_DIR' : 'runtimeDir (cursor-resume config set runtimeDir)';

export class RuntimeDirError extends Error {
  override name = 'RuntimeDirError';
}

/**
 * Resolves the runtime paths from the environment, always to an absolute dir: the
 * launcher hands that dir to the helper it starts, which runs from `/`, so both
 * find the same socket. Touches nothing on disk.
 */
export function runtimePaths(env: NodeJS.ProcessEnv = process.env): RuntimePaths {
  const explicit = envValue(env.CURSOR_RESUME_RUNTIME_DIR);
  const xdg = envValue(env.XDG_RUNTIME_DIR);
  let dir: string;
  let source: RuntimePaths['source'];
  if (explicit) {
    // As the config setting: a relative dir would name another folder from every working directory.
    if (!path.isAbsolute(explicit)) {
      throw new RuntimeDirError(
        `CURSOR_RESUME_RUNTIME_DIR is ${JSON.stringify(explicit)}, a relative path; set it to an absolute one, e.g. /tmp/cursor-resume-${currentUid()}`,
      );
    }
    dir = path.resolve(explicit);
    const file = fileOf(env);
    source = typeof file === 'string' ? { file } : 'CURSOR_RESUME_RUNTIME_DIR';
  } else if (xdg && path.isAbsolute(xdg)) {
    dir = path.join(xdg, 'cursor-resume');
    source = 'XDG_RUNTIME_DIR';
  } else {
    // A relative TMPDIR means what it means to mktemp: a folder under the current directory.
    dir = path.resolve(tmpdirOf(env), `cursor-resume-${currentUid()}`);
    source = 'tmpdir';
  }
  const socket = socketIn(dir);
  if (!fitsSocketLimit(socket)) {
    throw new RuntimeDirError(
      `the helper socket path ${socket} is ${Buffer.byteLength(socket)} bytes long, over the Unix limit of ${MAX_SOCKET_PATH_BYTES}` +
        ` (runtime dir chosen by ${chosenBy(source)}). Set ${toChange(source)} to a shorter directory, e.g. /tmp/cursor-resume-${currentUid()}.`,
    );
  }
  return { dir, socket, lock: path.join(dir, LOCK_NAME), source };
}

export interface DirCheckOptions {
  /** The user that must own the folder (default: this process's uid). Tests inject another. */
  uid?: number;
  /** Make a folder of ours that is open to others private (default). A look that must change nothing passes false. */
  tighten?: boolean;
}

/**
 * Creates the runtime dir (0700) or checks an existing one (checkRuntimeDir): one of
 * ours open to group or others is tightened to 0700, a shared one refused.
 * Throws RuntimeDirError saying what is wrong and what to do.
 */
export function ensureRuntimeDir(paths: RuntimePaths, options: DirCheckOptions = {}): void {
  refuseOpenAbove(paths);
  try {
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new RuntimeDirError(`cannot create the helper runtime dir ${paths.dir}: ${(error as Error).message}. ${hint(paths)}`);
    }
    // EEXIST from a non-directory (a file, a dangling symlink) is reported by the check below.
  }
  if (checkRuntimeDir(paths, options) === 'missing') {
    throw new RuntimeDirError(`the helper runtime dir ${paths.dir} vanished while it was being created. ${hint(paths)}`);
  }
}

/**
 * Checks an existing runtime dir without creating it ('missing' if there is
 * none, so `helper status` never creates folders). Tightens a folder we own that
 * is open to others and holds only cursor-resume's files, sticky bit unset (unless
 * told not to: a helper would tighten it as it starts); refuses anything else.
 */
export function checkRuntimeDir(paths: RuntimePaths, options: DirCheckOptions = {}): 'ok' | 'missing' {
  const uid = options.uid ?? currentUid();
  refuseOpenAbove(paths);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(paths.dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw new RuntimeDirError(`cannot inspect the helper runtime dir ${paths.dir}: ${(error as Error).message}. ${hint(paths)}`);
  }
  if (stat.isSymbolicLink()) {
    throw new RuntimeDirError(
      `refusing the helper runtime dir ${paths.dir}: it is a symbolic link, which someone else may control. Remove it, or ${hint(paths, true)}`,
    );
  }
  if (!stat.isDirectory()) {
    throw new RuntimeDirError(
      `refusing the helper runtime dir ${paths.dir}: it exists but is not a directory. Remove it, or ${hint(paths, true)}`,
    );
  }
  if (stat.uid !== uid) {
    throw new RuntimeDirError(
      `refusing the helper runtime dir ${paths.dir}: it is owned by uid ${stat.uid}, not by you (uid ${uid}). ${hint(paths)}`,
    );
  }
  const mode = (stat.mode & 0o7777).toString(8);
  if ((stat.mode & 0o077) !== 0) {
    // Only a folder that is evidently ours is made private: a sticky one (cursor-resume never makes
    // one) or one holding anything else is someone's shared folder (/tmp or /run named by root, an
    // empty one too, a home), whose mode is not ours to change.
    const sticky = (stat.mode & 0o1000) !== 0;
    const stranger = sticky ? undefined : strangerIn(paths.dir);
    if (sticky || stranger !== undefined) {
      const why = sticky ? 'is sticky, as a shared folder is' : `holds files that are not cursor-resume's (${JSON.stringify(stranger)})`;
      throw new RuntimeDirError(
        `refusing the helper runtime dir ${paths.dir}: it is open to other users (mode ${mode}) and ${why}, so it is not made private; choose a folder of its own. ${hint(paths)}`,
      );
    }
  }
  if ((stat.mode & 0o077) !== 0 && options.tighten !== false) {
    try {
      fs.chmodSync(paths.dir, 0o700);
    } catch (error) {
      throw new RuntimeDirError(
        `the helper runtime dir ${paths.dir} is open to other users (mode ${mode}) and could not be made private: ${(error as Error).message}. ${hint(paths)}`,
      );
    }
    const after = fs.lstatSync(paths.dir);
    if (!after.isDirectory() || after.isSymbolicLink() || after.uid !== uid || (after.mode & 0o077) !== 0) {
      throw new RuntimeDirError(`the helper runtime dir ${paths.dir} changed while it was being made private; refusing it. ${hint(paths)}`);
    }
  }
  return 'ok';
}

/**
 * Refuses a runtime dir below a folder every user may write that is not sticky: anyone may rename
 * ours away there and put a folder of their own, with their own listener, in its place between our
 * check and our connect. A sticky one (/tmp) lets only its owner rename an entry.
 */
function refuseOpenAbove(paths: RuntimePaths): void {
  const folder = openFolderAbove(paths.dir);
  if (folder !== null) {
    throw new RuntimeDirError(
      `refusing the helper runtime dir ${paths.dir}: ${folder}, a folder above it, is writable by every user and not sticky, so anyone may put a folder of their own in its place. ${hint(paths)}`,
    );
  }
}

/**
 * The nearest folder above `file` that every user may write and is not sticky, or null: anyone may
 * rename what lies below such a folder and put their own in its place (the runtime dir, the config file).
 * The path as written, then the real one: a symbolic link on the way may lead below such a folder.
 */
export function openFolderAbove(file: string): string | null {
  const written = path.dirname(file);
  let real: string | undefined;
  try {
    real = fs.realpathSync.native(written);
  } catch {
    // Not there (yet), or not reachable: the walk up as written is all there is to check.
  }
  for (const start of real === undefined || real === written ? [written] : [written, real]) {
    for (let folder = start; ; folder = path.dirname(folder)) {
      const stat = statOrNone(folder);
      if (stat !== undefined && stat.mode & fs.constants.S_IWOTH && !(stat.mode & 0o1000)) return folder;
      if (path.dirname(folder) === folder) break;
    }
  }
  return null;
}

/**
 * A folder's stat, or undefined for one that cannot be looked at (missing, a file on the way, no
 * search permission): nothing below it can be reached either, and the look at the runtime dir itself
 * then says why in its own words ('cannot inspect', 'cannot create'), not as an unexpected error.
 */
function statOrNone(folder: string): fs.Stats | undefined {
  try {
    return fs.statSync(folder, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/** The runtime dirs whose identity this process took, each held open (see runtimeDirId). */
const pinned = new Map<string, number>();

/**
 * The runtime dir's identity (device and inode), undefined when it is not there: another once the
 * folder was removed and made again (a logout removes $XDG_RUNTIME_DIR). The forgets a record must
 * honour are noted there (forget-marks.ts), so a turn records only into the folder it began with.
 * The first look opens the folder and keeps it open for the life of this process: its inode then
 * stays taken, so a folder made again in its place cannot get its number. (Not its birth time: where
 * there is no statx, Node gives the change time in its place, which moves with every entry added.)
 */
export function runtimeDirId(dir: string): string | undefined {
  try {
    if (!pinned.has(dir)) {
      const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW);
      pinned.set(dir, fd);
      const stat = fs.fstatSync(fd, { bigint: true });
      return `${stat.dev}:${stat.ino}`;
    }
    const stat = fs.lstatSync(dir, { bigint: true });
    return `${stat.dev}:${stat.ino}`;
  } catch {
    return undefined;
  }
}

/** Why a turn records nothing into a runtime dir that is not the one it began with. */
export const replacedDirReason = (dir: string): string =>
  `the runtime folder ${dir} was removed or replaced while the turn ran, and with it what it noted of chats forgotten meanwhile`;

/** The pid in the name of a helper's forgot-by note (forget-marks.ts), or undefined for any other name. */
export function noteOwner(name: string): number | undefined {
  const pid = name.startsWith(NOTE_PREFIX) ? name.slice(NOTE_PREFIX.length) : '';
  return /^\d+$/.test(pid) ? Number(pid) : undefined;
}

/** Whether a name is one of the files cursor-resume keeps in its runtime dir, start-lock takeovers (start-lock.ts) included. */
function isOwnFile(name: string): boolean {
  const after = (prefix: string): string => (name.startsWith(prefix) ? name.slice(prefix.length) : '');
  return (
    name === SOCKET_NAME ||
    name === LOCK_NAME ||
    /^.+\.stale$/.test(after(`${LOCK_NAME}.`)) ||
    after(MARKER_PREFIX) !== '' ||
    after(MARK_PREFIX) !== '' ||
    noteOwner(name) !== undefined
  );
}

/** The first name in `dir` that is none of cursor-resume's files, or undefined (read until one is found). */
function strangerIn(dir: string): string | undefined {
  let listing: fs.Dir;
  try {
    listing = fs.opendirSync(dir);
  } catch (error) {
    throw new RuntimeDirError(`cannot read the helper runtime dir ${dir}: ${(error as Error).message}`);
  }
  try {
    for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
      if (!isOwnFile(entry.name)) return entry.name;
    }
    return undefined;
  } finally {
    listing.closeSync();
  }
}

/**
 * Looks at what sits at the socket path before anyone talks to it. A file owned by another
 * user may be someone else's listener, waiting to read our hashes or steer our chats; a
 * symbolic link may lead anywhere; a directory is never ours to remove. Returns why it is
 * refused, or undefined when nothing is there or it may be ours.
 */
export function socketRefusal(paths: RuntimePaths, options: DirCheckOptions = {}): string | undefined {
  const uid = options.uid ?? currentUid();
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(paths.socket);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `cannot inspect the helper socket ${paths.socket}: ${(error as Error).message}. ${hint(paths)}`;
  }
  if (stat.uid !== uid) {
    return `refusing the helper socket ${paths.socket}: it is owned by uid ${stat.uid}, not by you (uid ${uid}), so someone else may be listening there. Remove it, or ${hint(paths, true)}`;
  }
  if (stat.isSymbolicLink())
    return `refusing the helper socket ${paths.socket}: it is a symbolic link, which may lead anywhere. Remove it, or ${hint(paths, true)}`;
  if (stat.isDirectory()) return `${paths.socket} is a directory, not the helper's socket. Remove it, or ${hint(paths, true)}`;
  return undefined;
}

/**
 * Looks at the start lock before a helper is started: anything but a file there (a directory)
 * could never be taken, and every start would wait out its deadline with nothing said.
 * Returns why no helper can start, or undefined.
 */
export function lockRefusal(paths: RuntimePaths): string | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(paths.lock);
  } catch {
    return undefined; // none (the usual case), or one the start itself will report
  }
  if (stat.isFile()) return undefined;
  const what = stat.isDirectory() ? 'a directory' : stat.isSymbolicLink() ? 'a symbolic link' : 'not a file';
  return `${paths.lock} is ${what}, not the helper's start lock, so no helper can start. Remove it, or ${hint(paths, true)}`;
}

function hint(paths: RuntimePaths, lowercase = false): string {
  const text = `Set ${toChange(paths.source)} to a private directory of yours (runtime dir chosen by ${chosenBy(paths.source)}).`;
  return lowercase ? text[0]!.toLowerCase() + text.slice(1) : text;
}

/** os.tmpdir(), read from `env` rather than from this process's environment. */
function tmpdirOf(env: NodeJS.ProcessEnv): string {
  const dir = env.TMPDIR || env.TMP || env.TEMP || '/tmp';
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

function currentUid(): number {
  // process.getuid is missing only on Windows, where Unix sockets are not used.
  return process.getuid?.() ?? 0;
}
