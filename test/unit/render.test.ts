import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fullPromptBytes, renderFull } from '../../src/resume/render.js';
import { parseTranscript } from '../../src/transcript/parse.js';

test('the full prompt: tools block, one labelled block per message, the closing line after tool results', () => {
  const c = parseTranscript(
    JSON.stringify({
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Read a.txt' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'A' },
      ],
      tools: [{ type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object' } } }],
    }),
  );
  assert.equal(
    renderFull(c),
    [
      'SYSTEM: You have access to the following tools. Call one when it helps with the task.\nAvailable tools:\n- read: Read a file\n  Parameters: {"type":"object"}',
      'SYSTEM: Be brief.',
      'USER: Read a.txt\n[attached file: image/png, not included in this text prompt]',
      'ASSISTANT: Reading.\ntool_call(id: c1, name: read, args: {"path":"a.txt"})',
      'TOOL_RESULT (name: read, call_id: c1):\nA',
      'The above tool calls have been executed. Continue your response based on these results.',
    ].join('\n\n'),
  );
});

test('no tools, no tool results: neither block', () => {
  const c = parseTranscript(
    '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"bye"}]}',
  );
  assert.equal(renderFull(c), 'USER: hi\n\nASSISTANT: yo\n\nUSER: bye');
});

test('AI SDK tool output objects are unwrapped', () => {
  const c = parseTranscript(
    JSON.stringify({
      prompt: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't', toolName: 'bash', input: { cmd: 'ls' } }] },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 't', toolName: 'bash', output: { type: 'json', value: { files: 2 } } }],
        },
      ],
    }),
  );
  assert.match(
    renderFull(c),
    /ASSISTANT: \ntool_call\(id: t, name: bash, args: \{"cmd":"ls"\}\)\n\nTOOL_RESULT \(name: bash, call_id: t\):\n\{"files":2\}/,
  );
});

test('the full prompt is counted exactly without being rendered: multi-byte text, lone surrogates, every kind of block', () => {
  const texts = ['héllo wörld', '\u{1F600} emoji', 'lone \uD800 high', '\uDC00 lone low', '\uD83D', '\uDE00', ''];
  for (const text of texts) {
    const c = parseTranscript(
      JSON.stringify({
        messages: [
          { role: 'system', content: text },
          {
            role: 'user',
            content: [
              { type: 'text', text },
              { type: 'text', text },
            ],
          },
          { role: 'assistant', content: text, tool_calls: [{ id: text, type: 'function', function: { name: 'read', arguments: text } }] },
          { role: 'tool', tool_call_id: text, content: text },
        ],
        tools: [{ type: 'function', function: { name: 'read', description: text, parameters: { [text]: text } } }],
      }),
    );
    assert.equal(fullPromptBytes(c), Buffer.byteLength(renderFull(c)), JSON.stringify(text));
  }
  const plain = parseTranscript(Buffer.from('just a prompt \u00e9\n'));
  assert.equal(fullPromptBytes(plain), Buffer.byteLength(renderFull(plain)));
});
