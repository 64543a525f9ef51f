// The stand-in OpenCode caller's pure parts: stream-json reading, the tool mapping, the
// plugin's resume cache, and the layouts for conversations the captures do not hold.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { renderDelta, renderFull, parseFull, type Request, type ToolDef } from '../fixtures/opencode-caller/layout.js';
import { PluginResumeCache } from '../fixtures/opencode-caller/resume-cache.js';
import { bridgeWriteOf, StreamReader } from '../fixtures/opencode-caller/stream.js';
import { loadFrame } from '../fixtures/opencode-caller/frame.js';
import { bridgeCall, toOpenCodeCall } from '../fixtures/opencode-caller/tools.js';

const line = (event: object): string => `${JSON.stringify(event)}\n`;
const assistant = (text: string, extra: object = {}): string =>
  line({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] }, session_id: 's1', ...extra });
const started = {
  type: 'tool_call',
  subtype: 'started',
  call_id: 'call_1',
  tool_call: { shellToolCall: { args: { command: 'ls', workingDirectory: '/ws' } } },
  session_id: 's1',
};

describe('StreamReader', () => {
  test('the text is the deltas; the flush before a tool call and the final flush repeat them', () => {
    const r = new StreamReader();
    const stream =
      assistant('Hel', { timestamp_ms: 1 }) +
      assistant('lo', { timestamp_ms: 2 }) +
      assistant('Hello', { timestamp_ms: 3, model_call_id: 'm' }) +
      assistant('Hello') +
      line({ type: 'result', result: 'Hello', session_id: 's1' });
    // Fed in pieces that cut lines (and a character) anywhere.
    for (let i = 0; i < stream.length; i += 7) assert.equal(r.push(stream.slice(i, i + 7)), undefined);
    assert.deepEqual([r.text, r.result, r.sessionId], ['Hello', 'Hello', 's1']);
  });

  test('without deltas, complete assistant messages are the text; non-JSON lines are skipped', () => {
    const r = new StreamReader();
    r.push(`not json\n${assistant('one ')}${assistant('two')}`);
    assert.equal(r.text, 'one two');
  });

  test('the first tool_call started is reported once, when its line is complete', () => {
    const r = new StreamReader();
    const text = line(started);
    assert.equal(r.push(text.slice(0, 20)), undefined);
    assert.deepEqual(r.push(text.slice(20)), { callId: 'call_1', toolCall: started.tool_call });
    assert.equal(r.push(line({ ...started, call_id: 'call_2' })), undefined);
    assert.equal(r.toolCall?.callId, 'call_1');
  });
});

const tool = (name: string, properties: Record<string, unknown> = {}): ToolDef => ({
  name,
  description: name,
  parameters: { type: 'object', properties },
});

describe("the plugin's write bridge", () => {
  const envelope = '{"name":"write","arguments":{"path":"notes.md","content":"hello\\n"}}';
  test('a reply that is one write envelope, whole, is a call whose id hashes its JSON text; anything else is text', () => {
    const write = { bridgeId: 'call_bridge_52274da11c20', path: 'notes.md', content: 'hello\n' };
    for (const text of [envelope, ` ${envelope}\n`, `\`\`\`json\n${envelope}\n\`\`\``]) assert.deepEqual(bridgeWriteOf(text), write);
    for (const text of [
      envelope.slice(0, -1),
      `Here: ${envelope}`,
      '{"name":"read","arguments":{"path":"a"}}',
      '{"name":"write","arguments":{"path":""}}',
    ])
      assert.equal(bridgeWriteOf(text), undefined, text);
  });

  test('the reader reports the envelope once the delta that completes it arrives, only when the request offers the bridge', () => {
    const deltas = [envelope.slice(0, 25), envelope.slice(25)].map((t, i) => assistant(t, { timestamp_ms: i }));
    const offered = new StreamReader(true);
    assert.equal(offered.push(deltas[0]!), undefined);
    assert.deepEqual(offered.push(deltas[1]!), { bridgeId: 'call_bridge_52274da11c20', path: 'notes.md', content: 'hello\n' });
    const plain = new StreamReader();
    for (const d of deltas) assert.equal(plain.push(d), undefined);
    assert.equal(plain.text, envelope);
  });

  test("the call is OpenCode's write tool, with filePath where its schema asks for it", () => {
    const write = { bridgeId: 'call_bridge_x', path: 'a.md', content: 'c' };
    const byFilePath = tool('write', { content: {}, filePath: {} });
    assert.deepEqual(bridgeCall(write, [byFilePath]), {
      id: 'call_bridge_x',
      name: 'write',
      arguments: '{"filePath":"a.md","content":"c"}',
    });
    assert.deepEqual(bridgeCall(write, [tool('oc_write', { path: {}, content: {} })]), {
      id: 'call_bridge_x',
      name: 'oc_write',
      arguments: '{"path":"a.md","content":"c"}',
    });
  });
});

