import * as crypto from 'node:crypto';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';

/** SHA-256 of what `feed` hands on, as MESSAGE_DIGEST_HEX hex digits (128 bits: collisions are not a concern). */
export function digestOf(feed: (update: (text: string) => void) => void): string {
  const hash = crypto.createHash('sha256');
  feed((text) => hash.update(text));
  return hash.digest('hex').slice(0, MESSAGE_DIGEST_HEX);
}

/** digestOf() one text. */
export const digest = (text: string): string => digestOf((update) => update(text));

type OneShot = (algorithm: string, data: string, encoding: 'hex') => string;
/** crypto.hash (Node 20.12 and later): a short text hashed in one call, at a fraction of the cost of a Hash object. */
const oneShot = (crypto as unknown as { hash?: OneShot }).hash;

/** The SHA-256 of `text` (as UTF-8), all 64 hex digits. */
export const sha256Hex = (text: string): string =>
  oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
