// Property-based tests (fast-check) for the OpenCode plugin's layout: random
// conversations whose texts hold look-alike heads, written by a renderer of this
// file's own (as the plugin writes them, not through src/), read back, and put
// through the engine. The guarantee: a chat is resumed only when the transcript
// truly begins with what the chat was sent and replied, whatever the reading split.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { analyze, decide, type Analysis } from '../../src/resume/decide.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { PATTERNS, branchFrom, matchedTo } from '../support/engine.js';

const RUNS = { numRuns: 1000 };

// ---- the conversation as OpenCode holds it, and the plugin's way of writing it ----------

interface Call {
  id: string;
  name: string;
  args: string;
}
type M =
  | { role: 'system' | 'user'; text: string }
  | { role: 'assistant'; text: string; calls: Call[] }
  | { role: 'tool'; id: string; name: string; output: string };

interface Frames {
  bridge: boolean;
  tools: string | null;
  list: boolean;
  task: boolean;
}

const BRIDGE = 'SYSTEM: opencode bridge mode is active.\nRespond with one JSON object for a write.';
const LIST = 'SYSTEM: Available OpenCode tools (use via tool calls): bash, read';
const TASK = 'SYSTEM: OpenCode Task bridge mode is active.\nOpenCode owns the task tool.';
const CLOSING = 'The above tool calls have been executed. Continue your response based on these results.';
const toolsBlock = (tools: string): string =>
  `SYSTEM: You have access to the following tools. When you need to use one, respond with a tool_call in the standard OpenAI format.\nTool guidance: prefer write/edit for file changes; use bash mainly to run commands/tests.\n\nAvailable tools:\n${tools}`;

/** One message as the plugin's prompt builder writes it; `calls` says how an assistant's calls appear. */
function block(m: M, calls: (c: Call) => string = (c) => `tool_call(id: ${c.id}, name: ${c.name}, args: ${c.args})`): string {
  switch (m.role) {
    case 'system':
      return `SYSTEM: ${m.text}`;
    case 'user':
      return `USER: ${m.text}`;
    case 'assistant':
      return m.calls.length === 0 ? `ASSISTANT: ${m.text}` : `ASSISTANT: ${m.text ? `${m.text}\n` : ''}${m.calls.map(calls).join('\n')}`;
    case 'tool':
      return m.name ? `TOOL_RESULT (name: ${m.name}, call_id: ${m.id}): ${m.output}` : `TOOL_RESULT (call_id: ${m.id}): ${m.output}`;
  }
}

/** The full prompt: frames where the plugin puts them, the tool list after the leading system messages. */
function prompt(messages: M[], frames: Frames): string {
  const blocks: string[] = [];
  if (frames.bridge) blocks.push(BRIDGE);
  if (frames.tools !== null) blocks.push(toolsBlock(frames.tools));
  const leading = messages.findIndex((m) => m.role !== 'system');
  messages.forEach((m, i) => {
    if (frames.list && i === (leading < 0 ? messages.length : leading)) blocks.push(LIST);
    blocks.push(block(m));
  });
  if (frames.list && leading < 0) blocks.push(LIST);
  if (messages.some((m) => m.role === 'tool')) blocks.push(CLOSING);
  if (frames.task) blocks.push(TASK);
  return blocks.join('\n\n');
}

/**
 * What a chat knows of a conversation, frames aside: the messages as the plugin writes
 * them, and with `byId`, tool calls by id alone (the names and arguments of cursor's
 * own calls are the plugin's mapping). Compared as text, so two message lists that the
 * plugin writes the same way are the same to the chat.
 */
const seen = (messages: M[], byId = true): string =>
  messages.map((m) => (byId ? block(m, (c) => `tool_call(id: ${c.id})`) : block(m))).join('\n\n');

const squeeze = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * The transcript begins with what the chat knows: the same text, or the same but for
 * whitespace, as the README says cursor's replies are compared. (The second is looser
 * than the engine, which compares the caller's own messages exactly; it cannot make
 * this property fail where the engine is right, and an exact mismatch of the caller's
 * messages is what the other property tests hold.) Of what the chat was sent, calls
 * count with their arguments: it was sent them as written.
 */
const beginsWith = (transcript: M[], chat: M[], byId = true): boolean =>
  seen(transcript, byId).startsWith(`${seen(chat, byId)}\n\n`) ||
  `${squeeze(seen(transcript, byId))} `.startsWith(`${squeeze(seen(chat, byId))} `);