describe('toOpenCodeCall', () => {
  test("shellToolCall becomes shell: workingDirectory renamed cwd, the default timeout added, Cursor's call_id kept", () => {
    const tools = [tool('shell', { command: {}, timeout: {}, cwd: {} }), tool('bash')];
    assert.deepEqual(toOpenCodeCall({ callId: 'call_1', toolCall: started.tool_call }, tools), {
      id: 'call_1',
      name: 'shell',
      arguments: '{"command":"ls","cwd":"/ws","timeout":30}',
    });
  });

  test('without a shell tool, bash; a tool OpenCode does not offer maps to nothing', () => {
    assert.equal(toOpenCodeCall({ callId: 'c', toolCall: started.tool_call }, [tool('bash')])?.name, 'bash');
    assert.equal(toOpenCodeCall({ callId: 'c', toolCall: { readToolCall: { args: { path: '/a' } } } }, [tool('bash')]), undefined);
    assert.deepEqual(toOpenCodeCall({ callId: 'c', toolCall: { readToolCall: { args: { path: '/a' } } } }, [tool('read')]), {
      id: 'c',
      name: 'read',
      arguments: '{"path":"/a"}',
    });
  });
});

describe("the plugin's resume cache", () => {
  const request = (...users: string[]): Request => ({
    tools: [tool('read')],
    messages: users
      .flatMap((u) => [
        { role: 'user' as const, content: u },
        { role: 'assistant' as const, content: 'ok' },
      ])
      .slice(0, -1),
  });

  test('the next turn of the same conversation finds the chat; a diverged one, other tools or another model do not', () => {
    const cache = new PluginResumeCache();
    cache.record(request('a'), '/ws', 'auto', 'chat-1');
    assert.equal(cache.lookup(request('a', 'b'), '/ws', 'auto'), 'chat-1');
    cache.record(request('a', 'b'), '/ws', 'auto', 'chat-1');
    assert.equal(cache.lookup(request('a', 'b', 'c'), '/ws', 'auto'), 'chat-1');
    assert.equal(cache.lookup(request('a', 'x', 'c'), '/ws', 'auto'), undefined);
    assert.equal(cache.lookup({ ...request('a', 'b', 'c'), tools: [] }, '/ws', 'auto'), undefined);
    assert.equal(cache.lookup(request('a', 'b', 'c'), '/ws', 'gpt-5'), undefined);
    cache.forget(request('a'), '/ws', 'auto');
    assert.equal(cache.lookup(request('a', 'b', 'c'), '/ws', 'auto'), undefined);
  });
});

describe('layouts beyond the captures', () => {
  const tools = [tool('read'), tool('write'), tool('task')];
  const calls = (id: string, name: string) => [{ id, name, arguments: '{}' }];
  const request: Request = {
    tools,
    messages: [
      { role: 'user', content: 'go\n\nwith a blank line' },
      { role: 'assistant', content: 'Reading.\n\n', toolCalls: calls('c1', 'read') },
      { role: 'tool', toolCallId: 'c1', content: 'one\n' },
      { role: 'assistant', content: '', toolCalls: calls('c2', 'shell') },
      { role: 'tool', toolCallId: 'c2', content: 'two' },
    ],
  };

  test('two calls in a row: both in the full prompt, the closing line once; the delta holds only the latest', () => {
    const full = renderFull(request);
    assert.match(
      full,
      /\n\nASSISTANT: Reading\.\n\n\ntool_call\(id: c1, name: read, args: \{\}\)\n\nTOOL_RESULT \(name: read, call_id: c1\): one\n\n\nASSISTANT: tool_call\(id: c2, name: shell, args: \{\}\)\n\nTOOL_RESULT \(name: shell, call_id: c2\): two\n\nThe above tool calls/,
    );
    assert.equal(full.split('The above tool calls have been executed').length, 2);
    assert.equal(renderFull(parseFull(full)), full);
    const delta = renderDelta(request);
    assert.match(
      delta,
      /^SYSTEM: opencode bridge mode is active\.\n[\s\S]*\n\nASSISTANT: tool_call\(id: c2, name: shell, args: \{\}\)\n\nTOOL_RESULT \(name: shell, call_id: c2\): two\n\nThe above tool calls have been executed\. Continue your response based on these results\.\n\nSYSTEM: OpenCode Task bridge mode is active\./,
    );
    assert.doesNotMatch(delta, /c1/);
  });

  test('no write or task tool: no bridge blocks; a tool result without a known call keeps no name', () => {
    const prompt = renderFull({
      tools: [],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'tool', toolCallId: 'x', content: 'out' },
      ],
    });
    assert.equal(
      prompt,
      'USER: hi\n\nTOOL_RESULT (call_id: x): out\n\nThe above tool calls have been executed. Continue your response based on these results.',
    );
    assert.throws(
      () => renderDelta({ tools: [], messages: [{ role: 'assistant', content: 'a' }] }),
      /the last message is the assistant's: no delta to send/,
    );
  });
});

describe('the captured frame', () => {
  test('loadFrame(ws, today) changes the date line of <env>, indented as captured, and nothing else', () => {
    const { systemPrompt } = loadFrame('/w');
    const dated = loadFrame('/w', 'Fri Dec 04 2026').systemPrompt;
    assert.match(systemPrompt.content, /^ {2}Today's date: Thu Dec 03 2026$/m);
    assert.equal(dated.content, systemPrompt.content.replace("Today's date: Thu Dec 03 2026", "Today's date: Fri Dec 04 2026"));
    assert.notEqual(dated.content, systemPrompt.content);
  });
});
