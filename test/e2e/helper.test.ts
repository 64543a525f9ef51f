// The helper with real processes and real sockets: each test has its own
// runtime dir (CURSOR_RESUME_RUNTIME_DIR) and so its own helper, started through
// the CLI (`cursor-resume helper ...`) or the launcher, and stopped afterwards.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HelperClient, HelperError } from '../../src/helper/client.js';
import { createMarker, HAND_OFF_MARKER_ENV, HAND_OFF_STALE_MS } from '../../src/helper/hand-off.js';
import { markForgetAll } from '../../src/helper/forget-marks.js';
import { connectHelper, handOffRecord, holdHelper, stopHelper } from '../../src/helper/launcher.js';
import { runtimePaths } from '../../src/helper/paths.js';
import { MAX_DIGESTS_PER_LINE, MAX_REQUEST_BYTES, PROTOCOL_VERSION } from '../../src/helper/protocol.js';
import { MAX_STAGED_DIGESTS, startHelperServer } from '../../src/helper/server.js';
import { VERSION } from '../../src/version.js';
import { monotonicMs } from '../../src/monotonic.js';
import { ROOT, runCli, sandboxEnv, spawnCli, startGate, tempDir, type RunResult } from '../support/cli.js';
import { Conversation, STREAM_ARGS } from '../support/conversation.js';
import { entries, fakeHelper, hello, stopHelpersAt } from '../support/hardening.js';
import { alive, helperPids, killGroup, runProcess, waitFor } from '../support/processes.js';
import { ANCHOR, asTranscript, sampleRecord, sampleSequence, storeRecord } from '../support/records.js';

const SERVER = path.join(ROOT, 'dist', 'helper', 'helper-server.js');
const A = ANCHOR;
const B = 'b'.repeat(32);

// ---- driving the CLI ------------------------------------------------------------

/**
 * This file's bound on what it waits for (a helper exiting, a lease ending, a run's agent starting): only a hang's,
 * as long as waitFor's default. What is waited for comes, or never does (the nearest wrong outcome, a default idle
 * time or TTL, is minutes away); on a loaded machine a run alone can take seconds to start its agent.
 */
const DEADLINE_MS = 15_000;

function helperCli(args: string[], env: NodeJS.ProcessEnv): Promise<RunResult> {
  return runCli(['helper', ...args], { env });
}

/** A process of ours running `code` (an ES module, from source via tsx) that prints one JSON value. */
async function inChild(code: string, env: NodeJS.ProcessEnv): Promise<unknown> {
  const script = `import { connectHelper } from ${JSON.stringify(path.join(ROOT, 'src/helper/launcher.ts'))};\n${code}`;
  const result = await runProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { env, cwd: ROOT });
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

// ---- one private world per test -------------------------------------------------

interface World {
  env: NodeJS.ProcessEnv;
  dir: string;
  socket: string;
  lock: string;
}

function world(t: TestContext, extra: NodeJS.ProcessEnv = {}): World {
  const env = sandboxEnv(extra);
  const dir = env.CURSOR_RESUME_RUNTIME_DIR!;
  t.after(() => stopHelpersAt(dir));
  return { env, dir, socket: path.join(dir, 'helper.sock'), lock: path.join(dir, 'helper.lock') };
}

async function connected(w: World, start = true, options: { requestTimeoutMs?: number } = {}): Promise<HelperClient> {
  const result = await connectHelper({ start, env: w.env, serverScript: SERVER, ...options });
  assert.ok(result.ok, result.ok ? '' : `${result.code}: ${result.reason}`);
  return result.client;
}

const record = sampleRecord;

/** A raw connection: send bytes, collect everything until the helper closes it. */
function raw(socketPath: string): Promise<{ socket: net.Socket; received: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    let data = '';
    const received = new Promise<string>((done) => {
      socket.on('data', (d) => (data += d.toString()));
      socket.on('close', () => done(data));
    });
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, received }));
    socket.once('error', reject);
  });
}

/** raw(), trying again while the kernel's accept backlog is full (EAGAIN): a burst outruns accept() on a busy machine. */
async function rawPatient(socketPath: string): Promise<Awaited<ReturnType<typeof raw>>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await raw(socketPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || attempt >= 50) throw error;
      await sleep(10);
    }
  }
}

const firstReply = (text: string) => JSON.parse(text.split('\n')[0]!) as { id: number | null; ok: boolean; error?: { code: string } };

// ---- the CLI ----------------------------------------------------------------------

test('status and stop when no helper runs: exit 3 and exit 0, and nothing is created', async (t) => {
  const w = world(t);
  const status = await helperCli(['status'], w.env);
  assert.equal(status.code, 3);
  assert.match(status.stdout, /no helper running/);
  const json = await helperCli(['status', '--json'], w.env);
  assert.equal(json.code, 3);
  assert.deepEqual(JSON.parse(json.stdout), { running: false, socketPath: w.socket });
  const stop = await helperCli(['stop'], w.env);
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /no helper running/);
  assert.equal(fs.existsSync(w.dir), false, 'status and stop never create the runtime dir');
});

test('start, status (human and JSON), stop', async (t) => {
  const w = world(t);
  const start = await helperCli(['start'], w.env);
  assert.equal(start.code, 0, start.stderr);
  assert.match(start.stdout, /^helper started: pid \d+/);
  const again = await helperCli(['start', '--json'], w.env);
  const started = JSON.parse(again.stdout);
  assert.equal(started.started, false, 'a second start finds it running');

  const status = await helperCli(['status'], w.env);
  assert.equal(status.code, 0, status.stderr);
  for (const label of ['pid', 'version', 'uptime', 'socket', 'entries', 'memory'])
    assert.match(status.stdout, new RegExp(`^${label} +\\S`, 'm'));
  assert.ok(!status.stdout.includes('\u001b['), 'no colour when stdout is not a terminal');
  assert.ok(status.stdout.includes(w.socket));

  const json = JSON.parse((await helperCli(['status', '--json'], w.env)).stdout);
  assert.equal(json.running, true);
  assert.equal(json.current, true);
  assert.equal(json.pid, started.pid);
  assert.equal(json.version, VERSION);
  assert.equal(json.socketPath, w.socket);
  assert.equal(json.entries, 0);
  assert.equal(typeof json.uptimeMs, 'number');
  assert.ok(json.memory.rss > 0 && json.memory.heapUsed > 0);
  assert.deepEqual(json.limits, {
    ttlMs: 3_600_000,
    maxEntries: 64,
    idleMs: 300_000,
    connectionIdleMs: 30_000,
    maxRequestBytes: MAX_REQUEST_BYTES,
    maxConnections: 256,
  });

  assert.equal((fs.statSync(w.dir).mode & 0o777).toString(8), '700');
  assert.equal((fs.statSync(w.socket).mode & 0o777).toString(8), '600');
  assert.equal(fs.existsSync(w.lock), false, 'the start lock is held only while starting');

  const stop = await helperCli(['stop'], w.env);
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, new RegExp(`helper stopped \\(pid ${started.pid}\\)`));
  assert.equal(alive(started.pid), false, 'stop returns once the helper has exited');
  assert.equal(fs.existsSync(w.socket), false, 'the socket is removed');
  assert.equal((await helperCli(['status'], w.env)).code, 3);
});

/**
 * A helper of our version in a process of its own at `w.socket`: on shutdown it answers, lets
 * go of its socket at once, and exits only `lingerMs` later. `unreaped`: its parent never
 * waits for it (a container's init), so once it exits it stays a zombie. Gives its pid.
 */
async function lingeringHelper(t: TestContext, w: World, lingerMs: number, unreaped = false): Promise<number> {
  fs.mkdirSync(w.dir, { recursive: true, mode: 0o700 });
  const script = `
    const net = require('node:net');
    const [socketPath, version, protocol, lingerMs] = process.argv.slice(1);
    const server = net.createServer((socket) => {
      let buffer = '';
      socket.on('data', (chunk) => {
        buffer += chunk;
        for (let nl = buffer.indexOf('\\n'); nl !== -1; nl = buffer.indexOf('\\n')) {
          const { id, op } = JSON.parse(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
          if (op === 'hello') socket.write(JSON.stringify({ id, ok: true, protocol: Number(protocol), version, pid: process.pid, limits: {} }) + '\\n');
          if (op === 'shutdown') {
            socket.end(JSON.stringify({ id, ok: true, stopping: true }) + '\\n');
            server.close();
            setTimeout(() => process.exit(0), Number(lingerMs));
          }
        }
      });
    });
    server.listen(socketPath, () => process.stdout.write(process.pid + '\\n'));`;
  const args = ['-e', script, w.socket, VERSION, String(PROTOCOL_VERSION), String(lingerMs)];
  // sh starts the helper, then becomes a sleep that never waits for its child.
  const child = unreaped
    ? spawn('/bin/sh', ['-c', '"$0" "$@" & exec sleep 60', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const pid = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (line: Buffer) => resolve(Number(line.toString())));
    child.once('exit', (code) => reject(new Error(`the lingering helper exited (${code}) before listening`)));
  });
  t.after(() => {
    child.kill('SIGKILL');
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
  return pid;
}

test('helper stop returns once the process has exited, not when its socket is gone; one that lingers is named', async (t) => {
  for (const unreaped of [false, true]) {
    const slow = world(t);
    const pid = await lingeringHelper(t, slow, 400, unreaped);
    const stop = await helperCli(['stop'], slow.env);
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`helper stopped \\(pid ${pid}\\)`));
    assert.equal(alive(pid), false, 'the helper had exited when stop returned');
  }

  const stuck = world(t);
  const stuckPid = await lingeringHelper(t, stuck, 60_000);
  const refused = await helperCli(['stop'], stuck.env);
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, new RegExp(`let go of its socket but has not exited; end it: kill ${stuckPid}\\n`));
  assert.equal(alive(stuckPid), true);
});

// ---- the cache across processes ----------------------------------------------------

test('entries survive across separate client processes', async (t) => {
  const w = world(t);
  const wrote = await inChild(
    `const r = await connectHelper({ start: true });
     if (!r.ok) throw new Error(r.reason);
     const out = await r.client.record(${JSON.stringify(record({ savedBytes: 42 }))});
     r.client.close();
     process.stdout.write(JSON.stringify({ pid: r.server.pid, version: out.branch.version }));`,
    w.env,
  );
  const read = await inChild(
    `const r = await connectHelper({ start: true });
     if (!r.ok) throw new Error(r.reason);
     const branches = await r.client.lookup(${JSON.stringify(A)}, { digests: [], replyDigestAt: () => '' });
     r.client.close();
     process.stdout.write(JSON.stringify({ pid: r.server.pid, started: r.started, branches }));`,
    w.env,
  );
  const { pid, version } = wrote as { pid: number; version: number };
  const later = read as { pid: number; started: boolean; branches: { chatId: string; version: number; bytesSaved: number }[] };
  assert.equal(later.pid, pid);
  assert.equal(later.started, false);
  assert.deepEqual(
    later.branches.map((b) => [b.chatId, b.version, b.bytesSaved]),
    [['chat-1', version, 42]],
  );
});

test('six simultaneous starts leave exactly one helper', async (t) => {
  const w = world(t);
  const runs = await Promise.all(Array.from({ length: 6 }, () => helperCli(['start', '--json'], w.env)));
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  const pids = new Set(runs.map((r) => JSON.parse(r.stdout).pid as number));
  assert.equal(pids.size, 1, `all six talk to one helper, got ${[...pids].join(', ')}`);
  const [pid] = pids;
  await waitFor('the helpers that lost the race to exit', () => helperPids(w.dir).length === 1, DEADLINE_MS);
  assert.deepEqual(helperPids(w.dir), [pid]);
});

