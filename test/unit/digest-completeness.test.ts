// Digest completeness: whatever reaches cursor-agent from a transcript (the fresh prompt,
// a delta, the model and workspace on its argv) must be covered by the anchor, the tool
// fingerprint or the message digests. Otherwise two transcripts that differ only there
// would be taken for the same history, and a resume would leave the chat with stale
// content. Each property takes a random transcript, changes one thing anywhere in its
// JSON (a field, a part, a key added, removed or moved), and checks the implication.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { analyze, type Analysis } from '../../src/resume/decide.js';
import { renderDelta, renderFull } from '../../src/resume/render.js';
import { renderOpencodeDelta } from '../../src/resume/render-opencode.js';
import { concreteModel } from '../../src/transcript/model.js';
import { TranscriptError } from '../../src/transcript/errors.js';
import { renderOpencodeMessage } from '../../src/transcript/opencode-text.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import type { Conversation } from '../../src/transcript/types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// ---- random transcripts, of every part kind both shapes accept ----------------------------

/** Short strings from an alphabet that makes whitespace, JSON look-alikes and collisions likely. */
const str = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '\t', '{', '"', ':', 'é'), maxLength: 6 });
const id = fc.constantFrom('c1', 'c2', 'c 3');
const name = fc.constantFrom('read', 'bash', 'Read');
const jsonish: fc.Arbitrary<Json> = fc.oneof(
  str,
  fc.integer({ min: -2, max: 2 }),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(fc.constantFrom('a', 'b', 'path'), str, { maxKeys: 3 }),
  fc.array(str, { maxLength: 2 }),
);
const junk = fc.dictionary(fc.constantFrom('name', 'providerOptions', 'x', 'cache_control'), jsonish, { maxKeys: 2 });
const withJunk = <T extends Record<string, Json>>(base: fc.Arbitrary<T>): fc.Arbitrary<Record<string, Json>> =>
  fc.tuple(base, junk).map(([b, j]) => ({ ...j, ...b }));

const oaTextParts = fc.array(withJunk(fc.record({ type: fc.constant('text'), text: str })), { minLength: 1, maxLength: 2 });
const oaUserPart = fc.oneof(
  withJunk(fc.record({ type: fc.constant('text'), text: str })),
  withJunk(
    fc.record({
      type: fc.constant('image_url'),
      image_url: fc.oneof(
        fc.constantFrom('data:image/png;base64,AA', 'https://x/y.png'),
        fc.record({ url: str, detail: fc.constant('low') }),
      ),
    }),
  ),
  fc.record({ type: fc.constant('input_audio'), input_audio: fc.record({ data: str, format: fc.constantFrom('wav', 'mp3') }) }),
  fc.record({
    type: fc.constant('file'),
    file: fc.record({ file_data: str, filename: str, file_id: str }, { requiredKeys: [] }),
  }),
);
const oaCall = fc.record({
  id,
  type: fc.constant('function'),
  function: fc.record({ name, arguments: fc.oneof(str, fc.constantFrom('{"a":1,"b":2}', '{"b":2,"a":1}', '{}')) }),
});
const oaMessage: fc.Arbitrary<Record<string, Json>> = fc.oneof(
  withJunk(fc.record({ role: fc.constantFrom('system', 'developer'), content: fc.oneof(str, oaTextParts) })),
  withJunk(fc.record({ role: fc.constant('user'), content: fc.oneof(str, fc.array(oaUserPart, { minLength: 1, maxLength: 3 })) })),
  withJunk(
    fc.record(
      {
        role: fc.constant('assistant'),
        content: fc.oneof(
          str,
          fc.constant(null),
          fc.array(
            fc.oneof(fc.record({ type: fc.constant('text'), text: str }), fc.record({ type: fc.constant('refusal'), refusal: str })),
            {
              maxLength: 2,
            },
          ),
        ),
        refusal: fc.oneof(str, fc.constant(null)),
        tool_calls: fc.array(oaCall, { maxLength: 2 }),
      },
      { requiredKeys: ['role'] },
    ),
  ),
  withJunk(
    fc.record(
      { role: fc.constant('tool'), tool_call_id: id, name, content: fc.oneof(str, oaTextParts) },
      { requiredKeys: ['role', 'tool_call_id', 'content'] },
    ),
  ),
);
const schema: fc.Arbitrary<Json> = fc.oneof(
  fc.constant({ type: 'object', properties: { path: { type: 'string' }, a: { type: 'number' } } }),
  fc.constant({ properties: { a: { type: 'number' }, path: { type: 'string' } }, type: 'object' }),
  fc.constant({}),
  fc.constant(null),
);
const oaTool = withJunk(
  fc.record({
    type: fc.constant('function'),
    function: withJunk(fc.record({ name, description: str, parameters: schema }, { requiredKeys: ['name'] })),
  }),
);
const openaiBody = fc.record(
  {
    model: fc.constantFrom('gpt-5', 'cursor-acp/gpt-5', 'sonnet-4'),
    sessionId: fc.constantFrom('s1', 's2'),
    messages: fc.array(oaMessage, { minLength: 1, maxLength: 6 }),
    tools: fc.array(oaTool, { maxLength: 2 }),
    tool_choice: fc.constantFrom('auto', 'none', 'required'),
    temperature: fc.constantFrom(0, 1),
  },
  { requiredKeys: ['messages'] },
);

