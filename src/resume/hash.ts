import { createHash } from 'node:crypto';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';

/** SHA-256 of what `feed` hands on, as MESSAGE_DIGEST_HEX hex digits (128 bits: collisions are not a concern). */
export function digestOf(feed: (update: (text: string) => void) => void): string {
  const hash = createHash('sha256');
  feed((text) => hash.update(text));
  return hash.digest('hex').slice(0, MESSAGE_DIGEST_HEX);
}

/** digestOf() one text. */
export const digest = (text: string): string => digestOf((update) => update(text));
