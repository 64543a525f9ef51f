// The helper under fault and attack, seen from real turns (the built cursor-resume, the
// stand-in cursor-agent): killed or stalled mid-turn, its socket deleted, its runtime dir
// swapped for a symlink or opened to others, someone else's socket in its place, thousands
// of connections left open, random bytes, half a request, other versions, a clock that
// jumps. Whatever happens, the turn ends as cursor-agent's own and no turn is lost: the
// next one resumes correctly or starts fresh with the whole conversation. (Protocol-level
// faults on a bare helper are in helper.test.ts.)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { HelperClient } from '../../src/helper/client.js';
import { connectHelper } from '../../src/helper/launcher.js';
import { runCli, spawnCli, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS } from '../support/conversation.js';
import { entries, factsOf, fakeHelper, hello, socketOf, worlds } from '../support/hardening.js';
import { alive, helperPids, killGroup, openFds, waitFor, type RunResult } from '../support/processes.js';
import { asTranscript } from '../support/records.js';

const world = worlds();
const conversation = (env: NodeJS.ProcessEnv): Conversation => new Conversation(env);

const VERBOSE = [...STREAM_ARGS, '--verbose'];

/**
 * The one helper of this world (one that was replaced gets a moment to notice and exit, one a turn handed its record
 * to a moment to start): waitFor's bound, as two helpers left for good fail it all the same, and on a loaded machine
 * a Node process can take seconds to start or to exit.
 */
async function onlyHelper(env: NodeJS.ProcessEnv): Promise<number> {
  await waitFor('exactly one helper', () => helperPids(env.CURSOR_RESUME_RUNTIME_DIR!).length === 1);
  return helperPids(env.CURSOR_RESUME_RUNTIME_DIR!)[0]!;
}

/** A conversation one turn in, its chat recorded by the helper. */
async function started(extra: NodeJS.ProcessEnv = {}): Promise<Conversation> {
  const c = conversation(world(extra));
  const t1 = await c.turn('remember: alpha');
  assert.equal(t1.code, 0, t1.stderr);
  assert.equal((await entries(c.env)).length, 1);
  return c;
}

/** The next turn knows every fact: it resumed with only the new message, or went fresh with everything. */
async function turnKnows(
  c: Conversation,
  text: string,
  facts: string[],
  expected?: 'resumes' | 'fresh',
  args?: string[],
): Promise<{ stderr: string; resumed: boolean }> {
  const t = await c.turn(text, args ? { args } : {});
  assert.equal(t.code, 0, t.stderr);
  const run = c.lastInvocation();
  const resumed = run.argv.includes('--resume');
  if (expected !== undefined) assert.equal(resumed ? 'resumes' : 'fresh', expected, `${run.argv.join(' ')}\n${t.stderr}`);
  if (resumed) assert.equal(run.stdin, text, 'a resumed chat gets only the new message');
  else
    for (const fact of facts.slice(0, -1))
      assert.ok(run.stdin.includes(`USER: remember: ${fact}`), 'a fresh chat gets the whole conversation');
  assert.deepEqual(factsOf(t.reply!), facts, 'the chat knows every fact, and only these');
  return { stderr: t.stderr, resumed };
}

/** A second turn under `mode`, its helper killed (SIGKILL) once cursor-agent's output has begun; the turn run to its end. */
async function helperKilledMidTurn(mode: string) {
  const c = await started();
  const pid = await onlyHelper(c.env);
  c.messages.push({ role: 'user', content: 'remember: beta' });
  const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: mode });
  run.stdin!.end(c.body());
  await new Promise((resolve) => run.stdout!.once('data', resolve));
  process.kill(pid, 'SIGKILL');
  return { c, pid, run, end: await run.closed };
}

