// The OpenCode plugin's bridge envelopes (src/resume/bridge-calls.ts): which replies it turns
// into tool calls and with which ids, which requests offer them, and how the stream tap
// follows them delta by delta. Through the built binary: test/e2e/opencode-caller.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { StreamTap } from '../../src/agent/stream-tap.js';
import { bridgeCallsIn, bridgeOfferIn, type BridgeOffer } from '../../src/resume/bridge-calls.js';
import { parseTranscript } from '../../src/transcript/parse.js';

const BOTH: BridgeOffer = { write: true, task: true };
// The plugin's id: `call_bridge_` and the first 12 hex digits of the SHA-256 of the JSON text (worked out apart).
const WRITE = '{"name":"write","arguments":{"path":"notes.md","content":"hello\\n"}}';
const WRITE_ID = 'call_bridge_52274da11c20';
const TASKS =
  '[{"name":"task","arguments":{"description":"Look around","prompt":"List files","subagent_type":"general"}},' +
  '{"name":"task","arguments":{"description":"Check tests","prompt":"Run them","subagent_type":"general"}}]';
const TASKS_ID = 'call_bridge_059bff143409';

describe('bridgeCallsIn: the calls the plugin makes of a reply, or none', () => {
  test('a write envelope, alone or in a json fence, with space around it: one call whose id hashes the JSON text', () => {
    for (const text of [WRITE, `\n  ${WRITE}\n`, `\`\`\`json\n${WRITE}\n\`\`\``, `\`\`\`\n${WRITE}\n\`\`\`\n`]) {
      assert.deepEqual(bridgeCallsIn(text, BOTH), [{ id: WRITE_ID, name: 'write' }], JSON.stringify(text));
    }
    const contents = '{"name":"write","arguments":{"path":"a","contents":""}}';
    assert.equal(bridgeCallsIn(contents, BOTH)?.length, 1, '"contents" stands for "content"');
  });
  test('an array of Task envelopes: one call each, numbered after the array’s id', () => {
    assert.deepEqual(bridgeCallsIn(TASKS, BOTH), [
      { id: `${TASKS_ID}_0`, name: 'task' },
      { id: `${TASKS_ID}_1`, name: 'task' },
    ]);
  });
  test('anything the plugin leaves as text is no call', () => {
    for (const text of [
      'Sure: ' + WRITE,
      WRITE + ' Done.',
      WRITE.slice(0, -1),
      '```python\n{"name":"write"}\n```',
      '{"name":"write","arguments":{"path":"  ","content":"x"}}',
      '{"name":"write","arguments":{"path":"a"}}',
      '{"name":"write","arguments":"path"}',
      '{"name":"read","arguments":{"path":"a"}}',
      '{"name":"task","arguments":{"description":"d","prompt":"p"}}',
      '{"name":"task","arguments":{"description":"d","prompt":"p","subagent_type":"g","task_id":7}}',
      '[]',
      `[${WRITE},{"name":"read","arguments":{}}]`,
      '{}',
      '',
    ]) {
      assert.equal(bridgeCallsIn(text, BOTH), undefined, JSON.stringify(text));
    }
  });
  test('only what the request offers: a write without the write bridge, a Task without the Task bridge, is text', () => {
    assert.equal(bridgeCallsIn(WRITE, { write: false, task: true }), undefined);
    assert.equal(bridgeCallsIn(TASKS, { write: true, task: false }), undefined);
  });
});

describe('bridgeOfferIn: what a request offers, from the bridge frames its prompt carries', () => {
  const captured = readFileSync(new URL('../fixtures/opencode-plugin/turn2-off-chat.txt', import.meta.url), 'utf8');
  test('the captured prompt has both bridges; without their frames nothing is offered', () => {
    assert.deepEqual(bridgeOfferIn(parseTranscript(captured).layout), { write: true, task: true });
    const withoutTask = captured.slice(0, captured.lastIndexOf('\n\nSYSTEM: OpenCode Task bridge mode is active.'));
    assert.deepEqual(bridgeOfferIn(parseTranscript(withoutTask).layout), { write: true, task: false });
    const withoutWrite = withoutTask.slice(withoutTask.indexOf('\n\n') + 2);
    assert.equal(parseTranscript(withoutWrite).shape, 'opencode-text');
    assert.equal(bridgeOfferIn(parseTranscript(withoutWrite).layout), null);
    assert.equal(bridgeOfferIn(parseTranscript(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })).layout), null);
  });
});

describe('the stream tap follows a bridge envelope as the plugin reads it', () => {
  const line = (e: object) => Buffer.from(`${JSON.stringify(e)}\n`);
  const delta = (text: string) =>
    line({ type: 'assistant', message: { content: [{ type: 'text', text }] }, timestamp_ms: 1, session_id: 's' });
  const flush = (text: string) => line({ type: 'assistant', message: { content: [{ type: 'text', text }] }, session_id: 's' });
  const tapOf = (offer: BridgeOffer | null, ...chunks: Buffer[]): StreamTap => {
    const tap = new StreamTap(undefined, true, offer);
    for (const chunk of chunks) tap.push(chunk);
    return tap;
  };
  const halves = [delta(WRITE.slice(0, 20)), delta(WRITE.slice(20))];

  test('the delta that completes it makes the calls; the final flush repeating it changes nothing', () => {
    assert.equal(tapOf(BOTH, halves[0]!).bridgeCalls, undefined, 'half an envelope is no call yet');
    const tap = tapOf(BOTH, ...halves, delta('\n'), flush(WRITE));
    assert.deepEqual(tap.bridgeCalls, [{ id: WRITE_ID, name: 'write' }]);
    assert.equal(tap.pastCalls, false);
  });
  test('text, a tool call or other events after it go past the calls; a request without the bridge makes none', () => {
    assert.equal(tapOf(BOTH, ...halves, delta(' Done.')).pastCalls, true);
    const started = line({
      type: 'tool_call',
      subtype: 'started',
      call_id: 'c1',
      tool_call: { readToolCall: { args: {} } },
      session_id: 's',
    });
    const after = tapOf(BOTH, ...halves, started);
    assert.equal(after.pastCalls, true);
    assert.deepEqual(after.toolCalls, [], 'the calls stay the bridge’s');
    assert.equal(tapOf(BOTH, ...halves, line({ type: 'thinking', subtype: 'delta', session_id: 's' })).pastCalls, true);
    assert.equal(tapOf(null, ...halves).bridgeCalls, undefined);
  });
  test('after a real tool call an envelope is text: the plugin has already ended the run at that call', () => {
    const started = line({
      type: 'tool_call',
      subtype: 'started',
      call_id: 'c1',
      tool_call: { readToolCall: { args: {} } },
      session_id: 's',
    });
    assert.equal(tapOf(BOTH, started, ...halves).bridgeCalls, undefined);
  });
});
