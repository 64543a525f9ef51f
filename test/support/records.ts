// One cache record for the store's and the helper's tests: hashes and IDs only, as a run sends.
import { createHash } from 'node:crypto';
import { pack, prefixHash, type TranscriptDigests } from '../../src/cache/known.js';
import type { RecordInput } from '../../src/cache/store.js';
import type { RecordRequest } from '../../src/helper/protocol.js';
import { monotonicMs } from '../../src/monotonic.js';

export const ANCHOR = 'a'.repeat(32);
export const DIGEST = 'c'.repeat(32);

/** A chat's own second digest: two chats of one anchor have different histories unless a test says otherwise. */
const digestOfChat = (chatId: string): string => createHash('sha256').update(chatId).digest('hex').slice(0, 32);

/** The sequence a sample record of this chat knows (when the test gives no `added`). */
export const sampleSequence = (chatId = 'chat-1'): string[] => [DIGEST, digestOfChat(chatId)];

/** `baseVersion`: a base on the sample sequence of the record's chat at that version (a resumed turn adding nothing new but the given digests). */
export type RecordOverrides = Partial<RecordRequest> & { baseVersion?: number | null };

export function sampleRecord(overrides: RecordOverrides = {}): RecordRequest {
  const { baseVersion, ...rest } = overrides;
  const chatId = rest.chatId ?? 'chat-1';
  const sequence = sampleSequence(chatId);
  const base =
    baseVersion === undefined || baseVersion === null
      ? null
      : // Its copy of the reply is the digest the reply was recorded by: the sequence stays the same.
        { version: baseVersion, count: sequence.length, prefix: prefixHash(pack(sequence), sequence.length), last: sequence.at(-1)! };
  return {
    anchor: ANCHOR,
    chatId,
    toolsFingerprint: 'f'.repeat(32),
    workspace: '/work/project',
    model: 'gpt-5',
    base,
    // A resumed sample turn adds nothing by default; a new one is the whole sample sequence.
    added: base === null ? sequence.join('') : '',
    savedBytes: 0,
    // A turn that started just now, on the clock the helper forgets all chats by.
    startedAt: monotonicMs(),
    ...rest,
  };
}

/** sampleRecord() as the store takes it (digests packed). */
export function storeRecord(overrides: RecordOverrides = {}): RecordInput {
  const { staged: _staged, added, ...rest } = sampleRecord(overrides);
  return { ...rest, added: Buffer.from(added, 'hex') };
}

/** Digests as a transcript the helper's branches are matched against, each reply's copy recorded by the same digest as the reply. */
export const asTranscript = (digests: ReadonlyArray<string>): TranscriptDigests => ({ digests, replyDigestAt: (index) => digests[index]! });
