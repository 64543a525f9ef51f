// cursor-resume killed outright (SIGKILL: no handler runs) at each stage of a turn:
// while it reads the transcript, once it holds the chat's lease but before cursor-agent
// starts, while cursor-agent streams (slowly, or hanging), and while it records. Only
// cursor-resume dies; whatever it started is orphaned, as in life. Whatever was left
// behind, the next turn either resumes the right chat (its reply names every fact) or
// starts fresh with the whole conversation; never a wrong entry, never a lost turn.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { STAND_IN, scriptAgent, spawnCli, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS } from '../support/conversation.js';
import { factsOf, worlds } from '../support/hardening.js';
import { alive, helperPids, killGroup, waitFor } from '../support/processes.js';

const groups: number[] = [];
const world = worlds();
const conversation = (env: NodeJS.ProcessEnv): Conversation => new Conversation(env);
after(async () => {
  for (const pid of groups) killGroup(pid);
});

/** Starts the turn in `c` (its last message is the new one) and returns the running cursor-resume. */
function startTurn(c: Conversation, mode?: string, input: string | null = c.body()): ReturnType<typeof spawnCli> {
  const run = spawnCli(STREAM_ARGS, { ...c.env, ...(mode ? { CURSOR_STAND_IN_MODE: mode } : {}) });
  groups.push(run.pid!);
  if (input !== null) run.stdin!.end(input);
  return run;
}

async function killed(run: ReturnType<typeof spawnCli>, mayHaveEnded = false): Promise<void> {
  try {
    process.kill(run.pid!, 'SIGKILL');
  } catch (error) {
    if (!mayHaveEnded) throw error;
  }
  const end = await run.closed;
  if (!mayHaveEnded || end.signal !== null) assert.equal(end.signal, 'SIGKILL');
}

/**
 * The caller tries again with one more message. Nothing may be lost: a resumed chat gets
 * only that message and knows everything; a fresh one gets the whole conversation.
 */
async function nothingLost(c: Conversation, facts: string[]): Promise<'resumed' | 'fresh'> {
  const t = await c.turn(`remember: ${facts.at(-1)}`);
  assert.equal(t.code, 0, t.stderr);
  const run = c.lastInvocation();
  const resumed = run.argv.includes('--resume');
  if (resumed) {
    // Only what the chat has not seen: the new message (after any the chat never got).
    assert.ok(run.stdin.endsWith(`remember: ${facts.at(-1)}`) && !/^(USER|ASSISTANT|SYSTEM):/m.test(run.stdin), run.stdin);
    assert.doesNotMatch(t.reply!, /^Turn 1 /, 'a resumed chat has history');
  } else {
    for (const fact of facts) assert.ok(run.stdin.includes(`USER: remember: ${fact}`), `the whole conversation, with ${fact}`);
  }
  assert.deepEqual(factsOf(t.reply!), facts, 'the chat knows every fact, and only these');
  await waitFor('one helper', () => helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!).length === 1);
  return resumed ? 'resumed' : 'fresh';
}