describe('the helper dies or stalls in the middle of a turn', () => {
  test("killed (SIGKILL) while cursor-agent streams: the turn ends as cursor-agent's and is recorded with a new helper, which the next turn resumes", async () => {
    const { c, pid, run, end } = await helperKilledMidTurn('slow=150');
    assert.equal(end.code, 0, `the helper's death is not the turn's failure: ${run.output.stderr}`);
    assert.equal(run.output.stderr, '');
    assert.match(run.output.stdout, /"type":"result".*I remember: alpha; beta\./);
    c.messages.push({ role: 'assistant', content: JSON.parse(run.output.stdout.trim().split('\n').at(-1)!).result });
    // The record found no helper, started one and, its branch gone with the old one, recorded the chat anew.
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'resumes');
    assert.notEqual(await onlyHelper(c.env), pid);
  });

  test('killed while a turn fails: nothing to record, so no new helper is started just to hear a release', async () => {
    const { c, pid, run, end } = await helperKilledMidTurn('slow=150,is-error');
    assert.equal(end.code, 0, `cursor-agent's own status (an error result on exit 0): ${run.output.stderr}`);
    assert.match(run.output.stdout, /"is_error":true/);
    await waitFor('the killed helper gone', () => !alive(pid));
    assert.deepEqual(helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!), [], 'no helper was started again for the release');
  });

  test('stalled (SIGSTOP): the run replaces it and goes on; the stalled one exits once it runs again', async () => {
    const c = await started();
    const stalled = await onlyHelper(c.env);
    process.kill(stalled, 'SIGSTOP');
    try {
      await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh');
    } finally {
      process.kill(stalled, 'SIGCONT');
    }
    await waitFor('the stalled helper to notice it was replaced and exit', () => !alive(stalled));
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma']);
    assert.notEqual(await onlyHelper(c.env), stalled);
  });

  test("a helper that stops answering at the lease, or at the record: the turn still runs and ends as cursor-agent's", async () => {
    // A real turn first, to learn the branch a helper would hand out for this conversation.
    const c = await started();
    const client = await HelperClient.connect(socketOf(c.env));
    const [branch] = (await client.list()) as unknown as Array<{ anchor: string }>;
    const branches = await client.lookup(branch!.anchor, asTranscript([]));
    client.close();
    await runCli(['helper', 'stop'], { env: c.env });

    for (const stallAt of ['lease', 'record']) {
      const fake = await fakeHelper(socketOf(c.env), (r) => {
        if (r.op === 'hello') return hello();
        if (r.op === 'lookup') return { branches: stallAt === 'lease' ? branches : [] };
        return undefined; // never answers the lease, or the record
      });
      try {
        const fact = stallAt === 'lease' ? 'beta' : 'gamma';
        const { stderr } = await turnKnows(
          c,
          `remember: ${fact}`,
          stallAt === 'lease' ? ['alpha', 'beta'] : ['alpha', 'beta', 'gamma'],
          'fresh',
          VERBOSE,
        );
        assert.match(stderr, new RegExp(`did not answer|failed on ${stallAt}`), stderr);
        assert.ok(fake.ops.includes(stallAt), `${fake.ops.join(' ')}`);
      } finally {
        await fake.close();
      }
    }
  });
});

describe('the helper gone in the middle of a request', () => {
  test("the connection dropped mid-record (a helper killed while it answers): sent once more, then the turn ends as cursor-agent's", async () => {
    const c = await started();
    await runCli(['helper', 'stop'], { env: c.env });
    const fake = await fakeHelper(socketOf(c.env), (r) => (r.op === 'hello' ? hello() : r.op === 'lookup' ? { branches: [] } : 'close'));
    try {
      const { stderr } = await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh', VERBOSE);
      assert.match(stderr, /failed on record \(the helper closed the connection before answering\)/);
      assert.equal(fake.ops.filter((op) => op === 'record').length, 2, 'sent once more on a new connection, and no more');
    } finally {
      await fake.close();
    }
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'fresh');
    assert.equal(c.lastTrace().reason, 'no-entry');
  });
});