test('kill -9 of the helper is survived by the next connect, which starts a new one', async (t) => {
  const w = world(t);
  const client = await connected(w);
  const pid = client.server!.pid;
  assert.ok((await client.record(record())).recorded);
  client.close();
  process.kill(pid, 'SIGKILL');
  await waitFor('the helper to die', () => !alive(pid), DEADLINE_MS);
  assert.ok(fs.existsSync(w.socket), 'a killed helper leaves its socket behind');
  const next = await connectHelper({ start: true, env: w.env, serverScript: SERVER });
  assert.ok(next.ok, next.ok ? '' : next.reason);
  assert.equal(next.started, true);
  assert.notEqual(next.server.pid, pid);
  assert.deepEqual(await next.client.lookup(A, asTranscript([])), [], 'the cache died with it: the next turn goes fresh');
  next.client.close();
});

test('a stale socket file, regular or a dead socket, is replaced', async (t) => {
  const w = world(t);
  fs.mkdirSync(w.dir, { mode: 0o700 });
  fs.writeFileSync(w.socket, 'not a socket');
  const first = await helperCli(['start', '--json'], w.env);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(JSON.parse(first.stdout).started, true);
  assert.ok(fs.statSync(w.socket).isSocket());
  await helperCli(['stop'], w.env);

  // A dead socket: bound by a process that died without cleaning up.
  const dead = await runProcess(
    process.execPath,
    ['-e', `require('net').createServer().listen(${JSON.stringify(w.socket)}, () => process.kill(process.pid, 'SIGKILL'))`],
    { env: w.env, cwd: ROOT },
  );
  assert.equal(dead.code, null);
  assert.ok(fs.statSync(w.socket).isSocket(), 'a dead socket is left');
  const second = await helperCli(['start', '--json'], w.env);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(JSON.parse(second.stdout).started, true);
});

test('a stale start lock (dead pid, or too old) is taken over', async (t) => {
  const w = world(t);
  fs.mkdirSync(w.dir, { mode: 0o700 });
  let deadPid = 999_999;
  while (fs.existsSync(`/proc/${deadPid}`)) deadPid--;
  fs.writeFileSync(w.lock, `${deadPid} stale\n`);
  const first = await helperCli(['start', '--json'], w.env);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(fs.existsSync(w.lock), false);
  await helperCli(['stop'], w.env);

  // A live pid (reused by something else) but a lock far older than any start.
  fs.writeFileSync(w.lock, `${process.pid} reused\n`);
  const old = new Date(Date.now() - 60_000);
  fs.utimesSync(w.lock, old, old);
  const second = await helperCli(['start', '--json'], w.env);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(JSON.parse(second.stdout).started, true);
});

// ---- the runtime dir ------------------------------------------------------------------

test('a world-writable runtime dir is tightened to 0700 before use', async (t) => {
  const w = world(t);
  fs.mkdirSync(w.dir);
  fs.chmodSync(w.dir, 0o777);
  const start = await helperCli(['start'], w.env);
  assert.equal(start.code, 0, start.stderr);
  assert.equal((fs.statSync(w.dir).mode & 0o777).toString(8), '700');
});

test('a symlinked, foreign-owned or non-directory runtime dir is refused with a clear error', async (t) => {
  const w = world(t);
  const target = tempDir('cr-target-');
  fs.mkdirSync(path.dirname(w.dir), { recursive: true });
  fs.symlinkSync(target, w.dir);
  const linked = await helperCli(['start'], w.env);
  assert.equal(linked.code, 1);
  assert.match(linked.stderr, /symbolic link.*CURSOR_RESUME_RUNTIME_DIR/s);
  assert.equal((await helperCli(['status'], w.env)).code, 1);
  assert.deepEqual(fs.readdirSync(target), [], 'nothing was put through the link');
  fs.unlinkSync(w.dir);

  fs.writeFileSync(w.dir, '');
  const file = await helperCli(['start'], w.env);
  assert.equal(file.code, 1);
  assert.match(file.stderr, /not a directory/);
  fs.unlinkSync(w.dir);

  // A folder of someone else's: ours, checked as if we were uid 4242 (any user can run this).
  fs.mkdirSync(w.dir, { mode: 0o700 });
  const launched = await connectHelper({ start: true, env: w.env, serverScript: SERVER, owners: { dir: 4242 } });
  assert.equal(!launched.ok && launched.code, 'bad-runtime-dir');
  assert.match(
    !launched.ok ? launched.reason : '',
    new RegExp(`refusing the helper runtime dir ${w.dir}: it is owned by uid ${process.getuid!()}, not by you \\(uid 4242\\)`),
  );
  assert.deepEqual(fs.readdirSync(w.dir), [], 'nothing was created in it');
  const looked = await connectHelper({ start: false, env: w.env, serverScript: SERVER, owners: { dir: 4242 } });
  assert.equal(!looked.ok && looked.code, 'bad-runtime-dir');
});

test("a runtimeDir from the config file that is refused names the file's setting to change, not the variable", async (t) => {
  const w = world(t);
  const target = tempDir('cr-target-');
  fs.mkdirSync(path.dirname(w.dir), { recursive: true });
  fs.symlinkSync(target, w.dir);
  const { CURSOR_RESUME_RUNTIME_DIR: _dir, ...env } = w.env;
  const file = path.join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ runtimeDir: w.dir })}\n`);
  const told = `it is a symbolic link, which someone else may control. Remove it, or set runtimeDir (cursor-resume config set runtimeDir) to a private directory of yours (runtime dir chosen by the runtimeDir setting in ${file}).`;
  for (const [args, what] of [
    [['helper', 'start'], 'start'],
    [['helper', 'status'], 'reach'],
    [['inspect'], 'reach'],
  ] as const) {
    const r = await runCli([...args], { env });
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, `cursor-resume: cannot ${what} the helper: refusing the helper runtime dir ${w.dir}: ${told}\n`, args.join(' '));
  }
  const run = await runCli(['--print', '--verbose'], {
    env: { ...env, CURSOR_ACP_SESSION_RESUME: '1' },
    input: '{"messages":[{"role":"user","content":"hi"}]}',
  });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(run.stderr.includes(told), run.stderr);
  assert.deepEqual(fs.readdirSync(target), [], 'nothing was put through the link');
});

test('a start lock that is no file (a directory) is named at once: no helper could ever start', async (t) => {
  const w = world(t);
  fs.mkdirSync(path.join(w.dir, 'helper.lock'), { recursive: true, mode: 0o700 });
  fs.chmodSync(w.dir, 0o700);
  const told = `${path.join(w.dir, 'helper.lock')} is a directory, not the helper's start lock, so no helper can start. Remove it, or set CURSOR_RESUME_RUNTIME_DIR to a private directory of yours (runtime dir chosen by CURSOR_RESUME_RUNTIME_DIR).`;
  const start = await helperCli(['start'], w.env);
  assert.equal(start.code, 1);
  assert.equal(start.stderr, `cursor-resume: cannot start the helper: ${told}\n`);
  const run = await runCli(['--print', '--verbose'], {
    env: { ...w.env, CURSOR_ACP_SESSION_RESUME: '1' },
    input: '{"messages":[{"role":"user","content":"hi"}]}',
  });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(run.stderr.includes(told), run.stderr);
  // A helper of another version answering is not stopped for a start that could not happen.
  const older = await fakeHelper(path.join(w.dir, 'helper.sock'), (r) =>
    r.op === 'hello' ? hello('0.0.1-old', 0) : r.op === 'shutdown' ? { stopping: true } : undefined,
  );
  try {
    const again = await helperCli(['start'], w.env);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, `cursor-resume: cannot start the helper: ${told}\n`);
    assert.deepEqual(older.ops, ['hello'], 'only asked who it is: the other version still runs');
  } finally {
    await older.close();
  }
  // The helper itself, started by hand, says so too rather than waiting for the lock.
  const server = spawnSync(process.execPath, [SERVER], { env: { ...w.env }, encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(server.status, 0);
  assert.match(server.stderr, /cannot read the helper start lock \S+helper\.lock: EISDIR/);
});

test('a socket path over the Unix limit is explained, naming the variable to set', async (t) => {
  const w = world(t, { CURSOR_RESUME_RUNTIME_DIR: path.join(tempDir(), 'x'.repeat(100)) });
  assert.throws(() => runtimePaths(w.env), /over the Unix limit of 103.*Set CURSOR_RESUME_RUNTIME_DIR/);
  const start = await helperCli(['start'], w.env);
  assert.equal(start.code, 1);
  assert.match(start.stderr, /CURSOR_RESUME_RUNTIME_DIR/);
});

// ---- robustness ------------------------------------------------------------------------

test('garbage, oversized lines, half-open and vanishing clients do not stop the helper', async (t) => {
  const w = world(t);
  const client = await connected(w);

  const garbage = await raw(w.socket);
  garbage.socket.write('this is not json\n');
  const garbageReply = firstReply(await garbage.received);
  assert.equal(garbageReply.ok, false);
  assert.equal(garbageReply.error!.code, 'bad-json');

  const unknown = await raw(w.socket);
  unknown.socket.write('{"id":7,"op":"format-disk"}\n');
  assert.deepEqual(firstReply(await unknown.received).error!.code, 'unknown-op');

  const oversized = await raw(w.socket);
  oversized.socket.write(Buffer.alloc(MAX_REQUEST_BYTES + 1024, 'x'));
  assert.equal(firstReply(await oversized.received).error!.code, 'too-large');

  // Half-open: a request begun and never finished, a connection that says nothing.
  const halfSent = await raw(w.socket);
  halfSent.socket.write('{"id":1,"op":"look');
  const silent = await raw(w.socket);
  // Vanishing mid-request.
  const vanishing = await raw(w.socket);
  vanishing.socket.write(`{"id":1,"op":"record","record":{"anchor":"${A}"`);
  vanishing.socket.destroy();

  assert.ok((await client.record(record())).recorded);
  assert.equal((await client.lookup(A, asTranscript([]))).length, 1);
  const other = await connected(w, false);
  assert.equal((await other.stats()).entries, 1);
  other.close();
  halfSent.socket.destroy();
  silent.socket.destroy();
  client.close();
});

test('a client that reads no reply is cut off once 8 MiB of them wait, even inside one write of many requests', async (t) => {
  const w = world(t);
  const client = await connected(w);
  for (let i = 0; i < 64; i++) {
    assert.ok((await client.record(record({ chatId: `chat-${i}`, workspace: `/w/${'p'.repeat(2000)}` }))).recorded);
  }
  const line = '{"id":1,"op":"list"}\n';
  const probe = await raw(w.socket);
  probe.socket.end(line);
  const replyBytes = Buffer.byteLength(await probe.received);
  assert.ok(replyBytes > 100_000, `a list reply is large (${replyBytes} bytes)`);

  // About 3,000 requests in one write, whose replies would be some 400 MB: none read until the helper has had them.
  const greedy = net.createConnection(w.socket);
  greedy.pause();
  greedy.on('error', () => {});
  await new Promise((resolve) => greedy.once('connect', resolve));
  const requests = Math.floor(65_536 / line.length);
  greedy.write(line.repeat(requests));
  assert.equal((await client.stats()).entries, 64, 'the helper went on serving others');
  let received = 0;
  greedy.on('data', (chunk: Buffer) => (received += chunk.length));
  greedy.resume();
  await new Promise((resolve) => greedy.once('close', resolve));
  const bound = 8 * 1024 * 1024;
  assert.ok(
    received < bound + 2 * replyBytes + 4 * 1024 * 1024,
    `cut off after ${received} bytes (${Math.round(received / replyBytes)} replies of ${requests})`,
  );
  assert.equal((await client.stats()).entries, 64);
  client.close();
});

