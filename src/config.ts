// Settings: command-line flag > environment > config file > default, the usual order:
// what a person types for one run beats what the environment says for all of them. The
// run path reads the file directly (a few hundred bytes of JSON); the `config` command
// writes it through conf, at the same path, so the two cannot disagree.
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readSync, realpathSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import { DEFAULT_AGENT } from './agent/passthrough.js';
import { configFile, orPointXdgElsewhere } from './config-path.js';
// Bundled from its ES module build (scripts/build.mjs, jsoncPure): esbuild cannot bundle the
// UMD one that "main" names, and Node before 20.19 reads lib/esm/ as CommonJS.
import { parse as parseJsonc, printParseErrorCode, type ParseError } from 'jsonc-parser';
import * as z from './zod.js';
import { ignoredEnvLimits, SEED_LIMITS } from './cache/limits.js';
import { envValue } from './env-value.js';
import { ConfigError } from './errors.js';
import { fitsSocketLimit, MAX_SOCKET_PATH_BYTES, openFolderAbove, SOCKET_NAME, socketIn } from './helper/paths.js';
import { parseSwitch, SHARED_SWITCH, sharedSwitchOn } from './resume/enabled.js';

// The seed lives with the cache's limits; the config file speaks minutes.
export const SEED_TTL_MINUTES = SEED_LIMITS.ttlMs / 60_000;
export const SEED_MAX_ENTRIES = SEED_LIMITS.maxEntries;

/** Longest side-call pattern: far beyond a title prompt's opening words, far below what V8 cannot compile. */
const MAX_PATTERN_LENGTH = 1000;

/**
 * A pattern on its own (so that none breaks out of the `^(?:...)` side-call.ts wraps it in, as
 * `x)|(?:y` would), short: V8 compiles a pattern at its first use, and one too large for its
 * stack (a?a?... 7,000 times) passed new RegExp and crashed every JSON turn at the first message.
 */
function compilable(pattern: string): boolean {
  if (pattern.length > MAX_PATTERN_LENGTH) return false;
  try {
    new RegExp(pattern).test('');
    return true;
  } catch {
    return false;
  }
}

/**
 * Empty (the automatic folder), or an absolute folder whose socket path fits the Unix limit:
 * one too long leaves every run without the cache, so it is refused as a relative one is.
 */
function usableRuntimeDir(dir: string): boolean {
  if (dir === '') return true;
  return dir.startsWith('/') && fitsSocketLimit(socketIn(dir));
}

/** A whole number from 1 up to a limit of the seed's, which may be lowered, never raised. */
const seedLimit = (max: number) =>
  z
    .number('must be a number')
    // The bounds first: a number too large to be exact (1e20) is not whole to z.int, but too large is what it is.
    .check(
      z.lte(max, `must be at most ${max}: the limit may be lowered, never raised`),
      z.gte(1, 'must be at least 1'),
      z.int('must be a whole number'),
    );