describe('its socket and runtime dir tampered with', () => {
  test('the socket file deleted while it runs: the next run starts a new helper, the old one exits by itself', async () => {
    const c = await started();
    const old = await onlyHelper(c.env);
    fs.unlinkSync(socketOf(c.env));
    await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh');
    assert.equal(c.lastTrace().reason, 'no-entry');
    await waitFor('the helper whose socket was deleted to exit', () => !alive(old));
    assert.notEqual(await onlyHelper(c.env), old);
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'resumes');
  });

  test('the runtime dir replaced by a symlink: refused, and whatever listens behind it hears nothing', async () => {
    const c = await started();
    const dir = c.env.CURSOR_RESUME_RUNTIME_DIR!;
    const old = await onlyHelper(c.env);
    fs.renameSync(dir, `${dir}.moved`);
    const elsewhere = tempDir('cr-hostile-');
    const hostile = await fakeHelper(path.join(elsewhere, 'helper.sock'), () => hello());
    fs.symlinkSync(elsewhere, dir);
    try {
      const { stderr } = await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh', VERBOSE);
      assert.match(stderr, /symbolic link/);
      assert.equal(c.lastTrace().reason, 'no-cache');
      assert.equal(hostile.connections(), 0, 'nothing connected through the link');
      const status = await runCli(['helper', 'status'], { env: c.env });
      assert.equal(status.code, 1);
      assert.match(status.stderr, /symbolic link/);
    } finally {
      await hostile.close();
    }
    await waitFor('the helper whose dir moved to exit', () => !alive(old));
  });

  test('the runtime dir opened to others while it runs is made private again, and the cache still serves', async () => {
    const c = await started();
    fs.chmodSync(c.env.CURSOR_RESUME_RUNTIME_DIR!, 0o777);
    await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'resumes');
    assert.equal((fs.statSync(c.env.CURSOR_RESUME_RUNTIME_DIR!).mode & 0o777).toString(8), '700');
  });

  for (const [what, mode, file, said] of [
    [
      'open to all and holding files of others, as /tmp is for root',
      0o777,
      'someone-elses.txt',
      /holds files that are not cursor-resume's/,
    ],
    ['sticky and empty, as /tmp is in a new container', 0o1777, undefined, /is sticky, as a shared folder is/],
  ] as const) {
    test(`a shared folder named as the runtime dir (${what}) is refused and keeps its mode, never made private`, async () => {
      const shared = tempDir('cr-shared-');
      if (file !== undefined) fs.writeFileSync(path.join(shared, file), 'x');
      fs.chmodSync(shared, mode);
      const c = conversation(world({ CURSOR_RESUME_RUNTIME_DIR: shared }));
      const t = await c.turn('remember: alpha', { args: VERBOSE });
      assert.equal(t.code, 0, t.stderr);
      assert.match(t.stderr, said);
      assert.equal(c.lastTrace().reason, 'no-cache');
      assert.equal(fs.statSync(shared).mode & 0o7777, mode, 'its mode is as it was');
      const get = await runCli(['config', 'get', 'runtimeDir'], { env: c.env });
      assert.equal(get.code, 1, 'config get says a helper would refuse it');
    });
  }

  test('a runtime dir below a folder every user may write, not sticky: refused before it is made or used, so nobody can swap a folder of theirs in; sticky, it is used', async () => {
    const open = tempDir('cr-open-');
    fs.chmodSync(open, 0o777);
    const dir = path.join(open, 'cr', 'run');
    const c = conversation(world({ CURSOR_RESUME_RUNTIME_DIR: dir }));
    const t = await c.turn('remember: alpha', { args: VERBOSE });
    assert.equal(t.code, 0, t.stderr);
    assert.ok(
      t.stderr.includes(`refusing the helper runtime dir ${dir}: ${open}, a folder above it, is writable by every user and not sticky`),
      t.stderr,
    );
    assert.equal(c.lastTrace().reason, 'no-cache');
    assert.deepEqual(fs.readdirSync(open), [], 'no folder made there');
    const get = await runCli(['config', 'get', 'runtimeDir'], { env: c.env });
    assert.equal(get.code, 1, 'config get says a helper would refuse it');
    const status = await runCli(['helper', 'status'], { env: c.env });
    assert.match(status.stderr, /a folder above it, is writable by every user and not sticky/);
    fs.chmodSync(open, 0o1777);
    await c.turn('remember: beta', { args: VERBOSE });
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'resumes');
  });

  test('a runtime dir reached through a symbolic link that leads below a folder every user may write, not sticky: refused, that folder named', async () => {
    const open = tempDir('cr-open-');
    fs.chmodSync(open, 0o777);
    fs.mkdirSync(path.join(open, 'real'), { mode: 0o700 });
    const link = path.join(tempDir('cr-link-'), 'link');
    fs.symlinkSync(path.join(open, 'real'), link);
    const dir = path.join(link, 'run');
    const status = await runCli(['helper', 'status'], { env: world({ CURSOR_RESUME_RUNTIME_DIR: dir }) });
    assert.equal(status.code, 1, status.stderr);
    assert.ok(
      status.stderr.includes(
        `refusing the helper runtime dir ${dir}: ${open}, a folder above it, is writable by every user and not sticky`,
      ),
      status.stderr,
    );
    // The folder the link leads through made sticky, as /tmp is: nothing refused.
    fs.chmodSync(open, 0o1777);
    assert.equal((await runCli(['helper', 'status'], { env: world({ CURSOR_RESUME_RUNTIME_DIR: dir }) })).code, 3);
  });

  test("what someone left under a hand-off marker's name while the dir was open (a FIFO, a link to /dev/zero) is removed unread: runs do not hang on it", async () => {
    const c = await started();
    const dir = c.env.CURSOR_RESUME_RUNTIME_DIR!;
    const planted = ['hand-off.planted-fifo', 'hand-off.planted-link'].map((name) => path.join(dir, name));
    execFileSync('mkfifo', [planted[0]!]);
    fs.symlinkSync('/dev/zero', planted[1]!);
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const run = spawnCli(STREAM_ARGS, c.env);
    run.stdin!.end(c.body());
    let end: RunResult | undefined;
    void run.closed.then((r) => (end = r));
    const left: string[] = [];
    try {
      // Bounded only so that a hang fails the test rather than holding it forever.
      await waitFor('the turn to end', () => end !== undefined, 30_000);
    } finally {
      killGroup(run.pid);
      // Whatever is left would hang this file's own helper stop at its end too (it waits for hand-offs the same way).
      for (const file of planted) if (fs.lstatSync(file, { throwIfNoEntry: false })) left.push(file);
      for (const file of planted) fs.rmSync(file, { force: true });
    }
    assert.equal(end!.code, 0, end!.stderr);
    assert.ok(c.lastInvocation().argv.includes('--resume'), 'the cache still serves');
    assert.deepEqual(left, [], 'what was planted is gone');
  });

  test("a link left under the helper's forget note while the dir was open is replaced, never written through", async () => {
    const c = await started();
    const dir = c.env.CURSOR_RESUME_RUNTIME_DIR!;
    const pid = await onlyHelper(c.env);
    const victim = path.join(tempDir('cr-victim-'), 'precious.txt');
    fs.writeFileSync(victim, 'precious\n');
    const note = path.join(dir, `forgot-by.${pid}`);
    fs.symlinkSync(victim, note);
    const evicted = await runCli(['evict', '--all'], { env: c.env });
    assert.equal(evicted.code, 0, evicted.stderr);
    assert.equal(fs.readFileSync(victim, 'utf8'), 'precious\n', 'the file the link led to is untouched');
    assert.ok(fs.lstatSync(note).isFile(), 'the note is a file of its own now');
    await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh');
  });

  test("another user's socket in its place is never spoken to", async () => {
    const c = await started();
    await runCli(['helper', 'stop'], { env: c.env });
    assert.deepEqual(helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!), [], 'stop returns once the helper has exited');
    const socket = socketOf(c.env);
    const foreign = await fakeHelper(socket, () => hello());
    // The socket is ours; the launcher is told we are uid 4242, so it stands for another user's (any user can run this).
    try {
      for (const start of [true, false]) {
        const result = await connectHelper({ start, env: c.env, owners: { socket: 4242 } });
        if (result.ok) result.client.close();
        assert.equal(!result.ok && result.code, 'unavailable');
        assert.match(
          !result.ok ? result.reason : '',
          new RegExp(`refusing the helper socket ${socket}: it is owned by uid ${process.getuid!()}, not by you \\(uid 4242\\)`),
        );
      }
      assert.equal(foreign.connections(), 0, 'not one connection to it');
      assert.ok(fs.existsSync(socket), 'and it is not ours to delete');
      assert.deepEqual(helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!), [], 'no helper started beside it');
    } finally {
      await foreign.close();
    }
  });

  test("a directory of ours, open to all, in the socket's place: refused with a clear reason, the turn runs fresh", async () => {
    const c = await started();
    await runCli(['helper', 'stop'], { env: c.env });
    fs.mkdirSync(socketOf(c.env), { mode: 0o777 });
    fs.chmodSync(socketOf(c.env), 0o777);
    const { stderr } = await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh', VERBOSE);
    assert.match(stderr, /helper\.sock is a directory, not the helper's socket/);
    assert.equal(c.lastTrace().reason, 'no-cache');
    assert.deepEqual(helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!), [], 'no helper started beside it');
    fs.rmdirSync(socketOf(c.env));
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'fresh');
  });
});

