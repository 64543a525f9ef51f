// The hand-off of a turn's record to the helper its run starts: the markers that
// make other runs wait for it, and what the helper accepts on its stdin. Through
// the built binary: test/e2e/helper.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { createMarker, HAND_OFF_STALE_MS, handOffPending, parseHandOff, removeMarker } from '../../src/helper/hand-off.js';
import { runtimePaths } from '../../src/helper/paths.js';
import { tempDir } from '../support/cli.js';

const paths = () => runtimePaths({ CURSOR_RESUME_RUNTIME_DIR: tempDir('cr-hand-off-') });

test('a marker is pending until removed; one older than the start could take is stale and removed', () => {
  const p = paths();
  assert.equal(handOffPending(p), false);
  const marker = createMarker(p);
  assert.equal(handOffPending(p), true);
  removeMarker(p, marker);
  assert.equal(handOffPending(p), false);

  const old = createMarker(p);
  const past = new Date(Date.now() - HAND_OFF_STALE_MS - 1000);
  fs.utimesSync(path.join(p.dir, old), past, past);
  assert.equal(handOffPending(p), false);
  assert.equal(fs.existsSync(path.join(p.dir, old)), false, 'the stale marker is gone');
});

test('a runtime dir that is not there has nothing pending', () => {
  assert.equal(handOffPending(runtimePaths({ CURSOR_RESUME_RUNTIME_DIR: '/nonexistent/cr-hand-off' })), false);
});

test('removeMarker removes only a marker of the runtime dir, never another file or a path outside it', () => {
  const p = paths();
  const outside = path.join(tempDir('cr-outside-'), 'hand-off.x');
  fs.writeFileSync(outside, '');
  fs.writeFileSync(path.join(p.dir, 'helper.lock'), '');
  for (const name of ['helper.lock', `hand-off.${path.relative(p.dir, outside)}`, '../hand-off.x', `hand-off./../../${outside}`])
    removeMarker(p, name);
  assert.ok(fs.existsSync(outside));
  assert.ok(fs.existsSync(path.join(p.dir, 'helper.lock')));
});

test('a marker dated in the future (the clock went back) holds no run: it is stale and removed', () => {
  const p = paths();
  const ahead = createMarker(p);
  const future = new Date(Date.now() + 3_600_000);
  fs.utimesSync(path.join(p.dir, ahead), future, future);
  assert.equal(handOffPending(p), false);
  assert.equal(fs.existsSync(path.join(p.dir, ahead)), false);
});

test('parseHandOff takes limits and a record, and nothing else', () => {
  const good = { limits: { ttlMs: 1000 }, record: { chatId: 'c' } };
  assert.deepEqual(parseHandOff(JSON.stringify(good)), good);
  for (const bad of [
    '',
    'not json',
    'null',
    '[]',
    '"text"',
    JSON.stringify({ ...good, limits: null }),
    JSON.stringify({ ...good, record: 'r' }),
    JSON.stringify({ limits: {} }),
    JSON.stringify(good).slice(0, -3),
  ])
    assert.equal(parseHandOff(bad), undefined, bad);
});