const sdkOutput: fc.Arbitrary<Json> = fc.oneof(
  str,
  fc.record({ type: fc.constantFrom('text', 'error-text'), value: str }),
  fc.record({ type: fc.constantFrom('json', 'error-json'), value: jsonish }),
  fc.record({
    type: fc.constant('content'),
    value: fc.array(
      fc.oneof(fc.record({ type: fc.constant('text'), text: str }), fc.record({ type: fc.constant('media'), data: str, mediaType: str })),
      {
        maxLength: 2,
      },
    ),
  }),
);
const sdkText = withJunk(fc.record({ type: fc.constant('text'), text: str }));
const sdkFile = withJunk(
  fc.record(
    { type: fc.constant('file'), data: fc.oneof(str, fc.constant({ 0: 1 })), mediaType: str, mimeType: str, filename: str },
    { requiredKeys: ['type', 'data'] },
  ),
);
const sdkImage = withJunk(fc.record({ type: fc.constant('image'), image: str, mimeType: str }, { requiredKeys: ['type', 'image'] }));
const sdkCall = withJunk(
  fc.record(
    { type: fc.constant('tool-call'), toolCallId: id, toolName: name, input: jsonish, args: jsonish },
    { requiredKeys: ['type', 'toolCallId', 'toolName'] },
  ),
);
const sdkResult = withJunk(
  fc.record(
    { type: fc.constant('tool-result'), toolCallId: id, toolName: name, output: sdkOutput, result: jsonish },
    { requiredKeys: ['type', 'toolCallId', 'toolName'] },
  ),
);
const sdkMessage: fc.Arbitrary<Record<string, Json>> = fc.oneof(
  withJunk(fc.record({ role: fc.constant('system'), content: str })),
  withJunk(
    fc.record({
      role: fc.constant('user'),
      content: fc.oneof(str, fc.array(fc.oneof(sdkText, sdkFile, sdkImage), { minLength: 1, maxLength: 3 })),
    }),
  ),
  withJunk(
    fc.record({
      role: fc.constant('assistant'),
      content: fc.oneof(
        str,
        fc.array(
          fc.oneof(
            sdkText,
            sdkFile,
            withJunk(fc.record({ type: fc.constant('reasoning'), text: str })),
            fc.record({ type: fc.constant('redacted-reasoning'), data: str }),
            sdkCall,
            sdkResult,
          ),
          { maxLength: 3 },
        ),
      ),
    }),
  ),
  withJunk(fc.record({ role: fc.constant('tool'), content: fc.array(sdkResult, { maxLength: 2 }) })),
);
const sdkTool = fc.oneof(
  withJunk(
    fc.record(
      { type: fc.constant('function'), name, description: str, inputSchema: schema, parameters: schema },
      { requiredKeys: ['type', 'name'] },
    ),
  ),
  fc.record({ type: fc.constant('provider-defined'), id: fc.constantFrom('p.a', 'p.b'), name, args: jsonish }),
);
const sdkBody = fc.record(
  {
    model: fc.constantFrom('gpt-5', 'sonnet-4'),
    sessionId: fc.constantFrom('s1', 's2'),
    prompt: fc.array(sdkMessage, { minLength: 1, maxLength: 6 }),
    tools: fc.array(sdkTool, { maxLength: 2 }),
    providerOptions: jsonish,
  },
  { requiredKeys: ['prompt'] },
);

