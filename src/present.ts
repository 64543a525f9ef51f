// Presentation for people: colour, aligned tables, "12m ago", short IDs, sizes.
// Pure functions (the environment and the stream are arguments) so the rules can
// be unit-tested; nothing here is used on the run path.
import { Chalk, type ChalkInstance } from 'chalk';
import { Help } from 'commander';
import stringWidth from 'string-width';
import { CliError } from './errors.js';
import { escapeControls } from './escape.js';

export type ColorLevel = 0 | 1 | 2 | 3;

/**
 * How much colour a stream gets. NO_COLOR (any non-empty value, as no-color.org
 * says) wins over everything, FORCE_COLOR included; FORCE_COLOR then decides
 * (as chalk reads it: "" or "true" is 1, "0"/"false" is none, 1-3 a level);
 * otherwise only a terminal gets colour, and a dumb one none.
 */
export function colorLevel(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): ColorLevel {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '' || force === 'true') return 1;
    if (force === 'false') return 0;
    const level = Number.parseInt(force, 10);
    if (!Number.isFinite(level)) return 1;
    return Math.max(0, Math.min(level, 3)) as ColorLevel;
  }
  if (!stream.isTTY || env.TERM === 'dumb') return 0;
  if (env.COLORTERM === 'truecolor' || env.COLORTERM === '24bit') return 3;
  return /-256(color)?$/i.test(env.TERM ?? '') ? 2 : 1;
}

/** A chalk for one output: none at all for machine output (`--json`). */
export function paint(options: { json?: boolean; stream?: { isTTY?: boolean }; env?: NodeJS.ProcessEnv } = {}): ChalkInstance {
  if (options.json) return new Chalk({ level: 0 });
  return new Chalk({ level: colorLevel(options.stream ?? process.stdout, options.env ?? process.env) });
}

/**
 * Columns a cell takes on a terminal: colour codes none, an East Asian wide
 * character or an emoji two, a combining mark none (code points would misalign
 * a row with a path like /tmp/项目).
 */
export const visibleWidth = (text: string): number => stringWidth(text);

export interface Column {
  header: string;
  /** Numbers read best right-aligned. */
  align?: 'left' | 'right';
}

/** The widest of the rows' cells, at least `least`: a loop, as Math.max(...cells) overflows the stack past about 100,000 rows. */
function widest<R>(rows: ReadonlyArray<R>, cell: (row: R) => string, least = 0): number {
  let width = least;
  for (const row of rows) width = Math.max(width, visibleWidth(cell(row)));
  return width;
}

/**
 * An aligned table: two spaces between columns, no trailing blanks. Header cells
 * are passed through `header` (bold, say) after their width is measured.
 */
export function table(
  columns: ReadonlyArray<Column>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  header: (text: string) => string = (t) => t,
): string {
  const widths = columns.map((c, i) => widest(rows, (r) => r[i] ?? '', visibleWidth(c.header)));
  const line = (cells: ReadonlyArray<string>, style: (t: string) => string = (t) => t): string =>
    cells
      .map((cell, i) => {
        const pad = ' '.repeat(widths[i]! - visibleWidth(cell));
        const last = i === cells.length - 1;
        if (columns[i]?.align === 'right') return pad + style(cell);
        return style(cell) + (last ? '' : pad);
      })
      .join('  ')
      .trimEnd();
  return [
    line(
      columns.map((c) => c.header),
      header,
    ),
    ...rows.map((r) => line(r)),
  ]
    .map((l) => `${l}\n`)
    .join('');
}

/** Label/value lines, the labels padded to one width. */
export function fields(rows: ReadonlyArray<readonly [string, string]>, label: (text: string) => string = (t) => t, indent = ''): string {
  const width = widest(rows, ([l]) => l);
  return rows.map(([l, v]) => `${indent}${label(l)}${' '.repeat(width - visibleWidth(l))}  ${v}`.trimEnd() + '\n').join('');
}

