// The presentation helpers: colour rules, tables, times, sizes, short IDs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  ago,
  bytes,
  colorLevel,
  fields,
  left,
  oneLine,
  paint,
  preview,
  shellQuote,
  shortIds,
  shortPath,
  span,
  table,
  visibleWidth,
} from '../../src/present.js';

const tty = { isTTY: true };
const pipe = { isTTY: false };

describe('colorLevel', () => {
  test('a terminal gets colour, a pipe none', () => {
    assert.equal(colorLevel(tty, {}), 1);
    assert.equal(colorLevel(tty, { TERM: 'xterm-256color' }), 2);
    assert.equal(colorLevel(tty, { COLORTERM: 'truecolor' }), 3);
    assert.equal(colorLevel(tty, { TERM: 'dumb' }), 0);
    assert.equal(colorLevel(pipe, {}), 0);
    assert.equal(colorLevel({}, {}), 0);
  });

  test('FORCE_COLOR colours a pipe, as chalk reads it', () => {
    assert.equal(colorLevel(pipe, { FORCE_COLOR: '1' }), 1);
    assert.equal(colorLevel(pipe, { FORCE_COLOR: '' }), 1);
    assert.equal(colorLevel(pipe, { FORCE_COLOR: 'true' }), 1);
    assert.equal(colorLevel(pipe, { FORCE_COLOR: '3' }), 3);
    assert.equal(colorLevel(pipe, { FORCE_COLOR: '9' }), 3);
    assert.equal(colorLevel(tty, { FORCE_COLOR: '0' }), 0);
    assert.equal(colorLevel(tty, { FORCE_COLOR: 'false' }), 0);
  });

  test('NO_COLOR wins over everything, FORCE_COLOR included; an empty one is unset', () => {
    assert.equal(colorLevel(tty, { NO_COLOR: '1' }), 0);
    assert.equal(colorLevel(pipe, { NO_COLOR: '1', FORCE_COLOR: '3' }), 0);
    assert.equal(colorLevel(tty, { NO_COLOR: '' }), 1);
  });

  test('paint: --json output is never coloured', () => {
    assert.equal(paint({ json: true, stream: tty, env: { FORCE_COLOR: '3' } }).level, 0);
    assert.equal(paint({ stream: pipe, env: { FORCE_COLOR: '2' } }).level, 2);
    assert.equal(paint({ stream: pipe, env: {} }).red('x'), 'x');
  });
});

