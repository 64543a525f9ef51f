/**
 * JSON with object keys sorted at every level, so equal values give equal text
 * whatever order their keys came in. Built as a string, never as objects, so keys
 * such as "__proto__" are data and nothing else. Depth is bounded by the parser.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  const record = value as Record<string, unknown>;
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}
