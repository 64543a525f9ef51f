// A chat the caller continues itself (--resume ID, --continue, the `resume` subcommand)
// gets turns the cache never sees: what the cache held of it must be forgotten, or the
// next full transcript would resume it with a delta that skips those turns (README,
// "Chats the caller continues itself"). The built binary, the real helper and the
// stand-in, whose chats really remember.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, ROOT, STAND_IN, runCli, scriptAgent, startGate, tempDir, type RunResult } from '../support/cli.js';
import { Conversation, STREAM_ARGS, resultOf } from '../support/conversation.js';
import { entries, fakeHelper, hello, socketOf, worlds } from '../support/hardening.js';
import { alive } from '../../src/helper/alive.js';
import { helperPids, waitFor, watch } from '../support/processes.js';

const world = worlds();

/** A conversation whose second turn resumed its chat: the cache holds that chat. */
async function cached(env: NodeJS.ProcessEnv, fact: string): Promise<{ c: Conversation; chatId: string }> {
  const c = new Conversation(env);
  assert.equal((await c.turn(`remember: ${fact}`)).code, 0);
  const chatId = c.lastInvocation().chatId!;
  const t2 = await c.turn('and?');
  assert.equal(t2.code, 0, t2.stderr);
  assert.equal(c.lastTrace().decision, 'resume-delta', 'the cache holds the chat');
  return { c, chatId };
}

const cachedChats = async (env: NodeJS.ProcessEnv): Promise<string[]> => (await entries(env)).map((e) => e.chatId as string).sort();

/** The caller's own line in `c`'s workspace naming no chat (`--continue`, text output): it may continue any. */
async function callerContinues(c: Conversation): Promise<void> {
  const own = await runCli(['--print', '--output-format', 'text', '--workspace', c.workspace, '--continue'], {
    input: 'remember: the caller',
    env: c.env,
  });
  assert.equal(own.code, 0, own.stderr);
}

/** Lets the slow turn of `c` go on (its stand-in waits at `gate`): it ends well yet caches nothing, and the conversation's next turn finds no entry to resume. */
async function recordedNothing(
  env: NodeJS.ProcessEnv,
  c: Conversation,
  slow: Promise<RunResult>,
  gate: { open: () => void },
  why: string,
): Promise<void> {
  gate.open();
  const late = await slow;
  assert.equal(late.code, 0, late.stderr);
  assert.deepEqual(await cachedChats(env), [], why);
  c.messages.push({ role: 'assistant', content: resultOf(late.stdout).result });
  await c.turn('next');
  assert.equal(c.lastTrace().reason, 'no-entry');
}

