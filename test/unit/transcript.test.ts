import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import * as z from '../../src/zod.js';
import { arrayOf, listOf, sharedSchemas, type ListOf } from '../../src/transcript/common.js';
import { toTranscriptError } from '../../src/transcript/schema-errors.js';
import { TranscriptError } from '../../src/transcript/errors.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { readInput } from '../../src/transcript/read-input.js';

const u = (content: unknown) => JSON.stringify({ messages: [{ role: 'user', content }] });

describe('bad transcripts: one clear message naming what and where', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['empty', '', /stdin is empty/],
    ['blank', ' \n\t ', /stdin is empty/],
    ['truncated JSON', '{"messages":[{"role":"user","content":"hi"}]', /not valid JSON/],
    ['trailing garbage', '{"messages":[{"role":"user","content":"hi"}]} trailing', /not valid JSON/],
    ['top-level array', '[{"role":"user","content":"hi"}]', /expected a JSON object/],
    ['no messages or prompt', '{"model":"gpt-5"}', /missing "messages".*or "prompt"/],
    ['both shapes', '{"messages":[],"prompt":[]}', /both "messages" and "prompt"/],
    ['messages not an array', '{"messages":{"role":"user"}}', /^messages: expected an array of messages$/],
    ['no messages at all', '{"messages":[]}', /^messages: expected at least one message$/],
    ['message not an object', '{"messages":["hi"]}', /^messages\[0\]: expected a message object$/],
    ['missing role', '{"messages":[{"content":"hi"}]}', /^messages\[0\]\.role: missing "role"/],
    ['unknown role', '{"messages":[{"role":"robot","content":"hi"}]}', /^messages\[0\]\.role: unknown role "robot"/],
    ['wrong content type', u(42), /^messages\[0\]\.content: expected a string or an array of parts$/],
    ['text part without text', u([{ type: 'text' }]), /^messages\[0\]\.content\[0\]\.text: missing; expected a string$/],
    ['text part with a number', u([{ type: 'text', text: 1 }]), /^messages\[0\]\.content\[0\]\.text: expected a string, got a number$/],
    ['unknown part type', u([{ type: 'video' }]), /^messages\[0\]\.content\[0\]\.type: unknown part type "video"/],
    ['part without type', u([{ text: 'x' }]), /^messages\[0\]\.content\[0\]\.type: a part needs a "type"/],
    ['tool message without tool_call_id', '{"messages":[{"role":"tool","content":"x"}]}', /^messages\[0\]\.tool_call_id: missing/],
    [
      'tool_calls not an array',
      '{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"tool_calls":{}}]}',
      /^messages\[1\]\.tool_calls: expected an array of tool calls$/,
    ],
    [
      'tool call arguments as an object',
      '{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":{}}}]}]}',
      /^messages\[1\]\.tool_calls\[0\]\.function\.arguments: expected a string of JSON arguments$/,
    ],
    [
      'a legacy function_call on an assistant message',
      '{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"Calling.","function_call":{"name":"f","arguments":"{}"}}]}',
      /^messages\[1\]\.function_call: the legacy "function_call" is not read; send the call in "tool_calls"$/,
    ],
    [
      'an assistant refusal that is not a string',
      '{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":null,"refusal":{"text":"no"}}]}',
      /^messages\[1\]\.refusal: expected a string, got an object$/,
    ],
    [
      'tools not an array',
      '{"messages":[{"role":"user","content":"x"}],"tools":{"read":{}}}',
      /^tools: expected an array of tool definitions$/,
    ],
    [
      'tool without function',
      '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}',
      /^tools\[0\]\.function: missing; expected an object$/,
    ],
    [
      'tool with a numeric name',
      '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":3}}]}',
      /^tools\[0\]\.function\.name: expected a string, got a number$/,
    ],
    [
      'AI SDK tool-result without toolName',
      '{"prompt":[{"role":"tool","content":[{"type":"tool-result","toolCallId":"a"}]}]}',
      /^prompt\[0\]\.content\[0\]\.toolName: missing/,
    ],
    [
      'AI SDK tool content as a string',
      '{"prompt":[{"role":"tool","content":"x"}]}',
      /^prompt\[0\]\.content: expected an array of tool-result parts$/,
    ],
    [
      'AI SDK unknown tool type',
      '{"prompt":[{"role":"user","content":"x"}],"tools":[{"type":"weird"}]}',
      /^tools\[0\]\.type: expected a tool of type "function" or "provider-defined"$/,
    ],
    [
      'absurd nesting',
      `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":${'['.repeat(200)}${']'.repeat(200)}}}]}`,
      /nested deeper than 64 levels/,
    ],
    ['model that is a flag', '{"messages":[{"role":"user","content":"x"}],"model":"--resume=x"}', /^model: "--resume=x" begins with "-"/],
    ['workspace that is a flag', '{"messages":[{"role":"user","content":"x"}],"workspace":"-rf"}', /^workspace: "-rf" begins with "-"/],
    ['relative workspace', '{"messages":[{"role":"user","content":"x"}],"workspace":"src"}', /^workspace: "src" is not an absolute path$/],
    [
      'workspace with a newline',
      '{"messages":[{"role":"user","content":"x"}],"workspace":"/a\\nb"}',
      /^workspace: contains a control character$/,
    ],
    ['model not a string', '{"messages":[{"role":"user","content":"x"}],"model":["gpt-5"]}', /^model: expected a string, got an array$/],
    ['empty model', '{"messages":[{"role":"user","content":"x"}],"model":""}', /^model: must not be empty$/],
    [
      'AI SDK file part without data',
      '{"prompt":[{"role":"user","content":[{"type":"file","mediaType":"image/png"}]}]}',
      /^prompt\[0\]\.content\[0\]\.data: missing; expected a value$/,
    ],
    [
      'AI SDK image part without image',
      '{"prompt":[{"role":"user","content":[{"type":"image"}]}]}',
      /^prompt\[0\]\.content\[0\]\.image: missing; expected a value$/,
    ],
    [
      'AI SDK redacted reasoning without data',
      '{"prompt":[{"role":"user","content":"x"},{"role":"assistant","content":[{"type":"redacted-reasoning"}]}]}',
      /^prompt\[1\]\.content\[0\]\.data: missing; expected a value$/,
    ],
    [
      'tool with an empty name',
      '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":""}}]}',
      /^tools\[0\]\.function\.name: must not be empty: a tool needs a name$/,
    ],
    [
      'AI SDK provider tool with an empty name',
      '{"prompt":[{"role":"user","content":"x"}],"tools":[{"type":"provider-defined","id":"x.y","name":""}]}',
      /^tools\[0\]\.name: must not be empty/,
    ],
    [
      'parameters that are a string',
      '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":"str"}}]}',
      /^tools\[0\]\.function\.parameters: expected a JSON schema \(an object\)$/,
    ],
    [
      'AI SDK parameters that are a number',
      '{"prompt":[{"role":"user","content":"x"}],"tools":[{"type":"function","name":"t","parameters":3}]}',
      /^tools\[0\]\.parameters: expected a JSON schema \(an object\)$/,
    ],
    [
      'tool calls on a user message',
      '{"messages":[{"role":"user","content":"x","tool_calls":[]}]}',
      /^messages\[0\]\.tool_calls: only an assistant message carries tool calls$/,
    ],
    [
      'tool calls on a tool message',
      '{"messages":[{"role":"tool","tool_call_id":"a","content":"x","tool_calls":[{}]}]}',
      /^messages\[0\]\.tool_calls: only an assistant message carries tool calls$/,
    ],
  ];
  for (const [name, input, expected] of cases) {
    test(name, () => {
      assert.throws(
        () => parseTranscript(input),
        (error: unknown) => {
          assert.ok(error instanceof TranscriptError, `a TranscriptError, not ${String(error)}`);
          assert.match(error.message, expected);
          assert.doesNotMatch(error.message, /\n/);
          return true;
        },
      );
    });
  }
});

