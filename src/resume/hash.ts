import { createHash } from 'node:crypto';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';

/** SHA-256 of a text, as MESSAGE_DIGEST_HEX hex digits (128 bits: collisions are not a concern). */
export function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, MESSAGE_DIGEST_HEX);
}
