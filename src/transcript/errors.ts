/** A transcript we cannot read. The CLI prints `message` and exits 2; nothing runs. */
export class TranscriptError extends Error {
  override name = 'TranscriptError';
}

/** `["messages", 3, "content"]` → `messages[3].content`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