describe('accepted shapes become one canonical conversation', () => {
  test('OpenAI body with system, user parts, tool calls and results', () => {
    const c = parseTranscript(
      JSON.stringify({
        model: 'cursor-acp/gpt-5',
        workspace: '/work/p',
        sessionId: 'ses_1',
        messages: [
          { role: 'system', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"p":1}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'out' },
        ],
        tools: [{ type: 'function', function: { name: 'read', description: 'r', parameters: { type: 'object' } } }],
      }),
    );
    assert.equal(c.shape, 'openai');
    assert.deepEqual([c.model, c.workspace, c.sessionId], ['cursor-acp/gpt-5', '/work/p', 'ses_1']);
    assert.deepEqual(c.messages[1]!.parts[1], { type: 'file', mediaType: 'image/png', data: 'data:image/png;base64,AA' });
    assert.deepEqual(c.messages[2]!.parts, [{ type: 'tool-call', id: 'c1', name: 'read', input: '{"p":1}' }]);
    // The tool message's name comes from the call it answers.
    assert.deepEqual(c.messages[3]!.parts, [{ type: 'tool-result', id: 'c1', name: 'read', output: 'out' }]);
    assert.deepEqual(c.tools, [{ name: 'read', description: 'r', parameters: { type: 'object' } }]);
  });
  test('AI SDK prompt with parts', () => {
    const c = parseTranscript(
      JSON.stringify({
        prompt: [
          { role: 'system', content: 'sys' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi' },
              { type: 'file', data: 'AAAA', mediaType: 'image/png' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'hmm' },
              { type: 'text', text: 'ok' },
              { type: 'tool-call', toolCallId: 't1', toolName: 'bash', input: { cmd: 'ls' } },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'bash', output: { type: 'text', value: 'a b' } }] },
        ],
        tools: [{ type: 'function', name: 'bash', description: 'run', inputSchema: { type: 'object' } }],
      }),
    );
    assert.equal(c.shape, 'ai-sdk');
    assert.equal(c.messages.length, 4);
    assert.deepEqual(c.messages[2]!.parts[2], { type: 'tool-call', id: 't1', name: 'bash', input: { cmd: 'ls' } });
    assert.deepEqual(c.tools[0], { name: 'bash', description: 'run', parameters: { type: 'object' } });
  });
  test('plain text that is not JSON is a pre-flattened prompt, kept byte for byte', () => {
    const text = 'fix the bug\n\nUSER: and the test\n\n  ';
    assert.deepEqual(parseTranscript(text), { shape: 'text', text, messages: [], tools: [] });
  });
  test("an assistant's refusal is what it said, after its text, in either reading", () => {
    const messages = (assistant: object) => [
      { role: 'user', content: 'x' },
      { role: 'assistant', ...assistant },
    ];
    // The second body has a message in parts, which only the schema reads.
    for (const tail of [[], [{ role: 'user', content: [{ type: 'text', text: 'y' }] }]]) {
      const of = (assistant: object) => parseTranscript(JSON.stringify({ messages: [...messages(assistant), ...tail] })).messages[1]!.parts;
      assert.deepEqual(of({ content: null, refusal: 'I cannot.' }), [{ type: 'text', text: 'I cannot.' }]);
      assert.deepEqual(of({ content: 'Sorry.', refusal: 'I cannot.' }), [
        { type: 'text', text: 'Sorry.' },
        { type: 'text', text: 'I cannot.' },
      ]);
      assert.deepEqual(of({ content: 'Fine.', refusal: null, function_call: null }), [{ type: 'text', text: 'Fine.' }]);
    }
  });
  test("a file part's media type is read from its data: URL", () => {
    const file = (file: object) => parseTranscript(u([{ type: 'file', file }])).messages[0]!.parts[0];
    assert.deepEqual(file({ file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' }), {
      type: 'file',
      mediaType: 'application/pdf',
      data: 'data:application/pdf;base64,JVBE',
      filename: 'a.pdf',
    });
    assert.deepEqual(file({ file_id: 'f1' }), { type: 'file', mediaType: 'application/octet-stream', data: 'file_id:f1' });
  });
  test('developer role is a system message', () => {
    assert.equal(
      parseTranscript('{"messages":[{"role":"developer","content":"d"},{"role":"user","content":"u"}]}').messages[0]!.role,
      'system',
    );
  });
  test('keys such as __proto__ and constructor in a schema stay plain data, and change nothing else', () => {
    const c = parseTranscript(
      '{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"__proto__":{"a":1},"constructor":{"b":2}}}}]}',
    );
    const parameters = c.tools[0]!.parameters as object;
    assert.deepEqual(Object.keys(parameters), ['__proto__', 'constructor'], 'own keys, kept');
    assert.equal(Object.getPrototypeOf(parameters), Object.prototype, 'not a prototype');
    assert.deepEqual(Object.getOwnPropertyDescriptor(parameters, '__proto__')?.value, { a: 1 });
  });
  test('duplicated keys: the last one wins, as in JSON.parse', () => {
    assert.deepEqual(parseTranscript('{"messages":[{"role":"user","content":"a","content":"b"}]}').messages[0]!.parts, [
      { type: 'text', text: 'b' },
    ]);
  });
  test('an OpenAI tool_calls of null on a user message is no call', () => {
    assert.deepEqual(parseTranscript('{"messages":[{"role":"user","content":"x","tool_calls":null}]}').messages[0]!.parts, [
      { type: 'text', text: 'x' },
    ]);
  });
});

