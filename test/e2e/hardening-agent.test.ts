// What cursor-agent prints, at its worst: malformed lines, lines of tens of MB, chat IDs
// that are unsafe, not strings, enormous or changing, two results, output after the
// result, a crash mid-answer, hundreds of MB of output, a caller that stops reading.
// Every time: the caller gets cursor-agent's output byte for byte (hashed on the way by
// a tee agent), memory stays flat, nothing wrong is recorded, and the next turn either
// resumes correctly or starts fresh with the whole conversation (the stand-in's reply
// names every fact its chat knows, which proves which it was).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, STAND_IN, runCli, scriptAgent, spawnCli, tempDir, type RunResult } from '../support/cli.js';
import { Conversation, STREAM_ARGS, readLog, resultOf } from '../support/conversation.js';
import { entries, factsOf, measuredRun, sha256, teeAgent, worlds } from '../support/hardening.js';
import { alive, waitFor, watch } from '../support/processes.js';

const world = worlds();
const conversation = (env: NodeJS.ProcessEnv): Conversation => new Conversation(env);

function teeConversation(): { c: Conversation; tee: ReturnType<typeof teeAgent> } {
  const tee = teeAgent();
  return { c: conversation(world({ CURSOR_RESUME_AGENT: tee.agent })), tee };
}

/** What the caller got is exactly what cursor-agent printed (in its last run). */
function assertPassedThrough(stdout: { sha256: string; bytes: number }, tee: ReturnType<typeof teeAgent>, what: string): void {
  const last = tee.captures().at(-1);
  assert.ok(last, `${what}: cursor-agent ran`);
  assert.equal(stdout.bytes, last.bytes, `${what}: as many bytes as cursor-agent printed`);
  assert.equal(stdout.sha256, last.sha256, `${what}: byte for byte`);
}
const digestOf = (r: RunResult) => ({ sha256: sha256(r.stdout), bytes: Buffer.byteLength(r.stdout) });

/**
 * The next turn, and the proof that nothing was lost: either it resumed the chat (only the
 * new message sent, and the chat's reply names every fact) or it started fresh with the whole
 * conversation (which names every fact too).
 */
async function nextTurnKnows(c: Conversation, facts: string[], expected: 'resumes' | 'fresh', reason?: string): Promise<void> {
  const t = await c.turn('What do you remember?');
  assert.equal(t.code, 0, t.stderr);
  const run = c.lastInvocation();
  if (expected === 'resumes') {
    assert.ok(run.argv.includes('--resume'), `resumed: ${run.argv.join(' ')}`);
    assert.equal(run.stdin, 'What do you remember?', 'only the new message');
    assert.doesNotMatch(t.reply!, /^Turn 1 /);
  } else {
    assert.ok(!run.argv.includes('--resume'), `fresh: ${run.argv.join(' ')}`);
    for (const fact of facts) assert.ok(run.stdin.includes(`USER: remember: ${fact}`), `the whole conversation, with ${fact}`);
    assert.match(t.reply!, /^Turn 1 of this chat\./);
  }
  if (reason !== undefined) assert.equal(c.lastTrace().reason, reason);
  assert.deepEqual(factsOf(t.reply!), facts, 'the chat knows every fact, and only these');
}

describe('odd streams are passed through byte for byte and still recorded', () => {
  for (const mode of ['malformed-lines', 'two-results', 'after-result']) {
    test(mode, async () => {
      const { c, tee } = teeConversation();
      assert.equal((await c.turn('remember: alpha')).code, 0);
      const t2 = await c.turn('remember: beta', { mode });
      assert.equal(t2.code, 0, t2.stderr);
      assert.ok(c.lastInvocation().argv.includes('--resume'));
      assertPassedThrough(digestOf(t2), tee, mode);
      await nextTurnKnows(c, ['alpha', 'beta'], 'resumes', 'delta');
    });
  }
});

