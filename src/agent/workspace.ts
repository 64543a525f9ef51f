import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { escapeControls } from '../escape.js';

/**
 * The current directory, which a workspace not given, or given relative, is taken from. One
 * deleted from under the shell has no path left: said as that, not as a crash. `next` says what
 * was not done and what to do instead.
 */
export function currentDirectory(
  next = 'nothing was run. cd into an existing folder, or give one by its absolute path (--workspace DIR)',
): string {
  try {
    return process.cwd();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no longer exists (it was deleted)' : `cannot be found (${(error as Error).message})`;
    throw new UsageError(`the current directory ${why}; ${next}`);
  }
}

/** A workspace path made absolute: the current directory is asked only for a relative one. */
export function absoluteWorkspace(path: string): string {
  return isAbsolute(path) ? resolve(path) : resolve(currentDirectory(), path);
}

/**
 * The workspace as the anchor needs it: absolute and real (symlinks resolved), so one
 * folder reached two ways is one workspace. A path that does not exist here (a CI
 * reproduction of someone else's transcript) stays as given, made absolute.
 */
export function resolveWorkspace(path: string): string {
  const absolute = absoluteWorkspace(path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/**
 * A turn that is to run (or be planned as it will run) needs its workspace to be a
 * folder here: cursor-agent would fail on it only after the plan. `from` says where
 * the path came from, for the message.
 */
export function checkWorkspace(workspace: string, from: string): void {
  let problem: string | undefined;
  try {
    if (!statSync(workspace).isDirectory()) problem = 'is not a directory';
  } catch {
    problem = 'does not exist';
  }
  if (problem !== undefined) {
    throw new UsageError(
      `the workspace ${escapeControls(workspace)} (${from}) ${problem}; nothing was run. Give an existing folder (--workspace DIR), or run in one`,
    );
  }
}
