// The hand-off of a turn's record to the helper its run starts: the markers that
// make other runs wait for it, and what the helper accepts on its stdin. Through
// the built binary: test/e2e/helper.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import {
  createMarker,
  HAND_OFF_LIVE_MS,
  HAND_OFF_STALE_MS,
  handOffPending,
  notePid,
  parseHandOff,
  removeMarker,
} from '../../src/helper/hand-off.js';
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

test('a marker naming its helper holds while that process lives, up to HAND_OFF_LIVE_MS; one whose helper died holds nothing and goes', () => {
  const p = paths();
  const age = (marker: string, ms: number) => {
    const then = new Date(Date.now() - ms);
    fs.utimesSync(path.join(p.dir, marker), then, then);
  };
  const slow = createMarker(p);
  notePid(p, slow, process.pid);
  age(slow, HAND_OFF_STALE_MS + 1000);
  assert.equal(handOffPending(p), true, 'alive, past the wait for a marker that names no process');
  age(slow, HAND_OFF_LIVE_MS + 1000);
  assert.equal(handOffPending(p), false, 'alive but too long: wedged');
  assert.equal(fs.existsSync(path.join(p.dir, slow)), false);

  const dead = createMarker(p);
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  notePid(p, dead, gone);
  assert.equal(handOffPending(p), false, 'its helper died before delivering: nothing to wait for, however young');
  assert.equal(fs.existsSync(path.join(p.dir, dead)), false);
});

test('notePid names the last helper started (a shorter pid leaves no digits of the longer), and brings back a removed marker only for a helper started in place of a dead one', () => {
  const p = paths();
  const marker = createMarker(p);
  notePid(p, marker, 4_194_304);
  notePid(p, marker, 7);
  assert.equal(fs.readFileSync(path.join(p.dir, marker), 'latin1'), '7');
  removeMarker(p, marker);
  notePid(p, marker, process.pid);
  assert.equal(fs.existsSync(path.join(p.dir, marker)), false, 'delivered: stays removed');
  notePid(p, marker, process.pid, true);
  assert.equal(fs.readFileSync(path.join(p.dir, marker), 'latin1'), String(process.pid));
  assert.equal(handOffPending(p), true);
});

test("notePid never writes through a hard link left under a marker's name: the file it names elsewhere keeps its bytes", () => {
  const p = paths();
  const elsewhere = path.join(tempDir('cr-hand-off-elsewhere-'), 'precious');
  fs.writeFileSync(elsewhere, 'keep me');
  const marker = 'hand-off.planted';
  fs.linkSync(elsewhere, path.join(p.dir, marker));
  notePid(p, marker, 4242);
  notePid(p, marker, 4242, true);
  assert.equal(fs.readFileSync(elsewhere, 'latin1'), 'keep me');
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
  // Made this millisecond, its time has a fraction Date.now() drops, so it looks just ahead: a little ahead is no clock gone back.
  const now = createMarker(p);
  const justAhead = (Date.now() + 100) / 1000;
  fs.utimesSync(path.join(p.dir, now), justAhead, justAhead);
  assert.equal(handOffPending(p), true, 'a marker just made holds');
  removeMarker(p, now);

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
