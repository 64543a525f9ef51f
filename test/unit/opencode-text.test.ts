// The OpenCode plugin's flattened prompt: read back exactly (the captured prompts
// of test/fixtures/opencode-plugin), proven turn by turn, and continued with the
// delta the plugin itself sends when it resumes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseCallerArgs } from '../../src/agent/argv.js';
import { resolveSettings } from '../../src/config.js';
import { analyzeTurn, planTurn, type TurnContext } from '../../src/turn/plan.js';
import { analyze, decide, type Analysis, type Decision } from '../../src/resume/decide.js';
import { REASONS } from '../../src/resume/reasons.js';
import { readOpencodeText, readToolCallLine, readToolResultHead } from '../../src/transcript/opencode-text.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import type { Conversation } from '../../src/transcript/types.js';
import { ON, PATTERNS, branchFrom, knowing, matchedTo, type KnownBranch } from '../support/engine.js';

const FIXTURES = new URL('../fixtures/opencode-plugin/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const OFF = ['turn1-off-chat.txt', 'turn2-off-chat.txt', 'turn3-off-chat-toolcall.txt', 'turn3-off-toolresult.txt', 'turn4-off-chat.txt'];
// The two sessions the fixtures come from got different call ids from the stand-in.
const sameCall = (text: string): string => text.replaceAll('call_302869075602', 'call_72f615510e0b');

/** Each block as a word: a frame's kind or a message's role. */
const shapeOf = (c: Conversation): string => (c.layout ?? []).map((b) => ('frame' in b ? b.frame : c.messages[b.message]!.role)).join(',');

const analysisOf = (text: string): Analysis =>
  analyze(parseTranscript(text), { workspace: '/work/project', model: 'auto', sideCallPatterns: PATTERNS });

/** What a successful turn over `text` leaves in the cache, cursor having replied `reply`. */
const branchAfter = (text: string, reply: { text: string; calls?: Array<{ id: string; name: string }> }): KnownBranch =>
  branchFrom(analysisOf(text), { text: reply.text, toolCalls: reply.calls ?? [] });

const decideText = (text: string, branches: KnownBranch[]): Decision => {
  const analysis = analysisOf(text);
  return decide({
    analysis,
    settings: ON,
    callerResume: false,
    branches: branches.map((b) => matchedTo(b, analysis)),
    missingChats: new Set(),
  });
};

/** Cursor's replies in the plugin-resume-off session (index.json), and the read call of turn 3. */
const READ = { id: 'call_72f615510e0b', name: 'readToolCall' };
const REPLIES = [
  { text: 'turn 1; codeword=ALPHA; seen 29953 chars' },
  { text: 'turn 1; codeword=BRAVO; seen 29472 chars' },
  { text: '', calls: [READ] },
  { text: 'turn 1; codeword=CHARLIE; seen 30476 chars' },
];

describe('the captured prompts are read in the layout, block by block', () => {
  const expected: Record<string, string> = {
    'turn1-off-title.txt': 'system,user,user',
    'turn1-off-chat.txt': 'bridge,tools,system,tool-list,user,task-bridge',
    'turn2-off-chat.txt': 'bridge,tools,system,user,assistant,user,task-bridge',
    'turn3-off-chat-toolcall.txt': 'bridge,tools,system,user,assistant,user,assistant,user,task-bridge',
    'turn3-off-toolresult.txt': 'bridge,tools,system,tool-list,user,assistant,user,assistant,user,assistant,tool,closing,task-bridge',
    'turn4-off-chat.txt': 'bridge,tools,system,user,assistant,user,assistant,user,assistant,tool,assistant,user,closing,task-bridge',
    'turn3-on-toolresult.txt': 'bridge,assistant,tool,closing,task-bridge',
  };
  for (const [name, blocks] of Object.entries(expected)) {
    test(name, () => {
      const bytes = readFileSync(new URL(name, FIXTURES));
      const c = parseTranscript(bytes);
      assert.equal(c.shape, 'opencode-text');
      assert.equal(shapeOf(c), blocks);
      // A fresh chat gets the caller's bytes, exactly.
      assert.equal(Buffer.compare(Buffer.from(c.raw!), bytes), 0);
      assert.equal(analyze(c, { workspace: '/w', model: 'auto', sideCallPatterns: PATTERNS }).fullPrompt(), bytes.toString('utf8'));
    });
  }
  test("messages as the plugin wrote them: the user's quotes kept, a tool call by its fields, a result's own trailing newline", () => {
    const c = parseTranscript(fixture('turn3-off-toolresult.txt'));
    const [, user, , , , , assistant, result] = c.messages;
    assert.deepEqual(user!.parts, [{ type: 'text', text: '"Hello. The codeword is ALPHA."' }]);
    assert.deepEqual(assistant!.parts, [{ type: 'tool-call', id: READ.id, name: 'read', input: '{"path":"@WORKSPACE@/notes.txt"}' }]);
    assert.deepEqual(result!.parts, [{ type: 'tool-result', id: READ.id, name: 'read', output: 'The codeword is CHARLIE.\n' }]);
  });
  test('a tool call whose arguments hold U+2028 or U+2029 (JSON.stringify leaves them raw) is read as a call', () => {
    const args = '{"content":"a\u2028b\u2029c"}';
    const c = parseTranscript(`USER: write it\n\nASSISTANT: On it.\ntool_call(id: call_1, name: write, args: ${args})\n\nUSER: next`);
    assert.deepEqual(c.messages[1]!.parts, [
      { type: 'text', text: 'On it.' },
      { type: 'tool-call', id: 'call_1', name: 'write', input: args },
    ]);
  });
  test('a frame in the blocks the plugin sends in its own delta is read as what it is: the follow-up text after the bridge is no message', () => {
    // The plugin's delta writes the user's text without a head, inside the bridge block: the bridge is then no frame but a system message.
    const c = parseTranscript(fixture('turn2-on-chat.txt'));
    assert.equal(shapeOf(c), 'system,task-bridge');
    assert.equal(analysisOf(fixture('turn2-on-chat.txt')).anchor, null);
  });
});

describe('text that is not exactly in the layout stays plain text', () => {
  const cases: Array<[string, string]> = [
    ['no head at the start', 'Fix the bug.\n\nUSER: and the test'],
    ['a head without its space', 'USER:hello'],
    ['a lower-case head', 'user: hello'],
    [
      'a tool result with no closing line after it',
      'USER: hi\n\nASSISTANT: tool_call(id: c1, name: read, args: {})\n\nTOOL_RESULT (name: read, call_id: c1): x',
    ],
    [
      'a tool result head that does not read',
      'USER: hi\n\nTOOL_RESULT (name: read): x\n\nThe above tool calls have been executed. Continue your response based on these results.',
    ],
    [
      'a tool result named with an empty name (the plugin leaves the name out instead)',
      `USER: hi\n\nTOOL_RESULT (name: , call_id: c1): x\n\nThe above tool calls have been executed. Continue your response based on these results.`,
    ],
    ['a byte-order mark before the head', '\uFEFFUSER: hello'],
  ];
  for (const [what, text] of cases) {
    test(what, () => {
      const c = parseTranscript(text);
      assert.equal(c.shape, 'text');
      const d = decideText(text, []);
      assert.equal(d.reason, 'plain-text');
      assert.equal(d.prompt, text);
    });
  }
  test('inspect says why: a byte-order mark, invisible where the text is shown, is named', () => {
    assert.deepEqual(readOpencodeText('\uFEFFUSER: hello'), {
      why: 'it begins with a byte-order mark (U+FEFF), which the plugin never writes, before its first block head',
    });
    assert.deepEqual(readOpencodeText('\uFEFFhello'), {
      why: 'it does not begin with a block head (SYSTEM:, USER:, ASSISTANT: or TOOL_RESULT)',
    });
  });
  test('invalid UTF-8 in the layout is plain text, passed on as its bytes', () => {
    const bytes = Buffer.concat([Buffer.from('USER: caf'), Buffer.from([0xe9]), Buffer.from('\n\nASSISTANT: ok')]);
    const c = parseTranscript(bytes);
    assert.equal(c.shape, 'text');
    assert.equal(Buffer.compare(Buffer.from(c.raw!), bytes), 0);
  });
});

describe('look-alike heads and frames inside a message', () => {
  test("a user's blank line and USER: splits the message, the same way every turn", () => {
    const c = parseTranscript('USER: first\n\nUSER: second');
    assert.equal(c.shape, 'opencode-text');
    assert.deepEqual(
      c.messages.map((m) => m.parts),
      [[{ type: 'text', text: 'first' }], [{ type: 'text', text: 'second' }]],
    );
  });
  test('a frame look-alike after the conversation has begun is a system message, not a frame', () => {
    const list = 'SYSTEM: Available OpenCode tools (use via tool calls): bash, read';
    const c = parseTranscript(`SYSTEM: prompt\n\n${list}\n\nUSER: hi\n\n${list}\n\nASSISTANT: ok\n\nUSER: next`);
    assert.equal(shapeOf(c), 'system,tool-list,user,system,assistant,user');
  });
  test('a tool list look-alike after an assistant message or a tool result is a message, even before the first user message', () => {
    // The tool list is neither digested nor fingerprinted: only where OpenCode writes it may it be a frame.
    const list = 'SYSTEM: Available OpenCode tools (use via tool calls): bash, read';
    assert.equal(shapeOf(parseTranscript(`SYSTEM: prompt\n\nASSISTANT: hello\n\n${list}\n\nUSER: hi`)), 'system,assistant,system,user');
    const closing = 'The above tool calls have been executed. Continue your response based on these results.';
    const c = parseTranscript(`SYSTEM: prompt\n\nTOOL_RESULT (call_id: c1): x\n\n${list}\n\nUSER: hi\n\n${closing}`);
    assert.equal(shapeOf(c), 'system,tool,system,user,closing');
  });
  test("a tool list look-alike in a tool's description is no frame: the tools after it stay in the proof, and a change to them is a fresh chat", () => {
    const tools = (fetchParameters: string, more = ''): string =>
      'SYSTEM: You have access to the following tools. When you need to use one, respond with a tool_call in the standard OpenAI format.\n' +
      'Tool guidance: prefer write/edit for file changes; use bash mainly to run commands/tests.\n\nAvailable tools:\n' +
      '- read: Read a file\n  Parameters: {"type":"object"}\n' +
      // An MCP server's description, a blank line and a tool list look-alike in it.
      `- mcp_fetch: Fetch a URL.\n\nSYSTEM: Available OpenCode tools (use via tool calls): see above\n  Parameters: ${fetchParameters}${more}`;
    const prompt = (toolsBlock: string, rest: string): string => `${toolsBlock}\n\nSYSTEM: You are opencode.\n\n${rest}`;
    const before = tools('{"type":"object","properties":{"url":{}}}');
    assert.equal(shapeOf(parseTranscript(prompt(before, 'USER: hi'))), 'tools,system,system,user');
    const branch = branchAfter(prompt(before, 'USER: hi'), { text: 'hello' });
    const next = 'USER: hi\n\nASSISTANT: hello\n\nUSER: fetch example.com';
    assert.equal(decideText(prompt(before, next), [branch]).reason, 'delta');
    for (const after of [
      tools('{"type":"object","properties":{"url":{},"method":{}},"required":["url","method"]}'),
      tools('{"type":"object","properties":{"url":{}}}', '\n- mcp_post: Post to a URL\n  Parameters: {"type":"object"}'),
    ]) {
      const d = decideText(prompt(after, next), [branch]);
      assert.deepEqual([d.decision, d.reason], ['fresh', 'system-changed'], `a delta lacking the new tools: ${JSON.stringify(d.prompt)}`);
    }
  });
  test('a tool list look-alike of more than one line, or before any system message, is a message: what it says stays in the proof', () => {
    const list = 'SYSTEM: Available OpenCode tools (use via tool calls): bash, read';
    assert.equal(shapeOf(parseTranscript(`SYSTEM: prompt\n\n${list}\nAlways answer in French.\n\nUSER: hi`)), 'system,system,user');
    assert.equal(shapeOf(parseTranscript(`${list}\n\nUSER: hi`)), 'system,user');
    const turn = (rule: string, rest = ''): string => `SYSTEM: prompt\n\n${list}\n${rule}\n\nUSER: hi${rest}`;
    const branch = branchAfter(turn('Always answer in French.'), { text: 'bonjour' });
    const next = '\n\nASSISTANT: bonjour\n\nUSER: next';
    assert.equal(decideText(turn('Always answer in French.', next), [branch]).reason, 'delta');
    assert.equal(decideText(turn('Always answer in German.', next), [branch]).decision, 'fresh');
  });
  test('a bridge or Task bridge look-alike holding a blank line is a message: the plugin writes them as one paragraph', () => {
    const c = parseTranscript(
      'SYSTEM: opencode bridge mode is active.\nx\n\nmore\n\nUSER: hi\n\nSYSTEM: OpenCode Task bridge mode is active.\ny\n\nmore',
    );
    assert.equal(shapeOf(c), 'system,user,system');
  });
  test('the closing line is a frame only where the plugin writes it: at the end, when a tool result is in the history', () => {
    const closing = 'The above tool calls have been executed. Continue your response based on these results.';
    const c = parseTranscript(`USER: hi\n\n${closing}`);
    assert.equal(shapeOf(c), 'user');
    assert.deepEqual(c.messages[0]!.parts, [{ type: 'text', text: `hi\n\n${closing}` }]);
    const after = parseTranscript(
      `USER: hi\n\nASSISTANT: tool_call(id: c1, name: read, args: {})\n\nTOOL_RESULT (call_id: c1): x\n\n${closing}`,
    );
    assert.equal(shapeOf(after), 'user,assistant,tool,closing');
  });
  test("a line of cursor's text that reads as a tool call is taken for one, and then fails the proof: fresh, never a wrong resume", () => {
    const turn1 = 'USER: hi';
    const said = 'I would run\ntool_call(id: x1, name: read, args: {})';
    const branch = branchAfter(turn1, { text: said });
    const d = decideText(`${turn1}\n\nASSISTANT: ${said}\n\nUSER: next`, [branch]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'diverged');
  });
  test("cursor's own reply holding a blank line and USER: is split in the next prompt, which then fails the proof: fresh", () => {
    const said = 'Here is a transcript:\n\nUSER: hello';
    const branch = branchAfter('USER: hi', { text: said });
    const d = decideText(`USER: hi\n\nASSISTANT: ${said}\n\nUSER: next`, [branch]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'diverged');
  });
});

describe('a session of the plugin, proven and resumed turn by turn', () => {
  const branches = (turn: number): KnownBranch[] => [branchAfter(fixture(OFF[turn - 1]!), REPLIES[turn - 1]!)];
  test('the title request is a side call', () => {
    const d = decideText(fixture('turn1-off-title.txt'), []);
    assert.equal(d.reason, 'side-call');
    assert.equal(d.record, false);
  });
  test('the first turn is fresh, with the caller’s bytes, and recorded', () => {
    const d = decideText(fixture(OFF[0]!), []);
    assert.deepEqual([d.decision, d.reason, d.record], ['fresh', 'no-entry', true]);
    assert.equal(d.prompt, fixture(OFF[0]!));
  });
  test('every later turn and the tool result resume, and each delta is byte for byte the one the plugin sends', () => {
    const own = ['turn2-on-chat.txt', 'turn3-on-chat-toolcall.txt', 'turn3-on-toolresult.txt', 'turn4-on-chat.txt'];
    for (let turn = 1; turn < OFF.length; turn++) {
      const d = decideText(fixture(OFF[turn]!), branches(turn));
      assert.equal(d.reason, 'delta', OFF[turn]);
      assert.equal(d.decision, 'resume-delta');
      assert.equal(d.prompt, sameCall(fixture(own[turn - 1]!)), OFF[turn]);
    }
  });
  test("with the plugin's own resume on, its prompts are passed on as they are: a chat it continues by itself must not be one we continued", () => {
    const asked = (text: string, branches: KnownBranch[], pluginResumes: boolean): Decision => {
      const analysis = analysisOf(text);
      const settings = { ...ON, pluginResumes };
      return decide({
        analysis,
        settings,
        callerResume: false,
        branches: branches.map((b) => matchedTo(b, analysis)),
        missingChats: new Set(),
      });
    };
    for (let turn = 0; turn < OFF.length; turn++) {
      const d = asked(fixture(OFF[turn]!), turn === 0 ? [] : branches(turn), true);
      assert.deepEqual([d.decision, d.reason, d.record], ['fresh', 'plugin-resumes', false], OFF[turn]);
      assert.equal(d.prompt, fixture(OFF[turn]!), "the caller's bytes");
      assert.notEqual(asked(fixture(OFF[turn]!), turn === 0 ? [] : branches(turn), false).reason, 'plugin-resumes');
    }
    // Its title requests are side calls still; a JSON transcript or plain text is not the plugin's to resume.
    assert.equal(asked(fixture('turn1-off-title.txt'), [], true).reason, 'side-call');
    assert.equal(asked('remember: x', [], true).reason, 'plain-text');
    const json = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(asked(json, [], true).reason, 'no-entry');
  });
  test("a bridge call (the plugin's call made of a JSON envelope) is proven by its id, the envelope shown beside it as text or not", () => {
    const envelope = '{"name":"write","arguments":{"path":"notes.md","content":"hello\\n"}}';
    const bridge = { id: 'call_bridge_52274da11c20', name: 'write' };
    const recorded = [branchAfter(fixture(OFF[2]!), { text: '', calls: [bridge] })];
    const asBridge = (shown: string) =>
      fixture(OFF[3]!)
        .replaceAll(READ.id, bridge.id)
        .replace(`ASSISTANT: tool_call(id: ${bridge.id}, name: read`, `ASSISTANT: ${shown}tool_call(id: ${bridge.id}, name: write`);
    for (const shown of ['', `${envelope}\n`, `\`\`\`json\n${envelope}\n\`\`\`\n`]) {
      const d = decideText(asBridge(shown), recorded);
      assert.deepEqual([d.decision, d.reason], ['resume-delta', 'delta'], JSON.stringify(shown));
      assert.match(d.prompt, new RegExp(`^ASSISTANT: tool_call\\(id: ${bridge.id}, name: write`, 'm'));
    }
    // Other text beside it is text cursor did not write.
    for (const shown of ['Writing it.\n', `${envelope.replace('hello', 'bye')}\n`]) {
      assert.equal(decideText(asBridge(shown), recorded).decision, 'fresh', JSON.stringify(shown));
    }
  });
  test('the tool list frame comes and goes without breaking the proof (turn 2 lacks it, turn 3 has it again)', () => {
    assert.equal(shapeOf(parseTranscript(fixture(OFF[1]!))).includes('tool-list'), false);
    assert.equal(decideText(fixture(OFF[1]!), branches(1)).reason, 'delta');
    assert.equal(decideText(fixture(OFF[3]!), branches(3)).reason, 'delta');
  });
  test("a tool call is proven by Cursor's call_id alone: its name and arguments in the prompt are the plugin's mapping", () => {
    const mapped = fixture(OFF[3]!).replace(
      'name: read, args: {"path":"@WORKSPACE@/notes.txt"}',
      'name: oc_read, args: {"filePath":"notes.txt","limit":20}',
    );
    assert.equal(decideText(mapped, branches(3)).reason, 'delta');
    const otherCall = fixture(OFF[3]!).replaceAll(READ.id, 'call_000000000000');
    const d = decideText(otherCall, branches(3));
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'diverged');
    assert.match(d.detail, /message 7 \(assistant\) differs from what cursor replied/);
  });
  test("a turn ended at a tool call is recorded with cursor's text so far and the call's id: the next request resumes with only the result", () => {
    const said = 'Let me read notes.txt first.';
    const branch = branchAfter(fixture(OFF[2]!), { text: said, calls: [READ] });
    const next = fixture(OFF[3]!).replace(`ASSISTANT: tool_call(id: ${READ.id}`, `ASSISTANT: ${said}\ntool_call(id: ${READ.id}`);
    const d = decideText(next, [branch]);
    assert.equal(d.reason, 'delta');
    // The call line alone, as the plugin sends it: the chat has its own text already.
    assert.equal(d.prompt, sameCall(fixture('turn3-on-toolresult.txt')));
  });
  test('two tool calls in a row: the second request after the first result resumes with the latest call and its result only', () => {
    const second = { id: 'call_9f1e2d3c4b5a', name: 'shellToolCall' };
    const branch = branchAfter(fixture(OFF[3]!), { text: 'And now the log.', calls: [second] });
    const closing = '\n\nThe above tool calls have been executed.';
    const before = fixture(OFF[3]!);
    const at = before.indexOf(closing);
    const call = `tool_call(id: ${second.id}, name: shell, args: {"command":"cat log.txt","cwd":"@WORKSPACE@","timeout":60000})`;
    const result = `TOOL_RESULT (name: shell, call_id: ${second.id}): log line\n`;
    const next = `${before.slice(0, at)}\n\nASSISTANT: And now the log.\n${call}\n\n${result}${before.slice(at)}`;
    const d = decideText(next, [branch]);
    assert.equal(d.reason, 'delta');
    const frames = fixture('turn3-on-toolresult.txt');
    const bridge = frames.slice(0, frames.indexOf('\n\nASSISTANT: '));
    const taskBridge = frames.slice(frames.indexOf('SYSTEM: OpenCode Task bridge'));
    assert.equal(
      d.prompt,
      [
        bridge,
        `ASSISTANT: ${call}`,
        result,
        'The above tool calls have been executed. Continue your response based on these results.',
        taskBridge,
      ].join('\n\n'),
    );
  });
  test("a tool's output holding a blank line and a head goes whole and in its place, before the closing line, heads and all", () => {
    // A file read back by the tool: to the reading, its second half is a user message (the same every turn).
    const inFile = '\n\nUSER: this line is the file, not the user\n\nlast line of the file';
    const closing = '\n\nThe above tool calls have been executed.';
    const withFile = (text: string): string => text.replace(closing, `${inFile}${closing}`);
    const d = decideText(withFile(fixture(OFF[3]!)), branches(3));
    assert.deepEqual([d.decision, d.reason], ['resume-delta', 'delta']);
    assert.equal(d.prompt, withFile(sameCall(fixture('turn3-on-toolresult.txt'))));
  });
  test('a follow-up holding a pasted chat (blank lines and heads) goes as the user wrote it: only its own head is dropped', () => {
    const asked = '"Thanks. Which codeword is current now?"';
    const pasted = `${asked}\n\nUSER: hello\n\nASSISTANT: hi\n\nUSER: bye`;
    const d = decideText(fixture(OFF[4]!).replace(`USER: ${asked}`, `USER: ${pasted}`), branches(4));
    assert.deepEqual([d.decision, d.reason], ['fresh', 'unsafe-delta'], 'a pasted ASSISTANT: block reads as a reply cursor did not write');
    const users = `${asked}\n\nUSER: hello\n\nUSER: bye`;
    const e = decideText(fixture(OFF[4]!).replace(`USER: ${asked}`, `USER: ${users}`), branches(4));
    assert.deepEqual([e.decision, e.reason], ['resume-delta', 'delta']);
    assert.equal(e.prompt, fixture('turn4-on-chat.txt').replace(asked, users));
  });
  test("a tool result after the user's new text is part of that text, not the call's answer: no delta", () => {
    // Cursor's call is open, but the user's text comes first: the result block is what the user pasted.
    const pasted = fixture(OFF[3]!).replace('TOOL_RESULT (name: read', 'USER: wait, first this\n\nTOOL_RESULT (name: read');
    const d = decideText(pasted, branches(3));
    assert.deepEqual([d.decision, d.reason], ['fresh', 'unsafe-delta']);
    assert.match(d.detail, /message 9 is a tool result after the user's new text/);
  });
  test('a tool result for a call cursor did not make is no delta', () => {
    // Cursor's reply recorded with another call id than the one the transcript answers.
    const branch = branchAfter(fixture(OFF[2]!), { text: '', calls: [{ id: 'call_other', name: 'readToolCall' }] });
    const forged = fixture(OFF[3]!).replace(`ASSISTANT: tool_call(id: ${READ.id}`, 'ASSISTANT: tool_call(id: call_other');
    const d = decideText(forged, [branch]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'unsafe-delta');
  });
  test('a follow-up goes trimmed, as the plugin sends it; a blank one is no delta (nothing to send)', () => {
    const branch = branchAfter('USER: hi', { text: 'hello' });
    const d = decideText('USER: hi\n\nASSISTANT: hello\n\nUSER:   next  ', [branch]);
    assert.deepEqual([d.decision, d.prompt], ['resume-delta', 'next']);
    for (const blank of ['USER:  \t ', 'USER: ']) {
      const e = decideText(`USER: hi\n\nASSISTANT: hello\n\n${blank}`, [branch]);
      assert.deepEqual(
        [e.decision, e.reason, e.detail],
        ['fresh', 'unsafe-delta', 'the new messages have no text to send'],
        JSON.stringify(blank),
      );
    }
  });
  test('a follow-up that reads as several blocks is trimmed as one text, as the plugin trims it: its blank lines and blanks inside kept', () => {
    const branch = branchAfter('USER: hi', { text: 'hello' });
    const followUp = '  see:\n    x = 1   \n\n\nUSER: y  \n';
    const d = decideText(`USER: hi\n\nASSISTANT: hello\n\nUSER: ${followUp}`, [branch]);
    assert.deepEqual([d.decision, d.reason], ['resume-delta', 'delta']);
    assert.equal(d.prompt, followUp.trim());
  });
  test('a changed tools block starts a fresh chat (tools-changed)', () => {
    const changed = fixture(OFF[1]!).replace('Available tools:\n- ', 'Available tools:\n- x: new\n  Parameters: {}\n- ');
    assert.equal(decideText(changed, branches(1)).reason, 'tools-changed');
  });
  test('a new system message after the known ones is no delta', () => {
    const text = `${fixture(OFF[1]!).replace(/\n\nSYSTEM: OpenCode Task bridge[^]*$/, '')}\n\nSYSTEM: be brief`;
    assert.equal(decideText(text, branches(1)).reason, 'unsafe-delta');
  });
});

describe("what cursor-agent reads: the caller's bytes whenever the prompt goes whole, the delta otherwise", () => {
  const bytes = readFileSync(new URL(OFF[1]!, FIXTURES));
  const planWith = (unsafeDelta: 'fresh' | 'resume-full', branches: KnownBranch[], callerArgs: string[] = []) => {
    const env = { CURSOR_RESUME_ENABLED: '1' };
    const settings = { ...resolveSettings(env, {}, {}).settings, unsafeDelta };
    const context: TurnContext = {
      caller: parseCallerArgs(['--print', '--output-format', 'stream-json', '--model', 'auto', ...callerArgs]),
      settings,
      env,
      workspace: '/work/project',
    };
    const analysis = analyzeTurn(parseTranscript(bytes), context);
    return planTurn(analysis, context, { branches: branches.map((b) => matchedTo(b, analysis)) });
  };
  const proven = (): KnownBranch[] => [branchAfter(fixture(OFF[0]!), REPLIES[0]!)];
  test('fresh: the bytes as they came', () => {
    const plan = planWith('fresh', []);
    assert.equal(plan.decision, 'fresh');
    assert.ok(plan.stdin instanceof Uint8Array);
    assert.equal(Buffer.compare(Buffer.from(plan.stdin), bytes), 0);
    assert.deepEqual([plan.promptBytes, plan.fullPromptBytes()], [bytes.length, bytes.length]);
  });
  test('resumed: the delta, counted against the whole prompt', () => {
    const plan = planWith('fresh', proven());
    assert.equal(plan.decision, 'resume-delta');
    assert.equal(plan.stdin, fixture('turn2-on-chat.txt'));
    assert.deepEqual([plan.promptBytes, plan.fullPromptBytes()], [Buffer.byteLength(fixture('turn2-on-chat.txt')), bytes.length]);
  });
  test('resumed with the full prompt (unsafeDelta resume-full): the bytes as they came', () => {
    const branch = { ...proven()[0]!, ...knowing(proven()[0]!.knownDigests.slice(0, -1)) };
    // A chat that knows the opener but not cursor's reply: the assistant message is new, so no delta.
    const plan = planWith('resume-full', [branch]);
    assert.deepEqual([plan.decision, plan.reason], ['resume-full', 'unsafe-delta']);
    assert.equal(Buffer.compare(Buffer.from(plan.stdin as Uint8Array), bytes), 0);
  });
  test("the caller's own --resume: argv and bytes untouched (caller-resume)", () => {
    const plan = planWith('fresh', proven(), ['--resume', 'ba129301-5816-461d-9392-9260ae8fb87d']);
    assert.equal(plan.reason, 'caller-resume');
    assert.equal(Buffer.compare(Buffer.from(plan.stdin as Uint8Array), bytes), 0);
    assert.ok(plan.argv.includes('ba129301-5816-461d-9392-9260ae8fb87d'));
  });
});

describe('drift that is not divergence: a new system prompt starts a fresh chat (system-changed)', () => {
  const branch = (): KnownBranch[] => [branchAfter(fixture(OFF[0]!), REPLIES[0]!)];
  test("the date in OpenCode's <env> block changes at midnight", () => {
    const nextDay = fixture(OFF[1]!).replace("Today's date: Thu Dec 03 2026", "Today's date: Fri Dec 04 2026");
    assert.notEqual(nextDay, fixture(OFF[1]!));
    const d = decideText(nextDay, branch());
    assert.deepEqual([d.decision, d.reason, d.record], ['fresh', 'system-changed', true]);
    assert.equal(d.detail, '0 of 3 known messages match; message 1 (system) differs from the system message the chat was given');
    assert.equal(d.prompt, nextDay);
  });
  test('the user switches agent (build to plan): another system prompt', () => {
    const plan = fixture(OFF[1]!).replace(
      'SYSTEM: You are opencode, an interactive CLI tool',
      'SYSTEM: You are opencode in plan mode, an interactive CLI tool',
    );
    assert.equal(decideText(plan, branch()).reason, 'system-changed');
  });
  test('the reason has its sentence', () => assert.match(REASONS['system-changed'], /system message differs/));
});

describe('call lines and tool result heads are read by searching, as the lazy patterns of the layout read them', () => {
  // The patterns the readers replace (their backtracking took time cubic and quadratic in a line's length): the oracle here.
  const CALL = /^tool_call\(id: (.*?), name: (.*?), args: (.*)\)$/s;
  const RESULT = /^TOOL_RESULT \((?:name: (.*?), )?call_id: (.*?)\): /s;
  // Texts made of the heads' own pieces, so that near misses of every kind are common.
  const pieces = (words: string[]) =>
    fc
      .array(fc.oneof(fc.constantFrom(...words), fc.string({ maxLength: 3 }), fc.constantFrom('\r', '\u2028', ')', ' ')), { maxLength: 12 })
      .map((p) => p.join(''));

  test('a call line', () => {
    let read = 0;
    const words = pieces(['tool_call(id: ', ', name: ', ', args: ', ', ', 'name: ', 'args: ', 'tool_call(', '(id: ', '{"a":1}']);
    // Mostly the shape of a call with the pieces inside it, sometimes pieces alone.
    const line = fc.oneof(
      fc
        .tuple(words, words, words, fc.constantFrom(')', '', ') '))
        .map(([i, n, a, end]) => `tool_call(id: ${i}, name: ${n}, args: ${a}${end}`),
      words,
    );
    fc.assert(
      fc.property(line, (candidate) => {
        const m = CALL.exec(candidate);
        if (m !== null) read++;
        assert.deepEqual(readToolCallLine(candidate), m === null ? null : { id: m[1], name: m[2], args: m[3] });
      }),
      { numRuns: 5000 },
    );
    // Guards the generator: one that never made a call line could not fail on a wrong reading.
    assert.ok(read > 250, `${read} of the lines read as calls`);
  });

  test('a tool result head', () => {
    let read = 0;
    const words = pieces(['TOOL_RESULT (', 'name: ', ', call_id: ', 'call_id: ', '): ', ')', ': ', ', ', '\n']);
    const block = fc.oneof(
      fc.tuple(words, words, words).map(([n, i, out]) => `TOOL_RESULT (name: ${n}, call_id: ${i}): ${out}`),
      fc.tuple(words, words).map(([i, out]) => `TOOL_RESULT (call_id: ${i}): ${out}`),
      fc.tuple(fc.constantFrom('', 'TOOL_RESULT (', 'TOOL_RESULT (name: ', 'TOOL_RESULT (call_id: '), words).map(([h, t]) => h + t),
    );
    fc.assert(
      fc.property(block, (candidate) => {
        const m = RESULT.exec(candidate);
        if (m !== null) read++;
        assert.deepEqual(readToolResultHead(candidate), m === null ? null : { name: m[1] ?? '', id: m[2], length: m[0].length });
      }),
      { numRuns: 5000 },
    );
    assert.ok(read > 250, `${read} of the blocks read as results`);
  });
});