describe('hostile neighbours on the socket', () => {
  test('3000 connections left open: no descriptor exhaustion, and real turns are still served', async () => {
    const c = await started();
    const pid = await onlyHelper(c.env);
    const sockets: net.Socket[] = [];
    let newcomer: HelperClient | undefined;
    try {
      // Half-open: it never closes its side, and never reads. It is persistent too: when the
      // kernel's listen queue is full (EAGAIN, a busy helper on a loaded machine), it tries again.
      const hold = async (): Promise<void> => {
        for (let attempt = 0; ; attempt++) {
          const s = net.createConnection({ path: socketOf(c.env), allowHalfOpen: true });
          const failure = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
            s.once('error', resolve);
            s.once('connect', () => resolve(null));
          });
          if (!failure) return void sockets.push(s);
          if (failure.code !== 'EAGAIN' || attempt === 1000) throw failure;
          await sleep(10);
        }
      };
      for (let batch = 0; batch < 30; batch++) await Promise.all(Array.from({ length: 100 }, hold));
      const fds = () => openFds(pid);
      await waitFor('refused connections to be let go', () => fds() < 256 + 64, 10_000);
      assert.equal(sockets.filter((s) => !s.destroyed).length, 3000, 'the other side still holds them all open');
      // Those silent longest make room for a newcomer once they have been silent a while: a
      // client of ours is let in (and stays, so the helper is still full) ...
      await waitFor('a newcomer to be let in', async () => {
        const client = await HelperClient.connect(socketOf(c.env)).catch(() => undefined);
        try {
          await client?.hello();
          newcomer = client;
          return client !== undefined;
        } catch {
          client?.close();
          return false;
        }
      });
      // ... and so is a real client: the next turn resumes.
      await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'resumes');
      assert.ok(fds() < 256 + 64, `${fds()} descriptors`);
      assert.equal(await onlyHelper(c.env), pid, 'the same helper');
    } finally {
      newcomer?.close();
      for (const s of sockets) s.destroy();
    }
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'resumes');
  });

  test('random bytes and half a request then silence: the helper serves real turns all along', async () => {
    const c = await started();
    const pid = await onlyHelper(c.env);
    const junk = await Promise.all(
      Array.from(
        { length: 40 },
        (_, i) =>
          new Promise<net.Socket>((resolve) => {
            const s = net.createConnection(socketOf(c.env));
            s.on('error', () => {});
            s.on('connect', () => {
              // Random bytes, some with newlines (bad requests), some without (half lines); then silence.
              s.write(i % 2 ? randomBytes(65_536) : randomBytes(4096).toString('base64'));
              resolve(s);
            });
          }),
      ),
    );
    const half = net.createConnection(socketOf(c.env));
    half.on('error', () => {});
    half.write(`{"id":1,"op":"record","record":{"anchor":"${'a'.repeat(32)}","chatId":"x`);
    try {
      await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'resumes');
      await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'resumes');
      assert.equal(await onlyHelper(c.env), pid);
      const kept = await entries(c.env);
      assert.equal(kept.length, 1, 'nothing was added by the junk');
    } finally {
      for (const s of junk) s.destroy();
      half.destroy();
    }
  });
});

