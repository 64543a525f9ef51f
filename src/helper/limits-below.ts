// The one change a client may make to a helper's limits: lower them to what its
// settings ask, never raise them.
import type { Limits } from '../cache/limits.js';

/** What `asked` lowers of a helper's `current` limits (only what is below them). */
export function limitsBelow(asked: Partial<Limits>, current: Partial<Limits> | undefined): Partial<Limits> {
  const out: Partial<Limits> = {};
  for (const key of ['ttlMs', 'maxEntries'] as const) {
    const now = current?.[key];
    const wanted = asked[key];
    if (wanted !== undefined && typeof now === 'number' && wanted < now) out[key] = wanted;
  }
  return out;
}
