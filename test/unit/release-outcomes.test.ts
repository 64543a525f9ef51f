// The outcomes a release may carry are the ones a run gives (src/cache/types.ts, Outcome):
// the helper refuses any other, naming the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Outcome } from '../../src/cache/types.js';
import { parseRequest } from '../../src/helper/protocol.js';

const release = (outcome: string): string => JSON.stringify({ id: 7, op: 'release', outcome, state: 'ok' });

test('a release takes every outcome a run gives, and refuses one nothing gives', () => {
  const outcomes: Outcome[] = ['success', 'auth', 'quota', 'network', 'model', 'resume-failed', 'interrupted', 'error'];
  for (const outcome of outcomes) assert.equal(parseRequest(release(outcome)).ok, true, outcome);
  const refused = parseRequest(release('crashed'));
  assert.equal(refused.ok, false);
  assert.deepEqual(refused.ok ? null : [refused.id, refused.code], [7, 'bad-request']);
  assert.match(refused.ok ? '' : refused.message, /^invalid release request: outcome: /);
});