describe('other versions', () => {
  test('an older helper is asked to stop and replaced; one that will not stop, or answers nonsense, is gone around', async () => {
    const c = await started();
    await runCli(['helper', 'stop'], { env: c.env });
    const socket = socketOf(c.env);

    // Older, and it stops when asked: the run replaces it.
    const older = await fakeHelper(socket, (r) => {
      if (r.op === 'hello') return hello('0.0.1-old', 0);
      if (r.op === 'shutdown') {
        setImmediate(() => void older.close());
        return { stopping: true };
      }
      return undefined;
    });
    await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'fresh');
    assert.equal(c.lastTrace().reason, 'no-entry', 'a new helper of our version took over');
    assert.ok(older.ops.includes('shutdown'));
    await onlyHelper(c.env);
    await runCli(['helper', 'stop'], { env: c.env });

    // Older, and it will not stop: the run goes on without the cache.
    const stubborn = await fakeHelper(socket, (r) =>
      r.op === 'hello' ? hello('9.9.9-other', 7) : r.op === 'shutdown' ? { stopping: true } : undefined,
    );
    try {
      const { stderr } = await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'fresh', VERBOSE);
      assert.match(stderr, /did not stop when asked/);
      assert.equal(c.lastTrace().reason, 'no-cache');
    } finally {
      await stubborn.close();
    }

    // Our version, but its lookup is nonsense: refused as a bad reply, never a crash.
    for (const branches of ['x', [{ chatId: 5 }], [null], [{ chatId: 'c', prefix: 'not hex' }]]) {
      const odd = await fakeHelper(socket, (r) => (r.op === 'hello' ? hello() : r.op === 'lookup' ? { branches } : undefined));
      try {
        c.messages.push({ role: 'user', content: 'again' });
        const t = await c.send({ args: VERBOSE });
        assert.equal(t.code, 0, t.stderr);
        assert.match(t.stderr, /not a list of branches/);
        assert.equal(c.lastTrace().reason, 'no-cache');
      } finally {
        await odd.close();
      }
    }
  });
});

