// What every benchmark hands back: rows for the printed table (and BENCHMARKS.md),
// and its raw data for the JSON file.

export interface Row {
  metric: string;
  value: string;
  /** The goal in words, when this row is judged against one. */
  goal?: string;
  /** true/false when judged; undefined when the row is informative only. */
  met?: boolean;
}

export interface BenchOutcome {
  id: string;
  title: string;
  rows: Row[];
  /** Everything measured, for bench/results/latest.json. */
  data: unknown;
  /** Anything that went wrong or needs a reader's attention (a turn that did not resume, ...). */
  notes: string[];
}

const mark = (row: Row): string => (row.met === undefined ? '' : row.met ? 'yes' : 'NO');

/** A plain-text table, also valid Markdown, so the same text can go into BENCHMARKS.md. */
export function renderTable(outcomes: ReadonlyArray<BenchOutcome>): string {
  const header = ['benchmark', 'metric', 'value', 'goal', 'met'];
  const lines: string[][] = [];
  for (const outcome of outcomes) {
    outcome.rows.forEach((row, i) => {
      lines.push([i === 0 ? outcome.title : '', row.metric, row.value, row.goal ?? '', mark(row)]);
    });
  }
  const widths = header.map((h, c) => Math.max(h.length, ...lines.map((l) => l[c]!.length)));
  const fmt = (cells: string[]): string => `| ${cells.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ')} |`;
  return [fmt(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(fmt)].join('\n');
}
