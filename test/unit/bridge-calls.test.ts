// The OpenCode plugin's bridge envelopes (src/resume/bridge-calls.ts): which replies it turns
// into tool calls and with which ids, which requests offer them, and how the stream tap
// follows them delta by delta. Through the built binary: test/e2e/opencode-caller.test.ts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { MAX_TAP_REPLY_TEXT, StreamTap } from '../../src/agent/stream-tap.js';
import { BridgeFollower, bridgeCallsIn, bridgeOfferIn, isBridgeEcho, type BridgeOffer } from '../../src/resume/bridge-calls.js';
import { parseTranscript } from '../../src/transcript/parse.js';

const BOTH: BridgeOffer = { write: true, task: true, arrays: true };
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
  test('only what the request offers: a write without the write bridge, a Task without the Task bridge, an array where none is asked for, is text', () => {
    assert.equal(bridgeCallsIn(WRITE, { ...BOTH, write: false }), undefined);
    assert.equal(bridgeCallsIn(TASKS, { ...BOTH, task: false }), undefined);
    assert.equal(bridgeCallsIn(TASKS, { ...BOTH, arrays: false }), undefined);
  });
  test('isBridgeEcho: the envelope shown beside the calls made of it, and nothing else', () => {
    assert.equal(isBridgeEcho(WRITE, [{ id: WRITE_ID }]), true);
    assert.equal(isBridgeEcho(`\`\`\`json\n${WRITE}\n\`\`\``, [{ id: WRITE_ID }]), true);
    assert.equal(isBridgeEcho(TASKS, [{ id: `${TASKS_ID}_0` }, { id: `${TASKS_ID}_1` }]), true);
    const oneTask = `[${TASKS.slice(1, TASKS.indexOf('},{') + 1)}]`;
    assert.equal(isBridgeEcho(oneTask, bridgeCallsIn(oneTask, BOTH)!), true, 'an array of one: its call is numbered too');
    assert.equal(isBridgeEcho(oneTask, [{ id: bridgeCallsIn(oneTask, BOTH)![0]!.id.slice(0, -2) }]), false);
    assert.equal(isBridgeEcho(WRITE, [{ id: 'call_bridge_000000000000' }]), false, 'another envelope');
    assert.equal(isBridgeEcho(`${WRITE} Done.`, [{ id: WRITE_ID }]), false);
    assert.equal(isBridgeEcho(WRITE, [{ id: WRITE_ID }, { id: 'call_1' }]), false);
    assert.equal(isBridgeEcho(WRITE, []), false);
  });
});

describe('bridgeOfferIn: what a request offers, from the bridge frames its prompt carries', () => {
  const captured = readFileSync(new URL('../fixtures/opencode-plugin/turn2-off-chat.txt', import.meta.url), 'utf8');
  test('the captured prompt has both bridges; without their frames nothing is offered', () => {
    assert.deepEqual(bridgeOfferIn(parseTranscript(captured).layout), { write: true, task: true, arrays: false });
    const parallel = captured.replace(
      'Use this only when delegating',
      'To dispatch several tasks in parallel, respond instead with exactly one JSON array of these objects.\nUse this only when delegating',
    );
    assert.equal(bridgeOfferIn(parseTranscript(parallel).layout)?.arrays, true);
    const withoutTask = captured.slice(0, captured.lastIndexOf('\n\nSYSTEM: OpenCode Task bridge mode is active.'));
    assert.deepEqual(bridgeOfferIn(parseTranscript(withoutTask).layout), { write: true, task: false, arrays: false });
    const withoutWrite = withoutTask.slice(withoutTask.indexOf('\n\n') + 2);
    assert.equal(parseTranscript(withoutWrite).shape, 'opencode-text');
    assert.equal(bridgeOfferIn(parseTranscript(withoutWrite).layout), null);
    assert.equal(bridgeOfferIn(parseTranscript(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })).layout), null);
  });
});

