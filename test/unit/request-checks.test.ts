// The helper checks a turn's requests by hand (hotRequest) and everything else with
// its schemas (checkRequest). Whatever the line, parseRequest must give exactly the
// schemas' verdict: the same accept or refuse, the same request, the same error text.
// Requests are generated valid, then bent one field at a time toward the edges of
// each rule (lengths, hex, control characters, integers, unknown and missing keys).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { checkRequest, hotRequest, MAX_DIGESTS_PER_LINE, MAX_PROBES, parseRequest } from '../../src/helper/protocol.js';
import { mutation as mutationOf, type Mutation as MutationOf } from '../support/mutations.js';

const hexOf = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: length, maxLength: length });
const digests = (min: number, max: number) => fc.integer({ min, max }).chain((n) => hexOf(n * 32));
const anchor = hexOf(32);
const chatId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,20}$/);
const count = fc.nat({ max: 1_000_000 });
const positive = fc.integer({ min: 1, max: 1_000_000 });
const outcome = fc.constantFrom('success', 'auth', 'quota', 'network', 'model', 'resume-failed', 'interrupted', 'error');
const state = fc.constantFrom('ok', 'unknown');
const text = fc.string({ minLength: 1, maxLength: 40 });

/** Optional fields present or absent, as a client sends them. */
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const defined = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

const record = fc
  .record({
    anchor,
    chatId,
    toolsFingerprint: fc.integer({ min: 16, max: 128 }).chain(hexOf),
    workspace: text,
    model: fc.string({ maxLength: 20 }),
    base: fc.option(fc.record({ version: positive, count: positive, prefix: hexOf(32), last: hexOf(32) }), { nil: null }),
    staged: optional(count),
    added: digests(0, 4),
    savedBytes: count,
    outcome: optional(outcome),
    state: optional(state),
    storeSeen: optional(fc.boolean()),
    startedAt: fc.oneof(fc.nat(), fc.double({ min: 0, max: 1e12, noNaN: true })),
  })
  .map(defined);

const HOT_OPS = ['hello', 'lookup', 'peek', 'prefixes', 'lease', 'release', 'append', 'record'];

/** A valid request of every op hotRequest takes. */
const validRequest: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ id: count, op: fc.constant('hello'), protocol: fc.integer({ min: -5, max: 5 }), version: fc.string({ maxLength: 64 }) }),
  fc.record({ id: count, op: fc.constantFrom('lookup', 'peek'), anchor }),
  fc.record({
    id: count,
    op: fc.constant('prefixes'),
    anchor,
    chatId,
    version: positive,
    at: fc.array(count, { minLength: 1, maxLength: MAX_PROBES }),
  }),
  fc.record({ id: count, op: fc.constant('lease'), anchor, chatId, version: count }),
  fc.record({ id: count, op: fc.constant('release'), outcome: optional(outcome), state: optional(state) }).map(defined),
  fc.record({ id: count, op: fc.constant('append'), digests: digests(1, 4) }),
  fc.record({ id: count, op: fc.constant('record'), record }),
);

const longest = MAX_DIGESTS_PER_LINE * 32;
const prefix = 'a'.repeat(32);
/** Per field, values at and past the edges of its rule. */
const EDGES: Record<string, unknown[]> = {
  id: [-1, 0, -0, 1.5, 2 ** 53 - 1, 2 ** 53, '1', null],
  op: ['lookup', 'record', 'hello', 'LOOKUP', 1],
  anchor: ['a'.repeat(31), 'a'.repeat(33), 'A'.repeat(32), 'g'.repeat(32), prefix],
  chatId: ['', '-a', '_a', 'a'.repeat(128), 'a'.repeat(129), 'a b', 'a\n'],
  version: [-1, 0, 1, 1.5, 2 ** 53, '1', '', 'v'.repeat(64), 'v'.repeat(65)],
  protocol: [-1, 0, 3, 1.5, 2 ** 53, -(2 ** 53), '3', null],
  at: [[], [0], [-1], [1.5], ['1'], Array.from({ length: MAX_PROBES }, () => 1), Array.from({ length: MAX_PROBES + 1 }, () => 1)],
  digests: ['', 'a'.repeat(31), 'a'.repeat(32), 'A'.repeat(32), 'a'.repeat(48), '0'.repeat(longest), '0'.repeat(longest + 32)],
  added: ['', 'a'.repeat(31), 'A'.repeat(32), 'a'.repeat(48), '0'.repeat(longest), '0'.repeat(longest + 32)],
  toolsFingerprint: ['a'.repeat(15), 'a'.repeat(16), 'a'.repeat(128), 'a'.repeat(129), 'A'.repeat(16), 'g'.repeat(16)],
  workspace: ['', 'x', 'x\ny', 'x\u007f', 'x\u0000', 'a'.repeat(4096), 'a'.repeat(4097)],
  model: ['', 'x\ty', 'a'.repeat(4096), 'a'.repeat(4097)],
  base: [null, {}, [], { version: 1, count: 1 }, { version: 1, count: 1, prefix }, { version: 1, count: 1, prefix, last: prefix, more: 1 }],
  staged: [-1, 0, 1.5, null],
  savedBytes: [-1, 0, 1.5, null],
  outcome: ['success', 'error', 'bogus', null],
  state: ['ok', 'unknown', 'bad', null],
  storeSeen: [true, false, 'true', 0, null],
  startedAt: [-1, -0.5, 0, 0.5, 1e15, '1', null],
  prefix: [prefix, 'a'.repeat(31), 'A'.repeat(32), 1],
  count: [-1, 0, 1, 1.5, '0'],
  last: [prefix, 'a'.repeat(31), 'a'.repeat(64), 'A'.repeat(32), 'g'.repeat(32), 1, null],
  record: [null, {}, []],
};

