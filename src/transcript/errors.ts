// A transcript we cannot read is one of our errors (exit 2, nothing runs): its class lives with the others.
export { TranscriptError } from '../errors.js';

/** `["messages", 3, "content"]` → `messages[3].content`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}
