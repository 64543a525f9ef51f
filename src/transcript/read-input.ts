import { readSync } from 'node:fs';
import { TranscriptError } from './errors.js';
import { MAX_INPUT_BYTES } from './limits.js';

const tooLarge = (max: number): TranscriptError =>
  new TranscriptError(
    `stdin: the transcript is larger than ${Math.round(max / 1024 / 1024)} MiB; nothing was run. Send a shorter conversation`,
  );

const unreadable = (code: string | undefined, message: string): TranscriptError =>
  new TranscriptError(
    code === 'EISDIR'
      ? 'stdin is a directory, not a transcript: pipe a transcript (a JSON body or a plain-text prompt) into cursor-resume'
      : `stdin cannot be read (${message}): pipe a transcript (a JSON body or a plain-text prompt) into cursor-resume`,
  );

/** Collects chunks, refusing (without buffering further) more than `max` bytes in all. */
class Collector {
  readonly chunks: Buffer[] = [];
  size = 0;

  constructor(readonly max: number) {}

  add(chunk: Uint8Array | string): void {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.size += buffer.length;
    if (this.size > this.max) throw tooLarge(this.max);
    this.chunks.push(buffer);
  }

  /** The bytes in a buffer of their own (not Node's pool): the room after them is nobody else's. */
  bytes(): Buffer {
    const out = Buffer.allocUnsafeSlow(this.size);
    let at = 0;
    for (const chunk of this.chunks) at += chunk.copy(out, at);
    return out;
  }
}

/** Reads a whole stream, refusing (without buffering further) one larger than `max` bytes. */
export async function readInput(stream: AsyncIterable<Uint8Array | string>, max: number = MAX_INPUT_BYTES): Promise<Buffer> {
  const collected = new Collector(max);
  for await (const chunk of stream) collected.add(chunk);
  return collected.bytes();
}

/**
 * The first buffer for a stream of unknown size: one allocation this large is only
 * address space until read into (each page is made resident as it is written), so
 * nearly every transcript is read without growing and copying. Kept well under
 * V8's 64 MiB soft limit on memory outside its heap, past which it starts a full
 * collection.
 */
const FIRST_BUFFER = 16 * 1024 * 1024;

/**
 * Reads stdin to its end with blocking reads of fd 0, as readInput(process.stdin)
 * would, but without creating process.stdin's stream and waiting on the event loop
 * for each chunk: a run reads its transcript before it can do anything else, and
 * this saves it about 2 ms. If fd 0 was set non-blocking by whoever started us
 * (EAGAIN), the stream takes over from there, so the outcome is what reading the
 * stream would have given. Any other failure is the caller's to know: a directory
 * on stdin is not "empty". Call it before anything touches process.stdin: creating
 * that stream makes fd 0 non-blocking. The bytes own their ArrayBuffer's room after them.
 */
export async function readStdin(max: number = MAX_INPUT_BYTES): Promise<Buffer> {
  // Read straight into one buffer: no copy per chunk, no final concatenation. Not sized from fstat
  // for a file on stdin: that first fstatSync costs a run 0.3 ms, and the buffer's unused pages nothing.
  // allocUnsafeSlow: never a slice of Node's pool, so the room after the bytes is ours to write (parseTranscript's ownsRoomAfter).
  let buffer = Buffer.allocUnsafeSlow(Math.min(FIRST_BUFFER, max + 1));
  let size = 0;
  for (;;) {
    if (size === buffer.length) {
      const grown = Buffer.allocUnsafeSlow(Math.min(buffer.length * 2, max + 1));
      buffer.copy(grown, 0, 0, size);
      buffer = grown;
    }
    let n: number;
    try {
      n = readSync(0, buffer, size, buffer.length - size, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN') throw unreadable(code, (error as Error).message);
      const collected = new Collector(max);
      collected.add(buffer.subarray(0, size));
      for await (const rest of process.stdin) collected.add(rest);
      return collected.bytes();
    }
    if (n === 0) return buffer.subarray(0, size);
    size += n;
    if (size > max) throw tooLarge(max);
  }
}