test('many connections at once: extras are refused politely and the helper keeps serving', async (t) => {
  // No connection is closed for its silence here (the longest the rule allows): only the limit closes any.
  const w = world(t, { CURSOR_RESUME_CONNECTION_IDLE_MS: '3600000' });
  const client = await connected(w);
  // Holding a lease, the connection opened before is never the one shed for a newcomer, however long the burst takes
  // on a loaded machine (idle, it would be the first shed once the burst outlasts SHED_IDLE_MS): it stays among the 256.
  const branch = await client.record(record());
  assert.ok(branch.recorded);
  assert.ok((await client.lease(A, 'chat-1', branch.branch.version)).granted);
  const sockets: Awaited<ReturnType<typeof raw>>[] = [];
  // In batches: a Unix socket's accept backlog refuses (EAGAIN) a burst larger than it.
  for (let batch = 0; batch < 6; batch++) sockets.push(...(await Promise.all(Array.from({ length: 100 }, () => rawPatient(w.socket)))));
  // A connect() completes in the kernel's backlog before the helper accepts it, so the
  // refusals arrive over time on a busy machine: wait for them rather than for a fixed while.
  const closed = () => sockets.filter((s) => s.socket.destroyed || s.socket.readyState !== 'open');
  await waitFor(`at least ${600 - 255} extras beyond the limit to be closed`, () => closed().length >= 600 - 255);
  const replies = await Promise.all(closed().map((s) => s.received));
  // A refused extra is told why. (One closed with no reply was shed as idle: the burst outlasted SHED_IDLE_MS.)
  const refusals = replies.filter((text) => text !== '').map((text) => firstReply(text).error?.code);
  assert.ok(refusals.length > 0, 'the extras are refused with a reply');
  assert.deepEqual(new Set(refusals), new Set(['too-many-connections']));
  for (const s of sockets) s.socket.destroy();
  assert.equal((await client.stats()).pid, client.server!.pid, 'the connection opened before still works');
  await waitFor('the extra connections to be gone', async () => (await client.stats()).connections === 1, DEADLINE_MS);
  const later = await connected(w, false);
  later.close();
  client.close();
});

test('idle connections and half-sent requests are closed, leased ones are not (in-process server)', async (t) => {
  const w = world(t);
  const paths = runtimePaths(w.env);
  const started = await startHelperServer({ paths, connectionIdleMs: 300, requestTimeoutMs: 300, settings: { idleMs: 60_000 } });
  assert.ok(started.started);
  const { server } = started;
  t.after(() => server.close());

  const silent = await raw(paths.socket);
  // The dribbled request goes to a helper of its own, where no silence closes a connection: only the request's deadline
  // can end it. (Beside an idle rule of as many ms, a stall of this process of 300 ms let the idle timer run first and
  // close it without a word.) Were bytes to push that deadline back, nothing would: the race below bounds the hang.
  const dribble = runtimePaths(world(t).env);
  const deadlined = await startHelperServer({
    paths: dribble,
    connectionIdleMs: 3_600_000,
    requestTimeoutMs: 300,
    settings: { idleMs: 60_000 },
  });
  assert.ok(deadlined.started);
  t.after(() => deadlined.server.close());
  const trickling = await raw(dribble.socket);
  const trickle = setInterval(() => trickling.socket.write(' '), 50);
  trickling.socket.write('{"id":1,');
  t.after(() => clearInterval(trickle));

  const branch = server.store.record(storeRecord(), 'setup');
  assert.ok(branch.recorded);
  // Its hello and its lease in one go, so no stall between them lets the idle rule close it first; replies waited for as long as they take.
  const holder = await HelperClient.connect(paths.socket, { requestTimeoutMs: 60_000 });
  const [, lease] = await Promise.all([holder.hello(), holder.lease(A, 'chat-1', branch.branch.version)]);
  assert.ok(lease.granted);

  assert.equal(await silent.received, '', 'an idle connection is closed without a word');
  const dribbled = await Promise.race([trickling.received, sleep(15_000, 'still open 15 s on', { ref: false })]);
  assert.notEqual(dribbled, 'still open 15 s on', 'more bytes do not push the deadline back');
  clearInterval(trickle);
  await deadlined.server.close();
  const reply = firstReply(dribbled);
  assert.equal(reply.error!.code, 'bad-request', 'a request dribbled in byte by byte still has its deadline');
  // A connection opened after the holder's last request, and as silent: once the idle rule has closed it, the holder has been idle as long.
  const witness = await raw(paths.socket);
  assert.equal(await witness.received, '', 'a later idle connection is closed');
  await waitFor('the helper to let the idle ones go', () => server.connectionCount <= 1, DEADLINE_MS);
  assert.equal(server.connectionCount, 1, 'the lease holder stays connected while idle');
  assert.equal(server.store.lookup(A)[0]!.leased, true);
  holder.close();
  await waitFor('the lease to end with the connection', () => server.connectionCount === 0, DEADLINE_MS);
  const after = server.store.lookup(A)[0]!;
  assert.deepEqual([after.leased, after.state, after.lastOutcome], [false, 'unknown', 'interrupted']);
  await server.close();
  assert.equal(fs.existsSync(paths.socket), false);
});

test('a lease ended by another client no longer keeps its silent holder connected, nor the helper alive (in-process server)', async (t) => {
  const w = world(t);
  const paths = runtimePaths(w.env);
  let exitReason: string | undefined;
  const started = await startHelperServer({
    paths,
    connectionIdleMs: 300,
    settings: { idleMs: 400 },
    onExit: (reason) => (exitReason = reason),
  });
  assert.ok(started.started);
  const { server } = started;
  t.after(() => server.close());

  const holder = await HelperClient.connect(paths.socket);
  t.after(() => holder.close());
  await holder.hello();
  const branch = server.store.record(storeRecord(), 'setup');
  assert.ok(branch.recorded);
  assert.ok((await holder.lease(A, 'chat-1', branch.branch.version)).granted);

  const other = await HelperClient.connect(paths.socket);
  await other.hello();
  assert.equal(await other.evict({ anchor: A, chatId: 'chat-1' }), 1);
  other.close();
  assert.equal((await holder.stats()).leases, 0, 'the holder has no lease left');
  // Silent from here on: only the helper's own timers can close it.
  await waitFor('the holder, silent and without a lease, to be let go', () => server.connectionCount === 0, DEADLINE_MS);
  await waitFor('the helper, with nothing cached and nobody connected, to exit', () => exitReason !== undefined, DEADLINE_MS);
  assert.equal(exitReason, 'idle');
});

test('a helper whose socket was taken over exits without removing the new socket', async (t) => {
  const w = world(t);
  const paths = runtimePaths(w.env);
  let exitReason: string | undefined;
  const started = await startHelperServer({ paths, settings: { idleMs: 60_000 }, onExit: (reason) => (exitReason = reason) });
  assert.ok(started.started);
  fs.unlinkSync(paths.socket);
  fs.writeFileSync(paths.socket, 'the new owner');
  await waitFor('the helper to notice', () => exitReason !== undefined, DEADLINE_MS);
  assert.equal(exitReason, 'socket-taken');
  assert.equal(fs.readFileSync(paths.socket, 'utf8'), 'the new owner');
  fs.unlinkSync(paths.socket);
});

/** A helper of ours started in this process, and a client that said hello to it. */
async function servedClient(t: TestContext, w: World) {
  const paths = runtimePaths(w.env);
  const started = await startHelperServer({ paths, settings: { idleMs: 60_000 } });
  assert.ok(started.started);
  const client = await HelperClient.connect(paths.socket);
  t.after(() => client.close());
  await client.hello();
  return { paths, started, client };
}

test('a helper whose socket was taken over leaves the marks to the one that took it, even asked on a connection it still has', async (t) => {
  const { paths, client } = await servedClient(t, world(t));
  fs.unlinkSync(paths.socket);
  fs.writeFileSync(paths.socket, 'the new owner');
  t.after(() => fs.rmSync(paths.socket, { force: true }));
  const mark = markForgetAll(paths, monotonicMs());
  // Answered, or (its sweep coming first) the connection closed as the helper leaves: the mark stays either way.
  await client.list().catch(() => undefined);
  assert.equal(fs.existsSync(mark), true, 'the mark is still there for the helper now serving');
});

test('a helper whose socket was taken over neither leases nor records on a connection it still has: the one serving the socket forgot that chat', async (t) => {
  const w = world(t);
  const { paths, started, client: turn } = await servedClient(t, w);
  assert.ok(started.started);
  t.after(() => started.server.close());
  const made = await turn.record(record());
  assert.ok(made.recorded);
  const [branch] = await turn.lookup(A, asTranscript(sampleSequence()));
  assert.equal(branch!.version, made.branch.version);
  // The socket deleted (or the helper stalled and replaced); a new helper serves the path, and the old one lingers until its next sweep.
  fs.unlinkSync(paths.socket);
  const next = await startHelperServer({ paths, settings: { idleMs: 60_000 } });
  assert.ok(next.started);
  t.after(() => next.server.close());
  // A caller continues the chat itself: its line tells the helper serving the socket.
  const line = await HelperClient.connect(paths.socket);
  await line.hello();
  await line.evict({ chatId: 'chat-1' });
  line.close();
  // The turn that looked the chat up before must not be granted it by the old helper, nor record it there.
  const lease = await turn.lease(A, 'chat-1', branch!.version).catch((error: HelperError) => error);
  assert.ok(!('granted' in lease) || !lease.granted, 'no lease on a chat the serving helper forgot');
  // Told why, not cut off: the client knows to ask again on a new connection.
  assert.ok(lease instanceof HelperError, String(lease));
  assert.deepEqual(
    [lease.code, lease.message],
    ['shutting-down', 'this helper no longer serves its socket; connect again to reach the one that does'],
  );
  const recorded = await turn.record(record({ baseVersion: branch!.version, added: 'c'.repeat(32) })).catch((error: HelperError) => error);
  assert.ok(!('recorded' in recorded) || !recorded.recorded, 'no record of it either');
  assert.deepEqual(
    started.server.store.list().map((b) => [b.chatId, b.version]),
    [['chat-1', branch!.version]],
    'the old helper applied neither',
  );
});

// ---- versions ---------------------------------------------------------------------------

const FAKE_OLD_HELPER = `
import net from 'node:net';
import fs from 'node:fs';
const socketPath = process.argv[2];
net.createServer((socket) => {
  let buffer = '';
  socket.on('data', (chunk) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\\n'); nl !== -1; nl = buffer.indexOf('\\n')) {
      const request = JSON.parse(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      fs.appendFileSync(socketPath + '.ops', request.op + '\\n');
      if (request.op === 'hello') {
        socket.write(JSON.stringify({ id: request.id, ok: true, protocol: 0, version: '0.0.1-old', pid: process.pid, limits: {} }) + '\\n');
      } else if (request.op === 'shutdown') {
        // Exits without removing its socket, as an old helper might.
        socket.end(JSON.stringify({ id: request.id, ok: true, stopping: true }) + '\\n', () => process.exit(0));
      } else {
        socket.write(JSON.stringify({ id: request.id, ok: false, error: { code: 'unknown-op', message: 'old' } }) + '\\n');
      }
    }
  });
}).listen(socketPath, () => fs.writeFileSync(socketPath + '.ready', ''));
`;