describe('a helper of our version whose answers are nonsense', () => {
  test('inspect, helper status and evict say so in one line (exit 1), never a stack trace nor "undefined"', async () => {
    const c = await started();
    await runCli(['helper', 'stop'], { env: c.env });
    // Every request answered with a hello, as something else speaking the protocol might.
    const odd = await fakeHelper(socketOf(c.env), () => hello());
    try {
      const list = 'the helper answered the list with something that is not a list of branches';
      for (const [args, said] of [
        [['inspect'], `did not list its entries: ${list}`],
        [['inspect', '--json'], `did not list its entries: ${list}`],
        [['helper', 'status'], 'did not answer: the helper answered the stats with something that is not its figures'],
        [['helper', 'status', '--json'], 'did not answer: the helper answered the stats with something that is not its figures'],
        [['evict', '--all'], 'did not evict: the helper answered the evict with something that is not a count; a mark is left: [^\\n]*'],
        [['evict', 'abcd'], `did not evict: ${list}`],
      ] as const) {
        const r = await runCli([...args], { env: c.env });
        assert.deepEqual([r.code, r.stdout], [1, ''], `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`^cursor-resume: the helper \\(pid \\d+[^)]*\\) ${said}\n$`), args.join(' '));
      }
    } finally {
      await odd.close();
    }
  });
});

describe('the clock changing', () => {
  /** A preload that moves every wall clock (Date) of every process by the offset in a file, as a clock change would. */
  function shiftedClock(): { env: NodeJS.ProcessEnv; set: (offsetMs: number) => void } {
    const dir = tempDir('cr-clock-');
    const file = path.join(dir, 'offset');
    const preload = path.join(dir, 'clock.mjs');
    fs.writeFileSync(file, '0');
    fs.writeFileSync(
      preload,
      `import { readFileSync } from 'node:fs';
const RealDate = Date;
const offset = () => { try { return Number(readFileSync(${JSON.stringify(file)}, 'utf8')) || 0; } catch { return 0; } };
globalThis.Date = class extends RealDate {
  constructor(...args) { if (args.length === 0) super(RealDate.now() + offset()); else super(...args); }
  static now() { return RealDate.now() + offset(); }
};
`,
    );
    return { env: { NODE_OPTIONS: `--import=${preload}` }, set: (offsetMs) => fs.writeFileSync(file, String(offsetMs)) };
  }

  test('a jump of hours either way neither expires a chat nor keeps one alive: expiry runs on a monotonic clock', async () => {
    const clock = shiftedClock();
    const c = await started(clock.env);
    const hour = 3_600_000;
    clock.set(3 * hour);
    await turnKnows(c, 'remember: beta', ['alpha', 'beta'], 'resumes');
    clock.set(-3 * hour);
    await turnKnows(c, 'remember: gamma', ['alpha', 'beta', 'gamma'], 'resumes');

    // And with a short life, a clock turned back a day does not keep an entry past it. Long enough for a
    // loaded machine to run the first turn and see its entry (1.5 s was not, once, in a whole suite's run).
    const short = shiftedClock();
    const d = await started({ ...short.env, CURSOR_RESUME_TTL_MS: '5000' });
    short.set(-24 * hour);
    await waitFor('the entry to outlive its 5 s', async () => (await entries(d.env)).every((e) => (e.ttlLeftMs as number) <= 0));
    await turnKnows(d, 'remember: beta', ['alpha', 'beta'], 'fresh');
    assert.ok(['expired', 'no-entry'].includes(d.lastTrace().reason as string), String(d.lastTrace().reason));
  });
});
