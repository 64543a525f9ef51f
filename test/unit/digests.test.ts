// The digests' values are what a running helper holds: a change of value (however it
// is computed) makes every entry miss once, and needs a protocol version of its own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageDigests, replyDigestAt } from '../../src/resume/digests.js';
import { parseTranscript } from '../../src/transcript/parse.js';

const long = 'x'.repeat(1500);

test('message digests keep their values: short and long fields, multi-byte and lone surrogates, whitespace, JSON values', () => {
  const openai = parseTranscript(
    JSON.stringify({
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'héllo \u{1F600}' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
          ],
        },
        {
          role: 'assistant',
          content: '  Reading\n\tthe  file. ',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: long },
        { role: 'user', content: `lone \uD800 ${long}` },
        { role: 'assistant', content: 'one space only' },
      ],
    }),
  );
  assert.deepEqual(messageDigests(openai), [
    '1979dfc4f9fdc56588047ebe342e3eb8',
    '997030a52a197c46ca053cf2368c9692',
    '32a4a979637df1d7711f552b59a38d6f',
    'cf420d7f07dbd225d60ffcc0d34a9ad6',
    'd908de9f931f243187ab0bae35475293',
    'cf936be79c8ac9278ba23ef8b9781d8c',
  ]);
  const aiSdk = parseTranscript(
    JSON.stringify({
      prompt: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'hmm' },
            { type: 'tool-call', toolCallId: 't', toolName: 'bash', input: { z: 1, a: [long] } },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 't', toolName: 'bash', output: { type: 'json', value: { files: 2 } } }],
        },
      ],
    }),
  );
  assert.deepEqual(messageDigests(aiSdk), [
    '3e79fcc3dc420fa4963ce4b4fd94cfd2',
    'b7e83d0d2cfd51a932a3d356cd0f4223',
    '09a49ad098912533f571da1a612102bd',
  ]);
  assert.deepEqual(
    [replyDigestAt(openai, 2), replyDigestAt(openai, 5), replyDigestAt(aiSdk, 1)],
    ['c6674e7e126bf7f94c1e2b081d5eb998', '524117f77d39a71885ac2bb908e1be23', '06945142ff50890eabf56a8a0d643b98'],
  );
});

test('message digests keep their values: fields either side of the inline limit, short tool results, assistant messages of every form', () => {
  const c = parseTranscript(
    JSON.stringify({
      messages: [
        { role: 'developer', content: 'x'.repeat(1023) },
        { role: 'user', content: 'y'.repeat(1024) },
        {
          role: 'assistant',
          content: 'Let me   look.',
          tool_calls: [
            { id: 'c2', function: { name: 'read', arguments: '{}' } },
            { id: 'c3', function: { name: 'grep', arguments: '{"q":1}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c2', content: 'short output' },
        { role: 'tool', tool_call_id: 'c3', name: 'grep', content: 'é ok' },
        { role: 'assistant', tool_calls: [{ id: 'c4', function: { name: 'bash', arguments: '{}' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'two' },
            { type: 'text', text: 'parts' },
          ],
        },
        { role: 'user', content: '' },
      ],
    }),
  );
  assert.deepEqual(messageDigests(c), [
    'f54b9aee7908127ddaa95e96dad7bba2',
    'e9dbcc38ec19764d965b9f96be912580',
    'f0c0b65e7b5bc6dd32e684f1185dd222',
    'c506aaf53a7a2d3282bd1b015ecd7b17',
    '3495c6e0c17c163edd1fc5aff6fabe30',
    '1019b394a9d3d251b8f8bf879f55f4e4',
    '3fc6dfcd7a75b1498dddb4a73c91bcb3',
    '371ebf70ba663a6405c4dc2dbd19c4b8',
  ]);
  // The same assistant messages as cursor's replies: their text with whitespace normalised, their calls by id and name.
  assert.deepEqual(
    [2, 5, 6].map((i) => replyDigestAt(c, i)),
    ['fa0a7e900d9254349d6032b8d4db19dc', '3305837f80eead5ef49c2cc613385458', 'bbbdbe7ded3b95b7fe20137307aaae92'],
  );
});

test('an assistant message as the chat was sent it counts every byte of its text and its calls; as cursor replied, its text whitespace and its arguments do not', () => {
  const body = (text: string, args: string, reasoning = 'hmm') =>
    parseTranscript(
      JSON.stringify({
        prompt: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: reasoning },
              { type: 'text', text },
              { type: 'tool-call', toolCallId: 't', toolName: 'bash', input: JSON.parse(args) },
            ],
          },
        ],
      }),
    );
  const layout = (text: string, args: string) =>
    parseTranscript(`SYSTEM: be brief\n\nUSER: go\n\nASSISTANT: ${text}\ntool_call(id: call_1, name: read, args: ${args})`);
  for (const of of [body, layout]) {
    const one = of('Reading it.', '{"path":"a"}');
    const sent = (c: typeof one) => messageDigests(c)[1 + (of === layout ? 1 : 0)];
    const replied = (c: typeof one) => replyDigestAt(c, 1 + (of === layout ? 1 : 0));
    for (const [what, other] of [
      ['other arguments', of('Reading it.', '{"path":"b"}')],
      ['other whitespace', of('Reading  it.', '{"path":"a"}')],
    ] as const) {
      assert.notEqual(sent(other), sent(one), `${of.name}: ${what} as sent`);
      assert.equal(replied(other), replied(one), `${of.name}: ${what} as cursor replied`);
    }
    assert.notEqual(sent(one), replied(one), 'the two forms are tagged apart');
  }
  // A prompt never carries reasoning: the chat was not sent it.
  assert.equal(messageDigests(body('Reading it.', '{}', 'other thoughts'))[1], messageDigests(body('Reading it.', '{}'))[1]);
});

test('what follows a long field counts: the calls after a long text, the text after a long one', () => {
  const of = (args: string, after: string) =>
    parseTranscript(
      JSON.stringify({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: long },
              { type: 'text', text: after },
            ],
          },
          { role: 'assistant', content: long, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: args } }] },
        ],
      }),
    );
  const one = messageDigests(of('{"cmd":"ls"}', 'then this'));
  const other = messageDigests(of('{"cmd":"rm -rf /"}', 'then that'));
  assert.notEqual(other[1], one[1], "the call's arguments after a long text");
  assert.notEqual(other[0], one[0], 'a text part after a long one');
});

test('a file counts by its name too (the prompt names it), and a tool result by every lone surrogate of its output', () => {
  const file = (filename?: string) =>
    messageDigests(
      parseTranscript(
        JSON.stringify({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'file', file: { file_data: 'data:application/pdf;base64,AA', ...(filename === undefined ? {} : { filename }) } },
              ],
            },
          ],
        }),
      ),
    )[0];
  assert.equal(new Set([file('a.pdf'), file('b.pdf'), file(undefined), file('')]).size, 4);
  const result = (output: string) =>
    messageDigests(
      parseTranscript(
        JSON.stringify({
          messages: [
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'c1', content: output },
          ],
        }),
      ),
    )[1];
  // UTF-8 would write both as U+FFFD.
  assert.notEqual(result('bad \uD800'), result('bad \uDBFF'));
});
