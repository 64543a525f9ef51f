import { TranscriptError } from './errors.js';
import { MAX_DEPTH } from './limits.js';

// ignoreBOM: a byte-order mark stays in the text. Plain text goes on as it came, BOM
// included; a JSON transcript is parsed from its first non-blank character, after it.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** Bytes → text when they are UTF-8 (a BOM kept), else null. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

/** Bytes that must be UTF-8 text (JSON lines) → text, a BOM kept. */
export function decodeInput(bytes: Uint8Array): string {
  const text = decodeUtf8(bytes);
  if (text === null) throw new TranscriptError('stdin: not valid UTF-8 text; send the transcript as UTF-8');
  return text;
}

/** Bytes that are not UTF-8 → text to show, each broken sequence as U+FFFD. */
export function decodeLossy(bytes: Uint8Array): string {
  return lenientUtf8.decode(bytes);
}

/** Parses JSON text, naming the position of a syntax error. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new TranscriptError(
      `stdin: not valid JSON (${detail}); send one complete JSON object, or plain text that does not start with "{"`,
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