describe('BridgeFollower: delta by delta, the calls at the delta that completes an envelope', () => {
  const follow = (deltas: string[], offer: BridgeOffer = BOTH) => {
    const follower = new BridgeFollower(offer);
    let text = '';
    return deltas.map((d) => follower.push(d, (text += d)));
  };
  const pieces = (text: string, size: number) =>
    Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

  test('however the envelope is cut, only its last piece makes the calls: braces and quotes inside strings do not count', () => {
    const tricky = JSON.stringify({ name: 'write', arguments: { path: 'a.js', content: 'if (x) { y("}"); } // \\" [' } });
    for (const size of [1, 2, 3, 7, 1000]) {
      const got = follow(['\n ', ...pieces(tricky, size), '\n']);
      assert.deepEqual(got.slice(0, -2), Array(got.length - 2).fill(undefined), `size ${size}`);
      assert.deepEqual(got.at(-2), bridgeCallsIn(tricky, BOTH), `size ${size}`);
      assert.equal(got.at(-1), undefined);
    }
  });
  test('a fence completes at its closing line; an array only where offered', () => {
    const fenced = ['```json\n', WRITE.slice(0, 30), `${WRITE.slice(30)}\n`, '```'];
    assert.deepEqual(follow(fenced).at(-1), [{ id: WRITE_ID, name: 'write' }]);
    assert.deepEqual(follow(pieces(TASKS, 9)).at(-1)?.length, 2);
    assert.deepEqual(follow(pieces(TASKS, 9), { ...BOTH, arrays: false }), Array(Math.ceil(TASKS.length / 9)).fill(undefined));
  });
  test("a fence is read at its first closing line, wherever the deltas cut, leading space and a space-only piece included; space after an envelope is trim()'s", () => {
    for (const deltas of [
      [`\`\`\`json\n${WRITE}\n\`\`\``],
      ['\n```', '\n', ' ', WRITE, '\n``', '`\n'],
      ['```JSON', `\n${WRITE}\n\`\`\``],
    ]) {
      assert.deepEqual(follow(deltas).filter(Boolean), [[{ id: WRITE_ID, name: 'write' }]], JSON.stringify(deltas));
    }
    // A fence of something else: read once at its close, and nothing after it is an envelope.
    assert.deepEqual(follow(['```python\nprint(1)\n```', `\n\`\`\`json\n${WRITE}\n\`\`\``]), [undefined, undefined]);
    assert.deepEqual(follow([`${WRITE}\u00a0\ufeff`]), [[{ id: WRITE_ID, name: 'write' }]]);
    for (const space of ['\r\n', '\t', '\v', '\f', ' \r']) {
      assert.deepEqual(follow([`${WRITE}${space}`]), [[{ id: WRITE_ID, name: 'write' }]], JSON.stringify(space));
    }
  });
  test('prose, or text after a whole JSON value, is never an envelope', () => {
    assert.deepEqual(follow(['Sure. ', WRITE]), [undefined, undefined]);
    assert.deepEqual(follow(['{"a":1}', ' ', WRITE]), [undefined, undefined, undefined]);
    assert.deepEqual(follow([`${WRITE} x`]), [undefined]);
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
  const started = line({
    type: 'tool_call',
    subtype: 'started',
    call_id: 'c1',
    tool_call: { readToolCall: { args: {} } },
    session_id: 's',
  });

  test('the delta that completes it makes the calls; the final flush repeating it changes nothing', () => {
    assert.equal(tapOf(BOTH, halves[0]!).bridgeCalls, undefined, 'half an envelope is no call yet');
    const tap = tapOf(BOTH, ...halves, delta('\n'), flush(WRITE));
    assert.deepEqual(tap.bridgeCalls, [{ id: WRITE_ID, name: 'write' }]);
    assert.equal(tap.pastCalls, false);
  });
  test('text, a tool call or other events after it go past the calls; a request without the bridge makes none', () => {
    assert.equal(tapOf(BOTH, ...halves, delta(' Done.')).pastCalls, true);
    const after = tapOf(BOTH, ...halves, started);
    assert.equal(after.pastCalls, true);
    assert.deepEqual(after.toolCalls, [], 'the calls stay the bridge’s');
    assert.equal(tapOf(BOTH, ...halves, line({ type: 'thinking', subtype: 'delta', session_id: 's' })).pastCalls, true);
    assert.equal(tapOf(null, ...halves).bridgeCalls, undefined);
  });
  test('text the tap cannot read after the envelope (a line too long, a reply past its cap) goes past the calls', () => {
    const small = new StreamTap(64 * 1024, true, BOTH);
    for (const chunk of [...halves, delta('x'.repeat(100 * 1024))]) small.push(chunk);
    assert.deepEqual([small.bridgeCalls?.length, small.pastCalls], [1, true]);
    const capped = tapOf(BOTH, ...halves, delta('x'.repeat(MAX_TAP_REPLY_TEXT)));
    assert.deepEqual([capped.bridgeCalls?.length, capped.pastCalls, capped.replyText], [1, true, undefined]);
  });
  test('after a real tool call an envelope is text: the plugin has already ended the run at that call', () => {
    assert.equal(tapOf(BOTH, started, ...halves).bridgeCalls, undefined);
  });
});

describe("the stream tap: where cursor's reply ends, its errors and its lines", () => {
  const line = (e: object) => Buffer.from(`${JSON.stringify(e)}\n`);
  const call = (subtype: string, id: string) =>
    line({ type: 'tool_call', subtype, call_id: id, tool_call: { readToolCall: { args: {} } }, session_id: 's' });
  const text = (t: string) => line({ type: 'assistant', message: { content: [{ type: 'text', text: t }] }, session_id: 's' });
  const tapOf = (...chunks: Buffer[]): StreamTap => {
    const tap = new StreamTap();
    for (const chunk of chunks) tap.push(chunk);
    return tap;
  };
  test('calls started one after another: the reply ends at them', () => {
    const tap = tapOf(text('Let me look.'), call('started', 'c1'), call('started', 'c2'));
    assert.deepEqual(
      [tap.toolCalls, tap.pastCalls, tap.replyText],
      [
        [
          { id: 'c1', name: 'read' },
          { id: 'c2', name: 'read' },
        ],
        false,
        'Let me look.',
      ],
    );
  });
  test('a call completed (cursor ran the tool itself) or text after the calls: past them, and a completed call is no new call', () => {
    const completed = tapOf(call('started', 'c1'), call('completed', 'c1'));
    assert.deepEqual([completed.toolCalls, completed.pastCalls], [[{ id: 'c1', name: 'read' }], true]);
    assert.equal(tapOf(call('started', 'c1'), text('The file says hi.')).pastCalls, true);
  });
  test('an error result, by is_error or by its subtype, is an error', () => {
    for (const result of [{ is_error: true }, { subtype: 'error' }]) {
      assert.equal(tapOf(line({ type: 'result', result: 'failed', session_id: 's', ...result })).isError, true, JSON.stringify(result));
    }
    assert.equal(tapOf(line({ type: 'result', subtype: 'success', result: 'ok', session_id: 's' })).isError, false);
  });
  test('with partial output, only the deltas make the reply: a flush, or an event of a model call, repeats them', () => {
    const tap = new StreamTap(undefined, true, null);
    const content = { content: [{ type: 'text', text: 'Hello.' }] };
    tap.push(line({ type: 'assistant', message: content, timestamp_ms: 1, session_id: 's' }));
    tap.push(line({ type: 'assistant', message: content, timestamp_ms: 2, model_call_id: 'm1', session_id: 's' }));
    tap.push(line({ type: 'assistant', message: content, session_id: 's' }));
    assert.equal(tap.replyText, 'Hello.');
  });
  test('a line of exactly the cap is read; one byte more is skipped', () => {
    const event = line({ type: 'result', result: 'x', session_id: 's' });
    const exact = new StreamTap(event.length - 1);
    exact.push(event);
    assert.deepEqual([exact.results, exact.oversizedLines], [1, 0]);
    const over = new StreamTap(event.length - 2);
    over.push(event);
    assert.deepEqual([over.results, over.oversizedLines], [0, 1]);
  });
  test('a reply past its cap after an envelope (space only, each line short enough to read): past the calls, as what follows goes unread', () => {
    const delta = (t: string) =>
      line({ type: 'assistant', message: { content: [{ type: 'text', text: t }] }, timestamp_ms: 1, session_id: 's' });
    const tap = new StreamTap(undefined, true, BOTH);
    const chunk = ' '.repeat(MAX_TAP_REPLY_TEXT / 4);
    for (const piece of [delta(WRITE), ...Array.from({ length: 5 }, () => delta(chunk))]) tap.push(piece);
    assert.deepEqual([tap.bridgeCalls?.length, tap.pastCalls, tap.replyText], [1, true, undefined]);
  });
});
