// A tiny cursor-agent for the streaming benchmark: it prints stream-json lines, each
// stamped with process.hrtime.bigint() taken just before the write. hrtime is
// CLOCK_MONOTONIC, one clock for every process on the machine, so the reader can
// subtract the stamp from its own arrival time.
//
//   STAMP_LINES (default 100)   assistant lines to print
//   STAMP_GAP_MS (default 10)   pause before each line, so every line is its own write and read
//   STAMP_BIG_EVERY / STAMP_BIG_BYTES (default 10 / 32768): every Nth line carries that much text
import { randomUUID } from 'node:crypto';

const args = process.argv.slice(2);
const resumeAt = args.indexOf('--resume');
const sessionId = resumeAt >= 0 && args[resumeAt + 1] ? args[resumeAt + 1]! : randomUUID();
const lines = Number(process.env.STAMP_LINES ?? 100);
const gapMs = Number(process.env.STAMP_GAP_MS ?? 10);
const bigEvery = Number(process.env.STAMP_BIG_EVERY ?? 10);
const bigBytes = Number(process.env.STAMP_BIG_BYTES ?? 32768);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The stamp goes first so the rest of the line is built before the clock is read. */
function emit(rest: string): void {
  process.stdout.write(`{"stamp_ns":"${process.hrtime.bigint()}",${rest}\n`);
}

async function main(): Promise<void> {
  // Read the prompt to its end, as cursor-agent does.
  for await (const _ of process.stdin) {
    // discard
  }
  const sid = JSON.stringify(sessionId);
  emit(
    `"type":"system","subtype":"init","cwd":${JSON.stringify(process.cwd())},"session_id":${sid},"model":"Stamp","permissionMode":"default"}`,
  );
  for (let i = 1; i <= lines; i++) {
    await sleep(gapMs);
    const chunk = bigEvery > 0 && i % bigEvery === 0 ? 'x'.repeat(bigBytes) : `line ${i} of the streamed answer. `;
    const rest = `"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":${JSON.stringify(chunk)}}]},"session_id":${sid},"timestamp_ms":${Date.now()}}`;
    emit(rest);
  }
  await sleep(gapMs);
  emit(
    `"type":"result","subtype":"success","is_error":false,"result":${JSON.stringify(`streamed ${lines} lines`)},"session_id":${sid},"request_id":${JSON.stringify(randomUUID())}}`,
  );
}

await main();
