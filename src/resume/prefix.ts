import { MESSAGE_DIGEST_HEX } from '../cache/types.js';

export interface PrefixProof {
  /** How many messages the chat knows. */
  known: number;
  /** How many of those the transcript repeats exactly, from the start. */
  matched: number;
  /** 'holds': the transcript begins with the whole known sequence and adds to it. */
  verdict: 'holds' | 'diverged' | 'shorter' | 'nothing-new';
}

export const knownCount = (known: string): number => Math.floor(known.length / MESSAGE_DIGEST_HEX);

/** Does the transcript (its message digests) begin with exactly the sequence the chat knows? */
export function provePrefix(known: string, digests: ReadonlyArray<string>): PrefixProof {
  const count = knownCount(known);
  let matched = 0;
  while (
    matched < count &&
    matched < digests.length &&
    known.startsWith(digests[matched]!, matched * MESSAGE_DIGEST_HEX)
  ) {
    matched++;
  }
  let verdict: PrefixProof['verdict'];
  if (matched < count) verdict = matched === digests.length ? 'shorter' : 'diverged';
  else verdict = digests.length > count ? 'holds' : 'nothing-new';
  return { known: count, matched, verdict };
}
