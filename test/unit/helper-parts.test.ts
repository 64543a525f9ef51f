// The helper's parts in one process: the client and the launcher against an
// in-process HelperServer, the start lock, and the stale-socket probe.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import { HelperClient } from '../../src/helper/client.js';
import { markForgetAll } from '../../src/helper/forget-marks.js';
import { connectHelper, probeHelper, stopHelper } from '../../src/helper/launcher.js';
import { runtimePaths } from '../../src/helper/paths.js';
import { PROTOCOL_VERSION } from '../../src/helper/protocol.js';
import { startHelperServer, type HelperServer } from '../../src/helper/server.js';
import { removeStaleSocket, socketAnswers } from '../../src/helper/stale-socket.js';
import { monotonicMs } from '../../src/monotonic.js';
import { acquireStartLock, releaseStartLock } from '../../src/helper/start-lock.js';
import { sandboxEnv } from '../support/cli.js';
import { stopHelpersAt } from '../support/hardening.js';
import { ANCHOR, asTranscript, sampleRecord, sampleSequence } from '../support/records.js';

/** A private runtime dir and, unless asked not to, a helper serving it in this process. */
async function inProcess(t: TestContext, serve = true): Promise<{ env: NodeJS.ProcessEnv; server?: HelperServer }> {
  const env = sandboxEnv();
  t.after(() => stopHelpersAt(env.CURSOR_RESUME_RUNTIME_DIR!));
  if (!serve) return { env };
  const started = await startHelperServer({ paths: runtimePaths(env) });
  assert.ok(started.started);
  t.after(() => started.server.close());
  return { env, server: started.server };
}

describe('the client, against an in-process helper', () => {
  test('hello, a record and a lookup, one connection', async (t) => {
    const { env } = await inProcess(t);
    const client = await HelperClient.connect(runtimePaths(env).socket);
    t.after(() => client.close());
    assert.equal((await client.hello()).protocol, PROTOCOL_VERSION);
    assert.ok((await client.record(sampleRecord())).recorded);
    const [branch] = await client.lookup(ANCHOR, asTranscript([]));
    assert.deepEqual([branch!.chatId, branch!.knownCount, branch!.matched], ['chat-1', 2, 0]);
  });

  test('a branch that moves or goes during the search for the first difference proves only what was proven before', async (t) => {
    const { env } = await inProcess(t);
    const client = await HelperClient.connect(runtimePaths(env).socket);
    t.after(() => client.close());
    assert.ok((await client.record(sampleRecord())).recorded);
    const [first, second] = sampleSequence();
    // The reply differs: the whole history is not proven at once, and the search asks for prefix hashes.
    const transcript = asTranscript([first!, 'e'.repeat(32), 'f'.repeat(32)]);
    assert.equal((await client.lookup(ANCHOR, transcript))[0]!.matched, 1);
    assert.notEqual(second, 'e'.repeat(32));
    // Another turn recorded (or the branch expired) between the lookup and the search: nothing is proven.
    client.prefixes = () => Promise.resolve({ found: false, reason: 'stale', message: 'moved' });
    assert.equal((await client.lookup(ANCHOR, transcript))[0]!.matched, 0);
  });

  test('a helper takes the marks left while none ran: turns started before them record nothing, later ones do', async (t) => {
    const { env } = await inProcess(t, false);
    const paths = runtimePaths(env);
    fs.mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    const before = monotonicMs();
    markForgetAll(paths, monotonicMs());
    const started = await startHelperServer({ paths });
    assert.ok(started.started);
    t.after(() => started.server.close());
    assert.deepEqual(
      fs.readdirSync(paths.dir).filter((name) => name.startsWith('forget-before.')),
      [],
      'taken',
    );
    const client = await HelperClient.connect(paths.socket);
    t.after(() => client.close());
    const early = await client.record(sampleRecord({ chatId: 'chat-early', startedAt: before }));
    assert.equal(early.recorded ? 'recorded' : early.reason, 'forgotten');
    assert.ok((await client.record(sampleRecord({ chatId: 'chat-late' }))).recorded);
  });

  test('a helper notes when it last forgot chats as it forgets (a mark once it is gone), an evicted conversation included; one that forgot nothing notes nothing', async (t) => {
    const { env } = await inProcess(t, false);
    const paths = runtimePaths(env);
    const note = path.join(paths.dir, `forgot-by.${process.pid}`);
    const noted = (): number => Number(fs.readFileSync(note, 'latin1').split(' ')[0]);
    const started = await startHelperServer({ paths });
    assert.ok(started.started);
    t.after(() => started.server.close());
    const client = await HelperClient.connect(paths.socket);
    t.after(() => client.close());
    assert.ok((await client.record(sampleRecord())).recorded);
    assert.equal(fs.existsSync(note), false, 'nothing forgotten yet');
    const before = monotonicMs();
    await client.evict({ anchorPrefix: ANCHOR.slice(0, 8) });
    const evicted = noted();
    assert.ok(evicted >= before && evicted <= monotonicMs(), 'dated when it forgot');
    await client.evict({ chatId: 'chat-continued' });
    const first = noted();
    assert.ok(first >= evicted, 'and again at the next forget');
    await client.evict({ all: true });
    assert.ok(noted() > first, 'and again at the next forget');
    await started.server.close();
    assert.ok(fs.existsSync(note), 'left for when its process is gone: then a helper takes it as a mark');
  });

  test('a helper that never answers: a timeout, and the connection is dropped', async (t) => {
    const dir = fs.mkdtempSync('/tmp/cr-silent-');
    const socketPath = path.join(dir, 's');
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(socketPath, resolve));
    t.after(() => silent.close());
    const client = await HelperClient.connect(socketPath, { requestTimeoutMs: 100 });
    await assert.rejects(client.hello(), { code: 'timeout' });
    client.close();
  });
});

