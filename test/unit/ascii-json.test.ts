// A large JSON body read as one-byte text with its non-ASCII characters as \u escapes
// (src/transcript/ascii-json.ts): the same value as JSON.parse of its UTF-8 text, or
// nothing (the ordinary path then reads it), and its bytes always as they came.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_RUNS, parseAsciiJson } from '../../src/transcript/ascii-json.js';
import { parseTranscript } from '../../src/transcript/parse.js';

/** `bytes` at the start of an ArrayBuffer with `room` bytes after them, as readStdin returns them. */
function roomy(bytes: Uint8Array | string, room = 64 * 1024): Buffer {
  const source = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const view = Buffer.from(new ArrayBuffer(source.length + room), 0, source.length);
  view.set(source);
  // What a reader leaves after the bytes: anything.
  Buffer.from(view.buffer, source.length).fill(0x5c);
  return view;
}

/** parseAsciiJson at any size, and a check that the bytes are as they came. */
function read(bytes: Buffer): object | undefined {
  const before = Buffer.from(bytes);
  const value = parseAsciiJson(bytes, 0);
  assert.deepEqual(bytes, before, 'the bytes were put back');
  return value;
}

const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('é', '’', '😀', '\\', '"', 'a', '\u2028', '\u0000', '\ufeff'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
});
const body = fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 4 }), fc.dictionary(text, text, { maxKeys: 3 })), {
  minKeys: 1,
  maxKeys: 6,
});

describe('a JSON body as one-byte text', () => {
  test('gives what JSON.parse of its UTF-8 gives, whatever its strings and keys hold', () => {
    fc.assert(
      fc.property(body, fc.integer({ min: 0, max: 3 }), (value, pad) => {
        const json = `${' \n\t'.slice(0, pad)}${JSON.stringify(value)}`;
        const got = read(roomy(json));
        if (/[\u0080-\uffff]/.test(json)) assert.deepEqual(got, JSON.parse(json));
        else assert.equal(got, undefined, 'pure ASCII is left to the ordinary path');
      }),
      { numRuns: 3000 },
    );
  });

  test('runs across the 64 KiB chunks it scans, and characters beyond U+FFFF', () => {
    const head = '{"pad":"';
    for (const boundary of [65536, 131072]) {
      // The run (4 + 2 + 3 + 4 bytes) starting up to 13 bytes before a chunk's end, or at its start.
      for (let at = boundary - 13; at <= boundary; at++) {
        const value = { pad: `${'x'.repeat(at - head.length)}😀é’😀`, t: 'tail é' };
        const json = JSON.stringify(value);
        assert.equal(Buffer.from(json).indexOf('😀'), at);
        assert.deepEqual(read(roomy(json)), value, String(at));
      }
    }
  });

  test('an escape already there, and an even run of backslashes before a character, read as JSON reads them', () => {
    const json = '{"a":"\\\\é","b":"\\u00e9é","c":"\\ud83d😀","d":"\\\\\\\\’"}';
    assert.deepEqual(read(roomy(json)), JSON.parse(json));
  });

  test('leaves to the ordinary path what it cannot read alike', () => {
    const cases: Array<[string, Buffer]> = [
      ['an odd run of backslashes before a character (\\é is no escape; \\\\u00e9 would be one)', roomy('{"a":"\\é"}')],
      ['three backslashes', roomy('{"a":"\\\\\\é"}')],
      ['a character outside a string', roomy('{"a":1é}')],
      ['a non-breaking space before the object', roomy('\u00a0{"a":"é"}')],
      ['a byte-order mark', roomy('\ufeff{"a":"é"}')],
      ['an array', roomy('["é"]')],
      ['pure ASCII', roomy('{"a":"e"}')],
      ['not UTF-8', roomy(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))],
      ['no room after the bytes', roomy('{"a":"é"}', 0)],
      ['too little room', roomy('{"a":"éé"}', 7)],
      ['not JSON', roomy('{"a":"é",}')],
      ['more runs than are worth it', roomy(JSON.stringify(Object.fromEntries(Array.from({ length: MAX_RUNS + 1 }, (_, k) => [k, 'é']))))],
      ['a long run (text in another script)', roomy(JSON.stringify({ a: 'ж'.repeat(20_000) }), 1024 * 1024)],
    ];
    for (const [name, bytes] of cases) assert.equal(read(bytes), undefined, name);
    // At the limit it still reads.
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: MAX_RUNS }, (_, k) => [k, 'é'])));
    assert.deepEqual(read(roomy(many)), JSON.parse(many));
  });

  test('too small a body, at the default size, is left to the ordinary path', () => {
    assert.equal(parseAsciiJson(roomy('{"a":"é"}')), undefined);
  });
});

describe('parseTranscript with the room after its bytes', () => {
  const large = {
    model: 'gpt-5',
    messages: [
      { role: 'system', content: 'You’re a careful assistant. ✓' },
      ...Array.from({ length: 6000 }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: `step ${k}: ${'word '.repeat(30)}` })),
      { role: 'user', content: 'Und jetzt: Grüße 😀' },
    ],
  };

  test('reads a large body with a few non-ASCII characters as it reads it without that room', () => {
    const json = JSON.stringify(large);
    assert.ok(json.length > 1024 * 1024);
    const bytes = roomy(json);
    assert.deepEqual(parseTranscript(bytes, { ownsRoomAfter: true }), parseTranscript(Buffer.from(json)));
    assert.equal(bytes.toString(), json);
  });

  test('a large body the fast path refuses gets the ordinary error', () => {
    const json = JSON.stringify(large).replace('Grüße', '\\\\\\ü');
    const error = (bytes: Buffer): string => {
      try {
        parseTranscript(bytes, { ownsRoomAfter: true });
      } catch (e) {
        return (e as Error).message;
      }
      return 'parsed';
    };
    let expected = '';
    try {
      JSON.parse(json);
    } catch (e) {
      expected = `stdin: not valid JSON (${(e as Error).message}); send one complete JSON object, or plain text that does not start with "{"`;
    }
    assert.equal(error(roomy(json)), expected);
  });
});
