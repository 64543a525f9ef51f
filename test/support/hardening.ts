// Tools for the end-to-end tests: running the built binary with its peak memory
// measured, capturing what cursor-agent printed, private worlds whose helpers are
// stopped at the end, and listeners of the test's own at a helper's socket.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { isAbsolute, join } from 'node:path';
import { after } from 'node:test';
import { stopHelper } from '../../src/helper/launcher.js';
import { PROTOCOL_VERSION } from '../../src/helper/protocol.js';
import { VERSION } from '../../src/version.js';
import { BIN, STAND_IN, runCli, sandboxEnv, scriptAgent, tempDir } from './cli.js';
import { helperPids } from './processes.js';

export interface MeasuredRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak resident memory of the cursor-resume process, in MiB (GNU time's %M). */
  peakMiB: number;
}

/**
 * Runs the built cursor-resume under /usr/bin/time to learn its peak RSS. `input` may be a
 * generator of chunks (a 100 MB stream is never held by the test); stdout is hashed and
 * kept only up to `keepStdout` characters.
 */
export function measuredRun(
  args: string[],
  options: { env: NodeJS.ProcessEnv; input: string | Buffer | (() => Iterable<Buffer>); keepStdout?: number },
): Promise<MeasuredRun & { stdoutBytes: number; stdoutSha256: string; stdoutTail: string }> {
  const rssFile = join(tempDir('cr-rss-'), 'rss');
  // GNU time reports the exact peak; without it, the kernel's high-water mark is sampled until exit.
  const gnuTime = existsSync('/usr/bin/time');
  return new Promise((resolve, reject) => {
    const child = gnuTime
      ? spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, process.execPath, BIN, ...args], {
          env: options.env,
          stdio: ['pipe', 'pipe', 'pipe'],
        })
      : spawn(process.execPath, [BIN, ...args], { env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let sampledKiB = 0;
    const sampler = gnuTime
      ? undefined
      : setInterval(() => {
          try {
            const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (hwm) sampledKiB = Math.max(sampledKiB, Number(hwm[1]));
          } catch {
            // gone
          }
        }, 5);
    const hash = createHash('sha256');
    let stdout = '';
    let stdoutBytes = 0;
    let tail = Buffer.alloc(0);
    let stderr = '';
    const keep = options.keepStdout ?? 1 << 20;
    child.stdout.on('data', (d: Buffer) => {
      hash.update(d);
      stdoutBytes += d.length;
      if (stdout.length < keep) stdout += d.toString('utf8');
      tail = Buffer.concat([tail, d]).subarray(-65536);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.stdin.on('error', () => {
      /* refused input: cursor-resume stops reading, which is what some tests check */
    });
    child.on('close', (code) => {
      clearInterval(sampler);
      const peakKiB = gnuTime ? Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1)) : sampledKiB;
      resolve({
        code,
        stdout,
        stderr,
        peakMiB: Math.round(peakKiB / 1024),
        stdoutBytes,
        stdoutSha256: hash.digest('hex'),
        stdoutTail: tail.toString('utf8'),
      });
    });
    void feed(child, options.input);
  });
}

async function feed(child: ChildProcess, input: string | Buffer | (() => Iterable<Buffer>)): Promise<void> {
  const stdin = child.stdin!;
  if (typeof input !== 'function') {
    stdin.end(input);
    return;
  }
  let closed = false;
  let wake = (): void => {};
  child.once('close', () => {
    closed = true;
    wake();
  });
  stdin.on('drain', () => wake());
  for (const chunk of input()) {
    if (closed || stdin.destroyed) return;
    if (!stdin.write(chunk)) await new Promise<void>((resolve) => (wake = resolve));
  }
  stdin.end();
}

/**
 * A cursor-agent that is the stand-in with its stdout hashed on the way (sha256 and byte
 * count, one JSON line per invocation in `captures()`): proof that what the caller got is
 * byte for byte what cursor-agent printed, at any size, without holding it. Signals are
 * passed on and the stand-in's exit (status or signal) is its own.
 */