describe('input bytes: "{" opens a JSON transcript; other JSON is refused; the rest is plain text as it came', () => {
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
  test('a UTF-8 byte-order mark before a JSON transcript is accepted', () => {
    assert.equal(parseTranscript(Buffer.concat([BOM, Buffer.from(u('hé'))])).shape, 'openai');
  });
  test('invalid UTF-8 inside a JSON transcript is refused', () => {
    assert.throws(() => parseTranscript(Buffer.from([0x20, 0x7b, 0xff, 0xfe, 0x7d])), /^TranscriptError: stdin: not valid UTF-8/);
  });
  test('a UTF-16 JSON transcript is refused as not UTF-8, not taken for a prompt', () => {
    assert.throws(() => parseTranscript(Buffer.from(`\ufeff${u('hi')}`, 'utf16le')), /not valid UTF-8/);
  });
  for (const [name, bytes] of [
    ['invalid UTF-8', Buffer.from('USER: caf\xe9 ok\n', 'latin1')],
    ['a byte-order mark', Buffer.concat([BOM, Buffer.from('USER: hi')])],
    ['a "[" that opens no JSON', Buffer.from('[draft] write a haiku')],
    ['words that begin like JSON', Buffer.from('nullable fields, 42 of them')],
    ['a "[" whose commas would count as too many JSON values', Buffer.from(`[note] ${'a,'.repeat(2_000_001)}]`)],
    ['a "[" whose brackets would nest too deep for JSON', Buffer.from(`[note] ${'['.repeat(70)} x ${']'.repeat(70)}`)],
  ] as const) {
    test(`plain text with ${name} keeps its bytes`, () => {
      const c = parseTranscript(bytes);
      assert.equal(c.shape, 'text');
      assert.deepEqual(c.raw, bytes);
    });
  }
  test('a broken byte is shown as U+FFFD in the text (what --dry-run prints)', () => {
    assert.equal(parseTranscript(Buffer.from('caf\xe9', 'latin1')).text, 'caf\ufffd');
  });
  for (const [input, got] of [
    ['"fix the bug"', 'a string'],
    [' 42\n', 'a number'],
    ['true', 'true'],
    ['null', 'null'],
    ['[1]', 'an array'],
  ] as const) {
    test(`JSON ${input.trim()} is no transcript`, () => {
      assert.throws(
        () => parseTranscript(Buffer.from(input)),
        new RegExp(
          `^TranscriptError: transcript: expected a JSON object \\(an OpenAI Chat Completions body or an AI SDK prompt\\), got ${got}$`,
        ),
      );
    });
  }
  test('JSON values are counted before parsing, outside strings only', () => {
    const tool = (parameters: string) =>
      `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"enum":${parameters}}}}]}`;
    assert.throws(
      () => parseTranscript(tool(`[${'0,'.repeat(2_000_000)}0]`)),
      /^TranscriptError: stdin: JSON with more than 2,000,000 values, the limit/,
    );
    assert.equal(parseTranscript(tool(`[${'0,'.repeat(1_999_000)}0]`)).shape, 'openai');
    // Commas, brackets and escaped quotes inside strings are text: neither values nor nesting.
    assert.equal(parseTranscript(tool(JSON.stringify(`a\\"${',['.repeat(2_100_000)}\\`))).shape, 'openai');
    assert.throws(() => parseTranscript(tool(`["\\\\",${'['.repeat(70)}${']'.repeat(70)}]`)), /nested deeper than 64 levels/);
  });
  test('input over the cap is refused without reading on', async () => {
    async function* chunks() {
      for (let i = 0; i < 100; i++) yield Buffer.alloc(1024, 0x61);
    }
    await assert.rejects(readInput(chunks(), 10 * 1024), /larger than/);
    assert.equal((await readInput(chunks(), 200 * 1024)).length, 100 * 1024);
  });
});

