// The floor of a resumed turn, for benchmark 2: only what a Node program doing
// cursor-resume's job the way it does (a helper process over a socket, SHA-256 digests) must
// do, and none of cursor-resume's own work. It reads the transcript from stdin, parses it and
// hashes it (node:crypto), makes the round trips a resumed turn makes on a Unix socket
// (node:net: hello, lookup and lease before cursor-agent starts, the record after it exits),
// spawns cursor-agent with the argv and prompt cursor-resume planned (node:child_process),
// relays its stdout and exits with its status. What cursor-resume adds above this is its own.
//
//   floor-turn SOCKET PLAN_FILE < transcript     PLAN_FILE: {"agent", "argv", "prompt"} as JSON
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, readSync } from 'node:fs';
import { connect } from 'node:net';

const [socketPath, planFile] = process.argv.slice(2);
if (!socketPath || !planFile) throw new Error('usage: floor-turn SOCKET PLAN_FILE < transcript');
const plan = JSON.parse(readFileSync(planFile, 'utf8')) as { agent: string; argv: string[]; prompt: string };

/** stdin to its end, read as cursor-resume reads it: straight into one buffer. */
function readAll(): Buffer {
  let buffer = Buffer.allocUnsafeSlow(1 << 16);
  let size = 0;
  for (;;) {
    if (size === buffer.length) {
      const grown = Buffer.allocUnsafeSlow(buffer.length * 2);
      buffer.copy(grown, 0, 0, size);
      buffer = grown;
    }
    const n = readSync(0, buffer, size, buffer.length - size, null);
    if (n === 0) return buffer.subarray(0, size);
    size += n;
  }
}

const transcript = readAll();
// Latin-1: the cheapest decoding JSON can read (cursor-resume reads an ASCII body so).
JSON.parse(transcript.toString('latin1'));
const digest = createHash('sha256').update(transcript).digest('hex');
const socket = connect(socketPath);
let pending: ((line: string) => void) | null = null;
let received = '';
socket.setEncoding('utf8');
socket.on('data', (chunk: string) => {
  received += chunk;
  const end = received.indexOf('\n');
  if (end < 0 || pending === null) return;
  const line = received.slice(0, end);
  received = received.slice(end + 1);
  const settle = pending;
  pending = null;
  settle(line);
});
// A server gone before its answer fails the run: a floor that skipped its turn would time nothing.
const fail = (why: string): void => {
  if (pending === null) return;
  process.stderr.write(`floor-turn: ${why} before answering\n`);
  process.exit(1);
};
socket.on('error', (error) => fail(error.message));
socket.on('close', () => fail('the server closed the socket'));
const ask = (request: object): Promise<string> =>
  new Promise((resolve) => {
    pending = resolve;
    socket.write(`${JSON.stringify(request)}\n`);
  });

async function main(): Promise<number> {
  await ask({ op: 'hello', digest });
  await ask({ op: 'lookup', digest });
  await ask({ op: 'lease', digest });
  const child = spawn(plan.agent, plan.argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  child.stdin.end(plan.prompt);
  child.stdout.on('data', (chunk: Buffer) => process.stdout.write(chunk));
  const code = await new Promise<number>((resolve) => child.on('close', (status) => resolve(status ?? 1)));
  await ask({ op: 'record', digest });
  socket.end();
  return code;
}

void main().then((code) => {
  process.exitCode = code;
});
