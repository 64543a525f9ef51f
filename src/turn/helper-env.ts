// The environment a helper is found (and started) with, from the settings: the
// runtime dir from the config file when the environment names none, and the
// cache limits, which the config file may lower but a lower value already in the
// environment (tests) still wins. The faces (inspect, evict, helper) use this so
// they look where a run looks.
import { configFile, resolveRunSettings, type RunSettings, type Settings } from '../config.js';
import { CliError, ConfigError } from '../errors.js';
import { envLimits, ignoredEnvLimits, lowered, SEED_LIMITS, type Limits } from '../cache/limits.js';
import { envValue } from '../env-value.js';
import { RUNTIME_DIR_FILE } from '../helper/paths.js';

export function helperEnv(settings: Settings, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out = { ...env };
  if (settings.runtimeDir !== '' && envValue(env.CURSOR_RESUME_RUNTIME_DIR) === undefined) {
    out.CURSOR_RESUME_RUNTIME_DIR = settings.runtimeDir;
    (out as Record<symbol, unknown>)[RUNTIME_DIR_FILE] = configFile();
  }
  const limits = limitsFor(settings, env);
  out.CURSOR_RESUME_TTL_MS = String(limits.ttlMs);
  out.CURSOR_RESUME_MAX_ENTRIES = String(limits.maxEntries);
  return out;
}

/** One line of what is ignored, on stderr. */
const warn = (line: string): void => {
  process.stderr.write(`cursor-resume: ${line}\n`);
};

/**
 * For the commands that refuse a bad setting (simulate, inspect --transcript): the limits the
 * environment sets wrong are no settings, and are ignored as a run ignores them, said on stderr.
 */
export function sayIgnoredEnvLimits(env: NodeJS.ProcessEnv = process.env): void {
  for (const line of ignoredEnvLimits(env)) warn(line);
}

/** The cache limits a run asks for: the settings', lowered further by the environment's (cache/limits.ts). */
export function limitsFor(settings: Settings, env: NodeJS.ProcessEnv): Limits {
  return lowered(lowered(SEED_LIMITS, { ttlMs: settings.ttlMinutes * 60_000, maxEntries: settings.maxEntries }), envLimits(env));
}

/**
 * The helper environment for commands that only find, stop or read the helper
 * (helper, inspect, evict): a bad setting must not keep a person from stopping or
 * looking at the helper, so it is ignored as a run ignores it, and said on stderr.
 * The one exception is where to look: a run with an unusable runtimeDir uses no
 * helper at all, so these commands fail (exit 1) rather than act on one in the
 * default folder, as they do for an unusable CURSOR_RESUME_RUNTIME_DIR.
 */
export function findingEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  let found: RunSettings;
  try {
    // They run no agent: a bad agent setting must not take the runtimeDir beside it away (a run whose agent the environment names uses it).
    found = resolveRunSettings(env, {}, undefined, { agentNeeded: false });
  } catch (error) {
    // Only a config file that cannot be read gets here: it says nothing of where the helper is.
    if (!(error instanceof ConfigError)) throw error;
    warn(`ignoring the config file: ${error.message}`);
    return env;
  }
  for (const line of found.ignored) warn(line);
  // A bad environment value is named by the runtime paths themselves (helper/paths.ts).
  if (found.runtimeDirIgnored && envValue(env.CURSOR_RESUME_RUNTIME_DIR) === undefined) {
    throw new CliError(
      `the runtimeDir setting in ${configFile()} is not usable (see above), so no helper is looked for and runs use no cache; fix it with cursor-resume config set runtimeDir /an/absolute/path, or cursor-resume config unset runtimeDir`,
    );
  }
  return helperEnv(found.settings, env);
}