/** Where a key lives (the record's own fields in the record, its base's in the base, a request's at the top); any other key anywhere. */
const PLACES: Record<string, Array<'top' | 'record' | 'base'>> = {
  ...Object.fromEntries(['id', 'op', 'protocol', 'at', 'digests', 'record'].map((k) => [k, ['top']])),
  ...Object.fromEntries(
    ['toolsFingerprint', 'workspace', 'model', 'base', 'staged', 'added', 'savedBytes', 'storeSeen', 'startedAt'].map((k) => [
      k,
      ['record'],
    ]),
  ),
  ...Object.fromEntries(['prefix', 'count', 'last'].map((k) => [k, ['base']])),
  ...Object.fromEntries(['anchor', 'chatId', 'outcome', 'state'].map((k) => [k, ['top', 'record']])),
  version: ['top', 'base'],
};

type Mutation = MutationOf<'top' | 'record' | 'base'>;

/** A key a request must not carry, or one it may, and a value for it: mostly at the edges of its rule, sometimes anything. */
const mutation = mutationOf(EDGES, PLACES, ['top', 'record', 'base'], ['__proto__', 'constructor', 'toString', 'extra'], 8);

/** The request as a line, with one field set, added or removed at the top, in the record or in its base. */
function bent(request: Record<string, unknown>, change: Mutation): string {
  const copy = structuredClone(request);
  const target = (
    change.where === 'top' ? copy : change.where === 'record' ? copy.record : (copy.record as Record<string, unknown> | undefined)?.base
  ) as Record<string, unknown> | null | undefined;
  if (target === null || typeof target !== 'object') return JSON.stringify(copy);
  if (change.drop) {
    delete target[change.key];
    return JSON.stringify(copy);
  }
  // defineProperty, not assignment: `__proto__` becomes a key like any other, as JSON.parse makes it.
  Object.defineProperty(target, change.key, { value: change.value, enumerable: true, configurable: true, writable: true });
  return JSON.stringify(copy);
}

describe('hand-checked requests get exactly the schemas verdict', () => {
  test('every valid request of a turn is taken by the hand checks, as the schemas give it back', () => {
    fc.assert(
      fc.property(validRequest, (request) => {
        const line = JSON.stringify(request);
        const schemas = checkRequest(JSON.parse(line));
        assert.equal(schemas.ok, true, line);
        assert.ok(hotRequest(JSON.parse(line)), `the hand checks refused ${line}`);
        assert.deepStrictEqual(parseRequest(line), schemas);
      }),
      { numRuns: 500 },
    );
  });

  test('every edge of every rule, one field at a time, on requests of every op', () => {
    const requests = fc.sample(validRequest, { numRuns: 40, seed: 7 });
    assert.deepEqual(new Set(requests.map((r) => r.op)), new Set(HOT_OPS), 'every op among the requests');
    for (const request of requests) {
      for (const [key, values] of Object.entries(EDGES)) {
        for (const where of Object.hasOwn(PLACES, key) ? PLACES[key]! : (['top'] as const)) {
          for (const change of [{ where, key, drop: true, value: null }, ...values.map((value) => ({ where, key, drop: false, value }))]) {
            const line = bent(request, change);
            assert.deepStrictEqual(parseRequest(line), checkRequest(JSON.parse(line)), line.slice(0, 300));
          }
        }
      }
    }
  });

  test('a request bent at any field is accepted or refused as the schemas decide, with their message', () => {
    fc.assert(
      fc.property(validRequest, fc.array(mutation, { minLength: 1, maxLength: 3 }), (request, changes) => {
        let line = JSON.stringify(request);
        for (const change of changes) line = bent(JSON.parse(line) as Record<string, unknown>, change);
        const schemas = checkRequest(JSON.parse(line));
        assert.deepStrictEqual(parseRequest(line), schemas, line);
        if (!schemas.ok) assert.equal(hotRequest(JSON.parse(line)), undefined, line);
      }),
      { numRuns: 6000 },
    );
  });

  test('the bent requests reach both verdicts for every op', () => {
    // Guards the generator: a property above that only ever saw refusals could not fail on a wrong acceptance.
    const seen = new Set<string>();
    fc.assert(
      fc.property(validRequest, mutation, (request, change) => {
        const line = bent(request, change);
        const result = checkRequest(JSON.parse(line));
        seen.add(`${String(request.op)} ${result.ok ? 'accepted' : 'refused'}`);
      }),
      { numRuns: 3000, seed: 12 },
    );
    for (const op of HOT_OPS) {
      assert.ok(seen.has(`${op} accepted`) && seen.has(`${op} refused`), `${op}: ${[...seen].join(', ')}`);
    }
  });
});