const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const isString = (v: unknown): boolean => typeof v === 'string';
const isSeedLimit = (max: number) => (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= max;

/**
 * Every setting: its type, its default, the environment variable that overrides it. A
 * schema is built the first time a value of its setting needs it: a run checks only the
 * few that are set, and building all of them is most of what loading this table costs.
 * `plain` accepts only values the schema accepts as they are (test/unit/setting-checks.test.ts
 * holds it to that): a value it passes is taken without zod, which a run then never
 * initialises; any other value gets the schema's verdict and message.
 */
export const SETTINGS = {
  resume: {
    schema: () => z.boolean('must be true or false'),
    plain: isBoolean,
    default: false,
    env: 'CURSOR_RESUME_ENABLED',
    help: `resume the existing Cursor chat when it is proven safe (unset: ${SHARED_SWITCH} decides, on for 1, true, on or yes)`,
  },
  agent: {
    schema: () => z.string('must be a string').check(z.minLength(1, 'must not be empty')),
    plain: (v: unknown) => typeof v === 'string' && v.length > 0,
    default: DEFAULT_AGENT,
    env: 'CURSOR_RESUME_AGENT',
    help: 'the cursor-agent executable: a name on PATH or a path',
  },
  runtimeDir: {
    // Empty is the default written out: the automatic folder.
    schema: () =>
      z
        .string('must be a string')
        .check(
          z.refine(
            usableRuntimeDir,
            `must be an absolute path whose ${SOCKET_NAME} fits the Unix limit of ${MAX_SOCKET_PATH_BYTES} bytes, or empty for the automatic folder`,
          ),
        ),
    plain: (v: unknown) => typeof v === 'string' && usableRuntimeDir(v),
    default: '',
    env: 'CURSOR_RESUME_RUNTIME_DIR',
    help: "where the helper's socket and lock live (empty: $XDG_RUNTIME_DIR/cursor-resume, else a per-user folder in the temp dir)",
  },
  sideCallPatterns: {
    schema: () =>
      z.array(
        z
          .string('must be a string')
          .check(z.refine(compilable, `is not a valid regular expression of at most ${MAX_PATTERN_LENGTH} characters`)),
        'must be a JSON array of strings',
      ),
    plain: (v: unknown) => Array.isArray(v) && v.every((p) => typeof p === 'string' && compilable(p)),
    default: [] as string[],
    env: undefined,
    help: "regular expressions (at most 1000 characters each) that mark a title or metadata prompt, each tested against the start of the first system and the first user message; added to OpenCode's title requests, which are always detected",
  },
  retryFresh: {
    schema: () => z.boolean('must be true or false'),
    plain: isBoolean,
    default: true,
    env: undefined,
    help: 'when a resumed chat turns out to be gone before any output, retry once as a fresh chat',
  },
  unsafeDelta: {
    schema: () => z.enum(['fresh', 'resume-full'], 'must be fresh or resume-full'),
    plain: (v: unknown) => v === 'fresh' || v === 'resume-full',
    default: 'fresh' as 'fresh' | 'resume-full',
    env: undefined,
    help: 'when new messages cannot be sent faithfully as text (an image, a file, a new system message, ...): start a fresh chat, or resume with the full prompt',
  },
  ttlMinutes: {
    schema: () => seedLimit(SEED_TTL_MINUTES),
    plain: isSeedLimit(SEED_TTL_MINUTES),
    default: SEED_TTL_MINUTES,
    env: undefined,
    help: `how long a chat stays resumable, in minutes (1 to ${SEED_TTL_MINUTES}: may be lowered, never raised)`,
  },
  maxEntries: {
    schema: () => seedLimit(SEED_MAX_ENTRIES),
    plain: isSeedLimit(SEED_MAX_ENTRIES),
    default: SEED_MAX_ENTRIES,
    env: undefined,
    help: `how many branches the helper keeps (1 to ${SEED_MAX_ENTRIES}: may be lowered, never raised)`,
  },
  verbose: {
    schema: () => z.boolean('must be true or false'),
    plain: isBoolean,
    default: false,
    env: 'CURSOR_RESUME_VERBOSE',
    help: 'print each decision and its reason, and why the helper could not be used, to stderr',
  },
  trace: {
    schema: () => z.string('must be a string'),
    plain: isString,
    default: '',
    env: 'CURSOR_RESUME_TRACE',
    help: 'a file to append one JSON line per run to (empty: none)',
  },
} as const;

export type SettingName = keyof typeof SETTINGS;
export type Settings = { -readonly [K in SettingName]: z.infer<ReturnType<(typeof SETTINGS)[K]['schema']>> };
/** Where a value came from; `shared environment` is CURSOR_ACP_SESSION_RESUME, which decides resume when our own setting is unset. */
export type Source = 'flag' | 'environment' | 'file' | 'default' | 'shared environment';

export const isSettingName = (name: string): name is SettingName => Object.hasOwn(SETTINGS, name);

export { configDir, configFile } from './config-path.js';

/**
 * Parses a value given as text (environment, `config set`) into the setting's type;
 * `where` (`from CURSOR_RESUME_VERBOSE`, `config set`) is named in the error.
 */
export function parseSettingText(name: SettingName, text: string, where: string): unknown {
  const sample = SETTINGS[name].default;
  if (typeof sample === 'boolean') {
    const value = parseSwitch(text);
    if (value !== undefined) return value;
    throw new ConfigError(`${name} (${where}): ${JSON.stringify(text)} is not a boolean; use 1, true, on or yes, or 0, false, off or no`);
  }
  if (typeof sample === 'number') {
    if (!/^\s*-?\d+\s*$/.test(text)) throw new ConfigError(`${name} (${where}): ${JSON.stringify(text)} is not a whole number`);
    return Number(text);
  }
  if (Array.isArray(sample)) {
    try {
      return JSON.parse(text);
    } catch {
      throw new ConfigError(`${name} (${where}): expected a JSON array of strings, e.g. '["^You are a title generator"]'`);
    }
  }
  return text;
}

const schemas = new Map<SettingName, z.ZodMiniType>();
const schemaOf = (name: SettingName): z.ZodMiniType => {
  let schema = schemas.get(name);
  if (schema === undefined) schemas.set(name, (schema = SETTINGS[name].schema()));
  return schema;
};

/** Checks a value against its setting's rule; the message says what is allowed. */
export function validateSetting<K extends SettingName>(name: K, value: unknown, where: string): Settings[K] {
  return SETTINGS[name].plain(value) ? (value as Settings[K]) : settingBySchema(name, value, where);
}

/** The schema's verdict on a setting's value: the value as the schema gives it back, or its message. */
export function settingBySchema<K extends SettingName>(name: K, value: unknown, where: string): Settings[K] {
  const result = schemaOf(name).safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const at = issue.path.length > 0 ? `[${issue.path.join('.')}]` : '';
    throw new ConfigError(`${name}${at} (${where}): ${issue.message}. Allowed: ${SETTINGS[name].help}`);
  }
  return result.data as Settings[K];
}