describe("listOf: arrays checked up to their first bad element (zod's own overflow the stack on 100,000s)", () => {
  sharedSchemas();
  // A schema of the transcripts' kinds: a list of objects holding lists, in a union, with a length check.
  const build = (list: ListOf) =>
    z.object({
      items: list(
        z.object({
          name: z.string(),
          parts: z.optional(
            z.union([z.string(), list(z.object({ type: z.literal('text'), n: z.number() }))], { error: 'string or parts' }),
          ),
        }),
        'expected an array of items',
      ).check(z.minLength(1, 'expected at least one item')),
      calls: z.optional(list(z.number())),
      // A list with no wording of its own: missing, null or a string is worded by zod's configuration.
      counts: list(z.number()),
    });
  const [quick, firstOnly] = [build(arrayOf), build(listOf)];
  const reading = (schema: typeof quick, value: unknown): unknown => {
    const parsed = z.safeParse(schema, value);
    return parsed.success ? parsed.data : toTranscriptError(parsed.error.issues, []).message;
  };

  test('the same reading as zod arrays: the same data, or the same first problem', () => {
    // Mostly well-formed, so that a bad element is often preceded by good ones.
    const goodPart = fc.record({ type: fc.constant('text'), n: fc.integer() });
    const part = fc.oneof({ arbitrary: goodPart, weight: 12 }, fc.record({ type: fc.constant('x'), n: fc.string() }), fc.constant(7));
    const item = fc.oneof(
      {
        arbitrary: fc.record(
          { name: fc.string(), parts: fc.oneof(fc.string(), fc.array(part, { maxLength: 4 })) },
          { requiredKeys: ['name'] },
        ),
        weight: 12,
      },
      fc.record({ name: fc.integer(), parts: fc.constant(null) }),
      fc.constant('item'),
    );
    const value = fc.record(
      {
        items: fc.oneof({ arbitrary: fc.array(item, { maxLength: 5 }), weight: 9 }, fc.constant({})),
        calls: fc.array(fc.oneof({ arbitrary: fc.integer(), weight: 9 }, fc.constant('c')), { maxLength: 3 }),
        counts: fc.oneof({ arbitrary: fc.array(fc.integer(), { maxLength: 2 }), weight: 30 }, fc.constantFrom(undefined, null, 'x')),
      },
      { requiredKeys: ['items', 'counts'] },
    );
    let [failed, passed] = [0, 0];
    fc.assert(
      fc.property(value, (v) => {
        const expected = reading(quick, v);
        assert.deepEqual(reading(firstOnly, v), expected);
        if (typeof expected === 'string') failed++;
        else passed++;
      }),
      { numRuns: 2000 },
    );
    assert.ok(failed > 200 && passed > 200, `${failed} refused and ${passed} read: both kinds must be common`);
  });

  test('200,000 bad elements: zod arrays overflow the stack, listOf names the first', () => {
    const value = { items: [{ name: 'a' }, ...Array(200_000).fill({ name: 5 })] };
    assert.throws(() => z.safeParse(quick, value), RangeError, 'the reason for listOf: if zod no longer overflows, listOf can go');
    assert.equal(reading(firstOnly, value), 'items[1].name: expected a string, got a number');
  });
});
