import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';

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
