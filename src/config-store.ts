// Writing the config file, through conf (atomic writes, the folder created as
// needed). Loaded only by `config set` / `config unset`: conf brings a JSON
// schema validator along, which nothing else needs. The file is exactly
// configFile(), the one the run path reads with readConfigFile.
import { renameSync } from 'node:fs';
import Conf from 'conf';
import { BrokenConfigFile, configDir, configFile, readConfigObject } from './config.js';

/**
 * The config file, for writing. Its keys are not checked here: `unset` must be able to
 * remove a bad one. A file that is not a JSON object (conf would quietly replace it) is
 * first renamed to `config.json.broken-<time>`, so that nothing in it is lost; `setAside`
 * names that file and says why.
 */
export function openConfigFile(): { file: Conf<Record<string, unknown>>; setAside?: string } {
  const path = configFile();
  let setAside: string | undefined;
  try {
    readConfigObject(path);
  } catch (error) {
    if (!(error instanceof BrokenConfigFile)) throw error;
    const kept = `${path}.broken-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(path, kept);
    setAside = `the config file ${path} ${error.problem}: it was kept as ${kept}, and a new one started`;
  }
  const file = new Conf<Record<string, unknown>>({
    cwd: configDir(),
    configName: 'config',
    fileExtension: 'json',
    // Setting names have no dots; a dotted key must never become a nested object.
    accessPropertiesByDotNotation: false,
  });
  // One file, one truth: if conf ever resolved another path, runs would not see what we wrote.
  if (file.path !== path) throw new Error(`conf writes ${file.path}, but runs read ${path}`);
  return setAside === undefined ? { file } : { file, setAside };
}