describe('cursor-resume killed (SIGKILL) at each stage of a turn', () => {
  test('while it reads the transcript: nothing ran, and the same turn then resumes', async () => {
    const c = conversation(world());
    await c.turn('remember: alpha');
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const body = c.body();
    const run = startTurn(c, undefined, null);
    // Half the transcript, then blanks past what a pipe holds: once they have drained, cursor-resume is reading.
    if (!run.stdin!.write(body.slice(0, body.length >> 1) + ' '.repeat(4 << 20))) await once(run.stdin!, 'drain');
    await killed(run);
    assert.equal(c.invocations().length, 1, 'cursor-agent never started');
    c.messages.pop();
    assert.equal(await nothingLost(c, ['alpha', 'beta']), 'resumed');
  });

  test('holding the lease, before cursor-agent starts: the chat is not taken as known, the next turn is fresh with everything', async () => {
    // cursor-agent takes a moment to start: long enough to be killed in between.
    const marker = join(tempDir('cr-slowstart-'), 'spawned');
    const agent = scriptAgent(
      'slow-start-agent.sh',
      `#!/bin/bash\necho $$ > "${marker}.tmp" && mv "${marker}.tmp" "${marker}"\nsleep 0.5\nexec "${STAND_IN}" "$@"\n`,
    );
    const c = conversation(world({ CURSOR_RESUME_AGENT: agent }));
    await c.turn('remember: alpha');
    rmSync(marker);
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const run = startTurn(c);
    await waitFor('cursor-resume to start cursor-agent', () => existsSync(marker));
    await killed(run);
    const orphan = Number(readFileSync(marker, 'utf8'));
    await waitFor('the orphan to start, find its reader gone, and stop', () => !alive(orphan));
    assert.equal(await nothingLost(c, ['alpha', 'beta', 'gamma']), 'fresh');
    assert.equal(c.lastTrace().reason, 'interrupted');
  });

  for (const mode of ['slow=150', 'hang']) {
    test(`while cursor-agent streams (${mode}), in a first turn and in a resumed one`, async () => {
      // A first turn: nothing is recorded; the next starts fresh with everything.
      const first = conversation(world());
      first.messages.push({ role: 'user', content: 'remember: alpha' });
      const run1 = startTurn(first, mode);
      await new Promise((resolve) => run1.stdout!.once('data', resolve));
      await killed(run1);
      assert.equal(await nothingLost(first, ['alpha', 'beta']), 'fresh');
      assert.equal(first.lastTrace().reason, 'no-entry');

      // A resumed turn: its chat's last turn is unknown; the next starts fresh with everything.
      const c = conversation(world());
      await c.turn('remember: alpha');
      c.messages.push({ role: 'user', content: 'remember: beta' });
      const run2 = startTurn(c, mode);
      await new Promise((resolve) => run2.stdout!.once('data', resolve));
      await killed(run2);
      assert.equal(await nothingLost(c, ['alpha', 'beta', 'gamma']), 'fresh');
      assert.equal(c.lastTrace().reason, 'interrupted');
    });
  }

  test('while it records (the helper held still meanwhile): the next turn resumes the right chat, or starts fresh with everything', async () => {
    for (const round of [0, 1]) {
      const c = conversation(world());
      await c.turn('remember: alpha');
      c.messages.push({ role: 'user', content: 'remember: beta' });
      // The first turn handed its record to a helper it started and did not wait for it.
      await waitFor('one helper', () => helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!).length === 1);
      const [helper] = helperPids(c.env.CURSOR_RESUME_RUNTIME_DIR!);
      const run = startTurn(c, 'slow=100');
      // Streaming: the chat is leased. The helper is held still, so the record will wait for it.
      await new Promise((resolve) => run.stdout!.once('data', resolve));
      process.kill(helper!, 'SIGSTOP');
      try {
        await waitFor('the answer to be complete', () => run.output.stdout.includes('"type":"result"'));
        // Killed as the answer completes, or once cursor-agent has exited and the record is on its way.
        const agent = c.lastInvocation().pid;
        if (round === 1) await waitFor('cursor-agent to exit', () => !alive(agent));
        // cursor-resume dies waiting on its record (had it given up on the helper already, it has ended by itself).
        await killed(run, true);
      } finally {
        process.kill(helper!, 'SIGCONT');
      }
      const result = JSON.parse(run.output.stdout.trim().split('\n').at(-1)!) as { result: string; session_id: string };
      c.messages.push({ role: 'assistant', content: result.result });
      // Either way nothing is lost; a resume must continue the chat whose answer the caller kept.
      if ((await nothingLost(c, ['alpha', 'beta', 'gamma'])) === 'resumed') assert.equal(c.lastInvocation().chatId, result.session_id);
    }
  });
});
