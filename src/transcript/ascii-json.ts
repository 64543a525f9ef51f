// A large JSON transcript with a few characters beyond ASCII (a typographic quote in a
// system prompt is enough) decodes into a two-byte string: twice the body's size in fresh
// memory, and UTF-8 decoding at three times the cost of Latin-1 (BENCHMARKS.md, goal 4).
// JSON reads a character and its \u escape alike inside a string, so such a body is parsed
// here as one-byte text: each non-ASCII character written as its escape in place, in the
// read buffer's spare room, the text taken, the bytes put back. Whatever this cannot do
// safely and cheaply is left to the ordinary path, which also names every error.
import { isAscii, isUtf8 } from 'node:buffer';
import { TranscriptError } from './errors.js';
import { checkJsonSize } from './decode.js';

/** Below this the ordinary path is as cheap. */
export const ASCII_JSON_MIN_BYTES = 1024 * 1024;
/** More runs of non-ASCII bytes than this (a conversation in another script) are not worth moving the body for. */
export const MAX_RUNS = 500;
/**
 * Nor more non-ASCII bytes than this in all: writing their escapes (at most three times as
 * long, 64 KiB) costs more than decoding UTF-8 natively.
 */
const MAX_RUN_BYTES = 32 * 1024;
/** Scanned with isAscii first: only a chunk that holds non-ASCII bytes is walked byte by byte. */
const CHUNK = 64 * 1024;
const [BACKSLASH, OPEN_BRACE] = [0x5c, 0x7b];

/**
 * The JSON object `bytes` holds, parsed as one-byte text; undefined when this path does not
 * apply (too small, pure ASCII, not UTF-8, not an object at its first byte, too many or too
 * long runs, too little spare room) or the text does not parse, for the ordinary path to read or refuse.
 * `bytes` must own its ArrayBuffer's room after it: that room is written to. Its own bytes
 * are as they came when this returns or throws.
 */
export function parseAsciiJson(bytes: Uint8Array, minBytes = ASCII_JSON_MIN_BYTES): object | undefined {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = buffer.length;
  if (length < minBytes || buffer[firstNonBlank(buffer)] !== OPEN_BRACE || isAscii(buffer) || !isUtf8(buffer)) return undefined;
  const runs = nonAsciiRuns(buffer);
  if (runs === undefined) return undefined;
  if (runs.reduce((sum, [start, end]) => sum + end - start, 0) > MAX_RUN_BYTES) return undefined;
  const escapes = runs.map(([start, end]) => escaped(buffer.toString('utf8', start, end)));
  const grown = escapes.reduce((sum, e, k) => sum + e.length - (runs[k]![1] - runs[k]![0]), 0);
  if (bytes.buffer.byteLength - bytes.byteOffset - length < grown) return undefined;
  const text = withEscapes(Buffer.from(bytes.buffer, bytes.byteOffset, length + grown), runs, escapes, grown);
  try {
    checkJsonSize(text);
    return JSON.parse(text) as object;
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof TranscriptError) return undefined;
    throw error;
  }
}

/** Index of the first byte that is not JSON whitespace (length if none). */
function firstNonBlank(buffer: Buffer): number {
  let i = 0;
  while (i < buffer.length && (buffer[i] === 0x20 || buffer[i] === 0x0a || buffer[i] === 0x0d || buffer[i] === 0x09)) i++;
  return i;
}

/**
 * The [start, end) of each maximal run of non-ASCII bytes (whole UTF-8 sequences, the bytes
 * being UTF-8); undefined when there are more than MAX_RUNS, or one follows an odd run of
 * backslashes: `\é` is no JSON escape, and `\\u00e9` would read as one.
 */
function nonAsciiRuns(buffer: Buffer): Array<[number, number]> | undefined {
  const runs: Array<[number, number]> = [];
  for (let chunk = 0; chunk < buffer.length; chunk += CHUNK) {
    const chunkEnd = Math.min(chunk + CHUNK, buffer.length);
    const last = runs.at(-1);
    // A run that began in an earlier chunk may reach into this one: walk on from its end.
    let i = last !== undefined && last[1] > chunk ? last[1] : chunk;
    if (i >= chunkEnd || isAscii(buffer.subarray(i, chunkEnd))) continue;
    for (; i < chunkEnd; i++) {
      if (buffer[i]! < 0x80) continue;
      const start = i;
      while (i < buffer.length && buffer[i]! >= 0x80) i++;
      let backslashes = 0;
      while (start - backslashes > 0 && buffer[start - backslashes - 1] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 1 || runs.push([start, i]) > MAX_RUNS) return undefined;
    }
  }
  return runs;
}

/** Every UTF-16 unit of `text` as a JSON \u escape (a character beyond U+FFFF as its surrogate pair). */
function escaped(text: string): string {
  let out = '';
  for (let k = 0; k < text.length; k++) out += `\\u${text.charCodeAt(k).toString(16).padStart(4, '0')}`;
  return out;
}

/**
 * Writes each run's escape in its place, moving what follows it along (from the end, so each
 * byte moves once), takes the text as Latin-1, then puts the bytes back as they were.
 * `room` is the body's bytes and the `grown` bytes after them.
 */
function withEscapes(room: Buffer, runs: Array<[number, number]>, escapes: string[], grown: number): string {
  const saved = runs.map(([start, end]) => Buffer.from(room.subarray(start, end)));
  const length = room.length - grown;
  let shift = grown;
  for (let k = runs.length - 1; k >= 0; k--) {
    const [start, end] = runs[k]!;
    const next = k + 1 < runs.length ? runs[k + 1]![0] : length;
    room.copy(room, end + shift, end, next);
    shift -= escapes[k]!.length - (end - start);
    room.write(escapes[k]!, start + shift, 'latin1');
  }
  try {
    return room.toString('latin1');
  } finally {
    let moved = 0;
    for (let k = 0; k < runs.length; k++) {
      const [start, end] = runs[k]!;
      moved += escapes[k]!.length - (end - start);
      const next = k + 1 < runs.length ? runs[k + 1]![0] : length;
      saved[k]!.copy(room, start);
      room.copy(room, end, end + moved, next + moved);
    }
  }
}