/** A helper of another version on the world's socket; `ops()` lists the requests it was sent. */
async function oldHelper(t: TestContext, w: World): Promise<{ exited: Promise<number | null>; ops: () => string[] }> {
  fs.mkdirSync(w.dir, { recursive: true, mode: 0o700 });
  const script = path.join(tempDir(), 'old-helper.mjs');
  fs.writeFileSync(script, FAKE_OLD_HELPER);
  const old = spawn(process.execPath, [script, w.socket], { stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => old.on('exit', (code) => resolve(code)));
  t.after(() => old.kill('SIGKILL'));
  await waitFor('the old helper to listen', () => fs.existsSync(`${w.socket}.ready`), DEADLINE_MS);
  const log = `${w.socket}.ops`;
  return { exited, ops: () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) };
}

test('a helper of another version is asked to stop and replaced', async (t) => {
  const w = world(t);
  const { exited: oldExit } = await oldHelper(t, w);

  const look = await connectHelper({ start: false, env: w.env, serverScript: SERVER });
  assert.equal(!look.ok && look.code, 'version-mismatch', 'without start, it is reported, not replaced');
  const status = JSON.parse((await helperCli(['status', '--json'], w.env)).stdout);
  assert.deepEqual([status.running, status.current, status.version], [true, false, '0.0.1-old']);

  const result = await connectHelper({ start: true, env: w.env, serverScript: SERVER });
  assert.ok(result.ok, result.ok ? '' : result.reason);
  assert.equal(result.replaced, 'another-version');
  assert.equal(result.started, true);
  assert.equal(result.server.version, VERSION);
  assert.equal(result.server.protocol, PROTOCOL_VERSION);
  assert.equal(await oldExit, 0, 'the old helper exited when asked');
  result.client.close();
});

test('a client that met our helper and reconnects to one of another version sends it nothing but a hello', async (t) => {
  const w = world(t);
  const { started, client } = await servedClient(t, w);
  // Replaced meanwhile (by another installation sharing the runtime dir).
  await started.server.close();
  const old = await oldHelper(t, w);
  await assert.rejects(client.record(sampleRecord()), (error: HelperError) => {
    assert.equal(error.code, 'version-mismatch');
    assert.match(error.message, /the helper now answering is version 0\.0\.1-old \(protocol 0\), not /);
    return true;
  });
  assert.deepEqual(old.ops(), ['hello'], 'no record, in a protocol it may read otherwise');
});

test("versions read from a replaced helper never match the new one's: a lease or a prefix probe on them is refused as stale", async (t) => {
  const w = world(t);
  const paths = runtimePaths(w.env);
  const first = await startHelperServer({ paths, settings: { idleMs: 60_000 } });
  assert.ok(first.started);
  const before = first.server.store.record(storeRecord(), 'setup');
  assert.ok(before.recorded);
  await first.server.close();
  const second = await startHelperServer({ paths, settings: { idleMs: 60_000 } });
  assert.ok(second.started);
  t.after(() => second.server.close());
  // The same chat, recorded anew by a turn that knows more of it.
  const now = second.server.store.record(storeRecord({ added: 'd'.repeat(32 * 5) }), 'setup');
  assert.ok(now.recorded);
  assert.notEqual(now.branch.version, before.branch.version);
  const client = await HelperClient.connect(paths.socket);
  t.after(() => client.close());
  await client.hello();
  const lease = await client.lease(ANCHOR, 'chat-1', before.branch.version);
  assert.equal(!lease.granted && lease.reason, 'stale');
  const probe = await client.prefixes(ANCHOR, 'chat-1', before.branch.version, [1]);
  assert.equal(!probe.found && probe.reason, 'stale');
});

// ---- going away ---------------------------------------------------------------------------

test('idle exit: with no connections and an empty cache, after CURSOR_RESUME_IDLE_MS', async (t) => {
  const w = world(t, { CURSOR_RESUME_IDLE_MS: '400' });
  const start = JSON.parse((await helperCli(['start', '--json'], w.env)).stdout);
  await waitFor('the idle helper to exit', () => !alive(start.pid), DEADLINE_MS);
  assert.equal(fs.existsSync(w.socket), false);

  // An entry worth keeping keeps it alive; once evicted, it goes.
  const client = await connected(w);
  const pid = client.server!.pid;
  assert.equal(client.server!.limits.idleMs, 400);
  assert.ok((await client.record(record())).recorded);
  client.close();
  // An empty helper with the same idle limit, left alone after ours: once it has gone, ours has been idle longer.
  const empty = world(t, { CURSOR_RESUME_IDLE_MS: '400' });
  const witness = JSON.parse((await helperCli(['start', '--json'], empty.env)).stdout);
  await waitFor('the empty helper to exit', () => !alive(witness.pid), DEADLINE_MS);
  assert.ok(alive(pid), 'a helper holding entries stays');
  const again = await connected(w, false);
  assert.equal(await again.evict({ all: true }), 1);
  again.close();
  await waitFor('the emptied helper to exit', () => !alive(pid), DEADLINE_MS);
  assert.equal(fs.existsSync(w.socket), false);
});

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  test(`${signal} stops the helper and removes its socket`, async (t) => {
    const w = world(t);
    const client = await connected(w);
    const pid = client.server!.pid;
    client.close();
    process.kill(pid, signal);
    await waitFor('the helper to exit', () => !alive(pid), DEADLINE_MS);
    assert.equal(fs.existsSync(w.socket), false);
    assert.equal(fs.existsSync(w.lock), false);
  });
}

// ---- limits and leases through the daemon --------------------------------------------------

test('TTL and LRU limits from the environment, clamped to the seed limits', async (t) => {
  // Each limit in a helper of its own: under a 300 ms life, the requests that check the LRU order could outlast
  // the entries on a loaded machine (a helper not run for 300 ms among them).
  const w = world(t, { CURSOR_RESUME_MAX_ENTRIES: '2' });
  const client = await connected(w);
  assert.deepEqual([client.server!.limits.ttlMs, client.server!.limits.maxEntries], [3_600_000, 2]);
  for (const chatId of ['one', 'two', 'three']) assert.ok((await client.record(record({ chatId }))).recorded);
  assert.deepEqual(
    (await client.list()).map((b) => b.chatId),
    ['three', 'two'],
    'the least recently used went first',
  );
  const listed = (await client.list())[0]!;
  assert.equal(listed.knownCount, 2);
  assert.deepEqual(['known' in listed, 'prefix' in listed], [false, false], 'list carries neither digests nor prefix hashes');
  client.close();

  const short = world(t, { CURSOR_RESUME_TTL_MS: '300' });
  const timed = await connected(short);
  assert.deepEqual([timed.server!.limits.ttlMs, timed.server!.limits.maxEntries], [300, 64]);
  for (const chatId of ['one', 'two']) assert.ok((await timed.record(record({ chatId }))).recorded);
  await waitFor('the TTL to pass', async () => (await timed.peek(A, asTranscript([]))).every((b) => b.ttlLeftMs <= 0), DEADLINE_MS);
  assert.deepEqual(
    (await timed.lookup(A, asTranscript([]))).filter((b) => b.ttlLeftMs > 0),
    [],
    'after the TTL nothing is live (an expired branch may be shown once)',
  );
  assert.deepEqual(await timed.lookup(A, asTranscript([])), []);
  assert.equal((await timed.stats()).entries, 0);
  timed.close();
  await stopHelper({ env: short.env });

  const raised = world(t, { CURSOR_RESUME_TTL_MS: '99999999999', CURSOR_RESUME_MAX_ENTRIES: '1000' });
  const limited = await connected(raised);
  assert.deepEqual([limited.server!.limits.ttlMs, limited.server!.limits.maxEntries], [3_600_000, 64], 'limits are never raised');
  limited.close();
});

test('the lease: refused to a second run while the first holds it; the holder vanishing marks the branch', async (t) => {
  const w = world(t);
  const first = await connected(w);
  const created = await first.record(record());
  assert.ok(created.recorded);
  const version = created.branch.version;
  assert.ok((await first.lease(A, 'chat-1', version)).granted);

  const second = await connected(w);
  const refused = await second.lease(A, 'chat-1', version);
  assert.equal(!refused.granted && refused.reason, 'busy');
  const intrusion = await second.record(record({ baseVersion: version }));
  assert.equal(!intrusion.recorded && intrusion.reason, 'busy');
  assert.equal((await second.lookup(A, asTranscript([])))[0]!.leased, true);

  first.close();
  await waitFor('the lease to end', async () => !(await second.lookup(A, asTranscript([])))[0]!.leased, DEADLINE_MS);
  const branch = (await second.lookup(A, asTranscript([])))[0]!;
  assert.equal(branch.state, 'unknown');
  assert.equal(branch.lastOutcome, 'interrupted');
  assert.ok(branch.version > version);
  const stale = await second.lease(A, 'chat-1', version);
  assert.equal(!stale.granted && stale.reason, 'stale', 'a decision made before the interruption is stale');
  const granted = await second.lease(A, 'chat-1', branch.version);
  assert.ok(granted.granted);
  const done = await second.record(record({ baseVersion: branch.version, added: 'c'.repeat(64) }));
  assert.ok(done.recorded);
  assert.deepEqual([done.branch.state, done.branch.leased, done.branch.turns], ['ok', false, 2]);
  assert.equal(await second.release(), 0, 'the record ended the lease');
  second.close();
});

// ---- protocol 3: counts and prefix hashes on the wire, digests only as they are added ------------

const digestsOf = (n: number, seed: string): string[] =>
  Array.from({ length: n }, (_, i) => createHash('sha256').update(`${seed}/${i}`).digest('hex').slice(0, 32));
const turnOf = (digests: string[], base: { version: number; count: number } | null, chatId = 'chat-1') => ({
  anchor: A,
  chatId,
  toolsFingerprint: 'f'.repeat(32),
  workspace: '/work/project',
  model: 'gpt-5',
  digests: digests.slice(0, -1),
  reply: digests.at(-1)!,
  base: base && { ...base, lastAsReply: digests[base.count - 1]! },
  savedBytes: 0,
  startedAt: monotonicMs(),
});

test('a lookup answers a count and a prefix hash; the first differing message is found by prefix hashes, and only then', async (t) => {
  const w = world(t);
  const client = await connected(w);
  const known = digestsOf(10_000, 'x');
  assert.ok((await client.recordTurn(turnOf(known, null))).recorded, 'a new chat of 10,000 messages: its digests go ahead in append lines');
  const next = [...known, ...digestsOf(1, 'new')];
  const [holds] = await client.lookup(A, asTranscript(next));
  assert.deepEqual([holds!.knownCount, holds!.matched], [10_000, 10_000]);
  assert.equal('known' in holds!, false, 'no digests in the reply');
  for (const at of [0, 1, 3217, 9_999]) {
    const edited = next.map((d, i) => (i === at ? 'e'.repeat(32) : d));
    assert.equal((await client.lookup(A, asTranscript(edited)))[0]!.matched, at, `edited at ${at}`);
  }
  assert.equal((await client.lookup(A, asTranscript(known.slice(0, 6000))))[0]!.matched, 6000, 'a shorter transcript');
  const stale = await client.prefixes(A, 'chat-1', holds!.version + 1, [1]);
  assert.equal(!stale.found && stale.reason, 'stale');
  client.close();
});

