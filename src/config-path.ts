// Where the config file lives: the platform's config folder for cursor-resume. Its
// own module so that boot.cjs can find the agent setting without the settings table.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import envPaths from 'env-paths';
import { envValue } from './env-value.js';

export function configDir(): string {
  if (process.platform !== 'linux') return envPaths('cursor-resume', { suffix: '' }).config;
  // The XDG spec: a relative XDG_CONFIG_HOME is invalid and ignored (env-paths would take it, from wherever we run).
  const xdg = envValue(process.env.XDG_CONFIG_HOME);
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'cursor-resume');
}

export const configFile = (): string => join(configDir(), 'config.json');

/**
 * The end of advice that moves the config file elsewhere: ", or point XDG_CONFIG_HOME at a folder you own",
 * but nothing on macOS, whose config file stays under ~/Library/Preferences whatever XDG_CONFIG_HOME says.
 */
export const orPointXdgElsewhere = (): string => (process.platform === 'darwin' ? '' : ', or point XDG_CONFIG_HOME at a folder you own');
