// Property-based tests (fast-check) for the parser and the decision engine. Each
// property states a guarantee of the README and throws random inputs at it; the
// run counts are modest so the suite stays fast, and each run is reproducible
// from the seed fast-check prints when a property fails.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { parseCallerArgs } from '../../src/agent/argv.js';
import { MAX_TAP_TOOL_CALLS, StreamTap } from '../../src/agent/stream-tap.js';
import type { Branch } from '../../src/cache/types.js';
import { resolveSettings } from '../../src/config.js';
import { parseRequest } from '../../src/helper/protocol.js';
import { planTurn, type TurnContext } from '../../src/turn/plan.js';
import { CHAT_ID_PATTERN, isSafeChatId } from '../../src/resume/chat-id.js';
import { analyze, decide, type Decision } from '../../src/resume/decide.js';
import { assistantDigest } from '../../src/resume/digests.js';
import { toolsFingerprint } from '../../src/resume/fingerprint.js';
import { renderDelta, renderFull } from '../../src/resume/render.js';
import { decodeUtf8 } from '../../src/transcript/decode.js';
import { TranscriptError } from '../../src/transcript/errors.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { PATTERNS, knowing, matchedTo, type KnownBranch } from '../support/engine.js';

const RUNS = { numRuns: 250 };

// ---- an abstract conversation, and the equivalence a prefix proof must respect ---------

type AMsg =
  | { role: 'system'; text: string }
  | { role: 'user'; segments: string[]; file: boolean }
  | { role: 'assistant'; text: string; calls: Array<{ id: string; name: string; args: string }> }
  | { role: 'tool'; id: string; name: string; output: string };

interface ATool {
  name: string;
  description: string;
  params: Record<string, unknown>;
}

/**
 * The oracle, written independently of src/resume: two messages are "the same" for
 * the chat when cursor would have seen the same thing. Messages the chat was sent
 * must be identical, an assistant one too (its text and its calls with their
 * arguments); the one it was not sent, cursor's reply, is matched as cursor wrote it
 * (its text up to whitespace, its tool calls by id and name).
 */
const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();
function sameMessage(a: AMsg, b: AMsg, sent: boolean): boolean {
  if (sent && a.role === 'assistant')
    return (
      b.role === 'assistant' &&
      a.text === b.text &&
      a.calls.length === b.calls.length &&
      a.calls.every((c, i) => c.id === b.calls[i]!.id && c.name === b.calls[i]!.name && c.args === b.calls[i]!.args)
    );
  switch (a.role) {
    case 'system':
      return b.role === 'system' && a.text === b.text;
    case 'user':
      return (
        b.role === 'user' && a.file === b.file && a.segments.length === b.segments.length && a.segments.every((s, i) => s === b.segments[i])
      );
    case 'assistant':
      return (
        b.role === 'assistant' &&
        squash(a.text) === squash(b.text) &&
        a.calls.length === b.calls.length &&
        a.calls.every((c, i) => c.id === b.calls[i]!.id && c.name === b.calls[i]!.name)
      );
    case 'tool':
      return b.role === 'tool' && a.id === b.id && a.name === b.name && a.output === b.output;
  }
}

function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${sortedJson((value as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}
const toolKey = (t: ATool): string => sortedJson([t.name, t.description, t.params]);
const sameTools = (a: ATool[], b: ATool[]): boolean => sortedJson(a.map(toolKey).sort()) === sortedJson(b.map(toolKey).sort());

// ---- rendering the abstract conversation as a caller would send it ----------------------

/** `repr` picks one of the equivalent ways a caller may write the same message. */
function toOpenAI(m: AMsg, repr: number): Record<string, unknown> {
  const parts = (texts: string[]) => texts.map((text) => ({ type: 'text', text }));
  switch (m.role) {
    case 'system':
      return { role: repr % 2 ? 'developer' : 'system', content: repr % 3 ? m.text : parts([m.text]) };
    case 'user': {
      const image = m.file ? [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] : [];
      const content = m.segments.length === 1 && !m.file && repr % 2 ? m.segments[0] : [...parts(m.segments), ...image];
      return { role: 'user', content };
    }
    case 'assistant': {
      const content = m.text === '' ? [null, '', undefined][repr % 3] : repr % 2 ? m.text : parts([m.text]);
      return {
        role: 'assistant',
        ...(content === undefined ? {} : { content }),
        ...(m.calls.length > 0
          ? { tool_calls: m.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })) }
          : {}),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.id, name: m.name, content: repr % 2 ? m.output : parts([m.output]) };
  }
}

function body(messages: AMsg[], tools: ATool[], repr: number[], toolOrder = 0): string {
  const order = tools.map((_, i) => i).sort((a, b) => ((a * 7 + toolOrder) % 5) - ((b * 7 + toolOrder) % 5) || a - b);
  return JSON.stringify({
    model: 'gpt-5',
    workspace: '/work/project',
    messages: messages.map((m, i) => toOpenAI(m, repr[i % repr.length] ?? 0)),
    tools: order
      .map((i) => tools[i]!)
      .map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.params } })),
  });
}

const analysisOf = (text: string) =>
  analyze(parseTranscript(text), { workspace: '/work/project', model: 'gpt-5', sideCallPatterns: PATTERNS });

// ---- generators -----------------------------------------------------------------------------