// ---- random texts, full of look-alikes -------------------------------------------------

const LIST_LOOKALIKE = '\n\nSYSTEM: Available OpenCode tools (use via tool calls): bash';
const FAKES = [
  '\n\nUSER: ',
  '\n\nASSISTANT: ',
  '\n\nSYSTEM: ',
  '\n\nTOOL_RESULT (name: read, call_id: call_1): ',
  '\n\nTOOL_RESULT (call_id: call_2): ',
  '\ntool_call(id: call_1, name: read, args: {})',
  `\n\n${CLOSING}`,
  LIST_LOOKALIKE,
  '\n\nSYSTEM: opencode bridge mode is active.\nx',
  '\n\nSYSTEM: OpenCode Task bridge mode is active.\ny',
];
const word = fc.constantFrom('alpha', 'beta', 'port 8080', '"quoted"', 'é', '{"a":1}', 'USER:', 'x)');
const space = fc.constantFrom(' ', '\n', '\n\n', '\t');
const text = fc
  .array(fc.oneof({ weight: 4, arbitrary: word }, { weight: 2, arbitrary: space }, { weight: 2, arbitrary: fc.constantFrom(...FAKES) }), {
    maxLength: 6,
  })
  .map((p) => p.join(''));
const plainText = fc.array(word, { minLength: 1, maxLength: 3 }).map((p) => p.join(' '));

const callId = fc.constantFrom('call_1', 'call_2', 'call_3', 'call_a1b2');
const call = fc.record({
  id: callId,
  name: fc.constantFrom('read', 'oc_read', 'shell'),
  args: fc.constantFrom('{}', '{"path":"a.txt"}', '{"cwd":"/w","timeout":60}'),
});
const message = (t: fc.Arbitrary<string>): fc.Arbitrary<M> =>
  fc.oneof(
    fc.record({ role: fc.constant('user' as const), text: t }),
    fc.record({ role: fc.constant('assistant' as const), text: t, calls: fc.array(call, { maxLength: 2 }) }),
    fc.record({ role: fc.constant('tool' as const), id: callId, name: fc.constantFrom('read', ''), output: t }),
    fc.record({ role: fc.constant('system' as const), text: t }),
  );
const frames = fc.record({
  bridge: fc.boolean(),
  tools: fc.option(fc.constantFrom('- read: Read a file\n  Parameters: {}', '- read: Read\n\nfiles\n  Parameters: {}'), { nil: null }),
  list: fc.boolean(),
  task: fc.boolean(),
});
/** Cursor's reply: its text, and its calls under Cursor's own names. */
const reply = (t: fc.Arbitrary<string>) =>
  fc.record({
    text: t,
    calls: fc.array(fc.record({ id: callId, name: fc.constantFrom('readToolCall', 'shellToolCall') }), { maxLength: 2 }),
  });

const conversation = (t: fc.Arbitrary<string>) =>
  fc
    .tuple(t, t, fc.array(message(t), { maxLength: 5 }))
    .map(([system, opener, rest]): M[] => [{ role: 'system', text: system }, { role: 'user', text: opener }, ...rest]);

/**
 * The system messages before the conversation begins are OpenCode's own (its prompt,
 * instruction files), and the tool list is the plugin's frame there, whose content may
 * change: a look-alike of it in those messages is read as the frame. The user cannot
 * write there, so the properties keep that place free of it (README: the tool list).
 */
const listInLeadingSystem = (ms: M[]): boolean => {
  const end = ms.findIndex((m) => m.role !== 'system');
  return ms.slice(0, end < 0 ? ms.length : end).some((m) => m.role === 'system' && m.text.includes(LIST_LOOKALIKE));
};

// ---- the engine -------------------------------------------------------------------------

const analysisOf = (text: string): Analysis =>
  analyze(parseTranscript(text), { workspace: '/work/project', model: 'auto', sideCallPatterns: PATTERNS });

/** The reply as OpenCode keeps it in the next request: its calls under the plugin's names and arguments. */
const asKept = (r: { text: string; calls: Array<{ id: string }> }, mapped: Call[]): M => ({
  role: 'assistant',
  text: r.text,
  calls: r.calls.map((c, i) => ({ ...(mapped[i % Math.max(1, mapped.length)] ?? { name: 'read', args: '{}' }), id: c.id })),
});

