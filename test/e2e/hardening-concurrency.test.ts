// Many turns at once through one helper: conversations never share a chat, two copies
// of one turn never both drive the same chat (the lease), and a crowd of first turns
// leaves one helper. The stand-in's replies name every fact their chat knows, so any
// cross-talk would show.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { arch } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, spawnCli, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS, readLog, resultOf } from '../support/conversation.js';
import { factsOf, worlds } from '../support/hardening.js';
import { helperPids, waitFor } from '../support/processes.js';

const world = worlds();
const conversation = (env: NodeJS.ProcessEnv): Conversation => new Conversation(env);

/** The turns stored in the stand-in's chat store for `chatId` (what Cursor itself holds). */
function storedTurns(env: NodeJS.ProcessEnv, workspace: string, chatId: string): number {
  const file = join(env.CURSOR_CONFIG_DIR!, 'chats', createHash('md5').update(workspace).digest('hex'), chatId, 'store.db');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { turns: unknown[] }).turns.length : 0;
}

/** The read(2) system call's number where /proc/PID/syscall can tell (Linux x64 and arm64); undefined elsewhere. */
const READ_SYSCALL = process.platform === 'linux' ? ({ x64: '0', arm64: '63' } as Record<string, string>)[arch()] : undefined;

/** Process `pid` is blocked reading its stdin: a run there has begun its turn (its start time is taken before it reads). */
function readingStdin(pid: number): boolean {
  try {
    const [call, fd] = readFileSync(`/proc/${pid}/syscall`, 'utf8').split(' ');
    return call === READ_SYSCALL && fd === '0x0';
  } catch {
    return false;
  }
}