describe('streams that cannot be trusted are passed through, and never recorded', () => {
  test('a 20 MB line: passed on whole; too long to read, so the chat counts as unknown and the next turn starts fresh', async () => {
    const { c, tee } = teeConversation();
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta', { mode: 'long-line=20000000' });
    assert.equal(t2.code, 0, t2.stderr);
    assert.equal(c.lastTrace().reason, 'delta', 'the long line came in a resumed turn');
    assert.ok(t2.stdout.length > 40_000_000, 'the long text is in the assistant event and in the result');
    assertPassedThrough(digestOf(t2), tee, 'long line');
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'interrupted');
  });

  const badIds = [
    'session-id=../x',
    'session-id= a b',
    'session-id=-rf',
    'session-id=a$(id)',
    `session-id=${'a'.repeat(100_000)}`,
    'session-id-nonstring',
  ];
  for (const mode of badIds) {
    test(`a first turn whose chat ID is unusable (${mode.slice(0, 40)}): never recorded, never on an argv`, async () => {
      const { c, tee } = teeConversation();
      const t1 = await c.turn('remember: alpha', { mode });
      assert.equal(t1.code, 0, t1.stderr);
      assertPassedThrough(digestOf(t1), tee, mode);
      assert.deepEqual(await entries(c.env), [], 'nothing recorded');
      await nextTurnKnows(c, ['alpha'], 'fresh', 'no-entry');
    });
  }

  test('a resumed turn that answers with a non-string chat ID is stopped unseen and run again fresh', async () => {
    const { c, tee } = teeConversation();
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta', { mode: 'session-id-nonstring' });
    assert.equal(t2.code, 0, t2.stderr);
    const [, resumed, retried] = tee.captures();
    assert.ok(resumed!.argv.includes('--resume') && !retried!.argv.includes('--resume'));
    assert.equal(t2.stdout.match(/"subtype":"init"/g)!.length, 1, 'the caller sees one stream: the fresh one');
    assertPassedThrough(digestOf(t2), tee, 'retried');
    assert.equal(c.lastTrace().reason, 'resume-failed');
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'no-entry');
  });

  test('a chat ID that changes mid-stream: passed through, the entry dropped, the next turn fresh with everything', async () => {
    const { c, tee } = teeConversation();
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta', { mode: 'session-id-change', args: [...STREAM_ARGS, '--verbose'] });
    assert.equal(t2.code, 0, t2.stderr);
    assertPassedThrough(digestOf(t2), tee, 'changing ID');
    assert.match(t2.stderr, /cursor did not continue chat \S+ \(its chat ID changed during the answer\); its entry is dropped/);
    assert.deepEqual(await entries(c.env), [], 'the chat that changed its ID is forgotten');
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'no-entry');
  });

  test('cursor-agent crashing mid-answer: its partial output and its status passed on, the chat counts as unknown', async () => {
    const { c, tee } = teeConversation();
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta', { mode: 'crash' });
    assert.equal(t2.code, 137, 'killed by SIGKILL: 128 + 9');
    assert.doesNotMatch(t2.stdout, /"type":"result"/);
    assertPassedThrough(digestOf(t2), tee, 'crash');
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'interrupted');
  });
});

describe('a text or json caller, whose answer has to be read from the stream', () => {
  test('gets a 20 MB answer whole, exactly as cursor-agent would have printed it in that format', async () => {
    for (const format of ['text', 'json']) {
      const body = JSON.stringify({ messages: [{ role: 'user', content: 'remember: alpha' }] });
      const args = ['--print', '--output-format', format];
      const mode = { CURSOR_STAND_IN_MODE: 'long-line=20000000' };
      // Resume off: cursor-agent prints the format itself. Resume on: we translate its stream.
      const native = await measuredRun(args, { env: world({ ...mode, CURSOR_ACP_SESSION_RESUME: '0' }), input: body, keepStdout: 0 });
      const translated = await measuredRun(args, { env: world(mode), input: body, keepStdout: 0 });
      assert.equal(native.code, 0, native.stderr);
      assert.equal(translated.code, 0, translated.stderr);
      assert.equal(translated.stderr, '');
      assert.ok(native.stdoutBytes > 20_000_000);
      if (format === 'text') assert.equal(translated.stdoutSha256, native.stdoutSha256, 'the same text, byte for byte');
      else {
        assert.equal(translated.stdoutBytes > 20_000_000, true, 'the whole result object');
        assert.match(
          translated.stdoutTail,
          /I remember: alpha\. This prompt was 21 bytes\.","session_id":"[^"]+","request_id":"[^"]+","usage":\{[^}]*\}\}\n$/,
        );
      }
    }
  });
});

