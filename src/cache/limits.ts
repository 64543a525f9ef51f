// The cache's limits, in one place: the seed (one hour, 64 entries) and the one rule
// every source of a limit follows: it may lower them, never raise them. The config
// file, the environment and a client's `limits` request all go through here.
import { envValue } from '../env-value.js';

export interface Limits {
  ttlMs: number;
  maxEntries: number;
}

/** The seed's limits. */
export const SEED_LIMITS: Readonly<Limits> = Object.freeze({ ttlMs: 60 * 60 * 1000, maxEntries: 64 });

/**
 * Clamps requested limits into [1, seed limit]; anything missing or not a
 * positive number falls back to the seed limit, so a typo never widens the cache.
 */
export function clampLimits(requested: Partial<Limits> = {}): Limits {
  return {
    ttlMs: clampInt(requested.ttlMs, SEED_LIMITS.ttlMs),
    maxEntries: clampInt(requested.maxEntries, SEED_LIMITS.maxEntries),
  };
}

function clampInt(value: number | undefined, max: number): number {
  if (value === undefined || !Number.isFinite(value) || value <= 0) return max;
  return Math.min(Math.max(Math.floor(value), 1), max);
}

/** `current` lowered to what `asked` asks where it asks for less; never raised. */
export function lowered(current: Limits, asked: Partial<Limits>): Limits {
  const clamped = clampLimits(asked);
  return { ttlMs: Math.min(current.ttlMs, clamped.ttlMs), maxEntries: Math.min(current.maxEntries, clamped.maxEntries) };
}

/** The variables that lower the limits, and what each counts. */
const LIMIT_VARIABLES = { ttlMs: ['CURSOR_RESUME_TTL_MS', 'milliseconds'], maxEntries: ['CURSOR_RESUME_MAX_ENTRIES', 'branches'] } as const;

/** A limit variable's value (envValue'd): a number of at least 1 (its whole part), else undefined (unset, or not allowed). */
function limitOf(given: string | undefined): number | undefined {
  const n = Math.floor(Number(given));
  return given !== undefined && Number.isFinite(n) && n >= 1 ? n : undefined;
}

/** The limits CURSOR_RESUME_TTL_MS and CURSOR_RESUME_MAX_ENTRIES ask for (tests, advanced use): whole positive numbers, else not asked. */
export function envLimits(env: NodeJS.ProcessEnv): Partial<Limits> {
  const ttlMs = limitOf(envValue(env[LIMIT_VARIABLES.ttlMs[0]]));
  const maxEntries = limitOf(envValue(env[LIMIT_VARIABLES.maxEntries[0]]));
  return { ...(ttlMs !== undefined ? { ttlMs } : {}), ...(maxEntries !== undefined ? { maxEntries } : {}) };
}

/** One line for each limit variable that is set but asks for nothing (it is ignored), in the words of an ignored setting. */
export function ignoredEnvLimits(env: NodeJS.ProcessEnv): string[] {
  return Object.values(LIMIT_VARIABLES).flatMap(([variable, unit]) => {
    const given = envValue(env[variable]);
    return given !== undefined && limitOf(given) === undefined
      ? [`ignoring ${variable}: ${JSON.stringify(given)} is not a number of ${unit} of at least 1; unset ${variable} or fix its value`]
      : [];
  });
}
