// One cache record for the store's and the helper's tests: hashes and IDs only, as a run sends.
import type { RecordRequest } from '../../src/helper/protocol.js';

export const ANCHOR = 'a'.repeat(32);
export const DIGEST = 'c'.repeat(32);

export function sampleRecord(overrides: Partial<RecordRequest> = {}): RecordRequest {
  return {
    anchor: ANCHOR,
    chatId: 'chat-1',
    toolsFingerprint: 'f'.repeat(32),
    workspace: '/work/project',
    model: 'gpt-5',
    known: DIGEST.repeat(2),
    baseVersion: null,
    savedBytes: 0,
    ...overrides,
  };
}
