// A setting's value is taken as it is when its hand check (SETTINGS[name].plain) passes it,
// and checked by its schema otherwise (validateSetting). Whatever the value, the verdict
// must be exactly the schema's (settingBySchema): the same accept or refuse, the same
// value, the same message. Values at each edge of each rule, and values of any JSON.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { SEED_MAX_ENTRIES, SEED_TTL_MINUTES, SETTINGS, settingBySchema, validateSetting, type SettingName } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { outcome as outcomeOf } from '../support/mutations.js';

const NAMES = Object.keys(SETTINGS) as SettingName[];
const limit = (max: number) => [0, 1, 2, max - 1, max, max + 1, -1, -0, 1.5, NaN, Infinity, -Infinity, 2 ** 53, '1', null, true];

/** Per setting, values at and past the edges of its rule (every setting also gets every other one's). */
const EDGES: Record<SettingName, unknown[]> = {
  resume: [true, false, 'true', 1, 0, null],
  agent: ['', 'cursor-agent', '/bin/sh', ' ', 1, null, []],
  // Its socket path at and past the Unix limit of 103 bytes, counted in bytes, after the path is resolved.
  runtimeDir: [
    '',
    '/',
    '/run/x',
    'run',
    ' /x',
    '//x',
    1,
    null,
    `/${'a'.repeat(90)}`,
    `/${'a'.repeat(91)}`,
    `/${'a'.repeat(90)}/`,
    `/x/../${'a'.repeat(91)}`,
    `/${'é'.repeat(45)}`,
    `/${'é'.repeat(46)}`,
  ],
  sideCallPatterns: [[], ['^a'], ['('], ['^a', '('], ['', '.*'], [1], ['a', null], 'x', {}, null, [[]]],
  retryFresh: [true, false, 'false', 0, null],
  unsafeDelta: ['fresh', 'resume-full', 'Fresh', '', 'resume', 1, null],
  ttlMinutes: limit(SEED_TTL_MINUTES),
  maxEntries: limit(SEED_MAX_ENTRIES),
  verbose: [true, false, 'yes', 1, null],
  trace: ['', '/tmp/trace', 'trace.jsonl', 1, null, {}],
};
const ALL_EDGES = Object.values(EDGES).flat();

const outcome = (check: () => unknown) => outcomeOf(check, ConfigError);
const WHERE = 'in /home/u/.config/cursor-resume/config.json';

function sameVerdict(name: SettingName, value: unknown): 'accepted' | 'refused' {
  const schema = outcome(() => settingBySchema(name, value, WHERE));
  assert.deepStrictEqual(
    outcome(() => validateSetting(name, value, WHERE)),
    schema,
    `${name}: ${JSON.stringify(value)}`,
  );
  if ('error' in schema) assert.equal(SETTINGS[name].plain(value), false, `${name}: ${JSON.stringify(value)}`);
  return 'value' in schema ? 'accepted' : 'refused';
}

describe('hand-checked settings get exactly the schemas verdict', () => {
  test('every edge of every rule, for every setting', () => {
    for (const name of NAMES) {
      const verdicts = new Set(ALL_EDGES.map((value) => sameVerdict(name, value)));
      // Guards the edges: a setting that only ever saw refusals could not fail on a wrong acceptance.
      assert.deepEqual(verdicts, new Set(['accepted', 'refused']), name);
    }
  });

  test('every value the schema accepts, the hand check takes as it is', () => {
    for (const name of NAMES) {
      for (const value of EDGES[name]) {
        const schema = outcome(() => settingBySchema(name, value, WHERE));
        if ('value' in schema) {
          assert.equal(SETTINGS[name].plain(value), true, `${name}: ${JSON.stringify(value)}`);
          assert.deepStrictEqual(value, schema.value);
        }
      }
    }
  });

  test('any JSON value, for any setting', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NAMES),
        fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.array(fc.string({ maxLength: 4 }))),
        (name, value) => {
          sameVerdict(name, value);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
