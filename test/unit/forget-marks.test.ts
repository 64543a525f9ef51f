// The marks a caller-continued line leaves when no helper runs, the notes a helper leaves of
// when it last forgot, and what a helper makes of them. Through the built binary, a first turn running then: test/e2e/caller-chat.test.ts.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { markForgetAll, noteForgot, takeForgetMarks } from '../../src/helper/forget-marks.js';
import { runtimePaths } from '../../src/helper/paths.js';
import { tempDir } from '../support/cli.js';

const paths = () => runtimePaths({ CURSOR_RESUME_RUNTIME_DIR: tempDir('cr-forget-') });
const files = (dir: string): string[] => fs.readdirSync(dir).sort();
const at = (now: number) => () => now;
// This machine's boot, which a mark names (its clock counts from it).
const BOOT = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
const mark = (time: number | string, boot = BOOT): string => `${time} ${boot}\n`;

test('the latest mark is taken, and every mark removed', () => {
  const p = paths();
  fs.writeFileSync(path.join(p.dir, 'helper.lock'), '');
  markForgetAll(p, 200.5);
  // Written by another line at once, so not made redundant by the first.
  fs.writeFileSync(path.join(p.dir, 'forget-before.other'), mark(100));
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), 200.5);
  assert.deepEqual(files(p.dir), ['helper.lock'], 'the marks are gone, nothing else');
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), undefined, 'nothing left to take');
});

test('a line removes the marks its own makes redundant, never a later one nor one not written whole', () => {
  const p = paths();
  fs.writeFileSync(path.join(p.dir, 'forget-before.earlier'), mark(100));
  fs.writeFileSync(path.join(p.dir, 'forget-before.later'), mark(900));
  fs.writeFileSync(path.join(p.dir, 'forget-before.half'), mark(1).slice(0, -1));
  markForgetAll(p, 500);
  const left = files(p.dir);
  assert.equal(left.length, 3);
  assert.ok(left.includes('forget-before.later') && left.includes('forget-before.half'));
  assert.ok(!left.includes('forget-before.earlier'));
});

test('a mark not written whole, or dated after now (from before the machine started), refuses every turn running now', () => {
  // '12' is the start of a later time being written: it must not read as time 12.
  for (const text of ['', '12', mark(12).slice(0, -1), mark('12ab'), mark(-5), mark('1e3'), ` ${mark(7)}`, `${mark(7)}\n`, '7\n']) {
    const p = paths();
    fs.writeFileSync(path.join(p.dir, 'forget-before.x'), text);
    assert.equal(takeForgetMarks(p, { clock: at(1_000) }), 1_000, JSON.stringify(text));
  }
  const p = paths();
  markForgetAll(p, 5_000);
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), 1_000);
});

test('a mark that is no plain file is not read (a FIFO would hold the start) and refuses every turn running now', () => {
  const fifo = paths();
  execFileSync('mkfifo', [path.join(fifo.dir, 'forget-before.fifo')]);
  assert.equal(takeForgetMarks(fifo, { clock: at(1_000) }), 1_000);
  assert.deepEqual(files(fifo.dir), []);

  const link = paths();
  const target = path.join(tempDir('cr-outside-'), 'early');
  fs.writeFileSync(target, mark(5));
  fs.symlinkSync(target, path.join(link.dir, 'forget-before.link'));
  assert.equal(takeForgetMarks(link, { clock: at(1_000) }), 1_000, 'not the time it leads to');
  assert.deepEqual(files(link.dir), []);
  assert.ok(fs.existsSync(target), 'only the link is removed');
});

test('a mark of another boot counts for nothing (its turns ended with it), and goes', () => {
  const p = paths();
  const other = BOOT.replace(/[0-9a-f]/, (c) => (c === '0' ? '1' : '0'));
  fs.writeFileSync(path.join(p.dir, 'forget-before.old'), mark(500, other));
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), undefined);
  assert.deepEqual(files(p.dir), []);
  fs.writeFileSync(path.join(p.dir, 'forget-before.old'), mark(900, other));
  markForgetAll(p, 100);
  assert.equal(files(p.dir).length, 1, 'a line removes it too, whatever its time');
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), 100);
});

