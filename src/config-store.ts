// Writing the config file, through conf (atomic writes, the folder created as
// needed). Loaded only by `config set` / `config unset`: conf brings a JSON
// schema validator along, which nothing else needs. The file is exactly
// configFile(), the one the run path reads with readConfigFile.
import { readFileSync } from 'node:fs';
import Conf from 'conf';
import { configDir, configFile } from './config.js';
import { ConfigError } from './errors.js';

/** The file as conf will see it: checked to be a JSON object first (conf would quietly replace anything else). */
function checkReadable(path: string): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ConfigError(`cannot read the config file ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ConfigError(`the config file ${path} is not valid JSON; fix it, or remove it to start again from the defaults`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError(`the config file ${path} must hold a JSON object; fix it, or remove it to start again from the defaults`);
  }
}

/** The config file, for writing. Its keys are not checked here: `unset` must be able to remove a bad one. */
export function openConfigFile(): Conf<Record<string, unknown>> {
  const path = configFile();
  checkReadable(path);
  const conf = new Conf<Record<string, unknown>>({
    cwd: configDir(),
    configName: 'config',
    fileExtension: 'json',
    // Setting names have no dots; a dotted key must never become a nested object.
    accessPropertiesByDotNotation: false,
  });
  // One file, one truth: if conf ever resolved another path, runs would not see what we wrote.
  if (conf.path !== path) throw new Error(`conf writes ${conf.path}, but runs read ${path}`);
  return conf;
}