describe('concurrency', () => {
  test('eight conversations at once, three turns each: every one keeps its own chat, with no cross-talk', async () => {
    const env = world();
    const workspace = tempDir('cr-ws-');
    // One workspace, one model, one helper: only the conversations themselves tell them apart.
    const conversations = Array.from({ length: 8 }, () => {
      const c = conversation(env);
      Object.assign(c, { workspace });
      return c;
    });
    await Promise.all(
      conversations.map(async (c, i) => {
        for (const n of ['one', 'two', 'three']) {
          const t = await c.turn(`remember: c${i} ${n}`);
          assert.equal(t.code, 0, t.stderr);
        }
      }),
    );
    const owner = new Map<string, number>();
    let resumed = 0;
    for (const [i, c] of conversations.entries()) {
      const runs = c.invocations();
      assert.equal(runs.length, 3);
      assert.deepEqual(
        factsOf(c.messages.at(-1)!.content as string),
        [`c${i} one`, `c${i} two`, `c${i} three`],
        `conversation ${i} knows its own facts, and only those`,
      );
      const mine = new Set<string>();
      for (const run of runs) {
        const at = run.argv.indexOf('--resume');
        if (at !== -1) {
          resumed++;
          assert.ok(mine.has(run.argv[at + 1]!), `conversation ${i} resumed one of its own chats`);
          assert.match(run.stdin, new RegExp(`^remember: c${i} (two|three)$`), 'only its own new message');
        }
        mine.add(run.chatId!);
      }
      for (const chatId of mine) {
        assert.ok(!owner.has(chatId) || owner.get(chatId) === i, `chat ${chatId} belongs to one conversation`);
        owner.set(chatId, i);
      }
    }
    assert.ok(resumed >= 1, `the crowd still resumes (${resumed} of 16 later turns did)`);
    assert.equal(helperPids(env.CURSOR_RESUME_RUNTIME_DIR!).length, 1, 'one helper served them all');
  });

  test('four copies of one turn at the same moment: exactly one drives the chat, the others go fresh with everything', async () => {
    const c = conversation(world());
    const t1 = await c.turn('remember: alpha');
    const chatId = resultOf(t1.stdout).session_id;
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const body = c.body();
    // Slow answers, so the four runs overlap for certain.
    const copies = await Promise.all(
      Array.from({ length: 4 }, () => runCli(STREAM_ARGS, { input: body, env: { ...c.env, CURSOR_STAND_IN_MODE: 'slow=150' } })),
    );
    for (const r of copies) {
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(factsOf(resultOf(r.stdout).result), ['alpha', 'beta'], 'every copy answered with the whole conversation known');
    }
    const runs = c.invocations().slice(1);
    assert.equal(runs.length, 4);
    const driving = runs.filter((r) => r.argv.includes('--resume'));
    // The first lease asked for is granted (nobody holds it, the version is the one looked up): one copy drives, never two.
    assert.equal(driving.length, 1, `${driving.length} runs drove chat ${chatId}`);
    for (const r of runs.filter((x) => !x.argv.includes('--resume')))
      assert.match(r.stdin, /USER: remember: alpha[\s\S]*USER: remember: beta/);
    assert.equal(storedTurns(c.env, c.workspace, chatId), 1 + driving.length, "Cursor's chat holds one turn per run that drove it");
    // The others found the chat leased ('busy'); one that started only after the driver had
    // recorded sees a chat that knows more than its transcript ('diverged'): fresh either way.
    for (const reason of c
      .traces()
      .slice(1)
      .map((t) => t.reason)
      .filter((r) => r !== 'delta'))
      assert.ok(['busy', 'diverged'].includes(reason as string), String(reason));
  });

  test('eight first turns at once, with no helper running, leave exactly one helper', async () => {
    const env = world();
    const conversations = Array.from({ length: 8 }, () => conversation(env));
    const results = await Promise.all(conversations.map((c, i) => c.turn(`remember: first ${i}`)));
    for (const [i, r] of results.entries()) {
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(factsOf(r.reply!), [`first ${i}`]);
    }
    await waitFor('exactly one helper', () => helperPids(env.CURSOR_RESUME_RUNTIME_DIR!).length === 1);
    // Every conversation can go on, resumed or (had its first record been missed) fresh with everything.
    const next = await Promise.all(conversations.map((c, i) => c.turn(`remember: second ${i}`)));
    for (const [i, r] of next.entries()) assert.deepEqual(factsOf(r.reply!), [`first ${i}`, `second ${i}`]);
    assert.equal(helperPids(env.CURSOR_RESUME_RUNTIME_DIR!).length, 1);
    assert.ok(readLog(conversations[0]!.log).length >= 2);
  });

  test(
    'a turn whose record is refused (it began before an evict --all) leaves the chat it drove unknown: the same turn asked again never reaches that chat twice',
    { skip: READ_SYSCALL === undefined && 'needs /proc/PID/syscall to see a run waiting for its stdin' },
    async () => {
      const c = conversation(world());
      assert.equal((await runCli(['helper', 'start'], { env: c.env })).code, 0);
      // A caller that starts its run before the transcript is ready (a pipeline still building it).
      const late = spawnCli(STREAM_ARGS, c.env);
      await waitFor('the run to wait for its transcript', () => readingStdin(late.pid!));
      // Everything known until now is forgotten, and so is what a turn begun by now would record.
      assert.equal((await runCli(['evict', '--all'], { env: c.env })).code, 0);
      const t1 = await c.turn('remember: alpha');
      assert.deepEqual(factsOf(t1.reply!), ['alpha']);
      // The late run's transcript comes now: it resumes the new chat, and its record is refused.
      c.messages.push({ role: 'user', content: 'remember: beta' });
      late.stdin!.end(c.body());
      const t2 = await late.closed;
      assert.equal(t2.code, 0, t2.stderr);
      assert.ok(c.lastInvocation().argv.includes('--resume'), 'the late run resumed the new chat');
      assert.deepEqual(factsOf(resultOf(t2.stdout).result), ['alpha', 'beta']);
      // The caller asks for that answer again (its user regenerates it): the same transcript once more.
      const t3 = await c.send();
      assert.equal(t3.code, 0, t3.stderr);
      assert.deepEqual(factsOf(t3.reply!), ['alpha', 'beta'], 'no chat got "beta" twice');
      assert.ok(!c.lastInvocation().argv.includes('--resume'), 'what the chat holds is unknown: a fresh chat');
      const first = resultOf(t1.stdout).session_id;
      assert.equal(storedTurns(c.env, c.workspace, first), 2, "Cursor's first chat holds its two turns, not a third");
    },
  );
});