describe('hundreds of MB of output', () => {
  test('passed through byte for byte, with memory flat whatever the size', async () => {
    const { c, tee } = teeConversation();
    await c.turn('remember: alpha');
    const peaks: number[] = [];
    for (const [i, size] of [40_000_000, 400_000_000].entries()) {
      c.messages.push({ role: 'user', content: `remember: flood ${i}` });
      const r = await measuredRun(STREAM_ARGS, {
        env: { ...c.env, CURSOR_STAND_IN_MODE: `flood=${size}` },
        input: c.body(),
        keepStdout: 0,
      });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdoutBytes > size, `${r.stdoutBytes} bytes passed through`);
      assertPassedThrough({ sha256: r.stdoutSha256, bytes: r.stdoutBytes }, tee, `flood of ${size}`);
      assert.ok(c.lastInvocation().argv.includes('--resume'), 'a flood does not stop the chat from resuming');
      const result = r.stdoutTail
        .split('\n')
        .filter((l) => l.startsWith('{"type":"result"'))
        .map((l) => JSON.parse(l) as { result: string })
        .at(-1)!;
      c.messages.push({ role: 'assistant', content: result.result });
      peaks.push(r.peakMiB);
    }
    const [small, large] = peaks as [number, number];
    assert.ok(large < 160, `peak RSS ${large} MiB while passing 400 MB`);
    assert.ok(large - small < 48, `memory flat: ${small} MiB for 40 MB, ${large} MiB for 400 MB`);
    await nextTurnKnows(c, ['alpha', 'flood 0', 'flood 1'], 'resumes', 'delta');
  });
});

describe('the caller closing our stderr', () => {
  test("cursor-agent's warnings go nowhere; the answer arrives, the exit is cursor-agent's and the turn is recorded", async () => {
    const warning = scriptAgent(
      'warning-agent.sh',
      `#!/bin/sh\necho "warning: one" >&2\necho "warning: two" >&2\nexec "${process.execPath}" "${STAND_IN}" "$@"\n`,
    );
    const c = conversation({ ...world(), CURSOR_RESUME_AGENT: warning });
    // A fresh turn (stderr passed on live) and a resumed one (held until its chat is verified).
    for (const fact of ['alpha', 'beta']) {
      c.messages.push({ role: 'user', content: `remember: ${fact}` });
      const child = spawn(process.execPath, [BIN, ...STREAM_ARGS], { env: c.env, stdio: ['pipe', 'pipe', 'pipe'] });
      child.stderr.destroy();
      const { closed } = watch(child);
      child.stdin.end(c.body());
      const r = await closed;
      assert.equal(r.code, 0, `turn ${fact}`);
      const { result } = resultOf(r.stdout);
      assert.deepEqual(factsOf(result), fact === 'alpha' ? ['alpha'] : ['alpha', 'beta']);
      c.messages.push({ role: 'assistant', content: result });
    }
    assert.ok(c.lastInvocation().argv.includes('--resume'), 'the second turn resumed');
    await nextTurnKnows(c, ['alpha', 'beta'], 'resumes');
  });
});

describe('the caller closing our stdout early', () => {
  /** Runs one turn and closes its stdout as soon as the first bytes arrive (or at once, for a format that prints at the end). */
  function closeEarly(c: Conversation, args: string[], mode: string, atOnce: boolean): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...c.env, CURSOR_STAND_IN_MODE: mode },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (atOnce) child.stdout.destroy();
    else child.stdout.once('data', () => child.stdout.destroy());
    const { closed } = watch(child);
    child.stdin.end(c.body());
    return closed;
  }

  test('while cursor-agent streams: it is stopped, exit 141, and the turn is not taken as known', async () => {
    const c = conversation(world());
    await c.turn('remember: alpha');
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const r = await closeEarly(c, STREAM_ARGS, 'flood=2000000000', false);
    assert.equal(r.code, 141, r.stderr);
    assert.equal(r.stderr, '');
    const stopped = readLog(c.log).filter((e) => e.event === 'signal');
    assert.deepEqual(
      stopped.map((e) => e.signal),
      ['SIGTERM'],
      'cursor-agent was stopped, not left flooding',
    );
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'interrupted');
  });

  test('a stdout that fails its writes (/dev/full): said once, exit 1, cursor-agent stopped, the trace still written', async () => {
    const c = conversation(world());
    await c.turn('remember: alpha');
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const full = openSync('/dev/full', 'w');
    const child = spawn(process.execPath, [BIN, ...STREAM_ARGS], {
      env: { ...c.env, CURSOR_STAND_IN_MODE: 'flood=2000000000' },
      stdio: ['pipe', full, 'pipe'],
    });
    closeSync(full);
    const { closed } = watch(child);
    child.stdin!.end(c.body());
    const r = await closed;
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stderr,
      'cursor-resume: cannot write to stdout (ENOSPC: no space left on device, write): the rest of the output is lost\n',
    );
    assert.deepEqual(
      readLog(c.log)
        .filter((e) => e.event === 'signal')
        .map((e) => e.signal),
      ['SIGTERM'],
      'cursor-agent was stopped, not left flooding',
    );
    assert.equal(c.traces().length, 2, 'the turn has its trace line');
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'interrupted');
  });

  test('a text caller that went away before the answer: exit 141, no stack trace, nothing recorded', async () => {
    const c = conversation(world());
    c.messages.push({ role: 'user', content: 'remember: alpha' });
    const r = await closeEarly(c, ['--print', '--output-format', 'text'], 'slow=20', true);
    assert.equal(r.code, 141, r.stderr);
    assert.equal(r.stderr, '');
    assert.deepEqual(await entries(c.env), [], 'an answer nobody read is not known history');
    await nextTurnKnows(c, ['alpha'], 'fresh', 'no-entry');
  });
});

