// Small, dependency-free statistics for timing samples. Medians and percentiles
// (nearest rank) rather than means: a 2-core machine shared with other work has
// long-tailed noise, and one descheduled run must not move the headline figure.

export function sorted(values: ReadonlyArray<number>): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(values: ReadonlyArray<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1]!;
}

export function median(values: ReadonlyArray<number>): number {
  if (values.length === 0) return Number.NaN;
  const s = sorted(values);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function mean(values: ReadonlyArray<number>): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: ReadonlyArray<number>): Summary {
  return {
    n: values.length,
    min: percentile(values, 0),
    p50: median(values),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: percentile(values, 100),
    mean: mean(values),
  };
}

/** Milliseconds since an earlier `process.hrtime.bigint()` reading. */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export const round = (value: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