const text = fc.oneof(
  fc.constantFrom('remember: the port is 8080', 'fix the bug', 'a b', 'a  b', ' a b\n', 'ok', '', ' '),
  fc.string({ maxLength: 8 }),
);
const callId = fc.constantFrom('call_1', 'call_2', 'call_3');
const toolName = fc.constantFrom('read', 'bash', 'edit');
const call = fc.record({ id: callId, name: toolName, args: fc.constantFrom('{}', '{"path":"a"}', '{"path":"b"}') });
const system = fc.record({ role: fc.constant('system' as const), text });
const user = fc.record({
  role: fc.constant('user' as const),
  segments: fc.array(text, { minLength: 1, maxLength: 2 }),
  file: fc.constant(false),
});
const userWith = (file: boolean) => user.map((u) => ({ ...u, file }));
const assistant = fc.record({ role: fc.constant('assistant' as const), text, calls: fc.array(call, { maxLength: 2 }) });
const toolResult = fc.record({ role: fc.constant('tool' as const), id: callId, name: toolName, output: text });
const anyMessage: fc.Arbitrary<AMsg> = fc.oneof(system, userWith(false), userWith(true), assistant, toolResult);
const tool: fc.Arbitrary<ATool> = fc.record({
  name: toolName,
  description: fc.constantFrom('Read a file', 'Run a command', 'Edit a file', ''),
  params: fc.constantFrom<Record<string, unknown>>(
    { type: 'object' },
    { type: 'object', properties: { path: { type: 'string' } } },
    { properties: { path: { type: 'string' } }, type: 'object' },
    { type: 'object', properties: { mode: { enum: ['a', 'b'] } } },
    { type: 'object', properties: { mode: { enum: ['b', 'a'] } } },
  ),
});

/** The conversation a chat was started with: an opener, some history, ending where the caller waits for cursor. */
const conversation = fc
  .tuple(
    fc.option(system, { nil: undefined }),
    userWith(false),
    fc.array(anyMessage, { maxLength: 4 }),
    fc.oneof(userWith(false), toolResult),
  )
  .map(([sys, opener, middle, last]) => {
    const messages: AMsg[] = [
      ...(sys ? [sys] : []),
      { ...opener, segments: ['remember: opener', ...opener.segments.slice(1)] },
      ...middle,
      last,
    ];
    return messages;
  });

type Mutation =
  | { kind: 'edit'; at: number; message: AMsg }
  | { kind: 'delete'; at: number }
  | { kind: 'insert'; at: number; message: AMsg }
  | { kind: 'swap'; at: number; with: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'whitespace'; at: number }
  | { kind: 'call-id'; at: number }
  | { kind: 'args'; at: number }
  | { kind: 'tools'; how: 'add' | 'remove' | 'describe' | 'reorder' | 'params'; tool: ATool };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('edit' as const), at: fc.nat(12), message: anyMessage }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(12) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(12), message: anyMessage }),
  fc.record({ kind: fc.constant('swap' as const), at: fc.nat(12), with: fc.nat(12) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat(12) }),
  fc.record({ kind: fc.constant('whitespace' as const), at: fc.nat(12) }),
  // Weighted up: only this mutation tells a proof that compares call ids from one that ignores them.
  { arbitrary: fc.record({ kind: fc.constant('call-id' as const), at: fc.nat(12) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('args' as const), at: fc.nat(12) }), weight: 4 },
  fc.record({ kind: fc.constant('tools' as const), how: fc.constantFrom('add', 'remove', 'describe', 'reorder', 'params'), tool }),
);

function mutate(messages: AMsg[], tools: ATool[], m: Mutation): { messages: AMsg[]; tools: ATool[] } {
  const ms = [...messages];
  let ts = [...tools];
  const at = ms.length === 0 ? 0 : m.kind === 'tools' ? 0 : m.at % ms.length;
  switch (m.kind) {
    case 'edit':
      ms[at] = m.message;
      break;
    case 'delete':
      ms.splice(at, 1);
      break;
    case 'insert':
      ms.splice(at, 0, m.message);
      break;
    case 'swap': {
      if (ms.length === 0) break;
      const other = ms.length === 0 ? 0 : m.with % ms.length;
      [ms[at], ms[other]] = [ms[other]!, ms[at]!];
      break;
    }
    case 'truncate':
      ms.length = Math.min(ms.length, at);
      break;
    case 'whitespace': {
      // Whitespace changes: allowed inside cursor's last reply, an edit anywhere else.
      const target = ms[at];
      if (target?.role === 'assistant') ms[at] = { ...target, text: `\n ${target.text.replace(/ /g, '\t ')}  ` };
      else if (target?.role === 'user') ms[at] = { ...target, segments: target.segments.map((s) => `${s} `) };
      break;
    }
    case 'call-id': {
      // Only the id of one tool call changes: text, name and arguments stay (cursor's last reply most often).
      const withCalls = ms.flatMap((msg, i) => (msg.role === 'assistant' && msg.calls.length > 0 ? [i] : []));
      if (withCalls.length === 0) break;
      const i = withCalls[withCalls.length - 1 - (m.at % withCalls.length)]!;
      const target = ms[i] as AMsg & { role: 'assistant' };
      ms[i] = { ...target, calls: target.calls.map((c, k) => (k === 0 ? { ...c, id: `${c.id}_other` } : c)) };
      break;
    }
    case 'args': {
      // Only the arguments of one tool call change: cursor's last reply may carry them mapped, a message the chat was sent may not.
      const withCalls = ms.flatMap((msg, i) => (msg.role === 'assistant' && msg.calls.length > 0 ? [i] : []));
      if (withCalls.length === 0) break;
      const i = withCalls[withCalls.length - 1 - (m.at % withCalls.length)]!;
      const target = ms[i] as AMsg & { role: 'assistant' };
      ms[i] = { ...target, calls: target.calls.map((c, k) => (k === 0 ? { ...c, args: `{"mapped":${c.args}}` } : c)) };
      break;
    }
    case 'tools':
      if (m.how === 'add') ts.push(m.tool);
      else if (m.how === 'remove') ts = ts.slice(1);
      else if (m.how === 'describe' && ts[0]) ts[0] = { ...ts[0], description: `${ts[0].description}!` };
      else if (m.how === 'params' && ts[0]) ts[0] = { ...ts[0], params: m.tool.params };
      else if (m.how === 'reorder') ts.reverse();
      break;
  }
  return { messages: ms, tools: ts };
}

