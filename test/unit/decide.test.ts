import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyze, decide } from '../../src/resume/decide.js';
import { isSafeChatId } from '../../src/resume/chat-id.js';
import { toolsFingerprint } from '../../src/resume/fingerprint.js';
import { CONTINUE_LINE } from '../../src/resume/render.js';
import { compileSideCallPatterns } from '../../src/resume/side-call.js';
import { parseCallerArgs } from '../../src/agent/argv.js';
import { resolveRunSettings, resolveSettings } from '../../src/config.js';
import { analyzeTurn } from '../../src/turn/plan.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { ON, PATTERNS, analysisOf, asst, branchAfter, decideFor, fn, sys, toolMsg, user, type Body } from '../support/engine.js';

const turn1: Body = { messages: [sys('You are a coding agent.'), user('remember: the port is 8080')], tools: [fn('read'), fn('bash')] };
const reply1 = { text: 'Noted.  The port is 8080.' };
const turn2: Body = { ...turn1, messages: [...turn1.messages, asst('Noted. The port is 8080.'), user('What is the port?')] };

describe('resume switch: CURSOR_RESUME_ENABLED, the file, then CURSOR_ACP_SESSION_RESUME', () => {
  const NO_FILE = '/nonexistent/cursor-resume/config.json';
  const resolve = (env: NodeJS.ProcessEnv, file: object = {}) => resolveSettings(env, {}, file);
  // What the run path says of a value it ignores: one line each.
  const ignored = (env: NodeJS.ProcessEnv) => resolveRunSettings(env, {}, NO_FILE).ignored;
  for (const [value, expected] of [
    ['1', true],
    ['true', true],
    ['TRUE', true],
    [' on ', true],
    ['Yes', true],
    ['\ttrue\n', true],
    [undefined, false],
    ['', false],
    ['0', false],
    ['false', false],
    ['off', false],
    ['no', false],
  ] as const) {
    test(`CURSOR_ACP_SESSION_RESUME=${JSON.stringify(value)} → ${expected}, nothing said`, () => {
      const env = { CURSOR_ACP_SESSION_RESUME: value };
      assert.equal(resolve(env).settings.resume, expected);
      assert.deepEqual(ignored(env), []);
    });
    test(`CURSOR_RESUME_ENABLED=${JSON.stringify(value)} → ${expected}, whatever CURSOR_ACP_SESSION_RESUME says`, () => {
      const env = { CURSOR_RESUME_ENABLED: value, CURSOR_ACP_SESSION_RESUME: value === undefined || value.trim() === '' ? '1' : 'garbage' };
      // A blank or unset CURSOR_RESUME_ENABLED leaves the decision to the shared switch.
      const own = value === undefined || value.trim() === '' ? true : expected;
      assert.equal(resolve(env).settings.resume, own);
    });
  }
  for (const value of ['enabled', '2', 'y']) {
    test(`CURSOR_ACP_SESSION_RESUME=${value}: off, as the plugin reads it, and nothing said or refused`, () => {
      const env = { CURSOR_ACP_SESSION_RESUME: value };
      const run = resolveRunSettings(env, {}, NO_FILE);
      assert.deepEqual([run.settings.resume, run.ignored], [false, []]);
      assert.equal(resolve(env).settings.resume, false);
    });
    test(`CURSOR_RESUME_ENABLED=${value}: ignored with a line naming it, the next source deciding`, () => {
      const env = { CURSOR_RESUME_ENABLED: value, CURSOR_ACP_SESSION_RESUME: '1' };
      const run = resolveRunSettings(env, {}, NO_FILE);
      assert.equal(run.settings.resume, true);
      assert.equal(run.ignored.length, 1);
      assert.match(
        run.ignored[0]!,
        /^ignoring resume \(from CURSOR_RESUME_ENABLED\): "\w+" is not a boolean[^\n]*; unset CURSOR_RESUME_ENABLED or fix its value$/,
      );
    });
  }
  test('the config file decides before CURSOR_ACP_SESSION_RESUME, after CURSOR_RESUME_ENABLED', () => {
    assert.equal(resolve({ CURSOR_ACP_SESSION_RESUME: '1' }, { resume: false }).settings.resume, false);
    assert.equal(resolve({ CURSOR_ACP_SESSION_RESUME: '0' }, { resume: true }).settings.resume, true);
    assert.equal(resolve({ CURSOR_RESUME_ENABLED: '0' }, { resume: true }).settings.resume, false);
    assert.equal(resolve({ CURSOR_ACP_SESSION_RESUME: '1' }).sources.resume, 'shared environment');
  });
  test('off: always fresh with the full prompt, nothing recorded', () => {
    const d = decideFor(turn2, [branchAfter(turn1, reply1)], { settings: { enabled: false } });
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'disabled');
    assert.equal(d.record, false);
    assert.match(d.prompt, /^SYSTEM: You have access to the following tools/);
  });
});