/** A config file that is not a JSON object at all (a syntax error, or another JSON value): its keys cannot be read one by one. */
export class BrokenConfigFile extends ConfigError {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(
      `the config file ${path} ${problem}; fix with cursor-resume config set NAME VALUE or config unset NAME (the broken file is kept beside it), or edit it`,
    );
  }
  override name = 'BrokenConfigFile';
}

/**
 * The first syntax error in a JSON text and where it is, as a person counts: "colon
 * expected at line 3, column 13" (JSON.parse's own message names no place on Node 20).
 */
function syntaxError(text: string): string {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  const offset = first?.offset ?? text.length;
  const what = first
    ? printParseErrorCode(first.error)
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .toLowerCase()
    : 'not JSON';
  const lines = text.slice(0, offset).split('\n');
  return `${what} at line ${lines.length}, column ${lines.at(-1)!.length + 1}`;
}

/** A config file the file system will not let us read, or one we will not read (someone else could have written it). */
export class UnreadableConfigFile extends ConfigError {
  /** What to do, for the error's own message and for a run that goes on without the file. */
  readonly advice: string;
  /** Readable, but refused: someone else could have written it. */
  readonly unsafe: boolean;
  constructor(
    readonly path: string,
    readonly reason: string,
    code: string | undefined,
    error?: unknown,
  ) {
    const unsafe = error instanceof UnsafeConfigFile;
    const advice = unsafe
      ? error.advice
      : code === 'ENOTDIR'
        ? `one of the folders on its path is a file: move that file away${orPointXdgElsewhere()}`
        : reason === TOO_LARGE
          ? 'a config file holds a few hundred bytes: move that one away, or (not on macOS) point XDG_CONFIG_HOME at another folder'
          : 'make it a file you can read';
    super(`${unsafe ? 'will not read' : 'cannot read'} the config file ${path} (${reason}); ${advice}`);
    this.advice = advice;
    this.unsafe = unsafe;
  }
  override name = 'UnreadableConfigFile';
}