test('a record whose base no longer matches is refused, and a lookup against a branch that grew meanwhile sees it grown', async (t) => {
  const w = world(t);
  const [one, two] = [await connected(w), await connected(w)];
  const known = digestsOf(12, 'y');
  assert.ok((await one.recordTurn(turnOf(known, null))).recorded);
  const grown = [...known, ...digestsOf(2, 'two')];
  const [seen] = await one.lookup(A, asTranscript([...known, ...digestsOf(1, 'one')]));
  // Meanwhile another run records a turn of the same chat.
  const [theirs] = await two.lookup(A, asTranscript(grown.slice(0, -1)));
  assert.ok((await two.recordTurn(turnOf(grown, { version: theirs!.version, count: theirs!.knownCount }))).recorded);
  const late = await one.recordTurn(turnOf([...known, ...digestsOf(2, 'one')], { version: seen!.version, count: seen!.knownCount }));
  assert.equal(!late.recorded && late.reason, 'conflict', 'the version it read is gone');
  const wrongBase = await one.record(
    record({
      base: { version: (await one.lookup(A, asTranscript(grown)))[0]!.version, count: 12, prefix: 'a'.repeat(32), last: 'c'.repeat(32) },
      added: 'c'.repeat(32),
    }),
  );
  assert.equal(!wrongBase.recorded && wrongBase.reason, 'conflict', 'the right version with another count or prefix hash');
  const [now] = await one.lookup(A, asTranscript([...grown, ...digestsOf(1, 'three')]));
  assert.deepEqual([now!.knownCount, now!.matched], [14, 14], 'the grown branch, proven against the transcript that has its turn');
  const [theirsOnly] = await one.lookup(A, asTranscript([...known, ...digestsOf(1, 'one')]));
  assert.equal(theirsOnly!.matched, 12, "a transcript without the other run's turn matches up to it");
  one.close();
  two.close();
});

test('the helper starts with no V8 flags (Node keeps its code cache), and after a burst gives its garbage back and serves on', async (t) => {
  const w = world(t);
  const client = await connected(w);
  const args = fs.readFileSync(`/proc/${client.server!.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  assert.deepEqual(args.slice(1), [SERVER], 'nothing between node and the script');
  // A burst that grows the heap by megabytes (3.2 MB of request lines), then a quiet moment in which the helper collects.
  const known = digestsOf(100_000, 'q');
  assert.ok((await client.recordTurn(turnOf(known, null))).recorded);
  await sleep(1000);
  const next = [...known, ...digestsOf(2, 'after')];
  const [branch] = await client.lookup(A, asTranscript(next.slice(0, -1)));
  assert.deepEqual([branch!.knownCount, branch!.matched], [100_000, 100_000], 'the branch as recorded');
  assert.ok((await client.recordTurn(turnOf(next, { version: branch!.version, count: branch!.knownCount }))).recorded);
  client.close();
});

test('a 100,000-message history: recorded in append lines, resumed with a delta, and digests sent ahead count only for their record', async (t) => {
  const w = world(t);
  // What is tested is that it fits and resumes, not how fast: a loaded machine must not fail it on the 500 ms default.
  const client = await connected(w, true, { requestTimeoutMs: 10_000 });
  const known = digestsOf(100_000, 'z');
  assert.ok((await client.recordTurn(turnOf(known, null))).recorded);
  const next = [...known, ...digestsOf(2, 'more')];
  const [branch] = await client.lookup(A, asTranscript(next.slice(0, -1)));
  assert.deepEqual([branch!.knownCount, branch!.matched], [100_000, 100_000]);
  const delta = await client.recordTurn(turnOf(next, { version: branch!.version, count: branch!.knownCount }));
  assert.ok(delta.recorded);
  assert.equal(delta.branch.knownCount, 100_002);

  // Digests sent ahead for a record that counts on none, or a record counting on more than were sent: refused, nothing stored.
  await client.request('append', { digests: 'c'.repeat(64) });
  const surprise = await client.record(record({ chatId: 'other' }));
  assert.equal(!surprise.recorded && surprise.reason, 'staged');
  const missing = await client.record(record({ chatId: 'other', staged: 5 }));
  assert.equal(!missing.recorded && missing.reason, 'staged');
  // A new chat that knows no message would prove any transcript of its anchor: refused, and nothing found for it.
  const empty = await connected(w, false);
  await assert.rejects(empty.request('record', { record: record({ anchor: B, chatId: 'empty', added: '' }) }), {
    code: 'bad-request',
    message: /a record of a new chat \(base null\) must hold at least one digest/,
  });
  empty.close();
  assert.deepEqual(await client.lookup(B, asTranscript(digestsOf(3, 'any'))), []);
  assert.deepEqual(
    (await client.list()).map((b) => b.chatId),
    ['chat-1'],
  );
  client.close();
});

test('digests sent ahead are bounded across connections too, and given back when their connection goes', async (t) => {
  const w = world(t);
  const first = await connected(w, true, { requestTimeoutMs: 30_000 });
  // A record's worth on one connection, in lines of the most digests a line may carry.
  const line = 'a'.repeat(MAX_DIGESTS_PER_LINE * 32);
  let staged = 0;
  while (staged < MAX_STAGED_DIGESTS) {
    const count = Math.min(MAX_DIGESTS_PER_LINE, MAX_STAGED_DIGESTS - staged);
    staged = (await first.request('append', { digests: count === MAX_DIGESTS_PER_LINE ? line : line.slice(0, count * 32) })).staged;
  }
  const second = await connected(w, false);
  await assert.rejects(second.request('append', { digests: 'b'.repeat(32) }), {
    code: 'too-large',
    message: `the helper holds at most ${MAX_STAGED_DIGESTS} digests sent ahead across its connections; connection closed`,
  });
  second.close();
  first.close();
  await waitFor('the first connection to be gone', async () => {
    const probe = await connected(w, false);
    try {
      return (await probe.stats()).connections === 1;
    } finally {
      probe.close();
    }
  });
  const third = await connected(w, false);
  assert.equal((await third.request('append', { digests: 'b'.repeat(32) })).staged, 1, 'room again');
  third.close();
});

test('evict by anchor prefix, by branch and all; a malformed evict is refused', async (t) => {
  const w = world(t);
  const client = await connected(w);
  for (const [anchor, chatId] of [
    [A, 'one'],
    [A, 'two'],
    [B, 'three'],
    [`ab${'0'.repeat(30)}`, 'four'],
    [B, 'two'],
    [`c${'0'.repeat(31)}`, 'five'],
  ] as const) {
    assert.ok((await client.record(record({ anchor, chatId }))).recorded);
  }
  assert.equal(await client.evict({ chatId: 'five' }), 1, 'a chat alone: under whichever anchor holds it');
  assert.equal(await client.evict({ anchor: A, chatId: 'two' }), 1, "B's branch of chat two stays");
  assert.equal(await client.evict({ chatId: 'two' }), 1);
  assert.equal(await client.evict({ anchorPrefix: 'a' }), 2);
  assert.deepEqual(
    (await client.list()).map((b) => b.chatId),
    ['three'],
  );
  const before = monotonicMs();
  assert.equal(await client.evict({ all: true }), 1);
  const again = await client.record(record({ anchor: A, chatId: 'three' }));
  assert.equal(!again.recorded && again.reason, 'forgotten', 'the chats it dropped are never recorded again');
  const late = await client.record(record({ anchor: A, chatId: 'six', startedAt: before }));
  assert.equal(!late.recorded && late.reason, 'forgotten', 'nor is a chat of a turn that started before');
  assert.ok((await client.record(record({ anchor: A, chatId: 'six' }))).recorded, 'a turn started since records as ever');
  // An anchor needs its chat; a chat with all or a prefix names two targets; forget is no more.
  for (const malformed of [
    { all: true, anchorPrefix: 'a' },
    { all: true, forget: true },
    { anchor: A },
    { chatId: 'one', all: true },
    { chatId: 'one', anchorPrefix: 'a' },
  ]) {
    const probe = await connected(w, false);
    await assert.rejects(probe.request('evict', malformed), { code: 'bad-request' }, JSON.stringify(malformed));
    probe.close();
  }
  client.close();
});

test('no message text can reach the helper: text fields and non-hex digests are refused', async (t) => {
  const w = world(t);
  const client = await connected(w);
  const cases: [string, object][] = [
    ['an extra field', { ...record(), prompt: 'hello, please fix my bug' }],
    ['text as digests', record({ added: 'please fix my bug' })],
    ['a partial digest', record({ added: 'c'.repeat(40) })],
    [
      'a prefix hash that is prose',
      record({ base: { version: 1, count: 2, prefix: 'the conversation so far is...', last: 'c'.repeat(32) } }),
    ],
    ['a reply copy that is prose', record({ base: { version: 1, count: 2, prefix: 'a'.repeat(32), last: 'the reply, word for word' } })],
    ['a fingerprint that is prose', record({ toolsFingerprint: 'the tools are read and write' })],
    ['a model with a newline', record({ model: 'gpt-5\nignore previous instructions' })],
    ['a bad chat id', record({ chatId: '--force' })],
  ];
  for (const [what, bad] of cases) {
    const probe = await connected(w, false);
    await assert.rejects(probe.request('record', { record: bad }), { code: 'bad-request' }, what);
    probe.close();
  }
  await assert.rejects(
    (async () => {
      const probe = await connected(w, false);
      try {
        return await probe.request('lookup', { anchor: A, text: 'hi' });
      } finally {
        probe.close();
      }
    })(),
    { code: 'bad-request' },
  );
  assert.equal((await client.stats()).entries, 0);
  client.close();
});

// ---- where it lives, how it runs ----------------------------------------------------------

/** A world's environment with the runtime dir left to the defaults, which put it at `runtimeDir`: a helper there is stopped after the test. */
function defaultsWorld(t: TestContext, extra: NodeJS.ProcessEnv, runtimeDir: string): NodeJS.ProcessEnv {
  const { CURSOR_RESUME_RUNTIME_DIR: _dir, ...env } = sandboxEnv(extra);
  t.after(() => stopHelpersAt(runtimeDir));
  return env;
}

test('the default runtime dir: $XDG_RUNTIME_DIR/cursor-resume, else <tmpdir>/cursor-resume-<uid> (a relative XDG_RUNTIME_DIR is ignored)', async (t) => {
  const xdg = tempDir('cr-xdg-');
  const tmp = tempDir('cr-tmp-');
  const uid = process.getuid!();
  const cases: [NodeJS.ProcessEnv, string][] = [
    [{ XDG_RUNTIME_DIR: xdg, TMPDIR: tmp }, path.join(xdg, 'cursor-resume', 'helper.sock')],
    [{ XDG_RUNTIME_DIR: '', TMPDIR: tmp }, path.join(tmp, `cursor-resume-${uid}`, 'helper.sock')],
    [{ XDG_RUNTIME_DIR: 'relative/xdg', TMPDIR: tmp }, path.join(tmp, `cursor-resume-${uid}`, 'helper.sock')],
  ];
  for (const [extra, socket] of cases) {
    const start = await helperCli(['start', '--json'], defaultsWorld(t, extra, path.dirname(socket)));
    assert.equal(start.code, 0, start.stderr);
    assert.equal(JSON.parse(start.stdout).socketPath, socket, JSON.stringify(extra));
    assert.ok(fs.statSync(socket).isSocket());
  }
});

test('a relative TMPDIR: the run and the helper it starts use one socket, under the working directory', async (t) => {
  const cwd = tempDir('cr-cwd-');
  const dir = path.join(cwd, 'reltmp', `cursor-resume-${process.getuid!()}`);
  const env = defaultsWorld(t, { XDG_RUNTIME_DIR: '', TMPDIR: 'reltmp', CURSOR_ACP_SESSION_RESUME: '1' }, dir);
  const c = new Conversation(env);
  const send = async (text: string) => {
    const r = await c.turn(text, { args: [...STREAM_ARGS, '--verbose'], cwd });
    assert.equal(r.code, 0, r.stderr);
    return r;
  };
  const first = await send('remember: alpha');
  assert.match(first.stderr, /handed chat \S+ to a new helper for \S+ \(not waited for\)/);
  await send('remember: beta');
  assert.equal(c.lastTrace().reason, 'delta', 'the second turn found what the first recorded');
  assert.ok(fs.statSync(path.join(dir, 'helper.sock')).isSocket());
  assert.equal(helperPids(dir).length, 1);
});

test('a relative CURSOR_RESUME_RUNTIME_DIR is refused at once, naming it, and no helper starts anywhere', async (t) => {
  const cwd = tempDir('cr-cwd-');
  const name = `cr-rel-${process.pid}`;
  const w = world(t, { CURSOR_RESUME_RUNTIME_DIR: name });
  const start = await runCli(['helper', 'start'], { env: w.env, cwd });
  assert.equal(start.code, 1);
  assert.match(start.stderr, new RegExp(`CURSOR_RESUME_RUNTIME_DIR is "${name}", a relative path; set it to an absolute one`));
  assert.equal(fs.existsSync(path.join(cwd, name)), false);
  assert.equal(fs.existsSync(path.join('/', name)), false);
});

test("a relative runtimeDir in the config file, or one too long for its socket: the helper commands fail naming it, leaving the default folder's helper alone", async (t) => {
  const xdg = tempDir('cr-xdg-');
  const env = defaultsWorld(t, { XDG_RUNTIME_DIR: xdg }, path.join(xdg, 'cursor-resume'));
  const before = await helperCli(['start', '--json'], env);
  assert.equal(before.code, 0, before.stderr);
  const { pid } = JSON.parse(before.stdout);
  const file = path.join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Its socket, /aaa.../helper.sock, 104 bytes: one over the Unix limit.
  for (const bad of ['relative/dir', `/${'a'.repeat(91)}`]) {
    fs.writeFileSync(file, `${JSON.stringify({ runtimeDir: bad })}\n`);
    // A run with this file uses no helper at all, so no command may act on the default folder's.
    for (const args of [
      ['helper', 'status'],
      ['helper', 'start'],
      ['helper', 'stop', '--json'],
      ['evict', '--all'],
      ['inspect', '--json'],
    ]) {
      const r = await runCli(args, { env });
      const what = `${bad} ${args.join(' ')}: ${r.stderr}`;
      assert.equal(r.code, 1, what);
      assert.equal(r.stdout, '', what);
      assert.match(
        r.stderr,
        /ignoring runtimeDir \(in .*config\.json\): must be an absolute path whose helper\.sock fits the Unix limit of 103 bytes/,
        what,
      );
      assert.ok(
        r.stderr.includes(
          `the runtimeDir setting in ${file} is not usable (see above), so no helper is looked for and runs use no cache; fix it with`,
        ),
        what,
      );
    }
  }
  fs.writeFileSync(file, '{}\n');
  const after = await helperCli(['status', '--json'], env);
  assert.equal(after.code, 0, after.stderr);
  assert.equal(JSON.parse(after.stdout).pid, pid, 'the same helper still runs, its cache untouched');
});

test('an agent setting that cannot be used keeps the helper commands from nothing: they find the helper where the runtimeDir setting says, as a run whose agent the environment names does', async (t) => {
  const xdg = tempDir('cr-xdg-');
  // Where they would look without the setting: a private folder, whose helper would be another.
  const env = defaultsWorld(t, { XDG_RUNTIME_DIR: xdg }, path.join(xdg, 'cursor-resume'));
  const dir = path.join(tempDir('cr-set-'), 'run');
  t.after(() => stopHelpersAt(dir));
  const file = path.join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify({ agent: '', runtimeDir: dir })}\n`, { mode: 0o600 });
  const start = await helperCli(['start', '--json'], env);
  assert.equal(start.code, 0, start.stderr);
  const { pid, socketPath } = JSON.parse(start.stdout);
  assert.equal(socketPath, path.join(dir, 'helper.sock'));
  // A shell without CURSOR_RESUME_AGENT: a run there stops (exit 2), but the helper is the one runs with the agent named use.
  const { CURSOR_RESUME_AGENT: _agent, ...shell } = env;
  const ignored = `cursor-resume: ignoring agent (in ${file}): must not be empty. Allowed: the cursor-agent executable: a name on PATH or a path; fix with cursor-resume config set agent VALUE, or cursor-resume config unset agent\n`;
  const status = await helperCli(['status', '--json'], shell);
  assert.equal(status.code, 0, status.stderr);
  assert.equal(status.stderr, ignored);
  assert.equal(JSON.parse(status.stdout).pid, pid);
  const stop = await helperCli(['stop', '--json'], shell);
  assert.equal(stop.code, 0, stop.stderr);
  assert.equal(stop.stderr, ignored);
  assert.equal(JSON.parse(stop.stdout).pid, pid, 'that helper was stopped');
  assert.equal(alive(pid), false);
  const run = await runCli(['-p', '--output-format', 'text'], { env: shell, input: '{"messages":[{"role":"user","content":"hi"}]}' });
  assert.equal(run.code, 2, 'a run still needs the agent');
});