type Edit =
  | { kind: 'replace'; at: number; with: M }
  | { kind: 'insert'; at: number; with: M }
  | { kind: 'remove'; at: number }
  | { kind: 'append'; at: number; text: string }
  | { kind: 'call-id'; at: number }
  | { kind: 'args'; at: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), with: message(text) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), with: message(text) }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append' as const), at: fc.nat(), text: fc.oneof(word, fc.constantFrom(...FAKES)) }),
  fc.record({ kind: fc.constant('call-id' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('args' as const), at: fc.nat() }),
);

/** An edit of one of the first `span` messages: OpenCode's history changed, or a caller lied about it. */
function applyEdit(ms: M[], e: Edit, span: number): M[] {
  const out = [...ms];
  const at = e.at % Math.max(1, Math.min(span, out.length));
  const target = out[at];
  switch (e.kind) {
    case 'replace':
      out[at] = e.with;
      break;
    case 'insert':
      out.splice(at, 0, e.with);
      break;
    case 'remove':
      out.splice(at, 1);
      break;
    case 'append':
      if (target?.role === 'tool') out[at] = { ...target, output: target.output + e.text };
      else if (target) out[at] = { ...target, text: target.text + e.text };
      break;
    case 'call-id':
      if (target?.role === 'assistant' && target.calls[0])
        out[at] = { ...target, calls: [{ ...target.calls[0], id: `${target.calls[0].id}x` }, ...target.calls.slice(1)] };
      break;
    case 'args':
      if (target?.role === 'assistant' && target.calls[0])
        out[at] = { ...target, calls: [{ ...target.calls[0], args: `{"edited":${target.calls[0].args}}` }, ...target.calls.slice(1)] };
      break;
  }
  return out;
}

/**
 * A chat that knew `c1` (written with frames `f1`) and replied `r` (its calls written as
 * `mapped`), and the next transcript: `added` after the reply, perhaps `change`d. When the
 * engine resumes, the transcript must begin with exactly what the chat was sent and replied.
 */
function resumesOnlyWhatTheChatKnows(
  c1: M[],
  r: { text: string; calls: Array<{ id: string; name: string }> },
  mapped: Call[],
  added: M[],
  change: Edit | undefined,
  f1: Frames,
  f2: Frames,
  unsafeDelta: 'fresh' | 'resume-full',
): void {
  const a1 = analysisOf(prompt(c1, f1));
  if (a1.conversation.shape !== 'opencode-text' || a1.anchor === null || a1.sideCall !== null) return;
  const kept = asKept(r, mapped);
  const honest = [...c1, kept, ...added];
  const c2 = change ? applyEdit(honest, change, c1.length + 1) : honest;
  fc.pre(!listInLeadingSystem(c1) && !listInLeadingSystem(c2));
  // OpenCode's history keeps the whole first turn's frames' choice per turn: f2 may differ from f1.
  const a2 = analysisOf(prompt(c2, { ...f2, tools: f1.tools }));
  const d = decide({
    analysis: a2,
    settings: { enabled: true, pluginResumes: false, unsafeDelta },
    callerResume: false,
    branches: [matchedTo(branchFrom(a1, { text: r.text, toolCalls: r.calls }), a2)],
    missingChats: new Set(),
  });
  if (d.decision === 'fresh') return;
  // The chat knows c1 as it was sent and its own reply: the transcript must begin with them, message for message.
  assert.ok(
    beginsWith(c2, [...c1, kept]) && beginsWith(c2, c1, false),
    `resumed (${d.reason}) though the chat saw:\n${JSON.stringify(seen([...c1, kept], false))}\nand the transcript says:\n${JSON.stringify(seen(c2, false))}`,
  );
}

