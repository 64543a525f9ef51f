// The JSON Lines files the stand-ins and cursor-resume write (logs, traces, records):
// one object a line; a file not written yet holds none.
import { existsSync, readFileSync } from 'node:fs';

/**
 * The file's whole lines. A line not ended yet is still being written (a long one is not
 * written in one go, and tests poll these files while their writers run): it is not there yet.
 */
export function readJsonLines<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .slice(0, -1)
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

/** What each stand-in pid printed, whole, from its CURSOR_STAND_IN_STDOUT_LOG. */
export function printedBy(file: string): Map<number, Buffer> {
  const parts = new Map<number, Buffer[]>();
  for (const { pid, data } of readJsonLines<{ pid: number; data: string }>(file)) {
    parts.set(pid, [...(parts.get(pid) ?? []), Buffer.from(data, 'base64')]);
  }
  return new Map([...parts].map(([pid, chunks]) => [pid, Buffer.concat(chunks)]));
}