describe('anchor', () => {
  const base: Body = { messages: [sys('s'), user('hello')] };
  const anchor = (body: Body, ctx?: { workspace?: string; model?: string }) => analysisOf(body, ctx).anchor;

  test('a string and an array of text parts anchor the same', () => {
    assert.equal(anchor(base), anchor({ messages: [sys('s'), user([{ type: 'text', text: 'hello' }])] }));
  });
  test('an image in the opener changes the anchor', () => {
    const withImage = {
      messages: [
        sys('s'),
        user([
          { type: 'text', text: 'hello' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ]),
      ],
    };
    assert.notEqual(anchor(base), anchor(withImage));
  });
  test('workspace, model and opener each change it', () => {
    assert.notEqual(anchor(base), anchor(base, { workspace: '/elsewhere' }));
    assert.notEqual(anchor(base), anchor(base, { model: 'sonnet-4' }));
    assert.notEqual(anchor(base), anchor({ messages: [sys('s'), user('hello!')] }));
  });
  test('the system prompt and later messages do not change it', () => {
    assert.equal(anchor(base), anchor({ messages: [sys('other'), user('hello'), asst('hi'), user('more')] }));
  });
  test('a sessionId joins the anchor', () => {
    assert.notEqual(anchor({ ...base, sessionId: 'ses_1' }), anchor({ ...base, sessionId: 'ses_2' }));
    assert.notEqual(anchor({ ...base, sessionId: 'ses_1' }), anchor(base));
  });
  test('no real user message: no anchor, fresh', () => {
    for (const messages of [[sys('only system')], [sys('s'), user('   ')], [sys('s'), user([])]]) {
      assert.equal(anchor({ messages }), null);
      const d = decideFor({ messages }, []);
      assert.equal(d.reason, 'no-anchor');
      assert.equal(d.record, false);
    }
  });
  test('the first user message that has content is the opener', () => {
    assert.equal(anchor({ messages: [user(' '), user('hello')] }), anchor({ messages: [user('hello')] }));
  });
});

describe('side calls', () => {
  test("OpenCode's title agent, by its system prompt", () => {
    const d = decideFor({ messages: [sys('You are a title generator. You output ONLY a thread title. Nothing else.'), user('hi')] }, []);
    assert.equal(d.reason, 'side-call');
    assert.equal(d.record, false);
  });
  test('by its user message', () => {
    const d = decideFor({ messages: [sys('x'), user('Generate a title for this conversation:\nfix the bug')] }, []);
    assert.equal(d.reason, 'side-call');
  });
  test('a real message that mentions a title generator is not a side call', () => {
    for (const text of [
      'Please write a title generator in Rust',
      'You are a title generator, my friend said',
      'Can you Generate a title for this conversation: later?',
    ]) {
      const d = decideFor({ messages: [sys('You are a coding agent.'), user(`Hi. ${text}`)] }, []);
      assert.equal(d.reason, 'no-entry', text);
      assert.equal(d.record, true);
    }
  });
  test('each title phrase only in its own role: a real conversation may open with the other one', () => {
    for (const messages of [
      [
        sys('You are opencode, a coding agent.'),
        user('You are a title generator for my blog app: write generateTitle(post) in src/title.ts'),
      ],
      [user('You are a title generator: that is the prompt my app sends. Why does it return two lines?')],
      [sys('Generate a title for this conversation: is the prompt our summariser uses; keep it stable.'), user('fix the bug')],
    ]) {
      const d = decideFor({ messages }, []);
      assert.equal(d.reason, 'no-entry', JSON.stringify(messages));
      assert.equal(d.record, true);
    }
  });
  test('configured patterns are added to the title detection, and hold only at the start of a message', () => {
    const settings = { ...resolveSettings({}, {}, {}).settings, sideCallPatterns: ['Summarize', 'You are a (summary|compaction) agent'] };
    const context = { caller: parseCallerArgs([]), settings, env: {}, workspace: '/w' };
    const sideCall = (messages: unknown[]) => analyzeTurn(parseTranscript(JSON.stringify({ messages })), context).sideCall;
    assert.deepEqual(resolveSettings({}, {}, {}).settings.sideCallPatterns, [], 'none configured by default');
    // OpenCode's title request is still one.
    assert.equal(
      sideCall([sys('You are a title generator. You output ONLY a thread title.'), user('Generate a title for this conversation:\nhi')])
        ?.role,
      'system',
    );
    assert.equal(sideCall([sys('x'), user('Generate a title for this conversation:\nhi')])?.role, 'user');
    assert.deepEqual(sideCall([sys('x'), user('  Summarize the chat so far')]), { pattern: '^(?:Summarize)', role: 'user' });
    assert.deepEqual(sideCall([sys('You are a compaction agent.'), user('hi')]), {
      pattern: '^(?:You are a (summary|compaction) agent)',
      role: 'system',
    });
    // Anywhere else in the message, the phrase is just words.
    assert.equal(sideCall([sys('x'), user('Please do not Summarize; fix the bug')]), null);
    assert.equal(sideCall([sys('Be brief. You are a summary agent'), user('hi')]), null);
    // A pattern that matches an empty text never matches a message that is not there (nor one with no text).
    const empty = { ...context, settings: { ...settings, sideCallPatterns: ['$'] } };
    assert.equal(analyzeTurn(parseTranscript(JSON.stringify({ messages: [user('hi')] })), empty).sideCall, null);
  });
  test('a settings list is compiled once, however many turns are analysed with it (simulate analyses all of its turns)', () => {
    const list = ['Summarize', 'You are a (summary|compaction) agent'];
    const first = compileSideCallPatterns(list);
    assert.deepEqual(
      first.map((r) => r.source),
      ['^(?:Summarize)', '^(?:You are a (summary|compaction) agent)'],
    );
    assert.equal(compileSideCallPatterns(list), first, 'the same RegExps again');
    assert.notEqual(compileSideCallPatterns([...list]), first, 'another list is compiled apart');
  });
  test('a side call never resumes even when its anchor has an entry', () => {
    const title: Body = {
      messages: [sys('You are a title generator. You output ONLY a thread title.'), user('remember: the port is 8080')],
    };
    const d = decideFor({ ...title, messages: [...title.messages, asst('x'), user('y')] }, [branchAfter(title, { text: 'x' })]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'side-call');
  });
});

describe('tool fingerprint', () => {
  const read = fn('read', 'Read a file', { type: 'object', properties: { path: { type: 'string' }, mode: { enum: ['a', 'b'] } } });
  const task = fn('task', 'Launch a subagent: general, explore', { type: 'object' });
  const fp = (tools: unknown[]) => parseTranscript(JSON.stringify({ messages: [user('x')], tools })).tools;
  test('order of tools does not matter', () => {
    assert.equal(toolsFingerprint(fp([read, task])), toolsFingerprint(fp([task, read])));
  });
  test('order of keys inside a schema does not matter', () => {
    const reordered = {
      type: 'function',
      function: {
        parameters: { properties: { mode: { enum: ['a', 'b'] }, path: { type: 'string' } }, type: 'object' },
        description: 'Read a file',
        name: 'read',
      },
    };
    assert.equal(toolsFingerprint(fp([read])), toolsFingerprint(fp([reordered])));
  });
  test('a nested enum, a description (the Task subagent list) or a name changes it', () => {
    const base = toolsFingerprint(fp([read, task]));
    assert.notEqual(
      base,
      toolsFingerprint(
        fp([fn('read', 'Read a file', { type: 'object', properties: { path: { type: 'string' }, mode: { enum: ['a', 'c'] } } }), task]),
      ),
    );
    assert.notEqual(base, toolsFingerprint(fp([read, fn('task', 'Launch a subagent: general, explore, review', { type: 'object' })])));
    assert.notEqual(base, toolsFingerprint(fp([read, fn('task2', 'Launch a subagent: general, explore', { type: 'object' })])));
    assert.notEqual(base, toolsFingerprint(fp([read])));
  });
  test('every tool counts: any one of several changed, one added or one dropped changes it', () => {
    const names = ['read', 'write', 'edit', 'bash', 'grep', 'glob', 'task', 'todo'];
    const tools = names.map((n) => fn(n));
    const base = toolsFingerprint(fp(tools));
    const others = [
      ...names.map((n, i) => tools.map((t, j) => (j === i ? fn(n, `the ${n} tool, changed`) : t))),
      ...names.map((_, i) => tools.filter((_t, j) => j !== i)),
      [...tools, fn('webfetch')],
    ];
    for (const other of others) assert.notEqual(toolsFingerprint(fp(other)), base);
    assert.equal(new Set(others.map((o) => toolsFingerprint(fp(o)))).size, others.length);
  });
  test('changed tools mean a fresh chat', () => {
    const d = decideFor({ ...turn2, tools: [fn('read'), fn('bash', 'changed')] }, [branchAfter(turn1, reply1)]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'tools-changed');
  });
});

describe('prefix proof and delta', () => {
  test('an exact prefix resumes with only the new user message', () => {
    const d = decideFor(turn2, [branchAfter(turn1, reply1)]);
    assert.equal(d.decision, 'resume-delta');
    assert.equal(d.reason, 'delta');
    assert.equal(d.chatId, 'c6b62c6f-7ead-4fd6-9922-e952131177ff');
    assert.equal(d.baseVersion, 3);
    assert.equal(d.prompt, 'What is the port?');
    assert.equal(d.record, true);
  });
  test("cursor's reply matches with whitespace normalised", () => {
    const d = decideFor(turn2, [branchAfter(turn1, { text: '\nNoted.\n\nThe   port is 8080.  ' })]);
    assert.equal(d.decision, 'resume-delta');
  });
  test('messages the chat was sent match byte for byte, an assistant one too: whitespace differs there, not in what cursor replied', () => {
    // A fresh chat was sent the whole of turn 2, cursor's earlier reply ("Noted. ...") among it; it replied "It is 8080.".
    const branch = branchAfter(turn2, { text: 'It is 8080.' });
    const next = (system: string, said: string, replied: string, reply = 'It is 8080.'): Body => ({
      ...turn2,
      messages: [sys(system), user('remember: the port is 8080'), asst(replied), user(said), asst(reply), user('thanks')],
    });
    const [system, said, replied] = ['You are a coding agent.', 'What is the port?', 'Noted. The port is 8080.'];
    assert.equal(decideFor(next(system, said, replied), [branch]).reason, 'delta');
    assert.equal(
      decideFor(next(system, said, replied, '  It is\n\n8080. '), [branch]).reason,
      'delta',
      "cursor's reply: whitespace normalised",
    );
    for (const [what, body] of [
      ['two spaces in a user message', next(system, 'What is  the port?', replied)],
      ['a trailing newline in a user message', next(system, `${said}\n`, replied)],
      ['whitespace in an assistant message the chat was sent', next(system, said, '  Noted.\n\nThe  port is 8080. ')],
      ['a tab for a space in the system message', next('You are a\tcoding agent.', said, replied)],
      ['a trailing space in the system message', next(`${system} `, said, replied)],
    ] as const) {
      const d = decideFor(body, [branch]);
      assert.equal(d.decision, 'fresh', what);
      // A system message that differs is a new system prompt, which gets its own reason.
      assert.equal(d.reason, what.endsWith('system message') ? 'system-changed' : 'diverged', what);
    }
  });
  test('the anchor names the concrete model: a provider prefix, on the command line or in the transcript, is stripped', () => {
    const settings = resolveSettings({}, {}, {}).settings;
    const anchorWith = (line: string[], model?: string) =>
      analyzeTurn(parseTranscript(JSON.stringify({ ...turn1, ...(model ? { model } : {}) })), {
        caller: parseCallerArgs(line),
        settings,
        env: {},
        workspace: '/w',
      });
    const plain = anchorWith(['--model', 'gpt-5']);
    assert.equal(plain.model, 'gpt-5');
    for (const [line, model] of [
      [['--model', 'cursor-acp/gpt-5']],
      [[], 'cursor-acp/gpt-5'],
      [[], 'gpt-5'],
      [['--model=cursor-acp/gpt-5'], 'other/model'],
    ] as const) {
      const a = anchorWith([...line], model);
      assert.equal(a.model, 'gpt-5', JSON.stringify([line, model]));
      assert.equal(a.anchor, plain.anchor, JSON.stringify([line, model]));
    }
    assert.notEqual(anchorWith(['--model', 'cursor-acp/gpt-5-mini']).anchor, plain.anchor, 'another model, another anchor');
  });
  test('an edited assistant message is a divergence', () => {
    const d = decideFor(turn2, [branchAfter(turn1, { text: 'Noted. The port is 9090.' })]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'diverged');
    assert.match(d.detail, /message 3 \(assistant\) differs from what cursor replied/);
    // Sent along by a later turn (a fresh chat got all of turn 2), it is a message the chat was sent.
    const sent = decideFor({ ...turn2, messages: [...turn2.messages, asst('It is 8080.'), user('thanks')] }, [
      branchAfter(
        { ...turn2, messages: turn2.messages.map((m) => (m.role === 'assistant' ? asst('Noted!') : m)) },
        { text: 'It is 8080.' },
      ),
    ]);
    assert.equal(sent.reason, 'diverged');
    assert.match(sent.detail, /message 3 \(assistant\) differs from the assistant message the chat was sent/);
  });
  test('an edited, removed or reordered earlier message is a divergence', () => {
    const branch = branchAfter(turn1, reply1);
    const edited = {
      ...turn2,
      messages: [sys('You are a coding agent.'), user('remember: the port is 8081'), asst('Noted. The port is 8080.'), user('?')],
    };
    const removed = { ...turn2, messages: [user('remember: the port is 8080'), asst('Noted. The port is 8080.'), user('?')] };
    const reordered = {
      ...turn2,
      messages: [user('remember: the port is 8080'), sys('You are a coding agent.'), asst('Noted. The port is 8080.'), user('?')],
    };
    // An edited opener is another conversation (another anchor): its lookup finds no entry.
    assert.notEqual(analysisOf(edited).anchor, branch.anchor);
    for (const body of [removed, reordered]) {
      const d = decideFor(body, [branch]);
      assert.equal(d.decision, 'fresh');
      assert.equal(d.reason, 'diverged');
      assert.match(d.detail, /^0 of 3 known messages match; message 1/);
    }
    const editedLater = {
      ...turn2,
      messages: [
        sys('You are a coding agent.'),
        user('remember: the port is 8080'),
        asst('Noted. The port is 8080.'),
        user('q'),
        asst('a'),
        user('next'),
      ],
    };
    const branch2 = branchAfter({ ...turn2, messages: editedLater.messages.slice(0, 4) }, { text: 'a' });
    const changed = { ...editedLater, messages: editedLater.messages.map((m, i) => (i === 3 ? user('Q') : m)) };
    assert.equal(decideFor(editedLater, [branch2]).decision, 'resume-delta');
    assert.match(decideFor(changed, [branch2]).detail, /message 4 \(user\) was edited, removed or reordered/);
  });
  test('a transcript that stops inside the known history (a regenerated reply) is not resumed', () => {
    const d = decideFor(turn1, [branchAfter(turn1, reply1)]);
    assert.equal(d.reason, 'diverged');
    assert.match(d.detail, /dropped turns/);
  });
  test('nothing new after the known history', () => {
    const body = { ...turn1, messages: [...turn1.messages, asst('Noted. The port is 8080.')] };
    assert.equal(decideFor(body, [branchAfter(turn1, reply1)]).reason, 'nothing-new');
  });
  test('a tool continuation sends the results, the call they answer, and the instruction to continue', () => {
    const t1: Body = { messages: [user('read a.txt')], tools: [fn('read')] };
    const call = { id: 'call_1', name: 'read', args: '{"path":"a.txt"}' };
    const branch = branchAfter(t1, { text: '', toolCalls: [{ id: 'call_1', name: 'read' }] });
    const t2: Body = { ...t1, messages: [...t1.messages, asst(null, [call]), toolMsg('call_1', 'hello from a.txt')] };
    const d = decideFor(t2, [branch]);
    assert.equal(d.decision, 'resume-delta');
    assert.equal(
      d.prompt,
      `tool_call(id: call_1, name: read, args: {"path":"a.txt"})\nTOOL_RESULT (name: read, call_id: call_1):\nhello from a.txt\n\n${CONTINUE_LINE}`,
    );
  });
  test("a tool result for a call of an earlier reply, not cursor's last, is no delta: that call was answered already", () => {
    const t1: Body = { messages: [user('read a.txt')], tools: [fn('read')] };
    const call = { id: 'call_1', name: 'read', args: '{"path":"a.txt"}' };
    const t2: Body = { ...t1, messages: [...t1.messages, asst(null, [call]), toolMsg('call_1', 'hello from a.txt')] };
    const t3: Body = { ...t1, messages: [...t2.messages, asst('It says hello.'), toolMsg('call_1', 'hello again')] };
    const d = decideFor(t3, [branchAfter(t2, { text: 'It says hello.' })]);
    assert.deepEqual([d.decision, d.reason], ['fresh', 'unsafe-delta']);
    assert.match(d.detail, /message 5 answers tool call .*call_1.*, which cursor's last reply did not make/);
  });
  test("a tool result after the user's new text is never sent ahead of it: no delta", () => {
    const t1: Body = { messages: [user('read a.txt')], tools: [fn('read')] };
    const call = { id: 'call_1', name: 'read', args: '{"path":"a.txt"}' };
    const branch = branchAfter(t1, { text: '', toolCalls: [{ id: 'call_1', name: 'read' }] });
    const t2: Body = { ...t1, messages: [...t1.messages, asst(null, [call]), user('also this'), toolMsg('call_1', 'hello from a.txt')] };
    const d = decideFor(t2, [branch]);
    assert.deepEqual([d.decision, d.reason], ['fresh', 'unsafe-delta']);
    assert.match(d.detail, /message 4 is a tool result after the user's new text/);
    const before: Body = {
      ...t1,
      messages: [...t1.messages, asst(null, [call]), toolMsg('call_1', 'hello from a.txt'), user('also this')],
    };
    assert.equal(
      decideFor(before, [branch]).prompt,
      `tool_call(id: call_1, name: read, args: {"path":"a.txt"})\nTOOL_RESULT (name: read, call_id: call_1):\nhello from a.txt\n\n${CONTINUE_LINE}\n\nalso this`,
      'in the order they came, it is a delta',
    );
  });
  test('a tool call with another id than cursor made is a divergence', () => {
    const t1: Body = { messages: [user('read a.txt')], tools: [fn('read')] };
    const branch = branchAfter(t1, { text: '', toolCalls: [{ id: 'call_1', name: 'read' }] });
    const t2: Body = { ...t1, messages: [...t1.messages, asst(null, [{ id: 'call_2', name: 'read' }]), toolMsg('call_2', 'x')] };
    assert.equal(decideFor(t2, [branch]).reason, 'diverged');
  });
  test('an image in the new messages is never sent as a delta', () => {
    const t3 = {
      ...turn2,
      messages: [
        ...turn1.messages,
        asst('Noted. The port is 8080.'),
        user([
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ]),
      ],
    };
    const fresh = decideFor(t3, [branchAfter(turn1, reply1)]);
    assert.equal(fresh.decision, 'fresh');
    assert.equal(fresh.reason, 'unsafe-delta');
    assert.match(fresh.detail, /file or image/);
    const full = decideFor(t3, [branchAfter(turn1, reply1)], { settings: { unsafeDelta: 'resume-full' } });
    assert.equal(full.decision, 'resume-full');
    assert.equal(full.reason, 'unsafe-delta');
    assert.equal(full.prompt, analysisOf(t3).fullPrompt());
  });
  test('a new system or assistant message cannot be a delta', () => {
    const withSys = { ...turn2, messages: [...turn2.messages.slice(0, 3), sys('new rules'), user('go')] };
    assert.equal(decideFor(withSys, [branchAfter(turn1, reply1)]).reason, 'unsafe-delta');
  });
});

describe('branches', () => {
  const a2: Body = { ...turn1, messages: [...turn1.messages, asst('Noted. The port is 8080.'), user('use port A')] };
  const b2: Body = { ...turn1, messages: [...turn1.messages, asst('Noted. The port is 8080.'), user('use port B')] };
  const branchA = branchAfter(a2, { text: 'A it is' }, { chatId: 'chat-A', updatedAt: 10 });
  const branchB = branchAfter(b2, { text: 'B it is' }, { chatId: 'chat-B', updatedAt: 20 });
  test('siblings share an anchor', () => assert.equal(branchA.anchor, branchB.anchor));
  test('each branch resumes its own chat', () => {
    const a3 = { ...a2, messages: [...a2.messages, asst('A it is'), user('next A')] };
    const b3 = { ...b2, messages: [...b2.messages, asst('B it is'), user('next B')] };
    assert.equal(decideFor(a3, [branchA, branchB]).chatId, 'chat-A');
    assert.equal(decideFor(b3, [branchA, branchB]).chatId, 'chat-B');
  });
  test('a diverging branch never inherits a sibling chat: fresh, and it is recorded as a new branch', () => {
    const c2 = { ...turn1, messages: [...turn1.messages, asst('Noted. The port is 8080.'), user('use port C')] };
    const c3 = { ...c2, messages: [...c2.messages, asst('C'), user('and?')] };
    const d = decideFor(c3, [branchA, branchB]);
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'diverged');
    assert.equal(d.record, true);
    assert.equal(d.chatId, null);
  });
  test('the branch with the longest proven prefix wins', () => {
    const short = branchAfter(turn1, reply1, { chatId: 'short', updatedAt: 99 });
    const a3 = { ...a2, messages: [...a2.messages, asst('A it is'), user('next A')] };
    assert.equal(decideFor(a3, [short, branchA]).chatId, 'chat-A');
    assert.equal(decideFor(a3, [branchA, short]).chatId, 'chat-A', 'whatever order the cache lists them in');
  });
  test('of branches that prove as much, the most recently updated wins, whatever the order', () => {
    const older = branchAfter(turn1, reply1, { chatId: 'older', updatedAt: 10 });
    const newer = branchAfter(turn1, reply1, { chatId: 'newer', updatedAt: 20 });
    assert.equal(decideFor(turn2, [older, newer]).chatId, 'newer');
    assert.equal(decideFor(turn2, [newer, older]).chatId, 'newer');
  });
  test('a resume names the messages its chat knows: the record adds to exactly those (compare-and-set on count and version)', () => {
    const branch = branchAfter(turn1, reply1, { version: 7 });
    const known = turn1.messages.length + 1;
    const delta = decideFor(turn2, [branch]);
    assert.equal(delta.decision, 'resume-delta');
    assert.deepEqual([delta.baseCount, delta.baseVersion], [known, 7]);
    const withFile = {
      ...turn2,
      messages: [...turn2.messages.slice(0, 3), user([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }])],
    };
    const full = decideFor(withFile, [branch], { settings: { unsafeDelta: 'resume-full' } });
    assert.equal(full.decision, 'resume-full');
    assert.deepEqual([full.baseCount, full.baseVersion], [known, 7]);
  });
});

describe('entry state', () => {
  const cases: Array<[string, Parameters<typeof branchAfter>[2], string[], string]> = [
    ['expired', { ttlLeftMs: 0 }, [], 'expired'],
    ['interrupted', { state: 'unknown' }, [], 'interrupted'],
    ['leased by another run', { leased: true }, [], 'busy'],
    ['gone from the chat store', {}, ['c6b62c6f-7ead-4fd6-9922-e952131177ff'], 'chat-missing'],
  ];
  for (const [name, overrides, missing, reason] of cases) {
    test(`${name} → fresh (${reason})`, () => {
      const d = decideFor(turn2, [branchAfter(turn1, reply1, overrides)], { missing });
      assert.equal(d.decision, 'fresh');
      assert.equal(d.reason, reason);
      assert.equal(d.chatId, null);
    });
  }
  test('interrupted says which: a turn cut short, or one in which cursor ran its calls itself (the caller may answer them again)', () => {
    const cut = decideFor(turn2, [branchAfter(turn1, reply1, { state: 'unknown', lastOutcome: 'interrupted' })]);
    assert.deepEqual([cut.reason, cut.detail], ['interrupted', "the chat's last turn never finished, so its history is unknown"]);
    const ran = decideFor(turn2, [branchAfter(turn1, reply1, { state: 'unknown', lastOutcome: 'success' })]);
    assert.deepEqual(
      [ran.reason, ran.detail],
      [
        'interrupted',
        "the chat's last turn ran its tool calls itself, before the caller could, so it holds results the caller may send again",
      ],
    );
  });
  test('no entry', () => assert.equal(decideFor(turn2, []).reason, 'no-entry'));
  test('no cache', () => {
    const d = decideFor(turn2, null);
    assert.equal(d.reason, 'no-cache');
    assert.equal(d.record, false);
  });
  test('the caller chose a chat itself: said first, whatever the transcript and the settings (the run forgets that chat)', () => {
    assert.equal(decideFor(turn2, [branchAfter(turn1, reply1)], { callerResume: true }).reason, 'caller-resume');
    // Its chat holds whatever the caller's history was, not this transcript: never recorded as holding it.
    for (const branches of [[branchAfter(turn1, reply1)], [], null]) {
      const d = decideFor(turn2, branches, { callerResume: true });
      assert.deepEqual([d.decision, d.record, d.chatId], ['fresh', false, null]);
    }
    assert.equal(decideFor(turn2, null, { callerResume: true, settings: { enabled: false } }).reason, 'caller-resume');
    const text = analyze(parseTranscript('remember: x'), { workspace: '/w', model: '', sideCallPatterns: PATTERNS });
    assert.equal(text.conversation.shape, 'text');
    for (const [callerResume, reason] of [
      [true, 'caller-resume'],
      [false, 'plain-text'],
    ] as const)
      assert.equal(decide({ analysis: text, settings: ON, callerResume, branches: null, missingChats: new Set() }).reason, reason);
  });
});

describe('chat IDs', () => {
  for (const bad of ['-chat', 'chat.1', 'a;b', 'a b', 'a\nb', '', '_x', 'x'.repeat(129), '../etc', 'ä', '--resume']) {
    test(`${JSON.stringify(bad).slice(0, 20)} is refused and never resumed`, () => {
      assert.equal(isSafeChatId(bad), false);
      const d = decideFor(turn2, [branchAfter(turn1, reply1, { chatId: bad })]);
      assert.equal(d.decision, 'fresh');
      assert.equal(d.reason, 'unsafe-chat-id');
      assert.equal(d.chatId, null);
    });
  }
  for (const good of ['c6b62c6f-7ead-4fd6-9922-e952131177ff', 'a', 'A_b-9', 'x'.repeat(128)]) {
    test(`${good.slice(0, 20)} is accepted`, () => assert.equal(isSafeChatId(good), true));
  }
});

describe('plain text', () => {
  test('a pre-flattened prompt goes as it is, fresh, never recorded', () => {
    const text = 'hello\n\nASSISTANT: hi\n';
    const analysis = analyze(parseTranscript(text), { workspace: '/w', model: '', sideCallPatterns: PATTERNS });
    const d = decide({ analysis, settings: ON, callerResume: false, branches: [], missingChats: new Set() });
    assert.equal(d.decision, 'fresh');
    assert.equal(d.reason, 'plain-text');
    assert.equal(d.prompt, text);
    assert.equal(d.record, false);
  });
});