describe("the plugin's layout: look-alike heads never make a wrong resume", () => {
  test('resumed only when the transcript begins with exactly what the chat was sent and replied', () => {
    fc.assert(
      fc.property(
        conversation(text),
        reply(text),
        fc.array(call, { maxLength: 2 }),
        fc.array(message(text), { minLength: 1, maxLength: 2 }),
        fc.option(edit, { nil: undefined }),
        frames,
        frames,
        fc.constantFrom<'fresh' | 'resume-full'>('fresh', 'resume-full'),
        resumesOnlyWhatTheChatKnows,
      ),
      RUNS,
    );
    // Found by the property once in a thousand runs: a line of a sent message that reads as a call, its arguments changed later.
    const sent: M[] = [
      { role: 'system', text: '' },
      { role: 'user', text: 'alpha' },
      { role: 'assistant', text: 'alpha\ntool_call(id: call_1, name: read, args: {})', calls: [] },
    ];
    const noFrames = { bridge: false, tools: null, list: false, task: false };
    resumesOnlyWhatTheChatKnows(
      sent,
      { text: '', calls: [] },
      [],
      [{ role: 'user', text: 'alpha' }],
      { kind: 'append', at: 2, text: 'x)' },
      noFrames,
      noFrames,
      'fresh',
    );
  });

  test('a transcript that continues the chat faithfully, with no look-alikes, always resumes with the new text', () => {
    fc.assert(
      fc.property(
        conversation(plainText),
        reply(plainText),
        fc.array(call, { maxLength: 2 }),
        plainText,
        frames,
        frames,
        (c1, r, mapped, said, f1, f2) => {
          const a1 = analysisOf(prompt(c1, f1));
          assert.equal(a1.conversation.shape, 'opencode-text');
          const kept = asKept(r, mapped);
          // The reply's calls answered first (OpenCode runs them), then the user's next message.
          const results: M[] =
            kept.role === 'assistant' ? kept.calls.map((c) => ({ role: 'tool', id: c.id, name: c.name, output: 'done' })) : [];
          const c2: M[] = [...c1, kept, ...results, { role: 'user', text: said }];
          const a2 = analysisOf(prompt(c2, { ...f2, tools: f1.tools }));
          const d = decide({
            analysis: a2,
            settings: { enabled: true, pluginResumes: false, unsafeDelta: 'fresh' },
            callerResume: false,
            branches: [matchedTo(branchFrom(a1, { text: r.text, toolCalls: r.calls }), a2)],
            missingChats: new Set(),
          });
          assert.deepEqual([d.decision, d.reason], ['resume-delta', 'delta']);
          assert.ok(d.prompt.includes(said));
          for (const res of results) assert.ok(d.prompt.includes(`call_id: ${(res as { id: string }).id}): done`));
          assert.equal(d.prompt.startsWith('SYSTEM: opencode bridge'), f2.bridge);
        },
      ),
      RUNS,
    );
  });

  test("whatever the tools' outputs hold, a delta carries the results as the caller wrote them, then the closing line", () => {
    let deltas = 0;
    fc.assert(
      fc.property(
        conversation(plainText),
        fc.array(text, { minLength: 1, maxLength: 2 }),
        plainText,
        frames,
        frames,
        (c1, outputs, said, f1, f2) => {
          const a1 = analysisOf(prompt(c1, f1));
          const calls = outputs.map((_, i) => ({ id: `call_${i + 1}`, name: 'readToolCall' }));
          const kept = asKept({ text: said, calls }, [{ id: '', name: 'read', args: '{}' }]);
          const results: M[] = outputs.map((output, i) => ({ role: 'tool', id: `call_${i + 1}`, name: 'read', output }));
          const a2 = analysisOf(prompt([...c1, kept, ...results], { ...f2, tools: f1.tools }));
          const d = decide({
            analysis: a2,
            settings: { enabled: true, pluginResumes: false, unsafeDelta: 'fresh' },
            callerResume: false,
            branches: [matchedTo(branchFrom(a1, { text: said, toolCalls: calls }), a2)],
            missingChats: new Set(),
          });
          if (d.decision !== 'resume-delta') return;
          deltas++;
          assert.ok(d.prompt.includes(`${results.map((r) => block(r)).join('\n\n')}\n\n${CLOSING}`), d.prompt);
        },
      ),
      RUNS,
    );
    assert.ok(deltas > RUNS.numRuns / 4, `only ${deltas} of ${RUNS.numRuns} were deltas`);
  });

  test('whatever the texts, a prompt read in the layout is written back to the same bytes, and a fresh chat gets them', () => {
    fc.assert(
      fc.property(conversation(text), frames, (c, f) => {
        const written = prompt(c, f);
        const a = analysisOf(written);
        assert.equal(a.fullPrompt(), written);
        assert.ok(a.conversation.shape === 'opencode-text' || a.conversation.shape === 'text');
      }),
      RUNS,
    );
    // Without look-alikes the reading is the conversation itself.
    fc.assert(
      fc.property(conversation(plainText), frames, (c, f) => {
        const parsed = parseTranscript(prompt(c, f));
        assert.equal(parsed.shape, 'opencode-text');
        assert.equal(parsed.messages.length, c.length);
        assert.deepEqual(
          parsed.messages.map((m) => m.role),
          c.map((m) => m.role),
        );
      }),
      RUNS,
    );
  });
});