test('a started helper that exits at once with nothing answering fails the start without waiting for the deadline', async (t) => {
  const w = world(t);
  const quitter = path.join(tempDir(), 'quitter.cjs');
  fs.writeFileSync(quitter, 'process.exit(0);\n');
  const result = await connectHelper({ start: true, env: w.env, serverScript: quitter });
  assert.equal(!result.ok && result.code, 'start-failed');
  assert.match(!result.ok ? result.reason : '', /found another helper answering, yet none answers now/);
});

test("the helper runs detached (its own session, stdout and stderr on /dev/null, stdin only the run's pipe) and keeps none of the caller's environment", async (t) => {
  const w = world(t, {
    CURSOR_API_KEY: 'sk-SECRET-123',
    OPENAI_API_KEY: 'sk-other',
    CURSOR_ACP_SESSION_RESUME: '1',
    CURSOR_RESUME_IDLE_MS: '60000',
  });
  const c = new Conversation(w.env);
  assert.equal((await c.turn('remember: alpha')).code, 0);
  // The turn handed its record to a helper it started and did not wait for.
  await waitFor('a run to start a helper', () => helperPids(w.dir).length === 1, DEADLINE_MS);
  const [pid] = helperPids(w.dir);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const [, , , session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  assert.equal(Number(session), pid, 'it leads its own session (setsid)');
  for (const fd of [1, 2]) assert.equal(fs.readlinkSync(`/proc/${pid}/fd/${fd}`), '/dev/null', `fd ${fd}`);
  // Its stdin brought the record from the run that started it: their own socket pair. The caller's pipes to the run
  // all closed while this helper lives (the turn above ended), so it holds none of them.
  assert.match(fs.readlinkSync(`/proc/${pid}/fd/0`), /^(pipe|socket):\[\d+\]$/);
  const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  assert.ok(!environ.join('\n').includes('sk-'), 'no credential in its environment');
  // Besides its runtime dir and knobs, only the name of the marker it removes once it has delivered (hand-off.ts).
  assert.deepEqual(environ.map((e) => e.slice(0, e.indexOf('='))).sort(), [
    'CURSOR_RESUME_HAND_OFF',
    'CURSOR_RESUME_IDLE_MS',
    'CURSOR_RESUME_RUNTIME_DIR',
    'MALLOC_MMAP_THRESHOLD_',
  ]);
});

/** The TCP ports process `pid` listens on (Linux /proc: its socket inodes among the listening ones). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    const socket = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' }));
    if (socket) inodes.add(socket[1]!);
  }
  const ports: number[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const row of fs.readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // st 0A is LISTEN; the inode is the tenth column.
      if (cols[3] === '0A' && inodes.has(cols[9]!)) ports.push(Number.parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

test("NODE_OPTIONS's inspector flags do not reach the helper: a detached process living for hours opens no debugger port, which any local user could use to run code as its owner", async (t) => {
  const w = world(t, { NODE_OPTIONS: '--inspect-port 0 --max-old-space-size=300 --inspect' });
  const started = await helperCli(['start'], w.env);
  assert.equal(started.code, 0, started.stderr);
  const [pid] = helperPids(w.dir);
  assert.deepEqual(listeningPorts(pid!), [], 'no TCP port open');
  const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  assert.ok(environ.includes('NODE_OPTIONS=--max-old-space-size=300'), 'the rest of NODE_OPTIONS still reaches it');
});

// ---- what a run, a dry run and inspect do to the helper ----------------------------------------

/** Sends the conversation's transcript as it stands with `args` (a dry run, or a run in another environment) and expects exit 0; unlike Conversation.send, it adds nothing to the transcript. */
async function sendWith(c: Conversation, args: string[], env: NodeJS.ProcessEnv = c.env) {
  const r = await runCli(args, { input: c.body(), env });
  assert.equal(r.code, 0, r.stderr);
  return r;
}

test('a first turn that outlives the helper it looked up is still recorded: the record finds none and starts it again', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  assert.equal((await helperCli(['start'], w.env)).code, 0);
  const [first] = helperPids(w.dir);
  const c = new Conversation(w.env);
  // The agent waits at the gate until its helper is gone, however slowly this test runs (it had only its slow output's time).
  const gate = startGate(t);
  const turn = c.turn('remember: alpha', { mode: gate.mode, args: [...STREAM_ARGS, '--verbose'] });
  // Once the agent runs, the run has looked up: its helper dies under it.
  await waitFor('the agent to start', () => fs.existsSync(c.log), DEADLINE_MS);
  process.kill(first!, 'SIGKILL');
  await waitFor('that helper to be gone', () => !alive(first!), DEADLINE_MS);
  gate.open();
  const r = await turn;
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /failed on record/);
  assert.match(r.stderr, /recorded chat/);
  const status = JSON.parse((await helperCli(['status', '--json'], w.env)).stdout);
  assert.notEqual(status.pid, first);
  assert.equal(status.entries, 1);
  const t2 = await c.turn('remember: beta');
  assert.equal(t2.code, 0, t2.stderr);
  assert.equal(c.lastTrace().reason, 'delta');
});

test('a dry run and inspect --transcript change nothing: no use counted, the least recently used still goes first', async (t) => {
  for (const how of ['--dry-run', 'inspect'] as const) {
    const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1', CURSOR_RESUME_MAX_ENTRIES: '2' });
    const [a, b, c] = [new Conversation(w.env), new Conversation(w.env), new Conversation(w.env)];
    for (const [conv, fact] of [
      [a, 'alpha'],
      [b, 'beta'],
    ] as const)
      assert.equal((await conv.turn(`remember: ${fact}`)).code, 0);
    a.messages.push({ role: 'user', content: 'remember: gamma' });
    if (how === '--dry-run') {
      assert.equal(JSON.parse((await sendWith(a, ['--dry-run', ...STREAM_ARGS])).stdout).decision, 'resume-delta');
    } else {
      const file = path.join(tempDir(), 'a.json');
      fs.writeFileSync(file, a.body());
      const r = await runCli(['inspect', '--transcript', file, '--json'], { env: a.env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).decision.decision, 'resume-delta');
    }
    assert.equal((await c.turn('remember: delta')).code, 0);
    const kept = await entries(w.env);
    assert.deepEqual(
      kept.map((e) => e.workspace).sort(),
      [b.workspace, c.workspace].sort(),
      `${how}: A, used least recently, was evicted, not B`,
    );
  }
});

test('a conversation of 100,000 messages resumes: recorded whole once, then only its new messages', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const c = new Conversation(w.env);
  for (let i = 0; i < 50_000; i++) c.messages.push({ role: 'user', content: `step ${i}` }, { role: 'assistant', content: `done ${i}` });
  const first = await c.turn('remember: alpha');
  assert.equal(first.code, 0, first.stderr);
  assert.equal(c.lastTrace().decision, 'fresh');
  const second = await c.turn('remember: beta');
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['resume-delta', 'delta']);
  assert.ok((c.lastTrace().promptBytes as number) < 1000, 'only the new message went to cursor');
  const [entry] = await entries(w.env);
  assert.equal(entry!.knownCount, 100_005);
});

