import { TranscriptError } from './errors.js';
import { MAX_INPUT_BYTES } from './limits.js';

/** Reads a whole stream, refusing (without buffering further) one larger than `max` bytes. */
export async function readInput(stream: AsyncIterable<Uint8Array | string>, max: number = MAX_INPUT_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    size += buffer.length;
    if (size > max) {
      throw new TranscriptError(
        `stdin: the transcript is larger than ${Math.round(max / 1024 / 1024)} MiB; nothing was run. Send a shorter conversation`,
      );
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size);
}