// ---- one change anywhere in a JSON value ---------------------------------------------------

type Path = Array<string | number>;

function paths(value: Json, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...at, i], out));
  else if (value !== null && typeof value === 'object') for (const k of Object.keys(value)) paths(value[k]!, [...at, k], out);
  return out;
}

const STRING_EDITS: Array<(s: string) => string> = [
  (s) => `${s} `,
  (s) => ` ${s}`,
  (s) => `${s}\n`,
  (s) => s.replace(/\s/, (c) => (c === ' ' ? '\n' : ' ')),
  (s) => s.replace(/\s+/, '$&$&'),
  (s) => `${s}a`,
  (s) => s.slice(1),
  (s) => s.toUpperCase(),
  () => '',
];

/** `value` with one change at `path`; `op` picks which. undefined when that change is none. */
function mutate(value: Json, path: Path, op: number): Json | undefined {
  if (path.length > 0) {
    const [head, ...rest] = path;
    const child = (value as Record<string | number, Json>)[head!]!;
    const changed = mutate(child, rest, op);
    if (changed === undefined) return undefined;
    if (Array.isArray(value)) return value.map((v, i) => (i === head ? changed : v));
    return { ...(value as Record<string, Json>), [head!]: changed };
  }
  if (typeof value === 'string') {
    const out = STRING_EDITS[op % STRING_EDITS.length]!(value);
    return out === value ? undefined : out;
  }
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'boolean') return !value;
  if (value === null) return op % 2 === 0 ? 'a' : {};
  if (Array.isArray(value)) {
    if (value.length === 0) return op % 2 === 0 ? ['a'] : [{}];
    const i = op % value.length;
    switch (op % 3) {
      case 0:
        return value.filter((_, j) => j !== i);
      case 1:
        return [...value.slice(0, i + 1), value[i]!, ...value.slice(i + 1)];
      default:
        return value.length < 2 ? undefined : [...value.slice(i + 1), ...value.slice(0, i + 1)];
    }
  }
  const keys = Object.keys(value);
  switch (op % 3) {
    case 0:
      return keys.length === 0 ? undefined : Object.fromEntries(keys.filter((_, j) => j !== op % keys.length).map((k) => [k, value[k]!]));
    case 1: {
      const key = ['name', 'text', 'filename', 'providerOptions', 'refusal', 'description'][op % 6]!;
      return key in value ? undefined : { ...value, [key]: 'a' };
    }
    default:
      // The same keys in another order.
      return keys.length < 2 ? undefined : Object.fromEntries([...keys].reverse().map((k) => [k, value[k]!]));
  }
}

// ---- what reaches cursor-agent, and what the cache tells apart ---------------------------------

function analysed(text: string): Analysis | undefined {
  let conversation: Conversation;
  try {
    conversation = parseTranscript(text);
  } catch (error) {
    if (error instanceof TranscriptError) return undefined;
    throw error;
  }
  // As a run takes them (plan.ts, input.ts): the transcript's model and workspace, where the command line has none.
  return analyze(conversation, {
    workspace: conversation.workspace ?? '/w',
    model: conversation.model === undefined ? '' : concreteModel(conversation.model),
    sideCallPatterns: [],
  });
}

