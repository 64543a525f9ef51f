/**
 * JSON with object keys sorted at every level, so equal values give equal text
 * whatever order their keys came in. Written out in pieces, never built as objects,
 * so keys such as "__proto__" are data and nothing else; and never built as one
 * string per level, which made a 30 MB schema cost 600 MB. Depth is bounded by the parser.
 */
function writeCanonicalJson(value: unknown, write: (piece: string) => void): void {
  if (value === null || typeof value !== 'object') {
    write(JSON.stringify(value) ?? 'null');
  } else if (Array.isArray(value)) {
    write('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) write(',');
      writeCanonicalJson(value[i], write);
    }
    write(']');
  } else {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    write('{');
    for (let i = 0; i < keys.length; i++) {
      write(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`);
      writeCanonicalJson(record[keys[i]!], write);
    }
    write('}');
  }
}

/** Pieces gathered up to this many characters before they are handed on: few hand-overs, bounded memory. */
const BATCH = 64 * 1024;

/** Canonical JSON in batches of about BATCH characters, for a hash fed as the value is walked. */
export function canonicalJsonChunks(value: unknown, chunk: (text: string) => void): void {
  let pending = '';
  writeCanonicalJson(value, (piece) => {
    pending += piece;
    if (pending.length >= BATCH) {
      chunk(pending);
      pending = '';
    }
  });
  if (pending !== '') chunk(pending);
}

/** The canonical JSON as one string. */
export function canonicalJson(value: unknown): string {
  let out = '';
  writeCanonicalJson(value, (piece) => {
    out += piece;
  });
  return out;
}