/** The config file's raw object, not yet checked key by key. A missing file is an empty one. */
export function readConfigObject(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readRegularFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UnreadableConfigFile(path, (error as Error).message, (error as NodeJS.ErrnoException).code, error);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new BrokenConfigFile(path, `is not valid JSON: ${syntaxError(text)}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new BrokenConfigFile(path, 'must hold a JSON object');
  return data as Record<string, unknown>;
}

/** Far more than any config file holds; a device such as /dev/zero would otherwise be read until memory runs out. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;
const TOO_LARGE = `it is larger than ${MAX_CONFIG_BYTES / 1024 / 1024} MiB`;

/** A config file someone else could have written: it names the program every turn runs, so it is not read. */
class UnsafeConfigFile extends Error {
  constructor(
    reason: string,
    readonly advice: string,
  ) {
    super(reason);
  }
}

/**
 * Why a config file may hold someone else's words, or null: owned by another user (root
 * aside), writable by every user, or in or below a folder every user may rename it in. A file
 * writable by its group is read: where each user has a group of their own (umask 002)
 * that is every file they edit, as ssh allows it too.
 */
function unsafeOwnership(path: string, stat: Stats): UnsafeConfigFile | null {
  const uid = process.getuid?.() ?? 0;
  if (stat.uid !== uid && stat.uid !== 0)
    return new UnsafeConfigFile(
      `it belongs to another user (uid ${stat.uid}), and it names the program every turn runs`,
      // Root here is most likely sudo keeping that user's HOME: moving their file away would break their own runs.
      uid === 0
        ? 'run cursor-resume as that user: root runs no program another user names (with sudo, -H gives root a HOME of its own)'
        : `use a config file of your own: move that one away${orPointXdgElsewhere()}`,
    );
  if (stat.mode & constants.S_IWOTH)
    return new UnsafeConfigFile(
      `every user may write it, mode ${(stat.mode & 0o7777).toString(8).padStart(4, '0')}, and it names the program every turn runs`,
      `check that its agent is yours, then: chmod o-w ${path}`,
    );
  const folder = openFolder(path);
  if (folder !== null)
    return new UnsafeConfigFile(
      replaceableIn(folder),
      `check that its agent is yours, then: chmod o-w ${folder.folder}${orPointXdgElsewhere()}`,
    );
  return null;
}

/**
 * The first folder on the config file's path that every user may write and is not sticky (a file
 * below it is not read: anyone may rename what lies there and put their own in its place), else
 * null. The path through a symbolic link and the one to the file it leads to: either may be open.
 */
function openFolder(path: string): { folder: string; own: boolean } | null {
  const paths = [path];
  if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink()) {
    try {
      paths.push(realpathSync(path));
    } catch {
      // A link that leads nowhere (yet: config set starts the file it names) has no such path.
    }
  }
  for (const file of paths) {
    const folder = openFolderAbove(file);
    if (folder !== null) return { folder, own: folder === dirname(file) };
  }
  return null;
}

/** Why a config file below an open folder is not read, as the read and `config set` both say it. */
const replaceableIn = ({ folder, own }: { folder: string; own: boolean }): string =>
  `every user may replace it: ${own ? `its folder ${folder}` : `${folder}, a folder above it,`} is writable by all and not sticky`;

/**
 * Before `config set` writes a config file where there is none yet: one in a folder every user
 * may write, not sticky, would never be read, so none is written (a ConfigError, exit 2).
 */
export function refuseUnreadFolder(path: string): void {
  const folder = openFolder(path);
  if (folder !== null)
    throw new ConfigError(
      `will not write the config file ${path} (${replaceableIn(folder)}, so it would not be read); chmod o-w ${folder.folder}${orPointXdgElsewhere()}`,
    );
}

/** A file's text. A FIFO or a socket is refused unread: reading one could keep every run waiting. */
function readRegularFile(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    // A folder is left to the read, which names it (EISDIR); /dev/null reads as empty, as before.
    if (stat.isFIFO() || stat.isSocket()) throw new Error('it is a FIFO or a socket, not a file');
    if (stat.isFile()) {
      const unsafe = unsafeOwnership(path, stat);
      if (unsafe) throw unsafe;
      if (stat.size > MAX_CONFIG_BYTES) throw new Error(TOO_LARGE);
      return readFileSync(fd, 'utf8');
    }
    return readAtMost(fd);
  } finally {
    closeSync(fd);
  }
}

/** A device's size says nothing of what it yields: read it a piece at a time, refused past the limit. */
function readAtMost(fd: number): string {
  const pieces: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  let total = 0;
  for (;;) {
    const n = readSync(fd, buffer);
    if (n === 0) return Buffer.concat(pieces, total).toString('utf8');
    total += n;
    if (total > MAX_CONFIG_BYTES) throw new Error(TOO_LARGE);
    // A copy of what was read: a device of short records would otherwise keep 64 KiB a read.
    pieces.push(Buffer.from(buffer.subarray(0, n)));
  }
}

/** One key of the config file, checked. */
function fileSetting(path: string, key: string, value: unknown): [SettingName, unknown] {
  if (!isSettingName(key)) {
    throw new ConfigError(
      `the config file ${path} has an unknown setting ${JSON.stringify(key)}; remove it (cursor-resume config unset ${key})`,
    );
  }
  return [key, validateSetting(key, value, `in ${path}`)];
}

/** The values of a config file's object, each checked; `bad` says what one that is not allowed does (throw, or pass it over). */
function fileSettings(path: string, stored: Record<string, unknown>, bad: (error: unknown, key: string) => void): Partial<Settings> {
  const file: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(stored)) {
    try {
      const [name, checked] = fileSetting(path, key, value);
      file[name] = checked;
    } catch (error) {
      bad(error, key);
    }
  }
  return file as Partial<Settings>;
}

/** The config file's values, checked. A missing file is an empty one. */
export function readConfigFile(path: string = configFile()): Partial<Settings> {
  return fileSettings(path, readConfigObject(path), (error) => {
    throw error;
  });
}

export interface Resolved {
  settings: Settings;
  sources: Record<SettingName, Source>;
}

/** Every setting's effective value and where it came from; a value that is not allowed is a ConfigError. */
export function resolveSettings(env: NodeJS.ProcessEnv, flags: Partial<Settings>, file: Partial<Settings> = readConfigFile()): Resolved {
  return resolveWith(env, flags, file, (error) => {
    throw error;
  });
}

/**
 * One setting's effective value (`config get`): a value not allowed is a ConfigError only when it is
 * that setting's, since another's says nothing of it (runs ignore such a value with a warning).
 */
export function resolveSetting(env: NodeJS.ProcessEnv, name: SettingName): Resolved {
  const path = configFile();
  const file = fileSettings(path, readConfigObject(path), (error, key) => {
    // An unknown key may be a slip of the name asked for: still refused.
    if (!(error instanceof ConfigError) || key === name || !isSettingName(key)) throw error;
  });
  return resolveWith(env, {}, file, (error, bad) => {
    if (bad === name) throw error;
  });
}

/** Whether resume is on, and which setting said so, for a person (`inspect --transcript`, `config list`, `simulate`). */
export function describeResume({ settings, sources }: Resolved, env: NodeJS.ProcessEnv): { enabled: boolean; from: string; why: string } {
  const enabled = settings.resume;
  const own = SETTINGS.resume.env;
  switch (sources.resume) {
    case 'flag':
      return { enabled, from: 'flag', why: 'the command line says so' };
    case 'environment':
      return { enabled, from: own, why: `${own} is ${JSON.stringify(envValue(env[own]))}` };
    case 'file':
      return { enabled, from: 'config file', why: `the config file sets resume to ${enabled}` };
    case 'shared environment':
      return {
        enabled,
        from: SHARED_SWITCH,
        why: `${SHARED_SWITCH} is ${JSON.stringify(envValue(env[SHARED_SWITCH]))}${enabled ? '' : ' (on only for 1, true, on or yes)'} and ${own} is not set`,
      };
    default:
      return { enabled, from: 'default', why: `resume is opt-in: set ${own}=1 (or cursor-resume config set resume true)` };
  }
}

/** The settings of a run line, which a bad setting must not stop (see resolveRunSettings). */
export interface RunSettings extends Resolved {
  /** What was ignored and why, one line each, for stderr: `ignoring ...; fix with ...`. */
  ignored: string[];
  /** Whether runtimeDir was ignored: the helper is then not looked for at all. */
  runtimeDirIgnored: boolean;
}

/**
 * The settings of a run line. Only `agent` is needed to hand a turn to cursor-agent,
 * so only a bad agent setting (or a config file that cannot be read while it may
 * hold one) stops the run, with a ConfigError; a file that is not a JSON object
 * holds no agent, and the turn runs on the defaults. Any other value that is not allowed
 * is ignored, the next source deciding, and reported in `ignored`; an ignored
 * runtimeDir means the turn runs without the cache, not against another folder.
 * Without `agentNeeded` (the commands that only find the helper, which run no agent) a bad
 * agent value is ignored like any other, so that the good values, runtimeDir above all, still count.
 */
export function resolveRunSettings(
  env: NodeJS.ProcessEnv,
  flags: Partial<Settings>,
  path: string = configFile(),
  { agentNeeded = true }: { agentNeeded?: boolean } = {},
): RunSettings {
  const ignored: string[] = [];
  let badFileRuntimeDir = false;
  let badEnvRuntimeDir = false;
  // Only the agent stops a run: a bad value of it, or a file that cannot be read (it may hold
  // the agent), is passed over only when the environment names the agent.
  const agentInEnv = envValue(env.CURSOR_RESUME_AGENT) !== undefined;
  let stored: Record<string, unknown> = {};
  try {
    stored = readConfigObject(path);
  } catch (error) {
    // A file that is not a JSON object holds nothing a run can read: the turn runs on the defaults.
    if (!(error instanceof BrokenConfigFile) && !(error instanceof UnreadableConfigFile && agentInEnv)) throw error;
    ignored.push(
      error instanceof BrokenConfigFile
        ? `ignoring the config file ${error.path}, which ${error.problem}: running on the defaults; fix with cursor-resume config set NAME VALUE (the broken file is kept beside it), or edit it`
        : `ignoring the config file ${error.path}, which ${error.unsafe ? 'is not read' : 'cannot be read'} (${error.reason}): running on the defaults, CURSOR_RESUME_AGENT naming the agent; ${error.advice}`,
    );
  }
  const file = fileSettings(path, stored, (error, key) => {
    if (key === 'agent' && agentNeeded && !agentInEnv) throw error;
    if (key === 'runtimeDir') badFileRuntimeDir = true;
    ignored.push(
      isSettingName(key)
        ? `ignoring ${(error as Error).message}; fix with cursor-resume config set ${key} VALUE, or cursor-resume config unset ${key}`
        : `ignoring the unknown setting ${JSON.stringify(key)} in the config file ${path}; fix with cursor-resume config unset ${key}`,
    );
  });
  const resolved = resolveWith(env, flags, file, (error, name, variable) => {
    if (name === 'runtimeDir') badEnvRuntimeDir = true;
    ignored.push(`ignoring ${error.message}; unset ${variable} or fix its value`);
  });
  ignored.push(...ignoredEnvLimits(env));
  // A bad file value the environment overrides decides nothing.
  const runtimeDirIgnored = badEnvRuntimeDir || (badFileRuntimeDir && resolved.sources.runtimeDir !== 'environment');
  return { ...resolved, ignored, runtimeDirIgnored };
}

/** Flag, then environment, then file, then default; `bad` decides what an environment value that is not allowed does. */
function resolveWith(
  env: NodeJS.ProcessEnv,
  flags: Partial<Settings>,
  file: Partial<Settings>,
  bad: (error: ConfigError, name: SettingName, variable: string) => void,
): Resolved {
  const settings = {} as Record<SettingName, unknown>;
  const sources = {} as Record<SettingName, Source>;
  for (const name of Object.keys(SETTINGS) as SettingName[]) {
    const spec = SETTINGS[name];
    if (flags[name] !== undefined) {
      settings[name] = flags[name];
      sources[name] = 'flag';
      continue;
    }
    const fromEnv = spec.env === undefined ? undefined : envValue(env[spec.env]);
    if (fromEnv !== undefined) {
      try {
        const where = `from ${spec.env}`;
        settings[name] = validateSetting(name, parseSettingText(name, fromEnv, where), where);
        sources[name] = 'environment';
        continue;
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        bad(error, name, spec.env!);
      }
    }
    if (file[name] !== undefined) {
      settings[name] = file[name];
      sources[name] = 'file';
    } else {
      settings[name] = spec.default;
      sources[name] = 'default';
    }
  }
  // Our own resume setting, when set, decides; else the switch callers share with us.
  const shared = sources.resume === 'default' ? envValue(env[SHARED_SWITCH]) : undefined;
  if (shared !== undefined) {
    settings.resume = sharedSwitchOn(shared);
    sources.resume = 'shared environment';
  }
  return { settings: settings as Settings, sources };
}