describe('the launcher, against an in-process helper', () => {
  test('finds the running helper and starts nothing; probe, and stop (which waits for a process that is not going away)', async (t) => {
    const { env, server } = await inProcess(t);
    const found = await connectHelper({ start: true, env });
    assert.ok(found.ok);
    assert.deepEqual([found.started, found.replaced, found.server.pid], [false, false, process.pid]);
    found.client.close();
    const probe = await probeHelper({ env });
    assert.ok(probe.running);
    probe.client.close();
    const closed = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (server!.connectionCount === 0 && !fs.existsSync(runtimePaths(env).socket)) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    const stopped = await stopHelper({ env });
    // The helper lets go of its socket, but its process, this one, lives on: stop names it rather than say it stopped.
    assert.deepEqual(stopped, {
      ok: false,
      reason: `the helper (pid ${process.pid}) let go of its socket but has not exited; end it: kill ${process.pid}`,
    });
    await closed;
  });

  test('with nothing running: not-running without start; deferred, starting nothing, with defer', async (t) => {
    const { env } = await inProcess(t, false);
    const absent = await connectHelper({ start: false, env });
    assert.equal(!absent.ok && absent.code, 'not-running');
    const deferred = await connectHelper({ start: true, defer: true, env });
    assert.equal(!deferred.ok && deferred.code, 'deferred');
    assert.equal((await probeHelper({ env })).running, false);
    const after = await connectHelper({ start: true, env });
    assert.ok(after.ok, after.ok ? '' : after.reason);
    after.client.close();
  });
});

describe('the start lock and the stale socket', () => {
  test('one holder at a time; a lock left by a dead process is taken over', async (t) => {
    const dir = fs.mkdtempSync('/tmp/cr-lock-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const lockPath = path.join(dir, 'helper.lock');
    const first = await acquireStartLock(lockPath);
    let second = false;
    const waiting = acquireStartLock(lockPath).then((lock) => {
      second = true;
      return lock;
    });
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(second, false, 'the second start waits');
    releaseStartLock(first);
    releaseStartLock(await waiting);
    assert.equal(fs.existsSync(lockPath), false);
    fs.writeFileSync(lockPath, '999999999 dead\n');
    releaseStartLock(await acquireStartLock(lockPath));
  });

  test('a lock whose pid lives on in another process is taken over once older than any start, within the wait', async (t) => {
    const dir = fs.mkdtempSync('/tmp/cr-lock-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const lockPath = path.join(dir, 'helper.lock');
    // Our own pid: alive, as a pid reused by another process would be.
    fs.writeFileSync(lockPath, `${process.pid} left by a killed start\n`);
    // 2.5 s: longer than any start holds it, shorter than the 3 s a start waits.
    const old = new Date(Date.now() - 2_500);
    fs.utimesSync(lockPath, old, old);
    const lock = await acquireStartLock(lockPath);
    assert.notEqual(fs.readFileSync(lockPath, 'utf8'), `${process.pid} left by a killed start\n`);
    releaseStartLock(lock);
  });

  test('a socket answers when a helper does; a dead one is removed, a directory is refused', async (t) => {
    const { env } = await inProcess(t);
    const { socket } = runtimePaths(env);
    assert.equal(await socketAnswers(socket), true);
    const dir = fs.mkdtempSync('/tmp/cr-stale-');
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const dead = path.join(dir, 'helper.sock');
    fs.writeFileSync(dead, '');
    assert.equal(await socketAnswers(dead), false);
    removeStaleSocket(dead);
    assert.equal(fs.existsSync(dead), false);
    fs.mkdirSync(dead);
    assert.throws(() => removeStaleSocket(dead), /is a directory/);
  });
});