describe('a chat the caller continues itself is forgotten', () => {
  test("--resume ID with a transcript: the next full transcript starts a fresh chat, not a delta that skips the caller's turn", async () => {
    const env = world();
    const { c, chatId } = await cached(env, 'the port is 8080');
    const other = await cached(env, 'the host is db');

    // The caller resumes the chat itself, with a prompt of its own (plain text).
    const own = await runCli([...STREAM_ARGS, '--workspace', c.workspace, '--resume', chatId, '--verbose'], {
      input: 'remember: the caller was here',
      env: c.env,
    });
    assert.equal(own.code, 0, own.stderr);
    assert.equal(c.lastInvocation().argv.filter((a) => a === '--resume').length, 1, "the caller's --resume only");
    assert.match(resultOf(own.stdout).result, /I remember: the port is 8080; the caller was here/, 'cursor-agent continued the chat');
    assert.match(own.stderr, new RegExp(`the caller continued chat ${chatId} forgotten \\(1 branch\\)`));
    assert.deepEqual(await cachedChats(env), [other.chatId], "only the caller's chat is forgotten");

    const next = await c.turn('What do you remember?');
    assert.equal(next.code, 0, next.stderr);
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['fresh', 'no-entry']);
    assert.ok(!c.lastInvocation().argv.includes('--resume'));
  });

  test('--resume=ID on a line cursor-agent takes whole (a prompt word) is forgotten too', async () => {
    const env = world();
    const { c, chatId } = await cached(env, 'alpha');
    const own = await runCli(['--print', '--workspace', c.workspace, `--resume=${chatId}`, 'remember: beta'], { env: c.env });
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /I remember: alpha; beta/);
    assert.deepEqual(await cachedChats(env), []);
    await c.turn('next');
    assert.equal(c.lastTrace().reason, 'no-entry');
  });

  test('--continue names no chat: every conversation is forgotten before the run; the chat the stream named is never recorded again', async () => {
    const env = world();
    await cached(env, 'one');
    const latest = await cached(env, 'two');
    const own = await runCli([...STREAM_ARGS, '--workspace', latest.c.workspace, '--continue', '--verbose'], {
      input: 'remember: three',
      env: latest.c.env,
    });
    assert.equal(own.code, 0, own.stderr);
    // The stand-in keeps chats per workspace, as Cursor does: --continue there takes this one.
    assert.equal(resultOf(own.stdout).session_id, latest.chatId);
    assert.match(own.stderr, /the caller continued a chat it did not name: every conversation forgotten \(2 branches\)/);
    assert.deepEqual(await cachedChats(env), []);
    // Its next full transcript starts a fresh chat, which is recorded as ever.
    assert.equal((await latest.c.turn('next')).code, 0);
    assert.equal(latest.c.lastTrace().reason, 'no-entry');
    assert.notEqual(latest.c.lastInvocation().chatId, latest.chatId);
    assert.deepEqual(await cachedChats(env), [latest.c.lastInvocation().chatId]);
  });

  test('--continue with text output: every cached conversation is forgotten', async () => {
    const env = world();
    const a = await cached(env, 'one');
    await cached(env, 'two');
    const own = await runCli(['--print', '--output-format', 'text', '--workspace', a.c.workspace, '--continue'], {
      input: 'remember: three',
      env: a.c.env,
    });
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /I remember: one; three/);
    assert.deepEqual(await cachedChats(env), []);
  });

  test('--resume ID then --continue: the line names no one chat, so every conversation is forgotten', async () => {
    const env = world();
    const a = await cached(env, 'one');
    const b = await cached(env, 'two');
    const own = await runCli(['--print', '--workspace', b.c.workspace, '--resume', a.chatId, '--continue', 'remember: three'], {
      env: b.c.env,
    });
    assert.equal(own.code, 0, own.stderr);
    assert.deepEqual(await cachedChats(env), []);
  });

  test('a turn that read the chat before the caller continued it cannot bring it back with its record', async (t) => {
    const env = world();
    const { c, chatId } = await cached(env, 'alpha');
    c.messages.push({ role: 'user', content: 'remember: gamma' });
    // A turn of the chat, slow: it holds its lease while the caller continues the chat.
    const gate = startGate(t);
    const slow = runCli(STREAM_ARGS, { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to lease its chat', async () => (await entries(env)).some((e) => e.leased === true));
    const own = await runCli([...STREAM_ARGS, '--workspace', c.workspace, '--resume', chatId], {
      input: 'remember: the caller',
      env: c.env,
    });
    assert.equal(own.code, 0, own.stderr);
    await recordedNothing(env, c, slow, gate, 'its record was refused, on its base and whole');
  });

  test('nor when the runtime folder, with the forgetting helper and its note, is removed before that turn records: the folder made again knows nothing of that forget', async (t) => {
    const env = world();
    const { c, chatId } = await cached(env, 'alpha');
    c.messages.push({ role: 'user', content: 'remember: gamma' });
    const gate = startGate(t);
    const slow = runCli([...STREAM_ARGS, '--verbose'], { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to lease its chat', async () => (await entries(env)).some((e) => e.leased === true));
    const own = await runCli([...STREAM_ARGS, '--workspace', c.workspace, '--resume', chatId], {
      input: 'remember: the caller',
      env: c.env,
    });
    assert.equal(own.code, 0, own.stderr);
    // Removed as a logout removes $XDG_RUNTIME_DIR, or a person cleaning up: the helper sees its socket gone and exits.
    const pids = helperPids(env.CURSOR_RESUME_RUNTIME_DIR!);
    rmSync(env.CURSOR_RESUME_RUNTIME_DIR!, { recursive: true, force: true });
    await waitFor('the helper to exit', () => pids.every((pid) => !alive(pid)));
    await recordedNothing(env, c, slow, gate, 'its record went to no helper of the folder made again');
    assert.match((await slow).stderr, /the runtime folder \S+ was removed or replaced while the turn ran/);
  });

  test('a runtime folder that is only written to while a turn runs is the same folder: the turn records, on a system without statx too', async (t) => {
    // Without statx (Linux before 4.11, a seccomp profile that blocks it) Node gives a folder's change time as its
    // birth time, and that moves with every entry added: a note, a mark, a marker another run leaves.
    const noStatx = join(ROOT, 'test', 'fixtures', 'no-statx.py');
    if (spawnSync('python3', [noStatx, 'true']).status !== 0) return t.skip('needs python3 and seccomp (Linux x64 or arm64)');
    // The turn's connection must close while cursor-agent waits at the gate, which the test opens only once it has: how
    // soon does not matter. Every connection gets that long to send its first request, and one closed before its hello
    // was read is taken for a helper on its way out ("no helper is running"): 100 ms lost to a stall on a loaded machine
    // made turns of this test go fresh (the helper's own delivery of a handed-off record is cut the same way, and lost).
    // Five seconds of it are not lost that way.
    const env = world({ CURSOR_RESUME_CONNECTION_IDLE_MS: '5000' });
    const other = await cached(env, 'other');
    const c = new Conversation(env);
    const gate = startGate(t);
    const run = spawn('python3', [noStatx, process.execPath, BIN, ...STREAM_ARGS, '--verbose'], {
      env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const { closed } = watch(run);
    c.messages.push({ role: 'user', content: 'remember: alpha' });
    run.stdin!.end(c.body());
    await waitFor('cursor-agent to start the turn', () => existsSync(c.log) && c.invocations().length === 1);
    // Another conversation is evicted meanwhile: the helper notes that it forgot (a file in the runtime folder).
    const evicted = await runCli(['evict', other.c.lastTrace().anchor as string], { env });
    assert.equal(evicted.code, 0, evicted.stderr);
    // The turn's connection, idle, is closed by the helper: its record opens a new one.
    await waitFor("the turn's connection to close", async () => {
      const status = await runCli(['helper', 'status', '--json'], { env });
      return (JSON.parse(status.stdout) as { connections: number }).connections === 1;
    });
    gate.open();
    const turn = await closed;
    assert.equal(turn.code, 0, turn.stderr);
    assert.doesNotMatch(turn.stderr, /removed or replaced/);
    assert.match(turn.stderr, /recorded chat/);
    c.messages.push({ role: 'assistant', content: resultOf(turn.stdout).result });
    assert.equal((await c.turn('remember: beta')).code, 0);
    assert.ok(c.lastInvocation().argv.includes('--resume'), 'the next turn resumes the chat recorded');
  });

  for (const how of ['stopped', 'killed'] as const) {
    test(`nor when the helper that knew is ${how} before that turn records: the helper the turn starts again refuses it too`, async (t) => {
      const env = world();
      const { c, chatId } = await cached(env, 'alpha');
      c.messages.push({ role: 'user', content: 'remember: gamma' });
      const gate = startGate(t);
      const slow = runCli([...STREAM_ARGS, '--verbose'], { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
      let ended = false;
      void slow.then(() => (ended = true));
      await waitFor('the slow turn to lease its chat', async () => (await entries(env)).some((e) => e.leased === true));
      const own = await runCli([...STREAM_ARGS, '--workspace', c.workspace, '--resume', chatId], {
        input: 'remember: the caller',
        env: c.env,
      });
      assert.equal(own.code, 0, own.stderr);
      // Either way its forgot-by note, written as the caller's line made it forget, counts once its process is gone.
      if (how === 'stopped') assert.equal((await runCli(['helper', 'stop'], { env })).code, 0);
      else for (const pid of helperPids(env.CURSOR_RESUME_RUNTIME_DIR!)) process.kill(pid, 'SIGKILL');
      assert.equal(ended, false, 'the slow turn still runs: it records through a helper it starts');
      await recordedNothing(env, c, slow, gate, 'its record was refused by the next helper');
      assert.match((await slow).stderr, /not recorded: the turn of chat \S+ started before every chat was forgotten/);
    });
  }

  test('nor can it when the caller continued a chat it did not name (--continue, text output): every chat leased then is refused', async (t) => {
    const env = world();
    const { c } = await cached(env, 'alpha');
    c.messages.push({ role: 'user', content: 'remember: gamma' });
    // Slow to start: it records after the caller's run has ended and forgotten every branch twice.
    const gate = startGate(t);
    const slow = runCli(STREAM_ARGS, { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to lease its chat', async () => (await entries(env)).some((e) => e.leased === true));
    await callerContinues(c);
    assert.deepEqual(await cachedChats(env), [], 'forgotten before and after the run');
    await recordedNothing(env, c, slow, gate, 'its record was refused');
  });

  test('nor can a new chat of a turn running then, which holds no lease (the caller may have continued that very chat)', async (t) => {
    const env = world();
    const { c: a } = await cached(env, 'alpha'); // a helper is running
    const b = new Conversation(env);
    b.messages.push({ role: 'user', content: 'remember: beta' });
    const gate = startGate(t);
    const slow = runCli(STREAM_ARGS, { input: b.body(), env: { ...b.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to start cursor-agent', async () => b.invocations().length === 1);
    // Its line names no chat: it may be any, the new one of the slow turn included (here, as it happens, alpha's).
    await callerContinues(a);
    await recordedNothing(env, b, slow, gate, 'its new chat was not recorded');
  });

  test('nor with no helper running: a first turn running then hands a record its helper refuses', async (t) => {
    const env = world();
    const b = new Conversation(env);
    // A chat of the caller's own, made without cursor-resume: one for its --continue to find.
    assert.equal(spawnSync(STAND_IN, ['--print', '--workspace', b.workspace], { env: b.env, input: 'remember: earlier' }).status, 0);
    b.messages.push({ role: 'user', content: 'remember: beta' });
    const gate = startGate(t);
    const slow = runCli(STREAM_ARGS, { input: b.body(), env: { ...b.env, CURSOR_STAND_IN_MODE: gate.mode } });
    let ended = false;
    void slow.then(() => (ended = true));
    await waitFor('the slow turn to start cursor-agent', async () => b.invocations().length === 2);
    // Its line names no chat: it may be any, the new one of the slow turn included.
    await callerContinues(b);
    assert.equal(existsSync(socketOf(env)), false, 'no helper was running to forget anything');
    assert.equal(ended, false, 'the first turn still runs: its helper is not yet started');
    await recordedNothing(env, b, slow, gate, 'its new chat was not recorded by the helper it started');
    assert.deepEqual(
      readdirSync(env.CURSOR_RESUME_RUNTIME_DIR!).filter((name) => name.startsWith('forget-before.')),
      [],
      'that helper took the marks',
    );
  });

  test("nor with no helper running when the runtime folder, with the line's mark, is removed before that turn hands its record on", async (t) => {
    const env = world();
    const b = new Conversation(env);
    assert.equal(spawnSync(STAND_IN, ['--print', '--workspace', b.workspace], { env: b.env, input: 'remember: earlier' }).status, 0);
    b.messages.push({ role: 'user', content: 'remember: beta' });
    const gate = startGate(t);
    const slow = runCli([...STREAM_ARGS, '--verbose'], { input: b.body(), env: { ...b.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to start cursor-agent', async () => b.invocations().length === 2);
    await callerContinues(b);
    assert.ok(
      readdirSync(env.CURSOR_RESUME_RUNTIME_DIR!).some((name) => name.startsWith('forget-before.')),
      'the line left its mark',
    );
    rmSync(env.CURSOR_RESUME_RUNTIME_DIR!, { recursive: true, force: true });
    await recordedNothing(env, b, slow, gate, 'its new chat was handed to no helper of the folder made again');
    assert.match((await slow).stderr, /not recorded: the runtime folder \S+ was removed or replaced while the turn ran/);
  });

  for (const when of ['after it forgot the chat', 'before the line could tell it']) {
    test(`nor when the helper stalls (SIGSTOP) ${when}, and is replaced: the helper that takes the hand-off refuses it`, async (t) => {
      const env = world();
      const b = new Conversation(env);
      b.messages.push({ role: 'user', content: 'remember: beta' });
      // A first turn with no helper running, which hands its record to a helper it starts at its end.
      // Its cursor-agent has answered (the chat exists and holds the turn), but its output comes late.
      const gate = join(tempDir('cr-gate-'), 'open');
      t.after(() => writeFileSync(gate, ''));
      const agent = scriptAgent(
        'cursor-agent',
        `#!/bin/sh\nout=$("${STAND_IN}" "$@")\nwhile [ ! -e "${gate}" ]; do sleep 0.05; done\nprintf '%s\\n' "$out"\n`,
      );
      const slow = runCli(STREAM_ARGS, { input: b.body(), env: { ...b.env, CURSOR_RESUME_AGENT: agent } });
      await waitFor('the slow turn to start cursor-agent', async () => b.invocations().length === 1);
      const chatId = b.lastInvocation().chatId!;
      // Meanwhile another conversation starts a helper; the caller's line then continues the slow turn's chat.
      const a = new Conversation(env);
      assert.equal((await a.turn('remember: alpha')).code, 0);
      const status = await runCli(['helper', 'status', '--json'], { env });
      const { pid: first } = JSON.parse(status.stdout) as { pid: number };
      t.after(() => alive(first) && process.kill(first, 'SIGKILL'));
      const line = ['--print', '--output-format', 'text', '--workspace', b.workspace, '--resume', chatId, 'remember: the caller'];
      if (when === 'before the line could tell it') process.kill(first, 'SIGSTOP');
      const own = await runCli(line, { env: b.env });
      assert.equal(own.code, 0, own.stderr);
      if (when === 'before the line could tell it') {
        assert.equal(own.stderr, '', 'a mark takes the place of the forget: nothing to warn of');
        assert.ok(
          readdirSync(env.CURSOR_RESUME_RUNTIME_DIR!).some((name) => name.startsWith('forget-before.')),
          'the mark is there',
        );
      }
      // The stalled helper lives on, stopped, its note of the forget (or the line's mark) still there; the next turn replaces it.
      process.kill(first, 'SIGSTOP');
      assert.equal((await a.turn('remember: gamma')).code, 0);
      // Its start may outlast the turn's wait on a loaded machine: it goes on all the same.
      await waitFor('another helper to start', () => helperPids(env.CURSOR_RESUME_RUNTIME_DIR!).some((pid) => pid !== first));
      // The first turn ends, and hands over the record of a turn that started before its chat was continued.
      writeFileSync(gate, '');
      const late = await slow;
      assert.equal(late.code, 0, late.stderr);
      b.messages.push({ role: 'assistant', content: resultOf(late.stdout).result });
      assert.equal((await b.turn('next')).code, 0);
      assert.equal(b.lastTrace().reason, 'no-entry', "a delta would skip the caller's turn the chat holds");
    });
  }

  test('a line that continues a chat while its helper is only slow waits for it: the chat is forgotten, nothing to warn of', async (t) => {
    const env = world();
    const { c, chatId } = await cached(env, 'alpha');
    const status = await runCli(['helper', 'status', '--json'], { env });
    const { pid } = JSON.parse(status.stdout) as { pid: number };
    t.after(() => process.kill(pid, 'SIGCONT'));
    // Stalled for a second, longer than a turn waits for it.
    process.kill(pid, 'SIGSTOP');
    setTimeout(() => process.kill(pid, 'SIGCONT'), 1_000).unref();
    const own = await runCli(
      ['--print', '--output-format', 'text', '--workspace', c.workspace, '--resume', chatId, 'remember: the caller'],
      {
        env: c.env,
      },
    );
    assert.equal(own.code, 0, own.stderr);
    assert.doesNotMatch(own.stderr, /could not make the cache forget/);
    assert.deepEqual(await cachedChats(env), []);
  });

  test('a line that continues a chat before any turn has run makes no runtime folder', async () => {
    const env = world();
    const c = new Conversation(env);
    assert.equal(spawnSync(STAND_IN, ['--print', '--workspace', c.workspace], { env, input: 'remember: earlier' }).status, 0);
    const own = await runCli(['--print', '--workspace', c.workspace, '--continue'], { input: 'remember: the caller', env });
    assert.equal(own.code, 0, own.stderr);
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false);
  });

  test('`-- resume` is still the subcommand to cursor-agent: every conversation is forgotten', async () => {
    const env = world();
    const a = await cached(env, 'one');
    const own = await runCli(['--print', '--workspace', a.c.workspace, '--', 'resume', 'remember: two'], { env: a.c.env });
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /I remember: one; two/);
    assert.deepEqual(await cachedChats(env), []);
  });

  test('`ls` off a terminal only lists chats: nothing is forgotten', async () => {
    const env = world();
    const a = await cached(env, 'one');
    const list = await runCli(['ls', '--workspace', a.c.workspace], { env: a.c.env });
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(await cachedChats(env), [a.chatId]);
  });

  test('the `resume` subcommand is a chat the caller picks: every conversation is forgotten', async () => {
    const env = world();
    const a = await cached(env, 'one');
    const own = await runCli(['resume', '--print', '--workspace', a.c.workspace, 'remember: two'], { env: a.c.env });
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /I remember: one; two/);
    assert.deepEqual(await cachedChats(env), []);
  });

  test("a helper that takes the hello but never the forget: a mark takes its place, said with --verbose only, and the caller's run goes on", async () => {
    const env = world();
    const { c, chatId } = await cached(env, 'alpha');
    assert.equal((await runCli(['helper', 'stop'], { env })).code, 0);
    // A helper that answers its hello and nothing after.
    const stalled = await fakeHelper(socketOf(env), (r) => (r.op === 'hello' ? hello() : undefined));
    const marks = (): string[] => readdirSync(env.CURSOR_RESUME_RUNTIME_DIR!).filter((name) => name.startsWith('forget-before.'));
    try {
      const own = await runCli(['--print', '--workspace', c.workspace, '--resume', chatId, 'remember: beta'], { env: c.env });
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, /I remember: alpha; beta/);
      assert.equal(own.stderr, '');
      assert.deepEqual(stalled.ops, ['hello', 'evict', 'hello', 'evict'], 'asked before the run and after it');
      assert.equal(marks().length, 1, 'a mark in place of the forgets it did not take (the later one replaces the earlier)');
      const verbose = await runCli(['--print', '--verbose', '--workspace', c.workspace, '--resume', chatId, 'remember: gamma'], {
        env: c.env,
      });
      assert.equal(verbose.code, 0, verbose.stderr);
      assert.match(
        verbose.stderr,
        new RegExp(
          `^cursor-resume: the helper did not forget: [^\\n]+: a mark was left in its place, for the helper to forget chat ${chatId} the caller continued$`,
          'm',
        ),
      );
    } finally {
      await stalled.close();
    }
  });

  test('a runtime folder cursor-resume refuses holds no cache: nothing to forget, and nothing said without --verbose', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const env = world({ CURSOR_RESUME_RUNTIME_DIR: join(dir, 'link') });
    const c = new Conversation(env);
    const first = await c.turn('remember: alpha');
    assert.equal(first.code, 0, first.stderr);
    const chatId = c.lastInvocation().chatId!;
    for (const verbose of [false, true]) {
      const own = await runCli(
        ['--print', ...(verbose ? ['--verbose'] : []), '--workspace', c.workspace, '--resume', chatId, 'remember: beta'],
        { env: c.env },
      );
      assert.equal(own.code, 0, own.stderr);
      assert.match(own.stdout, /I remember: alpha; beta/);
      if (verbose) assert.match(own.stderr, /^cursor-resume: nothing to forget: .*link/m);
      else assert.equal(own.stderr, '');
    }
  });

  test('a --dry-run with --resume forgets nothing: it runs nothing', async () => {
    const env = world();
    const { c, chatId } = await cached(env, 'one');
    const dry = await runCli(['--dry-run', '--resume', chatId], { input: c.body(), env: c.env });
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(JSON.parse(dry.stdout).reason, 'caller-resume');
    assert.deepEqual(await cachedChats(env), [chatId]);
  });
});

describe('a conversation evicted while a turn of it runs', () => {
  test('evict <anchor>: the running turn cannot put its chat back, and the next turn starts a fresh chat, as evict --help says', async (t) => {
    const env = world();
    const { c, chatId } = await cached(env, 'alpha');
    const anchor = c.lastTrace().anchor as string;
    c.messages.push({ role: 'user', content: 'remember: gamma' });
    const gate = startGate(t);
    const slow = runCli([...STREAM_ARGS, '--verbose'], { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to lease its chat', async () => (await entries(env)).some((e) => e.leased === true));
    const evicted = await runCli(['evict', anchor.slice(0, 8)], { env });
    assert.equal(evicted.stdout, `evicted 1 branch of ${anchor}\n`, evicted.stderr);
    await recordedNothing(env, c, slow, gate, 'the evicted chat was not recorded again');
    assert.match((await slow).stderr, new RegExp(`not recorded: chat ${chatId} was forgotten`));
    assert.notEqual(c.lastInvocation().chatId, chatId, 'a new chat');
  });

  test('evict <anchor>, then the helper stopped before the running turn records: the helper it starts again refuses it too', async (t) => {
    const env = world();
    const { c } = await cached(env, 'alpha');
    const anchor = c.lastTrace().anchor as string;
    c.messages.push({ role: 'user', content: 'remember: gamma' });
    const gate = startGate(t);
    const slow = runCli([...STREAM_ARGS, '--verbose'], { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to lease its chat', async () => (await entries(env)).some((e) => e.leased === true));
    assert.equal((await runCli(['evict', anchor], { env })).code, 0);
    // Its forgot-by note counts once its process is gone: the new helper knows no anchor, so it refuses every turn started by then.
    assert.equal((await runCli(['helper', 'stop'], { env })).code, 0);
    await recordedNothing(env, c, slow, gate, 'its record was refused by the next helper');
    assert.match((await slow).stderr, /not recorded: the turn of chat \S+ started before every chat was forgotten/);
  });
});