const safeChatId = fc.stringMatching(CHAT_ID_PATTERN);
/** Chat IDs a broken or hostile helper or cursor-agent might hand us. */
const hostileChatId = fc.oneof(
  fc.constantFrom(
    '',
    '-',
    '--resume',
    '-rf',
    '../x',
    'a b',
    'a;b',
    'chat.1',
    'a\n',
    '\nb',
    'a/b',
    'é',
    'a'.repeat(129),
    '_a',
    'a$(id)',
    'a\u0000b',
  ),
  fc.string({ unit: 'binary', maxLength: 140 }),
  safeChatId.map((s) => `${s}\n`),
  safeChatId.map((s) => `-${s}`),
);
const anyChatId = fc.oneof(safeChatId, hostileChatId);

interface Recorded {
  sequence: AMsg[];
  tools: ATool[];
  branch: KnownBranch;
}

const settingsArb = fc.constantFrom<'fresh' | 'resume-full'>('fresh', 'resume-full');

function recordedBranch(
  conv: AMsg[],
  reply: AMsg & { role: 'assistant' },
  tools: ATool[],
  repr: number[],
  overrides: Partial<Branch>,
): Recorded {
  const a = analysisOf(body(conv, tools, repr));
  return {
    sequence: [...conv, reply],
    tools,
    branch: {
      anchor: a.anchor ?? 'none',
      chatId: 'c6b62c6f-7ead-4fd6-9922-e952131177ff',
      toolsFingerprint: a.toolsFingerprint,
      workspace: '/work/project',
      model: 'gpt-5',
      ...knowing([...a.digests, assistantDigest(reply.text, reply.calls)]),
      bytesSaved: 0,
      version: 1,
      turns: 1,
      state: 'ok',
      lastOutcome: 'success',
      createdAt: 1,
      updatedAt: 2,
      ttlLeftMs: 60_000,
      leased: false,
      ...overrides,
    },
  };
}

const branchFlags = fc.record({
  ttlLeftMs: fc.constantFrom(60_000, 60_000, 60_000, 60_000, 0, -5),
  state: fc.constantFrom<'ok' | 'unknown'>('ok', 'ok', 'ok', 'ok', 'ok', 'unknown'),
  leased: fc.constantFrom(false, false, false, false, false, true),
});

// ---- the properties ---------------------------------------------------------------------------