test('a mark that cannot be removed (a folder) is not counted: it would refuse every turn at every sweep', () => {
  const p = paths();
  fs.mkdirSync(path.join(p.dir, 'forget-before.dir'));
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), undefined);
  assert.deepEqual(files(p.dir), ['forget-before.dir']);
});

test('a runtime dir that cannot be listed may hold marks: every turn running now is refused', () => {
  const file = path.join(tempDir('cr-forget-'), 'not-a-dir');
  fs.writeFileSync(file, '');
  assert.equal(takeForgetMarks(runtimePaths({ CURSOR_RESUME_RUNTIME_DIR: file }), { clock: at(1_000) }), 1_000);
});

test("another helper's note counts as a mark, its process gone or not; a helper's own only as it starts", () => {
  const p = paths();
  // A process that has exited: its pid is free (and, this soon, not reused).
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  fs.writeFileSync(path.join(p.dir, `forgot-by.${gone}`), mark(300));
  fs.writeFileSync(path.join(p.dir, `forgot-by.${process.pid}`), mark(900));
  // A helper replaced while it lingers (stopped, or in its last second) must not take its forgets with it.
  fs.writeFileSync(path.join(p.dir, `forgot-by.${process.ppid}`), mark(600));
  assert.equal(takeForgetMarks(p, { clock: at(1_000) }), 600);
  assert.deepEqual(files(p.dir), [`forgot-by.${process.pid}`], 'a serving helper keeps its own');
  // As it starts, a note with its pid is a gone helper's whose pid came back: it has forgotten nothing yet.
  assert.equal(takeForgetMarks(p, { starting: true, clock: at(1_000) }), 900);
  assert.deepEqual(files(p.dir), []);
});

test("noteForgot writes this process's note, rewritten at each forget", () => {
  const p = paths();
  noteForgot(p, 100);
  noteForgot(p, 200);
  assert.deepEqual(files(p.dir), [`forgot-by.${process.pid}`]);
  assert.equal(fs.readFileSync(path.join(p.dir, `forgot-by.${process.pid}`), 'latin1'), mark(200));
});

test('no runtime dir, or one without marks: nothing to take', () => {
  assert.equal(takeForgetMarks(runtimePaths({ CURSOR_RESUME_RUNTIME_DIR: '/nonexistent/cr-forget' }), { clock: at(1_000) }), undefined);
  assert.equal(takeForgetMarks(paths(), { clock: at(1_000) }), undefined);
});

test('any number of marks is taken, each removed (a spread of all their times overflowed the stack)', () => {
  const p = paths();
  for (let i = 0; i < 20_000; i++) fs.writeFileSync(path.join(p.dir, `forget-before.${i}`), mark(i === 4_321 ? 700 : i % 500));
  // A stack a tenth of Node's default, so that 20,000 marks overflow what 130,000 would (writing those takes seconds).
  const source = (file: string) => JSON.stringify(new URL(`../../src/helper/${file}`, import.meta.url).href);
  const script = `const { takeForgetMarks } = await import(${source('forget-marks.ts')});
    const { runtimePaths } = await import(${source('paths.ts')});
    const paths = runtimePaths({ CURSOR_RESUME_RUNTIME_DIR: ${JSON.stringify(p.dir)} });
    process.stdout.write(String(takeForgetMarks(paths, { clock: () => 1000 })));`;
  const child = spawnSync(process.execPath, ['--stack-size=100', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  assert.doesNotMatch(child.stderr, /RangeError|call stack/);
  assert.deepEqual([child.status, child.stdout], [0, '700'], child.stderr);
  assert.deepEqual(files(p.dir), []);
});
