// A body whose messages all read plainly has the fields beside them (model, workspace,
// sessionId, tools) read by hand (plainBeside) when they are plainly valid, and by the
// schema (besideBySchema) otherwise. Whatever the body, the reading must be exactly the
// schema's: the same accept or refuse, the same value, the same error text. Bodies are
// generated valid, then bent one field at a time toward the edges of each rule.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { TranscriptError } from '../../src/transcript/errors.js';
import { besideBySchema, plainBeside } from '../../src/transcript/openai.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { mutation as mutationOf, outcome as outcomeOf, type Mutation as MutationOf } from '../support/mutations.js';

type Body = Record<string, unknown>;

const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('gpt-5', '/work/project', ''));
const schema = fc.oneof(
  fc.constant(null),
  fc.constant({ type: 'object', properties: { path: { type: 'string' } } }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
);
const toolDef = fc.record({
  type: fc.constant('function'),
  function: fc.record(
    { name: fc.string({ minLength: 1, maxLength: 6 }), description: text, parameters: schema },
    { requiredKeys: ['name'] },
  ),
});
const validBody: fc.Arbitrary<Body> = fc.record(
  {
    model: text,
    workspace: text,
    sessionId: text,
    tools: fc.oneof(fc.constant(null), fc.array(toolDef, { maxLength: 3 })),
    temperature: fc.constant(0.2),
  },
  { requiredKeys: [] },
);

/** Per field, values at and past the edges of its rule. */
const EDGES: Record<string, unknown[]> = {
  model: ['', 'x', null, 1, true, [], {}],
  workspace: ['', '/x', null, 0, false, ['x'], { a: 1 }],
  sessionId: ['', 's', null, 1.5, [], {}],
  tools: [null, [], {}, 'x', 1, [null], [1], [[]], [{}], [{ type: 'function' }], [{ type: 'function', function: { name: 'x' } }]],
  type: ['function', 'FUNCTION', '', null, 1, {}],
  function: [null, [], 'x', {}, { name: 'x' }],
  name: ['', 'x', 1, null, [], {}],
  description: ['', 'd', null, 1, {}, []],
  parameters: [null, {}, [], 'x', 1, true, { type: 'object' }],
};
type Place = 'top' | 'tool' | 'function';
/** Where a key lives: the body's own fields at the top, a tool's in tools[0], its function's in tools[0].function. */
const PLACES: Record<string, Place[]> = {
  model: ['top'],
  workspace: ['top'],
  sessionId: ['top'],
  tools: ['top'],
  type: ['tool'],
  function: ['tool'],
  name: ['function'],
  description: ['function'],
  parameters: ['function'],
};

type Mutation = MutationOf<Place>;

const mutation = mutationOf(EDGES, PLACES, ['top', 'tool', 'function'], ['__proto__', 'constructor', 'toString', 'messages'], 6);

/** The body as JSON text would give it, with one field set, added or removed at the top, in its first tool or in that tool's function. */
function bent(body: Body, change: Mutation): Body {
  const copy = structuredClone(body);
  const tool = Array.isArray(copy.tools) ? (copy.tools[0] as Body | undefined) : undefined;
  const target = change.where === 'top' ? copy : change.where === 'tool' ? tool : (tool as { function?: unknown } | undefined)?.function;
  if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
    const fields = target as Body;
    if (change.drop) delete fields[change.key];
    // defineProperty, not assignment: `__proto__` becomes a key like any other, as JSON.parse makes it.
    else Object.defineProperty(fields, change.key, { value: change.value, enumerable: true, configurable: true, writable: true });
  }
  return JSON.parse(JSON.stringify(copy)) as Body;
}

const outcome = (read: () => unknown) => outcomeOf(read, TranscriptError);
const bySchema = (body: Body) => outcome(() => besideBySchema(body));
/** What parseOpenAI reads: the hand checks' value when they take the body, else the schema's verdict. */
const read = (body: Body) => outcome(() => plainBeside(body) ?? besideBySchema(body));

describe('the fields beside plain messages get exactly the schema verdict', () => {
  test('every valid body is taken by the hand checks, as the schema gives it back', () => {
    fc.assert(
      fc.property(validBody, (generated) => {
        const body = JSON.parse(JSON.stringify(generated)) as Body;
        const schemas = bySchema(body);
        assert.ok('value' in schemas, JSON.stringify(schemas));
        assert.deepStrictEqual(plainBeside(body), schemas.value);
      }),
      { numRuns: 500 },
    );
  });

  test('every edge of every rule, one field at a time', () => {
    const bodies = fc.sample(validBody, { numRuns: 40, seed: 7 });
    assert.ok(
      bodies.some((b) => Array.isArray(b.tools) && b.tools.length > 0),
      'some bodies have a tool to bend',
    );
    for (const body of bodies) {
      for (const [key, values] of Object.entries(EDGES)) {
        for (const where of PLACES[key]!) {
          for (const change of [{ where, key, drop: true, value: null }, ...values.map((value) => ({ where, key, drop: false, value }))]) {
            const b = bent(body, change);
            assert.deepStrictEqual(read(b), bySchema(b), JSON.stringify(b));
          }
        }
      }
    }
  });

  test('a body bent at any field is read or refused as the schema decides, with its message', () => {
    fc.assert(
      fc.property(validBody, fc.array(mutation, { minLength: 1, maxLength: 3 }), (body, changes) => {
        let b = JSON.parse(JSON.stringify(body)) as Body;
        for (const change of changes) b = bent(b, change);
        const schemas = bySchema(b);
        assert.deepStrictEqual(read(b), schemas, JSON.stringify(b));
        if ('error' in schemas) assert.equal(plainBeside(b), undefined, JSON.stringify(b));
      }),
      { numRuns: 6000 },
    );
  });

  test('the bent bodies reach both verdicts at every place', () => {
    // Guards the generator: a property above that only ever saw refusals could not fail on a wrong acceptance.
    const seen = new Set<string>();
    fc.assert(
      fc.property(validBody, mutation, (body, change) => {
        const b = bent(body, change);
        seen.add(`${change.where} ${'value' in bySchema(b) ? 'accepted' : 'refused'}`);
      }),
      { numRuns: 3000, seed: 12 },
    );
    for (const where of ['top', 'tool', 'function']) {
      assert.ok(seen.has(`${where} accepted`) && seen.has(`${where} refused`), `${where}: ${[...seen].join(', ')}`);
    }
  });

  test('a whole transcript reads as it does when the full schema reads every message', () => {
    // A message with its content in parts is never read fast: with it at the end, the full schema reads the whole body.
    const slow = { role: 'user', content: [{ type: 'text', text: 'slow' }] };
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ];
    const transcript = (body: Body, withSlow: boolean) =>
      outcome(() => {
        const { messages: read, ...rest } = parseTranscript(
          JSON.stringify({ ...body, messages: withSlow ? [...messages, slow] : messages }),
        );
        return { ...rest, messages: withSlow ? read.slice(0, -1) : read };
      });
    fc.assert(
      fc.property(validBody, fc.array(mutation, { maxLength: 2 }), (body, changes) => {
        let b = body;
        for (const change of changes) b = bent(b, change);
        delete b.messages;
        delete b.prompt;
        assert.deepStrictEqual(transcript(b, false), transcript(b, true), JSON.stringify(b));
      }),
      { numRuns: 2000 },
    );
  });
});