describe('the decision engine, on random conversations, edits, branches and tool changes', () => {
  test('resume only when the prefix proof holds (checked against an independent oracle)', () => {
    let resumed = 0;
    fc.assert(
      fc.property(
        conversation,
        assistant,
        fc.array(tool, { maxLength: 3 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 6 }),
        fc.array(fc.oneof({ arbitrary: userWith(false), weight: 6 }, userWith(true), toolResult, assistant, system), { maxLength: 3 }),
        fc.oneof(fc.constant([]), fc.array(mutation, { minLength: 1, maxLength: 3 })),
        fc.option(fc.tuple(conversation, assistant), { nil: undefined }),
        branchFlags,
        fc.array(safeChatId, { minLength: 2, maxLength: 2 }).filter(([a, b]) => a !== b),
        fc.boolean(),
        settingsArb,
        (conv, reply, tools, repr, added, mutations, sibling, flags, [idA, idB], missing, unsafeDelta) => {
          const main = recordedBranch(conv, reply, tools, repr, { chatId: idA, ...flags });
          const branches = [main];
          if (sibling) branches.push(recordedBranch(sibling[0], sibling[1], tools, repr, { chatId: idB, updatedAt: 3 }));

          // The next turn: what the caller has (cursor's reply in it), new messages, then edits.
          let next = { messages: [...main.sequence, ...added], tools };
          for (const m of mutations) next = mutate(next.messages, next.tools, m);
          if (!next.messages.some((m) => m.role === 'user')) return;
          const analysis = analysisOf(body(next.messages, next.tools, [...repr].reverse(), mutations.length));
          const decision: Decision = decide({
            analysis,
            settings: { enabled: true, pluginResumes: false, unsafeDelta },
            callerResume: false,
            branches: branches.map((b) => matchedTo(b.branch, analysis)),
            missingChats: new Set(missing && idB !== undefined ? [idB] : []),
          });
          if (decision.decision === 'fresh') {
            assert.equal(decision.chatId, null);
            assert.equal(decision.prompt, analysis.fullPrompt(), 'a fresh chat gets the whole conversation');
            return;
          }
          resumed++;
          const chosen = branches.find((b) => b.branch.chatId === decision.chatId);
          assert.ok(chosen, 'the chat resumed is one of the branches');
          const { sequence } = chosen;
          assert.ok(next.messages.length > sequence.length, 'the transcript adds to what the chat knows');
          for (let i = 0; i < sequence.length; i++) {
            assert.ok(sameMessage(sequence[i]!, next.messages[i]!, i < sequence.length - 1), `message ${i} is what the chat knows`);
          }
          assert.ok(sameTools(chosen.tools, next.tools), 'the same tool definitions');
          assert.ok(isSafeChatId(decision.chatId));
          assert.ok(chosen.branch.ttlLeftMs > 0 && chosen.branch.state === 'ok' && !chosen.branch.leased);
          assert.ok(!(missing && decision.chatId === idB), 'a chat gone from the store is never resumed');
          if (decision.decision === 'resume-delta') {
            const fresh = next.messages.slice(sequence.length);
            assert.ok(
              fresh.every((m) => m.role === 'user' || m.role === 'tool'),
              'only user messages and tool results go as a delta',
            );
            assert.ok(
              fresh.every((m) => m.role !== 'user' || !m.file),
              'a file is never dropped into a text delta',
            );
            for (const m of fresh) {
              if (m.role === 'user') for (const s of m.segments) assert.ok(decision.prompt.includes(s), 'every new user text is sent');
              if (m.role === 'tool') assert.ok(decision.prompt.includes(m.output), 'every new tool result is sent');
            }
          } else {
            assert.equal(decision.prompt, analysis.fullPrompt(), 'resume-full sends the whole conversation');
          }
        },
      ),
      { numRuns: 600 },
    );
    assert.ok(resumed > 30, `the generator must also produce resumable turns (${resumed} of 600)`);
  });

  test('an untouched continuation with a new user message always resumes with only that message', () => {
    fc.assert(
      fc.property(
        conversation,
        assistant,
        fc.array(tool, { maxLength: 3 }),
        fc.array(fc.nat(5), { minLength: 1 }),
        fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s.trim() !== ''),
        (conv, reply, tools, repr, said) => {
          const main = recordedBranch(conv, reply, tools, repr, {});
          const next = [...main.sequence, { role: 'user' as const, segments: [said], file: false }];
          const analysis = analysisOf(body(next, tools, [...repr].reverse(), 3));
          const d = decide({
            analysis,
            settings: { enabled: true, pluginResumes: false, unsafeDelta: 'fresh' },
            callerResume: false,
            branches: [matchedTo(main.branch, analysis)],
            missingChats: new Set(),
          });
          if (analysis.sideCall) return;
          assert.equal(d.decision, 'resume-delta', d.detail);
          assert.equal(d.prompt, said);
        },
      ),
      RUNS,
    );
  });
});

describe('chat IDs: the rule holds wherever one could reach an argv', () => {
  const settings = resolveSettings({ CURSOR_RESUME_ENABLED: '1' }, {}, {}).settings;
  const reply = 'Noted.';
  const turn2 = JSON.stringify({
    model: 'gpt-5',
    messages: [
      { role: 'user', content: 'remember: a' },
      { role: 'assistant', content: reply },
      { role: 'user', content: 'next' },
    ],
  });
  const base = recordedBranch(
    [{ role: 'user', segments: ['remember: a'], file: false }],
    { role: 'assistant', text: reply, calls: [] },
    [],
    [1],
    {},
  ).branch;

  test('a cached chat ID that breaks the rule never reaches the argv; one that keeps it does', () => {
    fc.assert(
      fc.property(
        anyChatId,
        fc.constantFrom(['--print'], ['-p', '--output-format', 'json'], ['--print', '--force', '--model', 'gpt-5']),
        (chatId, args) => {
          const caller = parseCallerArgs(args);
          const context: TurnContext = { caller, settings, env: {}, workspace: '/work/project' };
          const analysis = analyze(parseTranscript(turn2), { workspace: '/work/project', model: 'gpt-5', sideCallPatterns: PATTERNS });
          const plan = planTurn(analysis, context, { branches: [matchedTo({ ...base, chatId }, analysis)] });
          const at = plan.argv.indexOf('--resume');
          if (isSafeChatId(chatId)) {
            assert.equal(plan.decision, 'resume-delta');
            assert.deepEqual(plan.argv.slice(at), ['--resume', chatId]);
          } else {
            assert.equal(plan.decision, 'fresh');
            assert.equal(plan.reason, 'unsafe-chat-id');
            assert.equal(at, -1);
            assert.equal(plan.chatId, null);
          }
          assert.equal(plan.argv[0], args[0], "the caller's flags come first");
        },
      ),
      { numRuns: 400 },
    );
  });

  test('the helper refuses to store or lease a chat ID that breaks the rule', () => {
    fc.assert(
      fc.property(anyChatId, (chatId) => {
        const record = {
          anchor: 'a'.repeat(32),
          chatId,
          toolsFingerprint: 'f'.repeat(32),
          workspace: '/w',
          model: 'gpt-5',
          base: null,
          added: 'c'.repeat(64),
          savedBytes: 0,
          startedAt: 0,
        };
        const recorded = parseRequest(JSON.stringify({ id: 1, op: 'record', record }));
        const leased = parseRequest(JSON.stringify({ id: 2, op: 'lease', anchor: 'a'.repeat(32), chatId, version: 1 }));
        assert.equal(recorded.ok, isSafeChatId(chatId));
        assert.equal(leased.ok, isSafeChatId(chatId));
      }),
      { numRuns: 400 },
    );
  });

  test("whatever session_id cursor-agent prints, only a safe one is taken as the chat's ID", () => {
    fc.assert(
      fc.property(fc.oneof(anyChatId, fc.jsonValue({ maxDepth: 2 })), fc.boolean(), (sessionId, change) => {
        const tap = new StreamTap();
        const line = (e: object) => Buffer.from(`${JSON.stringify(e)}\n`);
        tap.push(line({ type: 'system', subtype: 'init', session_id: sessionId }));
        tap.push(
          line({ type: 'assistant', message: { content: [{ type: 'text', text: 'x' }] }, session_id: change ? 'other-chat' : sessionId }),
        );
        tap.push(line({ type: 'result', subtype: 'success', result: 'x', session_id: sessionId }));
        // What run.ts records: a complete turn whose one session ID keeps the rule.
        const recordable = tap.results >= 1 && isSafeChatId(tap.sessionId) && !tap.sessionChanged;
        assert.equal(
          recordable,
          typeof sessionId === 'string' && CHAT_ID_PATTERN.test(sessionId) && (!change || sessionId === 'other-chat'),
        );
      }),
      { numRuns: 300 },
    );
  });
});