describe('table', () => {
  test('columns align, numbers to the right, no trailing blanks', () => {
    const out = table(
      [{ header: 'NAME' }, { header: 'N', align: 'right' }, { header: 'NOTE' }],
      [
        ['a', '1', 'short'],
        ['longer', '100', ''],
      ],
    );
    assert.equal(out, 'NAME      N  NOTE\na         1  short\nlonger  100\n');
  });

  test('200,000 rows: table and fields measure them in a loop (Math.max(...widths) overflowed the stack)', () => {
    const rows = Array.from({ length: 200_000 }, (_, i) => [String(i), 'x']);
    const out = table([{ header: 'N', align: 'right' }, { header: 'X' }], rows).split('\n');
    assert.equal(out.length, 200_002, 'a header, the rows, and the final newline');
    assert.equal(out[1], '     0  x', 'padded to the widest, 199999');
    const lines = fields(rows.map(([n, x]) => [n!, x!] as const)).split('\n');
    assert.equal(lines[0], '0       x', 'labels padded to the widest, 199999');
  });

  test('colour codes take no room', () => {
    const c = paint({ stream: pipe, env: { FORCE_COLOR: '1' } });
    const out = table(
      [{ header: 'A' }, { header: 'B' }],
      [
        [c.red('xx'), 'y'],
        ['zzzz', 'w'],
      ],
      (h) => c.bold(h),
    );
    // eslint-disable-next-line no-control-regex
    const plain = out.replace(/\u001b\[[0-9;]*m/g, '');
    assert.equal(plain, 'A     B\nxx    y\nzzzz  w\n');
    assert.equal(visibleWidth(c.red('xx')), 2);
  });

  test('wide characters take two columns, combining marks none: rows stay aligned on a terminal', () => {
    assert.equal(visibleWidth('/tmp/项目'), 9);
    assert.equal(visibleWidth('👍🏽 ok'), 5);
    assert.equal(visibleWidth('e\u0301'), 1);
    const out = table(
      [{ header: 'WORKSPACE' }, { header: 'MODEL' }],
      [
        ['/tmp/项目', 'gpt-5'],
        ['/tmp/x', 'sonnet'],
        ['👍', 'a'],
      ],
    );
    assert.equal(out, 'WORKSPACE  MODEL\n/tmp/项目  gpt-5\n/tmp/x     sonnet\n👍         a\n');
  });
});

describe('times and sizes', () => {
  test('span: one or two units, rounded down', () => {
    assert.equal(span(0), '0s');
    assert.equal(span(59_999), '59s');
    assert.equal(span(12 * 60_000 + 59_000), '12m');
    assert.equal(span(3_600_000), '1h');
    assert.equal(span(3_900_000), '1h 5m');
    assert.equal(span(2 * 86_400_000 + 3 * 3_600_000), '2d 3h');
    assert.equal(span(-5), '0s');
  });

  test('ago and left', () => {
    assert.equal(ago(12 * 60_000), '12m ago');
    assert.equal(ago(500), 'just now');
    assert.equal(ago(-1000), 'just now');
    assert.equal(left(48 * 60_000 + 30_000), '48m left');
    assert.equal(left(0), 'expired');
    assert.equal(left(-1), 'expired');
    assert.equal(left(400), 'under 1s left');
  });

  test('bytes', () => {
    assert.equal(bytes(0), '0 B');
    assert.equal(bytes(1023), '1023 B');
    assert.equal(bytes(1024), '1.0 KiB');
    assert.equal(bytes(1536), '1.5 KiB');
    assert.equal(bytes(3 * 1024 * 1024), '3.0 MiB');
  });
});

describe('short IDs, paths, previews', () => {
  test('shortIds: the shortest unique prefix, at least min characters, as git does', () => {
    const ids = shortIds(['abcdef0123', 'abcdef0999', 'ffff000011', 'sim-1'], 7);
    assert.equal(ids.get('abcdef0123'), 'abcdef01');
    assert.equal(ids.get('abcdef0999'), 'abcdef09');
    assert.equal(ids.get('ffff000011'), 'ffff000');
    assert.equal(ids.get('sim-1'), 'sim-1', 'a short ID is shown whole');
    assert.equal(shortIds(['aaaa', 'aaaa']).get('aaaa'), 'aaaa', 'duplicates are one ID');
  });

  test('shortPath: home as ~, long paths cut at the front', () => {
    assert.equal(shortPath('/home/me/src/app', '/home/me'), '~/src/app');
    assert.equal(shortPath('/home/me', '/home/me'), '~');
    assert.equal(shortPath('/home/meme/x', '/home/me'), '/home/meme/x');
    assert.equal(shortPath('/a/very/long/path/to/a/project', undefined, 12), '…/a/project');
    assert.equal(shortPath('/x', '/'), '/x');
  });

  test('preview: one line, cut with an ellipsis', () => {
    assert.equal(preview('  hello\n\n  world  '), 'hello world');
    assert.equal(preview('x'.repeat(70), 10), `${'x'.repeat(9)}…`);
    // Read only as far as it shows: the same as collapsing the whole text first, on every kind of text.
    const whole = (text: string, max: number): string => {
      const flat = text.replace(/\s+/g, ' ').trim();
      return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
    };
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(' ', '\n', '\u00a0', '\u2028', 'a', 'b', '\ud83d') }),
        fc.integer({ min: 1, max: 12 }),
        (text, max) => assert.equal(preview(text, max), whole(text, max)),
      ),
      { numRuns: 2000 },
    );
  });

  test('oneLine: an error on one line, the whitespace around its line breaks one space', () => {
    assert.equal(oneLine("  unknown option '--x'\n\n  (Did you mean --y?)  \n"), "unknown option '--x' (Did you mean --y?)");
    assert.equal(oneLine('a  b\t\r\n \u00a0c'), 'a  b c', 'whitespace within a line stays');
    // What the pattern it replaces reads, on text of letters and whitespace of every kind.
    const byPattern = (text: string): string => text.trim().replace(/\s*\n\s*/g, ' ');
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(' ', '\t', '\r', '\n', '\u00a0', '\u2028', '\ufeff', '\u3000', 'a', 'b') }), (text) =>
        assert.equal(oneLine(text), byPattern(text)),
      ),
      { numRuns: 2000 },
    );
  });

  test('oneLine: linear in a run of spaces, where the pattern retried it from each space', () => {
    // In a child killed after 60 s: a test of synchronous code cannot time out. 4 MB of spaces take
    // milliseconds; the pattern took 15 s for 120 KB, so hours here.
    const present = new URL('../../src/present.ts', import.meta.url).href;
    const script = `import { oneLine } from ${JSON.stringify(present)};
      const run = ' '.repeat(4 << 20);
      process.stdout.write(String(oneLine('--x' + run + 'y\\n z') === '--x' + run + 'y z'));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
      killSignal: 'SIGKILL',
    });
    assert.equal(r.signal, null, 'killed after 60 s');
    assert.equal(r.stdout, 'true', r.stderr);
  });

  test('shellQuote: only what needs it', () => {
    assert.equal(shellQuote(['--model', 'gpt-5', '--workspace', '/tmp/a b', "it's"]), `--model gpt-5 --workspace '/tmp/a b' 'it'\\''s'`);
    assert.equal(shellQuote([]), '');
  });
});

describe('wrapHelp', () => {
  test('a long line goes on under its description, prose under its indent; examples and short lines stay', async () => {
    const { wrapHelp } = await import('../../src/present.js');
    const words = 'one two three four five six seven eight nine ten';
    const text = [
      'Settings:',
      `  name      ${words}`,
      `plain prose: ${words} ${words}`,
      '',
      'Examples:',
      `  cursor-resume ${words} ${words}`,
    ].join('\n');
    assert.equal(
      wrapHelp(text, 56),
      [
        'Settings:',
        '  name      one two three four five six seven eight nine',
        '            ten',
        'plain prose: one two three four five six seven eight',
        'nine ten one two three four five six seven eight nine',
        'ten',
        '',
        'Examples:',
        `  cursor-resume ${words} ${words}`,
      ].join('\n'),
    );
  });
});
