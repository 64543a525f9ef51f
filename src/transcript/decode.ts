import { isAscii, isUtf8 } from 'node:buffer';
import { TranscriptError } from './errors.js';
import { MAX_DEPTH, MAX_JSON_VALUES } from './limits.js';

// ignoreBOM: a byte-order mark stays in the text. Plain text goes on as it came, BOM
// included; a JSON transcript is parsed from its first non-blank character, after it.
const lenientUtf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Bytes → text when they are UTF-8 (a BOM kept, as Buffer's decoding keeps it), else
 * null. Checked first, then decoded: pure ASCII (most transcripts) as Latin-1, which
 * gives the same text at a third of the cost of decoding UTF-8.
 */
export function decodeUtf8(bytes: Uint8Array): string | null {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isAscii(buffer)) return buffer.toString('latin1');
  return isUtf8(buffer) ? buffer.toString('utf8') : null;
}

/** The error for bytes that had to be UTF-8 and are not. */
export const notUtf8 = (): TranscriptError => new TranscriptError('stdin: not valid UTF-8 text; send the transcript as UTF-8');

/** Bytes that must be UTF-8 text (JSON lines) → text, a BOM kept. */
export function decodeInput(bytes: Uint8Array): string {
  const text = decodeUtf8(bytes);
  if (text === null) throw notUtf8();
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

const [QUOTE, COMMA, BACKSLASH] = [0x22, 0x2c, 0x5c];
const [OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = [0x5b, 0x5d, 0x7b, 0x7d];

/**
 * Refuses JSON nested deeper than MAX_DEPTH or holding more than MAX_JSON_VALUES values,
 * before JSON.parse builds any of it: one pass over the text, strings skipped whole.
 * Values are counted as commas and openings outside strings (at most one more than
 * there are per empty container). Text that is not JSON is left to JSON.parse to name.
 */
export function checkJsonSize(text: string): void {
  let values = 1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
      if (i < 0) return;
    } else if (c === COMMA || c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++values > MAX_JSON_VALUES) {
        throw new TranscriptError(
          `stdin: JSON with more than ${MAX_JSON_VALUES.toLocaleString('en-US')} values, the limit (memory grows with each); no conversation needs that many`,
        );
      }
      if (c !== COMMA && ++depth > MAX_DEPTH) {
        throw new TranscriptError(`stdin: JSON nested deeper than ${MAX_DEPTH} levels; no transcript needs that`);
      }
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
}

/** The index of the quote that closes the string opened at `open` (one not escaped by an odd run of backslashes), or -1. */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  while (at >= 0) {
    let before = at - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((at - before) % 2 === 1) return at;
    at = text.indexOf('"', at + 1);
  }
  return -1;
}