/** The same JSON value with its object keys in one order. */
function sortedKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(sortedKeys);
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((k) => [k, sortedKeys(record[k])]),
  );
}

/** The heads of the plugin's frames that may change between turns (told by their text here, not by src/). */
const FREE_FRAMES = [
  'SYSTEM: opencode bridge mode is active.\n',
  'SYSTEM: OpenCode Task bridge mode is active.\n',
  'SYSTEM: Available OpenCode tools (use via tool calls): ',
];

/**
 * The conversation as the cache means to tell it apart (README, "Anchor" and "Tool fingerprint"):
 * the tools whatever their order, and JSON values (schemas, arguments and outputs given as objects)
 * whatever the order of their keys, which say the same to the model.
 */
function meaning(c: Conversation): Conversation {
  // The plugin's prompt: its bridge frames go with every delta, as the caller wrote them this turn, and its
  // tool list may change between turns (README, "The OpenCode plugin's prompt"); the rest is the text.
  if (c.layout) {
    const layout = c.layout.filter((b) => !('frame' in b) || !FREE_FRAMES.some((head) => b.text.startsWith(head)));
    return { ...c, layout, text: layout.map((b) => ('frame' in b ? b.text : renderOpencodeMessage(c.messages[b.message]!))).join('\n\n') };
  }
  const tools = c.tools.map((t) => ({ ...t, parameters: sortedKeys(t.parameters) }));
  tools.sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : JSON.stringify(x) > JSON.stringify(y) ? 1 : 0));
  const messages = c.messages.map((m) => ({
    ...m,
    parts: m.parts.map((p) =>
      p.type === 'tool-call' ? { ...p, input: sortedKeys(p.input) } : p.type === 'tool-result' ? { ...p, output: sortedKeys(p.output) } : p,
    ),
  }));
  return { ...c, tools, messages };
}

/** What cursor-agent gets of a fresh turn: its prompt, and the model and workspace on its argv. */
const freshView = (a: Analysis): string => JSON.stringify([renderFull(meaning(a.conversation)), a.model, a.workspace]);

/** What the cache tells two transcripts apart by: the anchor, the tools, and every message as it was sent. */
const identity = (a: Analysis, from = 0): string => JSON.stringify([a.anchor, a.toolsFingerprint, a.digests.slice(from)]);

const deltaOf = (a: Analysis, known: number): string => {
  const c = meaning(a.conversation);
  const d = c.shape === 'opencode-text' ? renderOpencodeDelta(c, known) : renderDelta(c.messages, known);
  return d.ok ? d.prompt : `refused: ${d.why}`;
};

/** Checks a transcript and its one-change twin; counts the changes that reached cursor-agent. */
function check(before: Json | string, after: Json | string, counts: { seen: number }): void {
  const a = analysed(typeof before === 'string' ? before : JSON.stringify(before));
  const b = analysed(typeof after === 'string' ? after : JSON.stringify(after));
  if (a === undefined || b === undefined || a.anchor === null) return;
  if (freshView(a) !== freshView(b)) {
    counts.seen++;
    assert.notEqual(identity(a), identity(b), `the fresh prompt changed, the cache would not see it:\n${freshView(a)}\n${freshView(b)}`);
  }
  // A delta after `known` messages sends the calls of message known-1 and every message from known on.
  const n = Math.min(a.digests.length, b.digests.length);
  for (let known = 1; known < n; known++) {
    if (deltaOf(a, known) !== deltaOf(b, known)) {
      assert.notEqual(identity(a, known - 1), identity(b, known - 1), `the delta after ${known} changed, the record would not see it`);
    }
  }
}

describe('every change that reaches cursor-agent changes the anchor, the tools or a digest', () => {
  for (const [shape, body] of [
    ['an OpenAI body', openaiBody],
    ['an AI SDK prompt', sdkBody],
  ] as const) {
    test(`${shape}: one change anywhere in its JSON`, () => {
      const counts = { seen: 0 };
      fc.assert(
        fc.property(body, fc.nat(), fc.nat(), (value, at, op) => {
          const all = paths(value as Json);
          const path = all[at % all.length]!;
          const after = mutate(value as Json, path, op);
          if (after !== undefined) check(value as Json, after, counts);
        }),
        { numRuns: 3000 },
      );
      assert.ok(counts.seen > 300, `enough changes reach cursor-agent (${counts.seen})`);
    });
  }
});

