// The helper's start lock: one start at a time per runtime dir, so two runs that
// find no helper do not both remove a socket and bind. Held for milliseconds.
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { sleep } from '../sleep.js';

/** How long a start waits for another start holding the lock (a start holds it for milliseconds). */
const LOCK_WAIT_MS = 3_000;
/**
 * A lock older than this is stale whatever its pid says (the pid may have been reused by
 * another process). Below LOCK_WAIT_MS, so a start waiting on such a lock breaks it rather
 * than giving up; a start slow enough to lose its lock leaves two holders at worst, and
 * bind() still lets only one of them listen.
 */
const LOCK_STALE_MS = 2_000;

export interface StartLock {
  path: string;
  token: string;
}

/**
 * An O_EXCL lock file holding "<pid> <nonce>". A lock whose pid is dead, or that
 * is older than any start could take, is stale and taken over; the takeover
 * renames the file first and checks it moved the stale one, so two processes
 * breaking the same stale lock cannot both end up holding it.
 */
export async function acquireStartLock(lockPath: string): Promise<StartLock> {
  const token = `${process.pid} ${randomUUID()}\n`;
  const deadline = performance.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.writeFileSync(lockPath, token, { flag: 'wx', mode: 0o600 });
      return { path: lockPath, token };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new Error(`cannot create the helper start lock ${lockPath}: ${(error as Error).message}`);
      }
    }
    const seen = readLock(lockPath);
    if (seen && isStale(seen)) {
      breakStaleLock(lockPath, seen.content);
      continue;
    }
    if (performance.now() > deadline) {
      throw new Error(
        `timed out waiting for the helper start lock ${lockPath}${seen ? ` (held by pid ${seen.pid})` : ''}; if no helper is starting, remove that file`,
      );
    }
    await sleep(5 + Math.random() * 20);
  }
}

function readLock(lockPath: string): { content: string; pid: number; ageMs: number } | undefined {
  try {
    const content = fs.readFileSync(lockPath, 'utf8');
    const ageMs = Date.now() - fs.statSync(lockPath).mtimeMs;
    return { content, pid: Number.parseInt(content, 10), ageMs };
  } catch (error) {
    // A directory in its place would be waited on until the deadline, and never taken.
    if ((error as NodeJS.ErrnoException).code === 'EISDIR') {
      throw new Error(`cannot read the helper start lock ${lockPath}: ${(error as Error).message}; remove it`);
    }
    return undefined; // gone already, or a passing failure (EMFILE): just try again
  }
}

function isStale(lock: { pid: number; ageMs: number }): boolean {
  if (lock.ageMs > LOCK_STALE_MS) return true;
  // An empty lock is being written right now, unless it has been empty for a while.
  if (!Number.isInteger(lock.pid) || lock.pid <= 0) return lock.ageMs > 1000;
  try {
    process.kill(lock.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function breakStaleLock(lockPath: string, staleContent: string): void {
  const aside = `${lockPath}.${process.pid}.${randomUUID().slice(0, 8)}.stale`;
  try {
    fs.renameSync(lockPath, aside);
  } catch {
    return; // someone else broke it first
  }
  try {
    if (fs.readFileSync(aside, 'utf8') !== staleContent) {
      // We moved a fresh lock taken meanwhile: put it back unless yet another one exists.
      try {
        fs.linkSync(aside, lockPath);
      } catch {
        // Two holders now at worst; bind() still lets only one of them listen.
      }
    }
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

export function releaseStartLock(lock: StartLock): void {
  try {
    if (fs.readFileSync(lock.path, 'utf8') === lock.token) fs.unlinkSync(lock.path);
  } catch {
    // Already gone (taken over as stale): nothing of ours to remove.
  }
}
