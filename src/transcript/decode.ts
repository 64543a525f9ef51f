import { TranscriptError } from './errors.js';
import { MAX_DEPTH } from './limits.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Bytes from stdin → text: strict UTF-8, a byte-order mark dropped. */
export function decodeInput(bytes: Uint8Array): string {
  try {
    // With ignoreBOM false the decoder strips a leading BOM itself.
    return utf8.decode(bytes);
  } catch {
    throw new TranscriptError('stdin: not valid UTF-8 text; send the transcript as UTF-8');
  }
}

/** Parses JSON text, naming the position of a syntax error. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new TranscriptError(
      `stdin: not valid JSON (${detail}); send one complete JSON object, or plain text that does not start with "{" or "["`,
    );
  }
}

/** Refuses JSON nested deeper than MAX_DEPTH, walking iteratively so the check itself cannot overflow. */
export function checkDepth(value: unknown): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > MAX_DEPTH) {
      throw new TranscriptError(`stdin: JSON nested deeper than ${MAX_DEPTH} levels; no transcript needs that`);
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
}