describe('the parser never throws anything but its own clear error', () => {
  function onlyTranscriptErrors(run: () => unknown): void {
    try {
      run();
    } catch (error) {
      if (!(error instanceof TranscriptError)) throw error;
      assert.doesNotMatch(error.message, /\n/, 'one line');
      assert.ok(error.message.length < 2000, 'a short message, whatever the input');
    }
  }
  /** Everything after a successful parse must not throw either: analysis, rendering, deciding. */
  function throughTheEngine(text: string | Uint8Array): boolean {
    let conversation;
    try {
      conversation = parseTranscript(text);
    } catch (error) {
      if (error instanceof TranscriptError) return false;
      throw error;
    }
    const analysis = analyze(conversation, { workspace: '/w', model: conversation.model ?? '', sideCallPatterns: PATTERNS });
    assert.equal(analysis.fullPromptBytes(), Buffer.byteLength(renderFull(conversation)), 'the full prompt is counted exactly');
    for (let k = 0; k <= conversation.messages.length; k++) renderDelta(conversation.messages, k);
    const known = knowing(analysis.digests.slice(0, Math.max(0, analysis.digests.length - 1)));
    decide({
      analysis,
      settings: { enabled: true, pluginResumes: false, unsafeDelta: 'resume-full' },
      callerResume: false,
      branches: [
        matchedTo(
          {
            ...recordedBranch([{ role: 'user', segments: ['x'], file: false }], { role: 'assistant', text: '', calls: [] }, [], [0], {})
              .branch,
            ...known,
            toolsFingerprint: toolsFingerprint(conversation.tools),
          },
          analysis,
        ),
      ],
      missingChats: new Set(),
    });
    return true;
  }

  test('arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (s) => onlyTranscriptErrors(() => throughTheEngine(s))),
      { numRuns: 500 },
    );
  });

  test('arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => onlyTranscriptErrors(() => throughTheEngine(bytes))),
      { numRuns: 300 },
    );
  });

  test('near-valid transcripts: random JSON anywhere in their structure, hostile keys spliced in', () => {
    const anyJson = fc.jsonValue({ maxDepth: 4 });
    /** Mostly the valid shape, sometimes any JSON value at all in its place. */
    const w = <T>(valid: fc.Arbitrary<T>): fc.Arbitrary<unknown> =>
      fc.oneof({ arbitrary: valid, weight: 40 }, { arbitrary: anyJson, weight: 1 });
    const str = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('', ' ', 'remember: x', 'a\u0000b', '\ud800'));
    const text = fc.record({ type: fc.constant('text'), text: w(str) });
    // OpenAI Chat Completions.
    const oaPart = fc.oneof(
      text,
      fc.record({ type: fc.constant('image_url'), image_url: w(fc.oneof(str, fc.record({ url: w(str) }))) }),
      fc.record({ type: fc.constant('input_audio'), input_audio: w(fc.record({ data: w(str), format: w(str) })) }),
      fc.record({
        type: fc.constant('file'),
        file: w(fc.record({ file_data: w(str), file_id: w(str), filename: w(str) }, { requiredKeys: [] })),
      }),
      fc.record({ type: fc.constant('refusal'), refusal: w(str) }),
    );
    const contentOf = (part: fc.Arbitrary<unknown>) => w(fc.oneof(str, fc.array(w(part), { maxLength: 3 })));
    const oaContent = contentOf(oaPart);
    const textContent = contentOf(text);
    const assistantContent = contentOf(fc.oneof(text, fc.record({ type: fc.constant('refusal'), refusal: w(str) })));
    const oaCall = fc.record(
      { id: w(str), type: w(fc.constant('function')), function: w(fc.record({ name: w(str), arguments: w(str) })) },
      { requiredKeys: ['id', 'function'] },
    );
    const oaMessage = fc.oneof(
      fc.record({ role: w(fc.constantFrom('system', 'developer')), content: textContent }),
      fc.record({ role: w(fc.constant('user')), content: oaContent }),
      fc.record(
        {
          role: w(fc.constant('assistant')),
          content: w(fc.option(assistantContent, { nil: null })),
          refusal: w(fc.option(str, { nil: null })),
          tool_calls: w(fc.array(w(oaCall), { maxLength: 2 })),
          function_call: fc.oneof(
            { arbitrary: fc.constant(null), weight: 9 },
            { arbitrary: fc.constant({ name: 'f', arguments: '{}' }), weight: 1 },
          ),
        },
        { requiredKeys: ['role'] },
      ),
      fc.record(
        { role: w(fc.constant('tool')), tool_call_id: w(str), name: w(str), content: textContent },
        { requiredKeys: ['role', 'tool_call_id', 'content'] },
      ),
    );
    const oaTool = fc.record({
      type: w(fc.constant('function')),
      function: w(fc.record({ name: w(str), description: w(str), parameters: anyJson }, { requiredKeys: ['name'] })),
    });
    // AI SDK prompt.
    const output = fc.oneof(
      fc.record({
        type: fc.constantFrom('content', 'content', 'text', 'error-text', 'json', 'x'),
        value: fc.oneof(
          anyJson,
          fc.array(fc.oneof(fc.constant(null), anyJson, fc.record({ type: fc.constant('text'), text: w(str) })), { maxLength: 3 }),
        ),
      }),
      anyJson,
    );
    const sdkPart = fc.oneof(
      text,
      fc.record({ type: fc.constant('file'), data: anyJson, mediaType: w(str), filename: w(str) }, { requiredKeys: ['type', 'data'] }),
      fc.record({ type: fc.constant('image'), image: anyJson, mimeType: w(str) }, { requiredKeys: ['type', 'image'] }),
      fc.record({ type: fc.constant('reasoning'), text: w(str) }),
      fc.record({ type: fc.constant('redacted-reasoning'), data: anyJson }),
      fc.record({ type: fc.constant('tool-call'), toolCallId: w(str), toolName: w(str), input: anyJson }),
      fc.record({ type: fc.constant('tool-result'), toolCallId: w(str), toolName: w(str), output }),
    );
    const sdkToolResult = fc.record({ type: fc.constant('tool-result'), toolCallId: w(str), toolName: w(str), output });
    const sdkMessage = fc.oneof(
      fc.record({ role: w(fc.constant('system')), content: w(str) }),
      fc.record({
        role: w(fc.constantFrom('user', 'assistant', 'tool')),
        content: w(fc.oneof(str, fc.array(w(sdkPart), { maxLength: 2 }))),
      }),
      fc.record({ role: w(fc.constant('tool')), content: w(fc.array(w(sdkToolResult), { minLength: 1, maxLength: 2 })) }),
    );
    const sdkTool = fc.oneof(
      fc.record(
        { type: fc.constant('function'), name: w(str), description: w(str), inputSchema: anyJson },
        { requiredKeys: ['type', 'name'] },
      ),
      fc.record({ type: fc.constant('provider-defined'), id: w(str), name: w(str), args: anyJson }),
    );
    const envelope = (...valid: string[]) =>
      w(
        fc.oneof(
          { arbitrary: fc.constantFrom(...valid), weight: 12 },
          { arbitrary: fc.constantFrom('-x', 'cursor-acp/--resume=x', 'a/-b', '', 'a\nb', 'x'.repeat(5000), 'relative'), weight: 1 },
        ),
      );
    const extras = {
      model: envelope('gpt-5', 'cursor-acp/gpt-5'),
      workspace: envelope('/abs/path', '/'),
      sessionId: envelope('ses_1', '-1'),
    };
    const transcript = fc.oneof(
      fc.record(
        { messages: w(fc.array(w(oaMessage), { minLength: 1, maxLength: 4 })), tools: w(fc.array(w(oaTool), { maxLength: 2 })), ...extras },
        { requiredKeys: ['messages'] },
      ),
      fc.record(
        { prompt: w(fc.array(w(sdkMessage), { minLength: 1, maxLength: 4 })), tools: w(fc.array(w(sdkTool), { maxLength: 2 })), ...extras },
        { requiredKeys: ['prompt'] },
      ),
    );
    // Keys JSON.stringify cannot produce from an object literal: prototype names, duplicates.
    const splice = fc.oneof(
      { arbitrary: fc.constant(''), weight: 4 },
      {
        arbitrary: fc.constantFrom(
          '"__proto__":{"messages":[]},',
          '"constructor":{"prototype":{"x":1}},',
          '"messages":7,',
          '"prompt":[],',
          '"__proto__":null,',
        ),
        weight: 1,
      },
    );
    let accepted = 0;
    fc.assert(
      fc.property(transcript, splice, fc.nat(2), (value, extra, spacing) => {
        const json = JSON.stringify(value, null, spacing);
        const text = extra === '' ? json : `{${extra}${json.slice(1)}`;
        onlyTranscriptErrors(() => {
          if (throughTheEngine(text)) accepted++;
        });
      }),
      { numRuns: 1500 },
    );
    assert.ok(accepted > 300, `enough of them are valid to reach the engine (${accepted})`);
  });

  test('any tool output, in either shape, renders', () => {
    const value = fc.jsonValue({ maxDepth: 3 });
    const output = fc.oneof(
      value,
      fc.record({
        type: fc.constantFrom('text', 'error-text', 'content', 'json', 'error-json'),
        value: fc.oneof(value, fc.array(value, { maxLength: 4 })),
      }),
    );
    fc.assert(
      fc.property(output, fc.boolean(), (out, aiSdk) => {
        const text = aiSdk
          ? JSON.stringify({
              prompt: [
                { role: 'user', content: 'x' },
                { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 't', input: {} }] },
                { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 't', output: out }] },
              ],
            })
          : JSON.stringify({
              messages: [
                { role: 'user', content: 'x' },
                { role: 'assistant', tool_calls: [{ id: 'a', function: { name: 't', arguments: '{}' } }] },
                { role: 'tool', tool_call_id: 'a', content: typeof out === 'string' ? out : JSON.stringify(out) },
              ],
            });
        assert.ok(throughTheEngine(text), 'accepted');
        const conversation = parseTranscript(text);
        assert.equal(typeof renderFull(conversation), 'string');
        const delta = renderDelta(conversation.messages, 2);
        assert.ok(delta.ok && delta.prompt.includes('TOOL_RESULT (name: t, call_id: a):'));
      }),
      { numRuns: 300 },
    );
  });

  test('a model or workspace that could be read as a flag never reaches the argv', () => {
    const settings = resolveSettings({}, {}, {}).settings;
    fc.assert(
      fc.property(
        fc.constantFrom('', 'cursor-acp/', 'a/', 'x.y_z-1/'),
        fc.constantFrom('-', '--', '--resume=', '-m'),
        fc.string({ maxLength: 8 }),
        fc.constantFrom('model', 'workspace'),
        (prefix, dash, rest, field) => {
          const value = field === 'workspace' ? `${dash}${rest}` : `${prefix}${dash}${rest}`;
          let conversation;
          try {
            conversation = parseTranscript(JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], [field]: value }));
          } catch (error) {
            assert.ok(error instanceof TranscriptError);
            return;
          }
          const context: TurnContext = { caller: parseCallerArgs(['--print']), settings, env: {}, workspace: '/w' };
          const analysis = analyze(conversation, { workspace: '/w', model: '', sideCallPatterns: PATTERNS });
          const plan = planTurn(analysis, context, { branches: [] });
          for (const [i, arg] of plan.argv.entries()) {
            if (i === 0) continue;
            assert.ok(
              !arg.startsWith('-') || ['--model', '--workspace', '--output-format'].includes(arg) || arg === '--print',
              `argv[${i}] = ${JSON.stringify(arg)} could be read as a flag`,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the fast readings give exactly what the slow ones give', () => {
  /** Values of every type for a field: mostly the right one (so that whole messages are often valid), near misses, absent. */
  const anyOf = <T>(right: fc.Arbitrary<T>) =>
    fc.oneof(
      { arbitrary: right, weight: 6 },
      { arbitrary: fc.constantFrom(undefined, null, 1, true, [], {}, ''), weight: 1 },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 6 }), weight: 1 },
    );
  const call = fc.record(
    {
      id: anyOf(fc.string({ maxLength: 4 })),
      type: fc.constantFrom(undefined, 'function', 'function', null, 'tool'),
      function: anyOf(
        fc.record({ name: anyOf(fc.string({ maxLength: 4 })), arguments: anyOf(fc.constant('{"a":1}')) }, { requiredKeys: [] }),
      ),
      extra: fc.constant(0),
    },
    { requiredKeys: [] },
  );
  const message = fc.record(
    {
      role: fc.constantFrom('system', 'developer', 'user', 'assistant', 'assistant', 'tool', 'tool', 'function', undefined, 3),
      content: anyOf(fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constant([{ type: 'text', text: 'part' }]))),
      tool_calls: fc.oneof(
        { arbitrary: fc.constantFrom(undefined, null, 'x', {}, []), weight: 1 },
        { arbitrary: fc.array(call, { maxLength: 2 }), weight: 1 },
      ),
      tool_call_id: anyOf(fc.string({ maxLength: 4 })),
      name: anyOf(fc.string({ maxLength: 4 })),
      refusal: anyOf(fc.string({ maxLength: 4 })),
      function_call: anyOf(fc.record({ name: fc.constant('f'), arguments: fc.constant('{}') })),
    },
    { requiredKeys: ['role'] },
  );
  const outcome = (text: string): { messages: unknown } | { error: string } => {
    try {
      return { messages: parseTranscript(text).messages };
    } catch (error) {
      if (!(error instanceof TranscriptError)) throw error;
      return { error: error.message };
    }
  };

  test('OpenAI messages read without the schema are read as the schema reads them, and refused alike', () => {
    // A message with its content in parts is never read fast: with it at the end, the schema reads every message.
    const slow = { role: 'user', content: [{ type: 'text', text: 'slow' }] };
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 3 }), (messages) => {
        const fast = outcome(JSON.stringify({ messages }));
        const schema = outcome(JSON.stringify({ messages: [...messages, slow] }));
        if ('error' in schema) assert.deepEqual(fast, schema);
        else assert.deepEqual(fast, { messages: (schema.messages as unknown[]).slice(0, -1) });
      }),
      { numRuns: 2000 },
    );
  });

  test('bytes decode as a strict UTF-8 decoder decodes them, or not at all', () => {
    const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    const reference = (bytes: Uint8Array): string | null => {
      try {
        return strict.decode(bytes);
      } catch {
        return null;
      }
    };
    const ascii = fc.uint8Array({ max: 0x7f, maxLength: 40 });
    const sequences = fc.array(fc.oneof(fc.uint8Array({ maxLength: 4 }), fc.constantFrom(...UTF8_EDGES)), { maxLength: 8 });
    fc.assert(
      fc.property(
        fc.oneof(
          ascii,
          fc.uint8Array({ maxLength: 40 }),
          sequences.map((parts) => Buffer.concat(parts)),
        ),
        (bytes) => {
          assert.equal(decodeUtf8(bytes), reference(bytes));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/** Encodings at the edges of UTF-8: a BOM, overlong forms, surrogates, the last code point and past it, truncated sequences. */
const UTF8_EDGES = [
  [0xef, 0xbb, 0xbf],
  [0xc0, 0x80],
  [0xe0, 0x80, 0x80],
  [0xed, 0xa0, 0x80],
  [0xed, 0xbf, 0xbf],
  [0xf4, 0x8f, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf0, 0x9f, 0x98],
  [0xc3],
  [0xc3, 0xa9],
  [0xe2, 0x82, 0xac],
].map((b) => Uint8Array.from(b));

describe("the stream tap reads cursor-agent's output the same however it is cut", () => {
  const event = fc.oneof(
    fc.record({ type: fc.constant('system'), subtype: fc.constant('init'), session_id: fc.constant('chat-1') }),
    fc.record({
      type: fc.constant('assistant'),
      message: fc.record({
        content: fc.array(fc.record({ type: fc.constant('text'), text: fc.string({ unit: 'grapheme', maxLength: 20 }) }), { maxLength: 2 }),
      }),
      session_id: fc.constant('chat-1'),
    }),
    fc.record({
      type: fc.constant('tool_call'),
      subtype: fc.constantFrom('started', 'completed'),
      call_id: fc.string({ maxLength: 6 }),
      tool_call: fc.constantFrom({ readToolCall: {} }, { function: { name: 'bash' } }),
      session_id: fc.constant('chat-1'),
    }),
    fc.record({
      type: fc.constant('result'),
      subtype: fc.constant('success'),
      is_error: fc.boolean(),
      result: fc.string({ unit: 'grapheme', maxLength: 30 }),
      session_id: fc.constantFrom('chat-1', 'chat-2'),
    }),
  );
  const line = fc.oneof(
    { arbitrary: event.map((e) => JSON.stringify(e)), weight: 6 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }).filter((x) => !x.includes('\n')), weight: 1 },
  );
  const view = (tap: StreamTap) => ({ ...tap, firstLine: undefined });

  test('any split into chunks, even inside a multi-byte character, gives the same reading', () => {
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), (lines, cuts, trailingNewline) => {
        const bytes = Buffer.from(lines.join('\n') + (trailingNewline ? '\n' : ''));
        const whole = new StreamTap();
        whole.push(bytes);
        whole.end();
        const pieces = new StreamTap();
        const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const cut of [...at, bytes.length]) {
          pieces.push(bytes.subarray(from, cut));
          from = cut;
        }
        pieces.end();
        assert.deepEqual(view(pieces), view(whole));
      }),
      RUNS,
    );
  });

  test('a line too long to read after the tool calls: the reply is not known to end at them', () => {
    const event = (fields: object) => `${JSON.stringify({ session_id: 'chat-1', ...fields })}\n`;
    const tap = new StreamTap(1024);
    tap.push(Buffer.from(event({ type: 'tool_call', subtype: 'started', call_id: 'call_1', tool_call: { readToolCall: {} } })));
    assert.deepEqual([tap.pastCalls, tap.replyText], [false, '']);
    tap.push(Buffer.from(event({ type: 'tool_call', subtype: 'completed', call_id: 'call_1', result: 'x'.repeat(2048) })));
    assert.deepEqual([tap.oversizedLines, tap.pastCalls, tap.replyText], [1, true, undefined]);
  });

  test("a call of Cursor's own tools is held as it starts; a function or MCP call, which cursor-agent runs itself, is not", () => {
    const started = (tool_call: object) =>
      Buffer.from(`${JSON.stringify({ type: 'tool_call', subtype: 'started', call_id: 'call_1', tool_call, session_id: 'chat-1' })}\n`);
    for (const [toolCall, unheld] of [
      [{ readToolCall: { args: { path: 'a' } } }, false],
      [{ shellToolCall: { args: { command: 'ls' } } }, false],
      [{ function: { name: 'lookup', arguments: '{}' } }, true],
      [{ mcpToolCall: { args: {} } }, true],
      [{ somethingNew: {} }, true],
      [[], true],
    ] as const) {
      const tap = new StreamTap();
      tap.push(started(toolCall));
      assert.deepEqual([tap.toolCalls.length, tap.unheldCall], [1, unheld], JSON.stringify(toolCall));
    }
  });

  test('tool calls beyond the cap are not kept: memory stays flat however many are printed', () => {
    const tap = new StreamTap();
    const started = (i: number) =>
      `${JSON.stringify({ type: 'tool_call', subtype: 'started', call_id: `call_${i}`, tool_call: { readToolCall: {} }, session_id: 'chat-1' })}\n`;
    for (let i = 0; i < MAX_TAP_TOOL_CALLS + 5000; i += 1000)
      tap.push(Buffer.from(Array.from({ length: 1000 }, (_, k) => started(i + k)).join('')));
    assert.equal(tap.toolCalls.length, MAX_TAP_TOOL_CALLS);
  });
});
