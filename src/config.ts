// Settings: environment > command-line flag > config file > default. The run path
// reads the file directly (a few hundred bytes of JSON); the `config` command writes
// it through conf, at the same path, so the two cannot disagree.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import envPaths from 'env-paths';
import * as z from 'zod/mini';

export const SEED_TTL_MINUTES = 60;
export const SEED_MAX_ENTRIES = 64;

function compilable(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** A whole number from 1 up to a limit of the seed's, which may be lowered, never raised. */
const seedLimit = (max: number) =>
  z.number('must be a number').check(
    z.int('must be a whole number'),
    z.gte(1, 'must be at least 1'),
    z.lte(max, `must be at most ${max}: the limit may be lowered, never raised`),
  );

/** Every setting: its type, its default, the environment variable that overrides it. */
export const SETTINGS = {
  agent: {
    schema: z.string('must be a string').check(z.minLength(1, 'must not be empty')),
    default: 'cursor-agent',
    env: 'CURSOR_RESUME_AGENT',
    help: 'the cursor-agent executable: a name on PATH or a path',
  },
  runtimeDir: {
    schema: z.string('must be a string').check(z.refine((v) => v.startsWith('/'), 'must be an absolute path')),
    default: '',
    env: 'CURSOR_RESUME_RUNTIME_DIR',
    help: "where the helper's socket and lock live (empty: $XDG_RUNTIME_DIR/cursor-resume, else a per-user folder in the temp dir)",
  },
  sideCallPatterns: {
    schema: z.array(
      z.string('must be a string').check(z.refine(compilable, 'is not a valid regular expression')),
      'must be a JSON array of strings',
    ),
    default: [] as string[],
    env: undefined,
    help: "regular expressions that mark a title or metadata prompt, each tested against the start of the first system and the first user message; added to OpenCode's title requests, which are always detected",
  },
  retryFresh: {
    schema: z.boolean('must be true or false'),
    default: true,
    env: undefined,
    help: 'when a resumed chat turns out to be gone before any output, retry once as a fresh chat',
  },
  unsafeDelta: {
    schema: z.enum(['fresh', 'resume-full'], 'must be fresh or resume-full'),
    default: 'fresh' as 'fresh' | 'resume-full',
    env: undefined,
    help: 'when new messages cannot be sent as text (an image, a file): start a fresh chat, or resume with the full prompt',
  },
  ttlMinutes: {
    schema: seedLimit(SEED_TTL_MINUTES),
    default: SEED_TTL_MINUTES,
    env: undefined,
    help: `how long a chat stays resumable, in minutes (1 to ${SEED_TTL_MINUTES}: may be lowered, never raised)`,
  },
  maxEntries: {
    schema: seedLimit(SEED_MAX_ENTRIES),
    default: SEED_MAX_ENTRIES,
    env: undefined,
    help: `how many branches the helper keeps (1 to ${SEED_MAX_ENTRIES}: may be lowered, never raised)`,
  },
  verbose: {
    schema: z.boolean('must be true or false'),
    default: false,
    env: 'CURSOR_RESUME_VERBOSE',
    help: 'print each decision and every reason the cache was not used to stderr',
  },
  trace: {
    schema: z.string('must be a string'),
    default: '',
    env: 'CURSOR_RESUME_TRACE',
    help: 'a file to append one JSON line per run to (empty: none)',
  },
} as const;

export type SettingName = keyof typeof SETTINGS;
export type Settings = { -readonly [K in SettingName]: z.infer<(typeof SETTINGS)[K]['schema']> };
export type Source = 'environment' | 'flag' | 'file' | 'default';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const isSettingName = (name: string): name is SettingName => Object.hasOwn(SETTINGS, name);

/** Where the config file lives: the platform's config folder for cursor-resume. */
export function configDir(): string {
  return envPaths('cursor-resume', { suffix: '' }).config;
}

export const configFile = (): string => join(configDir(), 'config.json');

/** Parses a value given as text (environment, `config set`) into the setting's type. */
export function parseSettingText(name: SettingName, text: string): unknown {
  const sample = SETTINGS[name].default;
  if (typeof sample === 'boolean') {
    const t = text.trim().toLowerCase();
    if (['1', 'true', 'on', 'yes'].includes(t)) return true;
    if (['0', 'false', 'off', 'no', ''].includes(t)) return false;
    throw new ConfigError(`${name}: "${text}" is not a boolean (use true or false)`);
  }
  if (typeof sample === 'number') {
    if (!/^\s*-?\d+\s*$/.test(text)) throw new ConfigError(`${name}: "${text}" is not a whole number`);
    return Number(text);
  }
  if (Array.isArray(sample)) {
    try {
      return JSON.parse(text);
    } catch {
      throw new ConfigError(`${name}: expected a JSON array of strings, e.g. '["^You are a title generator"]'`);
    }
  }
  return text;
}

/** Checks a value against its setting's schema; the message says what is allowed. */
export function validateSetting<K extends SettingName>(name: K, value: unknown, where: string): Settings[K] {
  const result = SETTINGS[name].schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const at = issue.path.length > 0 ? `[${issue.path.join('.')}]` : '';
    throw new ConfigError(`${name}${at} (${where}): ${issue.message}. Allowed: ${SETTINGS[name].help}`);
  }
  return result.data as Settings[K];
}

/** The config file's values, checked. A missing file is an empty one. */
export function readConfigFile(path: string = configFile()): Partial<Settings> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read the config file ${path}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new ConfigError(`the config file ${path} is not valid JSON; fix it, or remove it to use the defaults`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new ConfigError(`the config file ${path} must hold a JSON object`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (!isSettingName(key)) {
      throw new ConfigError(`the config file ${path} has an unknown setting "${key}"; remove it (cursor-resume config unset ${key})`);
    }
    out[key] = validateSetting(key, value, `in ${path}`);
  }
  return out as Partial<Settings>;
}

export interface Resolved {
  settings: Settings;
  sources: Record<SettingName, Source>;
}

/** Every setting's effective value and where it came from. */
export function resolveSettings(
  env: NodeJS.ProcessEnv,
  flags: Partial<Settings>,
  file: Partial<Settings> = readConfigFile(),
): Resolved {
  const settings = {} as Record<SettingName, unknown>;
  const sources = {} as Record<SettingName, Source>;
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const spec = SETTINGS[name];
    const fromEnv = spec.env === undefined ? undefined : env[spec.env];
    if (fromEnv !== undefined && fromEnv !== '') {
      settings[name] = validateSetting(name, parseSettingText(name, fromEnv), `from ${spec.env}`);
      sources[name] = 'environment';
    } else if (flags[name] !== undefined) {
      settings[name] = flags[name];
      sources[name] = 'flag';
    } else if (file[name] !== undefined) {
      settings[name] = file[name];
      sources[name] = 'file';
    } else {
      settings[name] = spec.default;
      sources[name] = 'default';
    }
  }
  return { settings: settings as Settings, sources };
}