test('a first turn with no helper running starts none while cursor-agent runs, hands its record to the helper it starts at the end, and the next turn, sent at once, resumes', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const c = new Conversation(w.env);
  // The agent waits at the gate until the test has looked, however slowly this test runs (it had only its slow output's time).
  const gate = startGate(t);
  const turn = c.turn('remember: alpha', { mode: gate.mode, args: [...STREAM_ARGS, '--verbose'] });
  await waitFor('the agent to start', () => fs.existsSync(c.log), DEADLINE_MS);
  await waitFor("a shell to hold the helper's start", () => helperPids(w.dir, 'held').length === 1, DEADLINE_MS);
  const held = helperPids(w.dir, 'held');
  assert.deepEqual(helperPids(w.dir), [], 'no helper while the agent runs');
  gate.open();
  const first = await turn;
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /no helper is running \(nothing answers at .*\); planning on an empty cache/);
  assert.match(first.stderr, /handed chat \S+ to a new helper for \S+ \(not waited for\)/);
  assert.equal(c.lastTrace().reason, 'no-entry');
  // The end of the turn forked nothing: the held shell became the helper.
  await waitFor('the held shell to become the helper', () => helperPids(w.dir).length > 0, DEADLINE_MS);
  assert.deepEqual(helperPids(w.dir), held);
  assert.equal((await c.turn('remember: beta')).code, 0);
  assert.equal(c.lastTrace().reason, 'delta', 'the helper started by the first turn holds it');
  assert.deepEqual(
    fs.readdirSync(w.dir).filter((f) => f.startsWith('hand-off.')),
    [],
    'the helper removed its marker once it delivered',
  );
});

test('a helper slow to start (Node taking seconds on a loaded machine) is waited for while it lives: the next turn, sent at once, still resumes', async (t) => {
  // Only the helper a turn hands its record to sleeps, before any of its own code runs.
  const preload = path.join(tempDir('cr-slow-helper-'), 'slow.mjs');
  fs.writeFileSync(
    preload,
    `if (process.env.${HAND_OFF_MARKER_ENV}) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${HAND_OFF_STALE_MS + 1000});\n`,
  );
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1', NODE_OPTIONS: `--import=${preload}` });
  const c = new Conversation(w.env);
  assert.equal((await c.turn('remember: alpha')).code, 0);
  assert.equal(c.lastTrace().reason, 'no-entry');
  const second = await c.turn('remember: beta');
  assert.equal(second.code, 0, second.stderr);
  assert.equal(c.lastTrace().reason, 'delta', 'the record the slow helper carried was waited for');
  assert.deepEqual(await entries(w.env).then((all) => all.map((e) => e.turns)), [2]);
});

test("a first turn killed while cursor-agent runs starts no helper and leaves nothing behind: the shell holding the helper's start exits with it", async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const c = new Conversation(w.env);
  c.messages.push({ role: 'user', content: 'remember: alpha' });
  const run = spawnCli(STREAM_ARGS, { ...w.env, CURSOR_STAND_IN_MODE: 'hang' });
  // The hanging agent, orphaned by the kill, goes with the run's process group.
  t.after(() => killGroup(run.pid));
  run.stdin!.end(c.body());
  await waitFor("a shell to hold the helper's start", () => helperPids(w.dir, 'held').length === 1, DEADLINE_MS);
  const [held] = helperPids(w.dir, 'held');
  process.kill(run.pid!, 'SIGKILL');
  await run.closed;
  await waitFor('the held shell to exit', () => !alive(held!), DEADLINE_MS);
  assert.deepEqual(helperPids(w.dir), [], 'no helper started');
  assert.deepEqual(
    fs.readdirSync(w.dir).filter((f) => f.startsWith('hand-off.')),
    [],
    'no marker to hold the next run',
  );
});

test('a hand-off whose held start is gone (its shell killed, seen exiting or not yet) or never was (no shell) starts the helper itself, and the record lands', async (t) => {
  for (const how of ['no shell', 'shell killed, its exit seen', 'shell killed, its exit not yet seen'] as const) {
    const w = world(t);
    const shell = how === 'no shell' ? { shell: path.join(tempDir(), 'sh') } : {};
    const held = holdHelper({ env: w.env, serverScript: SERVER, ...shell });
    if (how === 'no shell') assert.equal(held, null);
    else {
      assert.ok(held);
      const [pid] = helperPids(w.dir, 'held');
      process.kill(pid!, 'SIGKILL');
      if (how === 'shell killed, its exit seen') {
        await waitFor('the shell to be gone', () => !alive(pid!), DEADLINE_MS);
        await sleep(50);
      } else {
        // Without giving the event loop a turn: the hand-off cannot know yet, and finds out writing to its pipe.
        const deadline = Date.now() + DEADLINE_MS;
        while (alive(pid!)) assert.ok(Date.now() < deadline, 'the killed shell is gone');
      }
    }
    const handed = handOffRecord(turnOf(digestsOf(3, how), null), { env: w.env, serverScript: SERVER, held });
    assert.ok(handed.ok, how);
    // A run that comes now waits for the record (its marker), then finds it.
    const client = await connected(w, false);
    assert.deepEqual(
      (await client.list()).map((e) => e.chatId),
      ['chat-1'],
      how,
    );
    client.close();
  }
});

test('a held start that goes unused (a helper already answers at the tool call; no helper program at the hand-off) is let go at once, not kept until the run exits', async (t) => {
  const w = world(t);
  const first = await connected(w);
  const held = holdHelper({ env: w.env, serverScript: SERVER });
  assert.ok(held);
  const [shell] = helperPids(w.dir, 'held');
  const again = await connectHelper({ start: true, env: w.env, serverScript: SERVER, held });
  assert.ok(again.ok && !again.started, 'the helper already running answered');
  again.client.close();
  first.close();
  await waitFor('the unused shell to exit', () => !alive(shell!), DEADLINE_MS);

  const other = holdHelper({ env: w.env, serverScript: SERVER });
  assert.ok(other);
  const [second] = helperPids(w.dir, 'held');
  const missing = path.join(tempDir(), 'helper-server.js');
  const handed = handOffRecord(turnOf(digestsOf(3, 'unused'), null), { env: w.env, serverScript: missing, held: other });
  assert.equal(handed.ok, false);
  await waitFor('the unused shell to exit', () => !alive(second!), DEADLINE_MS);
  assert.deepEqual(
    fs.readdirSync(w.dir).filter((f) => f.startsWith('hand-off.')),
    [],
    'no marker left to hold the next run',
  );
});

test('a hand-off cut short (its run killed while writing the record) records nothing, and the helper still removes its marker', async (t) => {
  const w = world(t);
  const paths = runtimePaths(w.env);
  fs.mkdirSync(w.dir, { recursive: true, mode: 0o700 });
  const marker = createMarker(paths);
  const helper = spawn(process.execPath, [SERVER], {
    env: { CURSOR_RESUME_RUNTIME_DIR: w.dir, [HAND_OFF_MARKER_ENV]: marker },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const whole = JSON.stringify({ limits: {}, record: turnOf(digestsOf(3, 'cut'), null) });
  helper.stdin.end(whole.slice(0, whole.length / 2));
  // Only the helper removes it here: nothing else looks at the runtime dir meanwhile.
  await waitFor('the helper to remove its marker', () => !fs.existsSync(path.join(w.dir, marker)), DEADLINE_MS);
  const client = await connected(w, false);
  assert.deepEqual(await client.list(), [], 'half a record is no record');
  client.close();
});

test('two first turns at once with no helper running: one helper, both records, both next turns resume', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const [a, b] = [new Conversation(w.env), new Conversation(w.env)];
  const firsts = await Promise.all([a.turn('remember: alpha'), b.turn('remember: beta')]);
  for (const r of firsts) assert.equal(r.code, 0, r.stderr);
  await waitFor('one helper to be left', () => helperPids(w.dir).length === 1, DEADLINE_MS);
  const seconds = await Promise.all([a.turn('remember: gamma'), b.turn('remember: delta')]);
  for (const r of seconds) assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([a.lastTrace().reason, b.lastTrace().reason], ['delta', 'delta']);
  assert.equal((await entries(w.env)).length, 2);
});

test('a handed record is waited for: a dry run, and helper stop, sent the moment the first turn ends, find its helper', async (t) => {
  for (const next of ['--dry-run', 'stop'] as const) {
    const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
    const c = new Conversation(w.env);
    assert.equal((await c.turn('remember: alpha')).code, 0);
    if (next === '--dry-run') {
      c.messages.push({ role: 'user', content: 'remember: beta' });
      assert.equal(JSON.parse((await sendWith(c, ['--dry-run', ...STREAM_ARGS])).stdout).decision, 'resume-delta');
    } else {
      const stop = await helperCli(['stop'], w.env);
      assert.equal(stop.code, 0, stop.stderr);
      assert.match(stop.stdout, /helper stopped/);
      assert.deepEqual(helperPids(w.dir), [], 'stop returns once the helper has exited');
    }
  }
});

test('the same turn sent again and again takes one entry: its copies do not push another conversation out', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1', CURSOR_RESUME_MAX_ENTRIES: '2' });
  const [a, b] = [new Conversation(w.env), new Conversation(w.env)];
  assert.equal((await a.turn('remember: alpha')).code, 0);
  assert.equal((await b.turn('remember: beta')).code, 0);
  // A timing loop, or a caller retrying: B's transcript sent again as it was, each time a fresh chat answering alike.
  for (let i = 0; i < 3; i++) {
    b.messages.pop();
    const again = await b.send();
    assert.equal(again.code, 0, again.stderr);
    assert.equal(b.lastTrace().reason, 'diverged', 'the chat already knows this turn and its reply: not resumed');
  }
  const kept = await entries(w.env);
  assert.deepEqual(kept.map((e) => e.workspace).sort(), [a.workspace, b.workspace].sort(), "B's copies replaced each other; A stayed");
  assert.equal((await a.turn('remember: gamma')).code, 0);
  assert.equal(a.lastTrace().reason, 'delta', 'A still resumes');
  assert.equal((await b.turn('remember: delta')).code, 0);
  assert.equal(b.lastTrace().reason, 'delta', 'B resumes its newest copy');
});

test('config set ttlMinutes / maxEntries reach a running helper with the next run: its limits are lowered, and entries go accordingly', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const [a, b] = [new Conversation(w.env), new Conversation(w.env)];
  assert.equal((await a.turn('remember: alpha')).code, 0);
  assert.equal((await b.turn('remember: beta')).code, 0);
  const limits = async () =>
    JSON.parse((await runCli(['inspect', '--json'], { env: w.env })).stdout) as { limits: object; entries: unknown[] };
  const seed = { ttlMs: 3_600_000, maxEntries: 64 };
  assert.deepEqual((await limits()).limits, seed);

  for (const [name, value] of [
    ['ttlMinutes', '1'],
    ['maxEntries', '1'],
  ]) {
    const set = await runCli(['config', 'set', name!, value!], { env: w.env });
    assert.equal(set.code, 0, set.stderr);
  }
  // Looking changes nothing: inspect, helper status and a dry run leave the limits and the entries alone.
  b.messages.push({ role: 'user', content: 'remember: gamma' });
  await waitFor(
    'both chats to be older than 10 ms',
    async () => (await entries(w.env)).every((e) => (e.ageMs as number) > 10),
    DEADLINE_MS,
  );
  const short = { ...b.env, CURSOR_RESUME_TTL_MS: '10' };
  const dry = JSON.parse((await sendWith(b, ['--dry-run', ...STREAM_ARGS], short)).stdout);
  assert.deepEqual([dry.decision, dry.reason], ['fresh', 'expired'], 'a dry run plans as the next run will, under the lower lifetime');
  const looked = await limits();
  assert.deepEqual([looked.limits, looked.entries.length], [seed, 2]);
  const unchanged = JSON.parse((await helperCli(['status', '--json'], w.env)).stdout);
  assert.deepEqual([unchanged.limits.ttlMs, unchanged.limits.maxEntries], [seed.ttlMs, seed.maxEntries]);

  // The next run lowers them: a lifetime below the chat's age expires it at once (the environment also only lowers).
  await sendWith(b, STREAM_ARGS, short);
  assert.equal(b.lastTrace().reason, 'expired');
  assert.deepEqual((await limits()).limits, { ttlMs: 10, maxEntries: 1 }, 'the running helper took the lower limits');
});

