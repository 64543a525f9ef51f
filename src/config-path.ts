// Where the config file lives: the platform's config folder for cursor-resume. Its
// own module so that boot.cjs can find the agent setting without the settings table.
import { join } from 'node:path';
import envPaths from 'env-paths';

export function configDir(): string {
  return envPaths('cursor-resume', { suffix: '' }).config;
}

export const configFile = (): string => join(configDir(), 'config.json');