// ---- the OpenCode plugin's prompt ------------------------------------------------------------

const BRIDGE = 'SYSTEM: opencode bridge mode is active.\nRespond with one JSON object for a write.';
const TOOLS =
  'SYSTEM: You have access to the following tools. When you need to use one, respond with a tool_call in the standard OpenAI format.\n\nAvailable tools:\n- read: Read a file\n  Parameters: {"path":"string"}';
const LIST = 'SYSTEM: Available OpenCode tools (use via tool calls): bash, read';
const TASK = 'SYSTEM: OpenCode Task bridge mode is active.\nOpenCode owns the task tool.';
const CLOSING = 'The above tool calls have been executed. Continue your response based on these results.';
const words = fc.array(fc.constantFrom('alpha', 'b', ' ', '\n', '\t', '{"a":1}', 'USER:', ')'), { maxLength: 4 }).map((w) => w.join(''));
const callLine = fc
  .record({ id, name, args: fc.constantFrom('{}', '{"path":"a"}') })
  .map((c) => `tool_call(id: ${c.id}, name: ${c.name}, args: ${c.args})`);
const pluginBlock = fc.oneof(
  words.map((t) => `USER: ${t}`),
  fc.tuple(words, fc.array(callLine, { maxLength: 2 })).map(([t, calls]) => `ASSISTANT: ${[...(t ? [t] : []), ...calls].join('\n')}`),
  fc.tuple(id, fc.constantFrom('read', ''), words).map(([i, n, o]) => `TOOL_RESULT (${n ? `name: ${n}, ` : ''}call_id: ${i}): ${o}`),
);
const pluginPrompt = fc
  .record({
    bridge: fc.boolean(),
    tools: fc.boolean(),
    system: fc.array(
      words.map((t) => `SYSTEM: ${t}`),
      { maxLength: 2 },
    ),
    list: fc.boolean(),
    conversation: fc.array(pluginBlock, { minLength: 1, maxLength: 5 }),
    task: fc.boolean(),
  })
  .map((p) =>
    [
      ...(p.bridge ? [BRIDGE] : []),
      ...(p.tools ? [TOOLS] : []),
      ...p.system,
      ...(p.list && p.system.length > 0 ? [LIST] : []),
      'USER: hello',
      ...p.conversation,
      ...(p.conversation.some((b) => b.startsWith('TOOL_RESULT')) ? [CLOSING] : []),
      ...(p.task ? [TASK] : []),
    ].join('\n\n'),
  );
const EDITS = [' ', '\n', 'a', '\n\n', '\t', ')', ', ', 'USER: '];

describe("every change to the plugin's prompt that reaches cursor-agent changes the tools or a digest", () => {
  test('one character added, removed or replaced anywhere in it', () => {
    const counts = { seen: 0 };
    fc.assert(
      fc.property(pluginPrompt, fc.nat(), fc.nat(), fc.nat(2), (text, at, pick, how) => {
        const i = at % (text.length + 1);
        const piece = EDITS[pick % EDITS.length]!;
        const after =
          how === 0
            ? text.slice(0, i) + piece + text.slice(i)
            : how === 1
              ? text.slice(0, i) + text.slice(i + 1)
              : text.slice(0, i) + piece + text.slice(i + 1);
        if (after === text) return;
        const [a, b] = [analysed(text), analysed(after)];
        if (a?.conversation.shape !== 'opencode-text' || b?.conversation.shape !== 'opencode-text') return;
        check(text, after, counts);
      }),
      { numRuns: 3000 },
    );
    assert.ok(counts.seen > 300, `enough changes reach cursor-agent (${counts.seen})`);
  });
});