/** A span of time in one or two units: "45s", "12m", "1h 5m", "2d 3h". Rounded down. */
export function span(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

/** "12m ago", or "just now" under a second (and for a clock that went backwards). */
export const ago = (ms: number): string => (ms < 1000 ? 'just now' : `${span(ms)} ago`);

/** "48m left", or "expired" once nothing is left. */
export const left = (ms: number): string => (ms <= 0 ? 'expired' : ms < 1000 ? 'under 1s left' : `${span(ms)} left`);

/** "512 B", "1.2 KiB", "3.4 MiB". */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * The shortest prefix of each ID, at least `min` characters, that no other ID in
 * the set shares: what git does for hashes. An ID no longer than `min` is shown whole.
 */
export function shortIds(ids: Iterable<string>, min = 7): Map<string, string> {
  const unique = [...new Set(ids)];
  const out = new Map<string, string>();
  for (const id of unique) {
    let length = Math.min(min, id.length);
    while (length < id.length && unique.some((other) => other !== id && other.startsWith(id.slice(0, length)))) length++;
    out.set(id, id.slice(0, length));
  }
  return out;
}

/** A path for a person: the home folder as ~, and a long path cut at the front with "…". */
export function shortPath(path: string, home: string | undefined, max = 40): string {
  let shown = home && home !== '/' && (path === home || path.startsWith(`${home}/`)) ? `~${path.slice(home.length)}` : path;
  if (shown.length > max) {
    // Cut at a folder boundary when there is one, so no name is shown in part.
    const tail = shown.slice(shown.length - max + 1);
    const slash = tail.indexOf('/');
    shown = `…${slash > 0 ? tail.slice(slash) : tail}`;
  }
  return shown;
}

/**
 * Text on one line for a preview: whitespace collapsed, cut with "…". Only as much of the text
 * is read as is shown: collapsing all of a 60 MB message first took gigabytes.
 */
export function preview(text: string, max = 60): string {
  let flat = '';
  let gap = false;
  for (let i = 0; i < text.length && flat.length <= max; i++) {
    const c = text[i]!;
    if (WHITESPACE.test(c)) gap = flat !== '';
    else {
      flat += gap ? ` ${c}` : c;
      gap = false;
    }
  }
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
// JavaScript counts U+FEFF (a BOM) as whitespace: kept, so that it is shown escaped rather than as a blank.
const WHITESPACE = /[^\S\ufeff]/;

/**
 * Lines joined on one line by single spaces, the whitespace around each line break dropped.
 * Split, not a `\s*\n\s*` pattern: that one retries a long run of spaces from each of them
 * (a 120 KB unknown option took 15 s to report).
 */
export const oneLine = (text: string): string =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ');

/** Text quoted for a person: JSON, and the controls JSON leaves as they are (C1, bidi) escaped too. */
export const quoted = (text: string): string => escapeControls(JSON.stringify(text));

/** One JSON document on one line of stdout, for scripts (as `helper ... --json`). */
export function printJson(value: unknown): void {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new CliError('the JSON output would be longer than the longest text Node can hold (512 MiB); ask for less at once');
  }
  process.stdout.write(`${text}\n`);
}

/** An argv as a person would type it in a POSIX shell. */
export function shellQuote(args: ReadonlyArray<string>): string {
  return args.map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * Help text wrapped to a width, as commander wraps its own lines: one that is too long
 * goes on under where its description starts ("  name    description"), or under its
 * own indent. Examples (from an "Examples:" line to the next blank one) stay whole, to
 * be copied as they are.
 */
/**
 * Prose written as several lines at the margin becomes one line a paragraph, so that it
 * wraps to the terminal as a whole: headings (ending in ":"), indented rows and the
 * examples stay as they are written.
 */
function reflow(text: string): string {
  const out: string[] = [];
  let inExamples = false;
  let prose = false;
  for (const line of text.split('\n')) {
    const heading = /^\S.*:$/.test(line);
    if (line.trim() === '') inExamples = false;
    else if (heading) inExamples = line === 'Examples:';
    const margin = line !== '' && !/^\s/.test(line) && !heading && !inExamples;
    if (margin && prose) out[out.length - 1] += ` ${line}`;
    else out.push(line);
    prose = margin && !line.startsWith('Usage:');
  }
  return out.join('\n');
}

export function wrapHelp(text: string, width: number): string {
  const help = new Help();
  let inExamples = false;
  return reflow(text)
    .split('\n')
    .map((line) => {
      if (line.trim() === '') inExamples = false;
      else if (/^\S.*:$/.test(line)) inExamples = line === 'Examples:';
      if (inExamples || visibleWidth(line) <= width) return line;
      const indent = (/^(\s*\S+(?: \S+)*\s{2,})\S/.exec(line)?.[1] ?? /^\s*/.exec(line)![0]).length;
      const lines = help.boxWrap(line.slice(indent), Math.max(width - indent, 20)).split('\n');
      return lines.map((l, i) => (i === 0 ? line.slice(0, indent) : ' '.repeat(indent)) + l).join('\n');
    })
    .join('\n');
}
