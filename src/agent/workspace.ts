import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { escapeControls } from '../escape.js';

/**
 * The workspace as the anchor needs it: absolute and real (symlinks resolved), so one
 * folder reached two ways is one workspace. A path that does not exist here (a CI
 * reproduction of someone else's transcript) stays as given, made absolute.
 */
export function resolveWorkspace(path: string, cwd: string): string {
  const absolute = resolve(cwd, path);
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
