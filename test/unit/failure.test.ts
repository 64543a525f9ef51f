// How a failed cursor-agent run is classified. Only 'resume' evicts a cached chat (and
// retries the turn fresh); every other kind keeps it. The texts are cursor-agent's, as
// reported from real runs, and the stand-in's own (imported, so the two cannot drift apart).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyFailure, type FailureKind } from '../../src/agent/failure.js';
import {
  AUTH_REQUIRED,
  INVALID_SESSION_TOKEN,
  modelError,
  modelUnavailable,
  network,
  resumeFailure,
  trustRequired,
  usageLimit,
} from '../fixtures/stand-in/failures.js';

const CHAT = 'c6b62c6f-7ead-4fd6-9922-e952131177ff';
const failed = (stderr: string): FailureKind | null => classifyFailure({ code: 1, signal: null, stderr, errorResult: false });

const TEXTS: Array<[string, string, FailureKind]> = [
  // cursor-agent's own failure texts.
  ['auth required', "Error: Authentication required. Please run 'agent login' first, or set CURSOR_API_KEY environment variable.", 'auth'],
  ['usage limit', "Error: You've hit your usage limit\n  You have used all of the included usage of your plan.", 'quota'],
  ['model unavailable', 'Cannot use this model: gpt-9. Available models: auto, gpt-5', 'model'],
  ['trust required', 'Workspace Trust Required\n\n  Pass --trust, --yolo, or -f to trust this workspace.', 'other'],
  ['resource exhausted', 'Error: T: [resource_exhausted]', 'quota'],
  ['unavailable', 'Error: T: [unavailable]', 'network'],
  ['deadline exceeded', 'Error: T: [deadline_exceeded]', 'network'],
  ['connection stalled', 'Error: T: Connection stalled', 'network'],
  ['fetch failed', 'Error: fetch failed', 'network'],
  ...['ECONNREFUSED', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN'].map((code): [string, string, FailureKind] => [
    code,
    `Error: connect ${code} 104.18.19.125:443`,
    'network',
  ]),
  // The resume-specific texts wrappers match.
  ['session not found', `Error: session not found: ${CHAT}`, 'resume'],
  ['chat not found', `Error: chat not found: ${CHAT}`, 'resume'],
  ['chat expired', `Error: chat expired: ${CHAT}`, 'resume'],
  ['failed to resume', `Error: failed to resume chat ${CHAT}`, 'resume'],
  ['invalid chat id', `Error: invalid chat id: ${CHAT}`, 'resume'],
  ['no such chat', `Error: no such chat: ${CHAT}`, 'resume'],
  // Auth errors that speak of sessions: an expired login says nothing about the chat.
  ['invalid session token', 'Error: [unauthenticated] invalid session token. Please sign in again.', 'auth'],
  ['unauthenticated, session expired', 'Error: [unauthenticated] Your session has expired. Please log in again.', 'auth'],
  ['unauthenticated, bare', 'Error: T: [unauthenticated] Session expired', 'auth'],
  ['log in again', 'Your session has expired. Please log in again.', 'auth'],
  ['session expired alone is no resume failure', 'Error: session expired', 'other'],
  // Neither: kept.
  ['out of memory', 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory', 'oom'],
  ['unknown', 'Error: something odd happened', 'other'],
];

describe('cursor-agent failure texts', () => {
  for (const [name, stderr, kind] of TEXTS) {
    test(`${name} → ${kind}`, () => assert.equal(failed(stderr), kind));
  }
});

describe("the stand-in's failure modes", () => {
  const modes: Array<[string, string, FailureKind]> = [
    ['auth', AUTH_REQUIRED, 'auth'],
    ['invalid-session-token', INVALID_SESSION_TOKEN, 'auth'],
    ['usage-limit', usageLimit(new Date('2026-02-13T00:00:00Z')), 'quota'],
    ...['ECONNREFUSED', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', 'ENOTFOUND'].map((code): [string, string, FailureKind] => [
      `network=${code}`,
      network(code),
      'network',
    ]),
    ['model-error=resource_exhausted', modelError('resource_exhausted'), 'quota'],
    ['model-error=unavailable', modelError('unavailable'), 'network'],
    ['model-error=deadline_exceeded', modelError('deadline_exceeded'), 'network'],
    ['model-error=stalled', modelError('stalled'), 'network'],
    ['model-error=internal', modelError('internal'), 'model'],
    ['trust-required', trustRequired('/work/project'), 'other'],
    ['model-unavailable', modelUnavailable('gpt-9'), 'model'],
    ...(['not-found', 'expired', 'failed', 'invalid', 'no-such'] as const).map((kind): [string, string, FailureKind] => [
      `resume-not-found=${kind}`,
      resumeFailure(kind, CHAT),
      'resume',
    ]),
  ];
  for (const [mode, stderr, kind] of modes) {
    test(`${mode} → ${kind}`, () => assert.equal(failed(stderr), kind));
  }
});

describe('exit status and result', () => {
  test('a run that exits 0 with a good result succeeded', () => {
    assert.equal(classifyFailure({ code: 0, signal: null, stderr: 'Error: chat not found', errorResult: false }), null);
  });
  test('is_error on exit 0 fails the turn', () => {
    assert.equal(classifyFailure({ code: 0, signal: null, stderr: '', errorResult: true }), 'error-result');
  });
  test('a signal wins over any text', () => {
    assert.equal(classifyFailure({ code: null, signal: 'SIGKILL', stderr: 'Error: chat not found', errorResult: false }), 'signal');
  });
});