test('a mark left while a helper serves is taken before it answers its next lookup, peek, list or lease, not at its next sweep', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const c = new Conversation(w.env);
  assert.equal((await c.turn('remember: alpha')).code, 0);
  // Once it serves: the first turn handed its record to a helper it started, not waited for.
  assert.equal((await helperCli(['status'], w.env)).code, 0);
  const paths = runtimePaths(w.env);
  const transcript = asTranscript([]);
  for (const ask of ['list', 'peek', 'lookup', 'lease'] as const) {
    const client = await HelperClient.connect(paths.socket);
    t.after(() => client.close());
    await client.hello();
    if ((await client.list()).length === 0) assert.equal((await c.turn('remember: again')).code, 0);
    const anchor = c.lastTrace().anchor as string;
    const read = async (): Promise<unknown[]> =>
      ask === 'list' ? client.list() : client[ask === 'peek' ? 'peek' : 'lookup'](anchor, transcript);
    const [branch] = await client.lookup(anchor, transcript);
    assert.equal((await read()).length, 1, `${ask}: the branch is there before the mark`);
    // As a line that continued a chat leaves it when the helper did not take its forget.
    markForgetAll(paths, monotonicMs());
    if (ask === 'lease') {
      // A turn that looked the chat up before the mark, and asks for its lease after it.
      const lease = await client.lease(anchor, branch!.chatId, branch!.version);
      assert.deepEqual(lease.granted ? 'granted' : lease.reason, 'gone', 'the lease is refused');
    } else assert.deepEqual(await read(), [], `${ask}: the branch a turn started before the mark began is gone`);
    client.close();
  }
});

/** `inspect --transcript` and `--dry-run` of the turn `c` holds: the decision/reason each plans. */
async function planned(c: Conversation, env: NodeJS.ProcessEnv): Promise<string[]> {
  const inspected = await runCli(['inspect', '--transcript', '-', '--json', '--', ...STREAM_ARGS], { input: c.body(), env });
  assert.equal(inspected.code, 0, inspected.stderr);
  const { decision } = JSON.parse(inspected.stdout) as { decision: { decision: string; reason: string } };
  const dry = JSON.parse((await sendWith(c, ['--dry-run', ...STREAM_ARGS], env)).stdout) as { decision: string; reason: string };
  return [`${decision.decision}/${decision.reason}`, `${dry.decision}/${dry.reason}`];
}

/** The turn `c` holds, run with --verbose: its trace's decision/reason, and what it said. */
async function ran(c: Conversation, env: NodeJS.ProcessEnv): Promise<{ as: string; stderr: string }> {
  const { stderr } = await sendWith(c, ['--verbose', ...STREAM_ARGS], env);
  return { as: `${c.lastTrace().decision}/${c.lastTrace().reason}`, stderr };
}

test('a lower maxEntries the next run sets: inspect --transcript and a dry run already plan without the entries it drops, least recently used first', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const conversations = [new Conversation(w.env), new Conversation(w.env), new Conversation(w.env)];
  for (const [i, c] of conversations.entries()) assert.equal((await c.turn(`remember: ${i}`)).code, 0);
  const [oldest, , newest] = conversations as [Conversation, Conversation, Conversation];
  const one = { ...w.env, CURSOR_RESUME_MAX_ENTRIES: '1' };
  for (const c of [oldest, newest]) c.messages.push({ role: 'user', content: 'remember: more' });
  assert.deepEqual(await planned(newest, one), ['resume-delta/delta', 'resume-delta/delta'], 'the most recently used stays');
  assert.deepEqual(await planned(oldest, one), ['fresh/no-entry', 'fresh/no-entry'], 'the others go');
  assert.equal((await ran(oldest, one)).as, 'fresh/no-entry');
});

test('a helper that does not answer (SIGSTOP): inspect --transcript and a dry run plan as the run that replaces it, which says so', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const c = new Conversation(w.env);
  assert.equal((await c.turn('remember: alpha')).code, 0);
  // Once it serves: the first turn handed its record to a helper it started, not waited for.
  const { pid } = JSON.parse((await helperCli(['status', '--json'], w.env)).stdout) as { pid: number };
  process.kill(pid, 'SIGSTOP');
  t.after(() => process.kill(pid, 'SIGKILL'));
  c.messages.push({ role: 'user', content: 'remember: beta' });
  assert.deepEqual(await planned(c, c.env), ['fresh/no-entry', 'fresh/no-entry']);
  const turn = await ran(c, c.env);
  assert.equal(turn.as, 'fresh/no-entry');
  assert.match(turn.stderr, /replaced a helper that did not answer \(stopped or stuck\), and its cache with it/);
});

test('evict --all while the helper does not answer (SIGSTOP): exit 1, and the mark it leaves makes the helper forget every chat once it answers again', async (t) => {
  const w = world(t, { CURSOR_ACP_SESSION_RESUME: '1' });
  const c = new Conversation(w.env);
  assert.equal((await c.turn('remember: alpha')).code, 0);
  const { pid } = JSON.parse((await helperCli(['status', '--json'], w.env)).stdout) as { pid: number };
  process.kill(pid, 'SIGSTOP');
  t.after(() => alive(pid) && process.kill(pid, 'SIGCONT'));
  const evicted = await runCli(['evict', '--all'], { env: w.env });
  process.kill(pid, 'SIGCONT');
  assert.equal(evicted.code, 1, evicted.stderr);
  assert.equal(evicted.stdout, '');
  assert.match(
    evicted.stderr,
    /^cursor-resume: cannot reach the helper: [^\n]*; a mark is left: the helper forgets every chat, and what the turns running now would record, as soon as it answers again or is replaced\n$/,
  );
  c.messages.push({ role: 'user', content: 'remember: beta' });
  const turn = await ran(c, c.env);
  assert.equal(turn.as, 'fresh/no-entry', turn.stderr);
  assert.equal(JSON.parse((await helperCli(['status', '--json'], w.env)).stdout).pid, pid, 'the same helper, answering again');
});

test('evict --all that a helper greets and then never answers: exit 1, and a mark is left as for one that does not answer at all', async (t) => {
  const w = world(t);
  fs.mkdirSync(w.dir, { recursive: true, mode: 0o700 });
  const marks = (): string[] => fs.readdirSync(w.dir).filter((name) => name.startsWith('forget-before.'));
  // Our version, stalled after its greeting: whether it forgot anything is unknown.
  const stalled = await fakeHelper(w.socket, (r) => (r.op === 'hello' ? hello() : undefined));
  try {
    const all = await runCli(['evict', '--all'], { env: w.env });
    assert.deepEqual([all.code, all.stdout], [1, ''], all.stderr);
    assert.match(
      all.stderr,
      /^cursor-resume: the helper \(pid \d+[^)]*\) did not evict: [^\n]*; a mark is left: the helper forgets every chat, and what the turns running now would record, as soon as it answers again or is replaced\n$/,
    );
    assert.equal(marks().length, 1, 'the mark the helper takes once it answers again, or its replacement as it starts');
    assert.deepEqual(stalled.ops, ['hello', 'evict']);
    // One anchor evicted is no reason to forget every chat.
    const one = await runCli(['evict', 'abcd'], { env: w.env });
    assert.equal(one.code, 1, one.stderr);
    assert.doesNotMatch(one.stderr, /mark/);
    assert.equal(marks().length, 1);
  } finally {
    await stalled.close();
  }
});

test('a stopped helper that comes back while start replaces it: start says one was already running, with its pid', async (t) => {
  const w = world(t);
  const { pid: old } = JSON.parse((await helperCli(['start', '--json'], w.env)).stdout) as { pid: number };
  process.kill(old, 'SIGSTOP');
  try {
    const starting = runCli(['helper', 'start', '--json'], { env: w.env });
    // Its replacement has started; it asks the socket (a second) before taking it, and the old one answers now.
    await waitFor('the replacement helper', () => helperPids(w.dir).some((pid) => pid !== old));
    process.kill(old, 'SIGCONT');
    const r = await starting;
    assert.equal(r.code, 0, r.stderr);
    const started = JSON.parse(r.stdout) as { started: boolean; replaced: boolean; pid: number };
    assert.deepEqual([started.started, started.replaced, started.pid], [false, false, old], 'the helper that answers, as it is');
    await waitFor('the replacement gave way', () => helperPids(w.dir).every((pid) => pid === old));
    const text = await runCli(['helper', 'start'], { env: w.env });
    assert.match(text.stdout, new RegExp(`^helper already running: pid ${old},`));
  } finally {
    process.kill(old, 'SIGCONT');
  }
});

test('a helper that is only slow (stalled a second, longer than a turn waits): status, inspect, evict and stop wait for its answer', async (t) => {
  const w = world(t);
  for (const args of [['helper', 'status'], ['inspect'], ['evict', '--all'], ['helper', 'stop']]) {
    const { pid } = JSON.parse((await helperCli(['start', '--json'], w.env)).stdout) as { pid: number };
    t.after(() => alive(pid) && process.kill(pid, 'SIGCONT'));
    process.kill(pid, 'SIGSTOP');
    setTimeout(() => process.kill(pid, 'SIGCONT'), 1_000).unref();
    const r = await runCli(args, { env: w.env });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
});

test('a stopped (SIGSTOP) helper: stop, status and inspect name its socket and what to do; start replaces it and says so', async (t) => {
  const w = world(t);
  const stopped: number[] = [];
  const stop = async (): Promise<void> => {
    const { pid } = JSON.parse((await helperCli(['start', '--json'], w.env)).stdout) as { pid: number };
    process.kill(pid, 'SIGSTOP');
    stopped.push(pid);
  };
  try {
    await stop();
    for (const args of [['helper', 'stop'], ['helper', 'status'], ['inspect']]) {
      const r = await runCli(args, { env: w.env });
      assert.equal(r.code, 1, args.join(' '));
      assert.ok(r.stderr.includes(w.socket), `${args.join(' ')} names the socket: ${r.stderr}`);
      assert.match(r.stderr, /is stopped or stuck\. `cursor-resume helper start` replaces it/, args.join(' '));
    }
    const json = await runCli(['helper', 'start', '--json'], { env: w.env });
    assert.equal(json.code, 0, json.stderr);
    const started = JSON.parse(json.stdout) as { started: boolean; replaced: boolean; pid: number };
    assert.deepEqual([started.started, started.replaced], [true, true], 'started, in place of the stopped one');
    assert.notEqual(started.pid, stopped[0]);
    await runCli(['helper', 'stop'], { env: w.env });
    await stop();
    const text = await runCli(['helper', 'start'], { env: w.env });
    assert.match(text.stdout, /^helper replaced a stopped or stuck helper and started: pid \d+/);
  } finally {
    for (const pid of stopped) process.kill(pid, 'SIGCONT');
  }
});