describe('a cursor-agent that does not take the whole prompt', () => {
  // Exits 0 with a whole answer for the chat it was given, without reading its stdin: the
  // chat cannot hold a prompt it never read, whatever the stream says.
  const deaf = (): string =>
    scriptAgent(
      'cursor-agent',
      `#!/bin/sh
id=fresh-chat-1
while [ $# -gt 0 ]; do [ "$1" = --resume ] && id=$2; shift; done
printf '%s\\n' '{"type":"system","subtype":"init","session_id":"'$id'"}' '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"'$id'"}'
`,
    );
  // Far over any pipe's buffer: it cannot all be written to a process that does not read it.
  const big = `remember: beta\n${'x'.repeat(2 * 1024 * 1024)}`;
  const withAgent = async <T>(c: Conversation, agent: string, run: () => Promise<T>): Promise<T> => {
    const was = c.env.CURSOR_RESUME_AGENT;
    c.env.CURSOR_RESUME_AGENT = agent;
    try {
      return await run();
    } finally {
      c.env.CURSOR_RESUME_AGENT = was;
    }
  };

  test('a resumed turn: its output and status passed on, the chat counts as unknown, the next turn starts fresh', async () => {
    const c = conversation(world());
    assert.equal((await c.turn('remember: alpha')).code, 0);
    const t2 = await withAgent(c, deaf(), () => c.turn(big, { args: [...STREAM_ARGS, '--verbose'] }));
    assert.equal(t2.code, 0, t2.stderr);
    assert.match(t2.stderr, /resume-delta \(delta\)/, 'the chat was resumed');
    assert.match(t2.stdout, /"result":"ok"/);
    assert.match(t2.stderr, /not recorded: cursor-agent ended without reading the whole prompt/);
    const [entry] = await entries(c.env);
    assert.equal(entry?.state, 'unknown');
    await nextTurnKnows(c, ['alpha', 'beta'], 'fresh', 'interrupted');
  });

  test('a first turn: nothing recorded, the next turn starts fresh', async () => {
    const c = conversation(world());
    const t1 = await withAgent(c, deaf(), () => c.turn(big));
    assert.equal(t1.code, 0, t1.stderr);
    assert.deepEqual(await entries(c.env), [], 'nothing recorded');
    await nextTurnKnows(c, ['beta'], 'fresh', 'no-entry');
  });
});