export function teeAgent(): { agent: string; captures: () => Array<{ argv: string[]; sha256: string; bytes: number }> } {
  const out = join(tempDir('cr-tee-'), 'captures.jsonl');
  const agent = scriptAgent(
    'tee-agent.mjs',
    `#!${process.execPath}
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync } from 'node:fs';
const argv = process.argv.slice(2);
const child = spawn(${JSON.stringify(STAND_IN)}, argv, { stdio: ['inherit', 'pipe', 'inherit'] });
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
process.stdout.on('error', () => child.kill('SIGTERM'));
const hash = createHash('sha256');
let bytes = 0;
child.stdout.on('data', (chunk) => {
  hash.update(chunk);
  bytes += chunk.length;
  if (!process.stdout.write(chunk)) {
    child.stdout.pause();
    process.stdout.once('drain', () => child.stdout.resume());
  }
});
child.on('close', (code, signal) => {
  appendFileSync(${JSON.stringify(out)}, JSON.stringify({ argv, sha256: hash.digest('hex'), bytes }) + '\\n');
  process.stdout.write('', () => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
});
`,
  );
  return {
    agent,
    captures: () =>
      existsSync(out)
        ? readFileSync(out, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [],
  };
}

export const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/**
 * Private worlds for one test file, resume on: their helpers are stopped (killed if
 * they will not stop) when the file's tests end; cli.ts removes their folders at exit.
 */
export function worlds(): (extra?: NodeJS.ProcessEnv) => NodeJS.ProcessEnv {
  const envs: NodeJS.ProcessEnv[] = [];
  after(() => stopHelpers(envs));
  return (extra = {}) => {
    const env = sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1', ...extra });
    envs.push(env);
    return env;
  };
}

/** Stops every helper of these worlds (blanks around a world's runtime dir dropped, as cursor-resume drops them). */
export async function stopHelpers(envs: ReadonlyArray<NodeJS.ProcessEnv>): Promise<void> {
  await Promise.all(envs.map((env) => stopHelpersAt(env.CURSOR_RESUME_RUNTIME_DIR?.trim() ?? '')));
}

/**
 * Stops the helper serving `runtimeDir`: politely, then by pid (only helpers of that dir; one
 * gone meanwhile is no error). A dir that is not absolute is no helper's: a blank one would
 * mean the default runtime dir, which is not a test's.
 */
export async function stopHelpersAt(runtimeDir: string): Promise<void> {
  if (!isAbsolute(runtimeDir)) return;
  await stopHelper({ env: { CURSOR_RESUME_RUNTIME_DIR: runtimeDir } }).catch(() => undefined);
  for (const pid of helperPids(runtimeDir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** `cursor-resume inspect --json`: the helper's entries (an empty list when none runs). */
export async function entries(env: NodeJS.ProcessEnv): Promise<Array<Record<string, unknown>>> {
  // No helper running is no entry (exit 0); a failure is never taken for an empty cache. A helper
  // too starved to answer within inspect's deadline (a loaded machine) is asked again.
  let r = await runCli(['inspect', '--json'], { env });
  for (let attempt = 1; r.code !== 0 && attempt < 3; attempt++) r = await runCli(['inspect', '--json'], { env });
  assert.equal(r.code, 0, `inspect --json failed: ${r.stderr}`);
  const parsed = JSON.parse(r.stdout) as { entries?: Array<Record<string, unknown>> };
  return parsed.entries ?? [];
}

/** The facts a stand-in reply names: "I remember: a; b." → ['a', 'b']. */
export function factsOf(reply: string): string[] {
  const m = /I remember: (.*?)\. This prompt was/.exec(reply);
  return m ? m[1]!.split('; ') : [];
}

/** Where the helper of a world with this environment listens. */
export const socketOf = (env: NodeJS.ProcessEnv): string => join(env.CURSOR_RESUME_RUNTIME_DIR!, 'helper.sock');

const closed = (server: net.Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

/** A listener of our own at `socketPath` that records what reaches it and answers as `reply` says (undefined: stall). */
export function fakeHelper(
  socketPath: string,
  reply: (request: { id: number; op: string }) => object | undefined | 'close',
): Promise<{ ops: string[]; connections: () => number; close: () => Promise<void> }> {
  const ops: string[] = [];
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    let buffer = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        const request = JSON.parse(buffer.slice(0, nl)) as { id: number; op: string };
        buffer = buffer.slice(nl + 1);
        ops.push(request.op);
        const answer = reply(request);
        if (answer === 'close') socket.destroy();
        else if (answer !== undefined) socket.write(`${JSON.stringify({ id: request.id, ok: true, ...answer })}\n`);
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(socketPath, () => resolve({ ops, connections: () => connections, close: () => closed(server) })),
  );
}

/**
 * A runtime dir of its own (0700) whose helper.sock passes each client on to the real helper
 * listening at `helperSocket`, keeping every byte of both ways in `traffic`. `onRequest` sees
 * each request line on its way; the line goes on once what it returns has settled.
 */
export async function helperProxy(
  helperSocket: string,
  onRequest: (line: string) => void | Promise<void> = () => {},
): Promise<{ runtimeDir: string; traffic: Buffer[]; close: () => Promise<void> }> {
  const runtimeDir = join(tempDir(), 'run');
  mkdirSync(runtimeDir, { mode: 0o700 });
  const traffic: Buffer[] = [];
  const server = net.createServer((client) => {
    const helper = net.createConnection(helperSocket);
    client.on('close', () => helper.destroy());
    helper.on('close', () => client.destroy());
    client.on('error', () => helper.destroy());
    helper.on('error', () => client.destroy());
    helper.on('data', (chunk: Buffer) => {
      traffic.push(chunk);
      client.write(chunk);
    });
    let pending = Buffer.alloc(0);
    let queue = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      traffic.push(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (let nl = pending.indexOf(0x0a); nl !== -1; nl = pending.indexOf(0x0a)) {
        const line = pending.subarray(0, nl + 1);
        pending = pending.subarray(nl + 1);
        queue = queue.then(async () => {
          await onRequest(line.toString('utf8'));
          helper.write(line);
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(join(runtimeDir, 'helper.sock'), resolve));
  return { runtimeDir, traffic, close: () => closed(server) };
}
/** A hello reply of a helper of `version` (ours by default). */
export const hello = (version = VERSION, protocol = PROTOCOL_VERSION) => ({ protocol, version, pid: process.pid, limits: {} });