describe('a cursor-agent that exits 0 without a result', () => {
  test('after naming the resumed chat (its stdout closed early): the chat counts as unknown, and the turn sent again starts fresh', async () => {
    const c = conversation(world());
    assert.equal((await c.turn('remember: alpha')).code, 0);
    // Reads its prompt, names the chat it was given, closes its stdout and goes on to exit 0: whatever it did, nobody saw how the turn ended.
    const agent = scriptAgent(
      'cursor-agent',
      `#!/bin/sh
cat >/dev/null
while [ $# -gt 0 ]; do [ "$1" = --resume ] && id=$2; shift; done
printf '%s\\n' '{"type":"system","subtype":"init","session_id":"'$id'"}'
exec >&-
exit 0
`,
    );
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const t2 = await runCli([...STREAM_ARGS, '--verbose'], { input: c.body(), env: { ...c.env, CURSOR_RESUME_AGENT: agent } });
    assert.equal(t2.code, 0, t2.stderr);
    assert.match(t2.stderr, /resume-delta \(delta\)/, 'the chat was resumed');
    assert.match(t2.stdout, /^\{"type":"system","subtype":"init","session_id":"[^"]+"\}\n$/, "cursor-agent's output, as it was");
    assert.match(t2.stderr, /not recorded: cursor-agent exited without a result/);
    const [entry] = await entries(c.env);
    assert.equal(entry?.state, 'unknown');
    // The caller, with no answer, sends the turn again: never a delta to a chat that may hold that message already.
    const again = await c.send();
    assert.equal(again.code, 0, again.stderr);
    assert.ok(!c.lastInvocation().argv.includes('--resume'), 'fresh');
    assert.equal(c.lastTrace().reason, 'interrupted');
    assert.deepEqual(factsOf(again.reply!), ['alpha', 'beta']);
  });

  test('to a caller that asked for text or json: nothing to print, and stderr says why rather than leave an empty answer unexplained', async () => {
    const agent = scriptAgent(
      'cursor-agent',
      `#!/bin/sh
cat >/dev/null
printf '%s\\n' '{"type":"system","subtype":"init","session_id":"c0ffee00-0000-4000-8000-000000000001"}'
exit 0
`,
    );
    for (const format of ['text', 'json']) {
      const c = conversation(world({ CURSOR_RESUME_AGENT: agent }));
      c.messages.push({ role: 'user', content: 'hello' });
      const r = await runCli(['-p', '--output-format', format], { input: c.body(), env: c.env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '', format);
      assert.equal(
        r.stderr,
        `cursor-resume: cursor-agent exited 0 without an answer (its stream had no result), so there is nothing to print as ${format}; run the line with --output-format stream-json to see what it printed\n`,
      );
    }
  });
});

describe('a cursor-agent that leaves a process holding its output open', () => {
  // The leftover outlives the test's wait by far; each test kills its own at the end.
  const leftoverAgent = (tail: string): string =>
    scriptAgent(
      'cursor-agent',
      `#!/bin/sh
cat >/dev/null
while [ $# -gt 0 ]; do [ "$1" = --resume ] && id=$2; shift; done
echo $$ >"$AGENT_PID"
printf '%s\\n' '{"type":"system","subtype":"init","session_id":"'$id'"}'${tail.startsWith('answer') ? ` '{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"'$id'"}'` : ''}
sleep 60 &
echo $! >"$LEFTOVER_PID"
${tail.endsWith('exit') ? 'exit 0' : 'exec sleep 60'}
`,
    );

  async function turnWithLeftover(tail: string, t: { after: (fn: () => void) => void }) {
    const c = conversation(world());
    assert.equal((await c.turn('remember: alpha')).code, 0);
    c.messages.push({ role: 'user', content: 'remember: beta' });
    const dir = tempDir('cr-pids-');
    const pids = { agent: join(dir, 'agent'), leftover: join(dir, 'leftover') };
    const run = spawnCli(STREAM_ARGS, {
      ...c.env,
      CURSOR_RESUME_AGENT: leftoverAgent(tail),
      AGENT_PID: pids.agent,
      LEFTOVER_PID: pids.leftover,
    });
    run.stdin!.end(c.body());
    const pidIn = (file: string): number => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || 0 : 0);
    await waitFor('the leftover to start', () => pidIn(pids.leftover) > 0);
    const leftover = pidIn(pids.leftover);
    t.after(() => {
      if (alive(leftover)) process.kill(leftover, 'SIGKILL');
    });
    await waitFor('cursor-agent to print', () => run.output.stdout.includes('"type":"system"'));
    return { c, run, leftover, agent: pidIn(pids.agent) };
  }

  test('gone after its answer: a SIGTERM then ends the turn without waiting for the leftover, recorded, with its exit 0', async (t) => {
    const { c, run, leftover, agent } = await turnWithLeftover('answer, exit', t);
    await waitFor('cursor-agent to exit', () => !alive(agent));
    run.kill('SIGTERM');
    const end = await run.closed;
    assert.equal(alive(leftover), true, 'cursor-resume ended while the leftover still holds the pipe');
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stdout, /"type":"result"/);
    const [entry] = await entries(c.env);
    assert.deepEqual([entry?.turns, entry?.state, entry?.lastOutcome], [2, 'ok', 'success']);
  });

  test('still running: a SIGTERM ends it, and the turn, without waiting for the leftover; the chat counts as unknown', async (t) => {
    const { c, run, leftover } = await turnWithLeftover('hang', t);
    run.kill('SIGTERM');
    const end = await run.closed;
    assert.equal(alive(leftover), true, 'cursor-resume ended while the leftover still holds the pipe');
    assert.equal(end.code, 143, end.stderr);
    const [entry] = await entries(c.env);
    assert.equal(entry?.state, 'unknown');
  });
});
