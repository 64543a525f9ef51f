// The main job end to end: the built cursor-resume, the real helper, the stand-in
// cursor-agent, real processes and sockets. What the stand-in received (its log) and
// what it replied (its reply names every fact the chat remembers) are the evidence.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, STAND_IN, runCli, scriptAgent, spawnCli, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS, readLog, resultOf } from '../support/conversation.js';
import { entries, factsOf, helperProxy, socketOf, worlds } from '../support/hardening.js';
import { alive, killGroup, waitFor, watch } from '../support/processes.js';

const world = worlds();
/** Process groups of runs a test spawned itself: whatever they left is killed at the end. */
const groups: number[] = [];
after(() => {
  for (const pid of groups) killGroup(pid);
});

/** A cursor-agent that fails with `stderr` and exit 1, as cursor-agent does. */
function failingAgent(stderr: string): string {
  return scriptAgent('failing-agent.sh', `#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' ${JSON.stringify(stderr)} >&2\nexit 1\n`);
}

const chatDir = (c: Conversation, chatId: string): string =>
  join(c.env.CURSOR_CONFIG_DIR!, 'chats', createHash('md5').update(c.workspace).digest('hex'), chatId);

describe('a conversation resumes turn after turn', () => {
  test('only the new message is sent, and the reply proves the chat kept its context', async () => {
    const c = new Conversation(world());
    const t1 = await c.turn('remember: the port is 8080');
    assert.equal(t1.code, 0, t1.stderr);
    const first = c.lastInvocation();
    assert.equal(first.resumed, false);
    assert.match(first.stdin, /^SYSTEM: You have access to the following tools/);
    assert.ok(!first.argv.includes('--resume'));

    const t2 = await c.turn('remember: the host is db.internal');
    assert.equal(t2.code, 0, t2.stderr);
    const second = c.lastInvocation();
    assert.deepEqual(second.argv.slice(-2), ['--resume', first.chatId]);
    assert.equal(second.stdin, 'remember: the host is db.internal', 'only the new user message');

    const t3 = await c.turn('What do you remember?');
    assert.equal(c.lastInvocation().stdin, 'What do you remember?');
    assert.match(t3.reply!, /^Turn 3 of this chat\. I remember: the port is 8080; the host is db\.internal\./);
    assert.deepEqual(
      c.traces().map((t) => [t.decision, t.reason]),
      [
        ['fresh', 'no-entry'],
        ['resume-delta', 'delta'],
        ['resume-delta', 'delta'],
      ],
    );
    assert.ok((c.lastTrace().promptBytes as number) < (c.lastTrace().fullPromptBytes as number) / 5);
  });

  test('resume off sends the full prompt every turn and starts no helper', async () => {
    const env = world({ CURSOR_ACP_SESSION_RESUME: 'no' });
    const c = new Conversation(env);
    await c.turn('remember: alpha');
    const t2 = await c.turn('and?');
    assert.match(t2.reply!, /^Turn 1 of this chat/, 'a fresh chat each turn');
    for (const inv of c.invocations()) assert.ok(!inv.argv.includes('--resume'));
    assert.match(c.lastInvocation().stdin, /USER: remember: alpha\n\nASSISTANT: Turn 1[^\n]*\n\nUSER: and\?$/);
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false);
  });

  test('text and json callers get exactly their format, and still resume', async () => {
    const c = new Conversation(world());
    c.messages.push({ role: 'user', content: 'remember: the colour is teal' });
    const json = await runCli(['--print', '--output-format', 'json'], { input: c.body(), env: c.env });
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stdout.split('\n').length, 2, 'one line: the result object');
    const result = JSON.parse(json.stdout);
    assert.equal(result.type, 'result');
    assert.deepEqual(c.lastInvocation().argv.slice(0, 3), ['--print', '--output-format', 'stream-json']);

    c.messages.push({ role: 'assistant', content: result.result }, { role: 'user', content: 'Which colour?' });
    const text = await runCli(['--output-format', 'text'], { input: c.body(), env: c.env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^Turn 2 of this chat\. I remember: the colour is teal\. This prompt was 13 bytes\.\n$/);
    assert.equal(c.lastInvocation().stdin, 'Which colour?');
  });
});

describe('what breaks the proof starts a fresh chat', () => {
  async function twoTurns(): Promise<Conversation> {
    const c = new Conversation(world());
    await c.turn('remember: one');
    await c.turn('remember: two');
    assert.ok(c.lastInvocation().argv.includes('--resume'));
    return c;
  }

  test('changed tools', async () => {
    const c = await twoTurns();
    c.tools = [...c.tools, { type: 'function', function: { name: 'bash', description: 'Run', parameters: { type: 'object' } } }];
    const t = await c.turn('three');
    assert.match(t.reply!, /^Turn 1 of this chat/);
    assert.ok(!c.lastInvocation().argv.includes('--resume'));
    assert.equal(c.lastTrace().reason, 'tools-changed');
  });

  test("another account (API key or endpoint): never a resume into the other account's chat; the same account by flag or environment resumes", async () => {
    const c = new Conversation(world());
    const turn = async (text: string, args: string[], apiKeyEnv?: string): Promise<string> => {
      if (apiKeyEnv === undefined) delete c.env.CURSOR_API_KEY;
      else c.env.CURSOR_API_KEY = apiKeyEnv;
      const r = await c.turn(text, { args: [...STREAM_ARGS, ...args] });
      assert.equal(r.code, 0, r.stderr);
      return `${c.lastTrace().decision}/${c.lastTrace().reason}`;
    };
    assert.equal(await turn('remember: one', ['--api-key', 'key-A']), 'fresh/no-entry');
    assert.equal(await turn('remember: two', [], 'key-A'), 'resume-delta/delta', 'the same key from CURSOR_API_KEY');
    assert.equal(await turn('remember: three', ['--api-key=key-B']), 'fresh/no-entry', 'another key');
    assert.match(c.messages.at(-1)!.content as string, /^Turn 1 of this chat/);
    assert.ok(!c.lastInvocation().argv.includes('--resume'));
    assert.equal(await turn('remember: four', ['--api-key', 'key-B', '-e', 'https://b.example']), 'fresh/no-entry', 'another endpoint');
    // --api-key wins over CURSOR_API_KEY, as in cursor-agent.
    assert.equal(await turn('remember: five', ['--api-key', 'key-B', '--endpoint=https://b.example'], 'key-A'), 'resume-delta/delta');
  });

  test('an edited earlier message', async () => {
    const c = await twoTurns();
    c.messages[2] = { role: 'assistant', content: 'I said something else.' };
    await c.turn('three');
    assert.equal(c.lastTrace().reason, 'diverged');
    assert.match(c.lastInvocation().stdin, /ASSISTANT: I said something else\./, 'the whole conversation, as the caller has it');
  });

  test("cursor's reply is matched as it replied once; from the turn that carried it, as that turn's copy", async () => {
    const c = await twoTurns();
    const reply = c.messages[4]!.content as string;
    // The caller keeps cursor's second reply with other whitespace: still what cursor replied.
    c.messages[4] = { role: 'assistant', content: `  ${reply.replace(/ /g, '  ')}\n` };
    await c.turn('remember: three');
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['resume-delta', 'delta']);
    // The chat now holds that copy as it was sent along: the caller's copy changing again is an edit.
    c.messages[4] = { role: 'assistant', content: reply };
    const t = await c.turn('four');
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['fresh', 'diverged']);
    assert.match(t.reply!, /^Turn 1 of this chat/);
  });

  test('a title side call neither resumes nor disturbs the real chat', async () => {
    const c = await twoTurns();
    const title = {
      model: 'gpt-5',
      workspace: c.workspace,
      messages: [
        { role: 'system', content: 'You are a title generator. You output ONLY a thread title. Nothing else.' },
        { role: 'user', content: c.messages[1]!.content },
      ],
    };
    const r = await runCli(STREAM_ARGS, { input: JSON.stringify(title), env: c.env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(c.lastTrace().reason, 'side-call');
    assert.ok(!c.lastInvocation().argv.includes('--resume'));
    const t3 = await c.turn('remember: three');
    assert.match(t3.reply!, /^Turn 3 of this chat\. I remember: one; two; three\./);
  });

  test('sibling branches each keep resuming their own chat', async () => {
    const env = world();
    const a = new Conversation(env);
    await a.turn('remember: shared opener');
    const b = new Conversation(env);
    Object.assign(b, { workspace: a.workspace });
    b.messages = structuredClone(a.messages);
    await a.turn('remember: branch A');
    await b.turn('remember: branch B');
    assert.ok(!b.lastInvocation().argv.includes('--resume'), 'B diverged from what the chat knows: fresh');
    const a3 = await a.turn('A again');
    const b3 = await b.turn('B again');
    assert.match(a3.reply!, /I remember: shared opener; branch A\./);
    assert.match(b3.reply!, /I remember: shared opener; branch B\./);
    assert.equal(a.lastTrace().decision, 'resume-delta');
    assert.equal(b.lastTrace().decision, 'resume-delta');
  });
});

describe('failures', () => {
  // Each way cursor-agent says the chat is gone (plain chat-not-found, expired, failed, invalid, no such chat).
  for (const mode of [
    'resume-not-found',
    'resume-not-found=expired',
    'resume-not-found=failed',
    'resume-not-found=invalid',
    'resume-not-found=no-such',
  ]) {
    const plain = mode === 'resume-not-found';
    test(`a resume error (${mode}) evicts the entry and the turn is retried fresh transparently${plain ? ', then the new chat resumes' : ''}`, async () => {
      const c = new Conversation(world());
      await c.turn('remember: kept');
      const t2 = await c.turn('remember: after the error', { mode });
      assert.equal(t2.code, 0, t2.stderr);
      assert.equal(t2.stderr, '', 'the resume error is not shown: the caller sees one good answer');
      const [first, resumed, retried] = c.invocations();
      assert.deepEqual(resumed!.argv.slice(-2), ['--resume', first!.chatId]);
      assert.ok(!retried!.argv.includes('--resume'));
      assert.match(retried!.stdin, /USER: remember: kept/);
      assert.equal(t2.stdout.match(/"type":"system"/g)!.length, 1, 'one stream on stdout');
      assert.deepEqual([c.lastTrace().reason, c.lastTrace().failure, c.lastTrace().retried], ['resume-failed', null, true]);
      assert.match(t2.reply!, /^Turn 1 of this chat\. I remember: kept; after the error\./);
      assert.ok(!(await entries(c.env)).some((e) => e.chatId === first!.chatId), 'the old chat is forgotten');
      if (plain) {
        const t3 = await c.turn('and now?');
        assert.deepEqual(c.lastInvocation().argv.slice(-2), ['--resume', retried!.chatId]);
        assert.match(t3.reply!, /I remember: kept; after the error\./);
      }
    });
  }

  // Only a resume failure says the chat is gone; any other failure keeps the entry for the next try.
  for (const mode of ['auth', 'invalid-session-token', 'usage-limit', 'network', 'model-error=unavailable', 'expired-login']) {
    test(`a failure that is not the chat's (${mode}) keeps the entry`, async () => {
      const c = new Conversation(world());
      await c.turn('remember: keep me');
      c.messages.push({ role: 'user', content: 'next' });
      const failed =
        mode === 'expired-login'
          ? await runCli(STREAM_ARGS, {
              input: c.body(),
              env: {
                ...c.env,
                CURSOR_RESUME_AGENT: failingAgent('Error: [unauthenticated] Your session has expired. Please log in again.'),
              },
            })
          : await c.send({ mode });
      assert.equal(failed.code, 1);
      assert.notEqual(failed.stderr, '', "cursor-agent's own message is shown");
      assert.equal(failed.stdout, '');
      assert.equal(c.lastTrace().retried, false, 'no second run for nothing');
      const retry = await c.send();
      assert.equal(retry.code, 0, retry.stderr);
      assert.equal(c.lastInvocation().stdin, 'next');
      assert.match(retry.reply!, /^Turn 2 of this chat\. I remember: keep me\./);
    });
  }

  // The silent-fresh trap: a resumed chat gone from Cursor's store comes back empty. silent-fresh: Cursor
  // answers under a new ID; silent-fresh-same-id: under the very ID it was given, so only the store can tell.
  const removals: Array<[string, string, (c: Conversation, chatId: string) => void]> = [
    ['the chat folder is gone', 'silent-fresh', (c, chatId) => rmSync(chatDir(c, chatId), { recursive: true })],
    ["the workspace's whole folder is gone", 'silent-fresh-same-id', (c) => rmSync(dirname(chatDir(c, 'x')), { recursive: true })],
    ['the chat folder is left without its store.db', 'silent-fresh-same-id', (c, chatId) => rmSync(join(chatDir(c, chatId), 'store.db'))],
  ];
  for (const [name, mode, remove] of removals) {
    test(`the silent-fresh trap (${mode}): ${name}, so the chat is not resumed`, async () => {
      const c = new Conversation(world());
      const t1 = await c.turn('remember: precious');
      remove(c, resultOf(t1.stdout).session_id);
      assert.ok(existsSync(join(c.env.CURSOR_CONFIG_DIR!, 'chats')), "Cursor's chat store itself is still there");
      const t2 = await c.turn('what was precious?', { mode });
      assert.equal(t2.code, 0, t2.stderr);
      assert.ok(!c.lastInvocation().argv.includes('--resume'));
      assert.equal(c.lastTrace().reason, 'chat-missing');
      assert.match(t2.reply!, /I remember: precious\./, 'the full prompt carried the context');
    });
  }

  test("a chat whose store was never seen where we look is still resumed (Cursor's layout may differ)", async () => {
    const elsewhere = tempDir('cr-cursor-elsewhere-');
    const agent = scriptAgent('elsewhere-agent.sh', `#!/bin/sh\nCURSOR_CONFIG_DIR="${elsewhere}" exec "${STAND_IN}" "$@"\n`);
    const c = new Conversation(world({ CURSOR_RESUME_AGENT: agent }));
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta');
    assert.equal(t2.code, 0, t2.stderr);
    assert.equal(c.lastTrace().reason, 'delta');
    assert.match(t2.reply!, /^Turn 2 of this chat\. I remember: alpha; beta\./);
    // Once the workspace's folder exists where we look, a chat never seen there is gone from it.
    mkdirSync(dirname(chatDir(c, 'x')), { recursive: true });
    const t3 = await c.turn('remember: gamma');
    assert.equal(t3.code, 0, t3.stderr);
    assert.ok(!c.lastInvocation().argv.includes('--resume'));
    assert.equal(c.lastTrace().reason, 'chat-missing');
    assert.match(t3.reply!, /I remember: alpha; beta; gamma\./, 'the full prompt carried the context');
  });

  test('a resumed chat that answers under another ID is stopped before the caller sees it', async () => {
    const c = new Conversation(world());
    await c.turn('remember: the real chat');
    const t2 = await c.turn('remember: second', { mode: 'session-id=f0f0f0f0-0000-4000-8000-000000000000' });
    assert.equal(t2.code, 0, t2.stderr);
    const [, resumed, retried] = c.invocations();
    assert.ok(resumed!.argv.includes('--resume'));
    assert.ok(!retried!.argv.includes('--resume'));
    assert.equal(t2.stdout.match(/"subtype":"init"/g)!.length, 1);
    assert.equal(c.lastTrace().reason, 'resume-failed');
  });

  test('a resumed chat whose output names no chat in its first 4 MiB is stopped there, unseen, and run again fresh', async () => {
    // Resumed, it streams 5 MiB of events without a session_id, then waits: held whole, the turn would wait with it, and retry only then.
    const flood = `const line = JSON.stringify({ type: 'thinking', text: 'x'.repeat(1000) }) + '\\n'; process.stdout.write(line.repeat(5 * 1024)); setTimeout(() => {}, 10_000);`;
    const agent = scriptAgent(
      'nameless-agent.sh',
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = --resume ] && exec "${process.execPath}" -e "${flood}"; done\nexec "${STAND_IN}" "$@"\n`,
    );
    const c = new Conversation(world({ CURSOR_RESUME_AGENT: agent }));
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta', { args: [...STREAM_ARGS, '--verbose'] });
    assert.equal(t2.code, 0, t2.stderr);
    assert.match(
      t2.stderr,
      /cursor could not resume chat \S+ \(its output named no chat in its first 4 MiB\); retrying once as a fresh chat/,
    );
    assert.equal(c.lastTrace().reason, 'resume-failed');
    assert.equal(c.lastTrace().retried, true);
    assert.doesNotMatch(t2.stdout, /thinking/, 'nothing of the nameless run is shown');
    assert.match(t2.reply!, /I remember: alpha; beta\./);
  });

  test('an unsafe chat ID from cursor never reaches an argv', async () => {
    const c = new Conversation(world());
    for (const bad of ['-chat', 'a;b', 'chat.1']) {
      const t = await c.turn(`remember: ${bad}`, { mode: `session-id=${bad}` });
      assert.equal(t.code, 0, t.stderr);
    }
    await c.turn('next');
    for (const inv of c.invocations()) assert.ok(!inv.argv.includes('--resume'), inv.argv.join(' '));
    assert.equal(c.lastTrace().reason, 'no-entry');
  });

  test('a missing cursor-agent exits 127 naming CURSOR_RESUME_AGENT; one that cannot be executed, 126; the trace tells them apart', async () => {
    const trace = join(tempDir('cr-trace-'), 'trace.jsonl');
    const env = world({ CURSOR_RESUME_AGENT: '/nonexistent/cursor-agent', CURSOR_RESUME_TRACE: trace });
    const r = await runCli(STREAM_ARGS, { input: '{"messages":[{"role":"user","content":"hi"}]}', env });
    assert.equal(r.code, 127);
    assert.match(r.stderr, /cursor-agent not found: "\/nonexistent\/cursor-agent".*CURSOR_RESUME_AGENT/);
    const sub = await runCli(['status'], { env });
    assert.equal(sub.code, 127);

    const notExecutable = join(tempDir('cr-noexec-'), 'cursor-agent');
    writeFileSync(notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    const r2 = await runCli(STREAM_ARGS, {
      input: '{"messages":[{"role":"user","content":"hi"}]}',
      env: { ...env, CURSOR_RESUME_AGENT: notExecutable },
    });
    assert.equal(r2.code, 126);
    assert.match(r2.stderr, /cannot run cursor-agent ".*": .*permissions/);
    const traces = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { exit: number; failure: string });
    assert.deepEqual(
      traces.map((t) => [t.exit, t.failure]),
      [
        [127, 'not-found'],
        [126, 'not-executable'],
      ],
    );
  });
  test('a cursor-agent whose #! line names no interpreter: 127, said as that, not as a cursor-agent not found', async () => {
    const agent = scriptAgent('cursor-agent', '#!/nonexistent/bin/node\n');
    const env = world({ CURSOR_RESUME_AGENT: agent });
    for (const args of [STREAM_ARGS, ['status']]) {
      const r = await runCli(args, { input: '{"messages":[{"role":"user","content":"hi"}]}', env });
      assert.equal(r.code, 127);
      assert.doesNotMatch(r.stderr, /not found: "/);
      assert.match(
        r.stderr,
        /^cursor-resume: cannot run cursor-agent ".*": the interpreter its #! line names was not found\. Fix that line/,
      );
    }
  });
  test('the same found by its name on PATH (the agent setting\'s default): said as that too, not as "Install it"', async () => {
    const agent = scriptAgent('cursor-agent', '#!/nonexistent/bin/node\n');
    const env = world({ CURSOR_RESUME_AGENT: 'cursor-agent', PATH: `${dirname(agent)}:${process.env.PATH ?? ''}` });
    for (const args of [STREAM_ARGS, ['status']]) {
      const r = await runCli(args, { input: '{"messages":[{"role":"user","content":"hi"}]}', env });
      assert.equal(r.code, 127);
      assert.equal(
        r.stderr,
        `cursor-resume: cannot run cursor-agent "cursor-agent": the interpreter its #! line names was not found. Fix that line (or install the interpreter), or set CURSOR_RESUME_AGENT (or \`cursor-resume config set agent PATH\`) to another cursor-agent.\n`,
        args.join(' '),
      );
    }
    // A name on no PATH folder is still missing.
    const none = await runCli(['status'], { env: { ...env, CURSOR_RESUME_AGENT: 'no-such-cursor-agent' } });
    assert.equal(none.code, 127);
    assert.match(none.stderr, /^cursor-resume: cursor-agent not found: "no-such-cursor-agent"\. Install it/);
  });
});

describe('a resumed chat is verified before anything is shown', () => {
  /**
   * The stand-in behind a wrapper that, on a resumed run only, first prints `firstLine`
   * (a warning, an event without a session_id, a line over the hold limit).
   */
  function prefixAgent(firstLine: string): string {
    const lineFile = join(tempDir('cr-prefix-'), 'first-line');
    writeFileSync(lineFile, `${firstLine}\n`);
    return scriptAgent('prefix-agent.sh', `#!/bin/sh\ncase " $* " in *" --resume "*) cat "${lineFile}";; esac\nexec "${STAND_IN}" "$@"\n`);
  }

  const firstLines: Array<[string, string]> = [
    ['a warning', 'npm WARN config production Use `--omit=dev` instead.'],
    ['an event without a session_id', '{"type":"status"}'],
  ];
  for (const [name, line] of firstLines) {
    test(`${name} before the first event with a session_id: a silent fresh chat is still caught and retried`, async () => {
      const c = new Conversation(world({ CURSOR_RESUME_AGENT: prefixAgent(line) }));
      await c.turn('remember: alpha');
      const t2 = await c.turn('remember: beta', { mode: 'gc,silent-fresh' });
      assert.equal(t2.code, 0, t2.stderr);
      const [first, resumed, retried] = c.invocations();
      assert.deepEqual(resumed!.argv.slice(-2), ['--resume', first!.chatId]);
      assert.ok(!retried!.argv.includes('--resume'), 'retried as a fresh chat');
      assert.deepEqual([c.lastTrace().reason, c.lastTrace().retried], ['resume-failed', true]);
      assert.equal(t2.stdout.match(/"subtype":"init"/g)!.length, 1, 'the silent fresh chat was never shown');
      assert.ok(!t2.stdout.includes(line), 'nor its first line');
      assert.match(t2.reply!, /^Turn 1 of this chat\. I remember: alpha; beta\./, 'the whole conversation reached the new chat');
    });
  }

  test('a first line over the hold limit is not let through unverified: the turn is retried unseen', async () => {
    // 5 MiB, longer than the 4 MiB held while the chat is checked, naming another chat at its end.
    const line = JSON.stringify({ type: 'status', pad: 'x'.repeat(5 * 1024 * 1024), session_id: 'f0f0f0f0-0000-4000-8000-000000000000' });
    const c = new Conversation(world({ CURSOR_RESUME_AGENT: prefixAgent(line) }));
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta');
    assert.equal(t2.code, 0, t2.stderr);
    assert.equal(t2.stderr, '');
    assert.deepEqual([c.lastTrace().reason, c.lastTrace().retried], ['resume-failed', true]);
    assert.ok(!t2.stdout.includes('"pad"'), 'nothing of the unverified run reached the caller');
    assert.match(t2.reply!, /^Turn 1 of this chat\. I remember: alpha; beta\./);
  });

  for (const mode of ['session-id-change', 'resume-not-found,fail-after-init']) {
    test(`a json caller: a broken resume (${mode}) is retried, not printed`, async () => {
      const c = new Conversation(world());
      const args = ['--print', '--output-format', 'json'];
      c.messages.push({ role: 'user', content: 'remember: alpha' });
      const t1 = await c.send({ args });
      assert.equal(t1.code, 0, t1.stderr);
      c.messages.push({ role: 'user', content: 'remember: beta' });
      const t2 = await c.send({ args, mode });
      assert.equal(t2.code, 0, t2.stderr);
      assert.equal(t2.stderr, '', "the failed run's stderr is not shown");
      assert.equal(t2.stdout.split('\n').length, 2, 'one result object');
      assert.match(
        t2.reply!,
        /^Turn 1 of this chat\. I remember: alpha; beta\./,
        'the answer of the fresh chat with the whole conversation',
      );
      assert.deepEqual([c.lastTrace().reason, c.lastTrace().retried], ['resume-failed', true]);
      assert.equal(c.invocations().length, 3);
    });
  }

  test('retryFresh off: a chat that answers as another is not shown; the caller is told, exit 1', async () => {
    const env = world();
    assert.equal((await runCli(['config', 'set', 'retryFresh', 'false'], { env })).code, 0);
    for (const format of ['stream-json', 'json']) {
      const c = new Conversation(env);
      await c.turn('remember: alpha');
      c.messages.push({ role: 'user', content: 'remember: beta' });
      const t2 = await c.send({ args: ['--print', '--output-format', format], mode: 'session-id=f0f0f0f0-0000-4000-8000-000000000000' });
      assert.equal(t2.code, 1, format);
      assert.equal(t2.stdout, '', format);
      assert.match(
        t2.stderr,
        /^cursor-resume: cursor could not resume chat [0-9a-f-]{36}: it answered as chat f0f0f0f0-0000-4000-8000-000000000000\b.*entry was dropped.*run the turn again[^\n]*\n$/,
      );
      assert.equal(c.invocations().length, 2, 'no retry');
      assert.deepEqual([c.lastTrace().exit, c.lastTrace().failure], [1, 'resume']);
      // The next try starts fresh with the whole conversation.
      const t3 = await c.send();
      assert.equal(t3.code, 0, t3.stderr);
      assert.equal(c.lastTrace().reason, 'no-entry');
      assert.match(t3.reply!, /^Turn 1 of this chat\. I remember: alpha; beta\./);
    }
  });

  test("retryFresh off: cursor-agent's own resume error is passed on as it is", async () => {
    const env = world();
    assert.equal((await runCli(['config', 'set', 'retryFresh', 'false'], { env })).code, 0);
    const c = new Conversation(env);
    await c.turn('remember: alpha');
    const t2 = await c.turn('remember: beta', { mode: 'resume-not-found' });
    assert.equal(t2.code, 1);
    assert.match(t2.stderr, /^Error: chat not found: [0-9a-f-]{36}\n$/);
    assert.equal(c.invocations().length, 2, 'no retry');
  });
});

describe('passthrough', () => {
  test('grouped short flags (one that takes a value last) and a trailing `--`: the transcript is read, and what we add goes before the `--`', async () => {
    const c = new Conversation(world());
    const args = ['-pfH', 'x-trace: 1', '--output-format', 'stream-json', '--'];
    for (const fact of ['alpha', 'beta']) {
      const t = await c.turn(`remember: ${fact}`, { args });
      assert.equal(t.code, 0, t.stderr);
      const run = c.lastInvocation();
      assert.equal(run.argv.at(-1), '--', "the caller's `--` still ends the options");
      assert.deepEqual(run.argv.slice(0, 5), args.slice(0, 4).concat(['--model']));
      if (fact === 'alpha') assert.match(run.stdin, /^SYSTEM: [^]*\n\nUSER: remember: alpha$/, 'the transcript flattened, not its JSON');
      else {
        assert.deepEqual(run.argv.slice(-3), ['--resume', c.invocations()[0]!.chatId, '--']);
        assert.equal(run.stdin, 'remember: beta');
      }
    }
    assert.deepEqual(factsOf(c.messages.at(-1)!['content'] as string), ['alpha', 'beta']);
    c.messages.push({ role: 'user', content: 'remember: gamma' });
    const text = await runCli(['--print', '--output-format', 'text', '--'], { input: c.body(), env: c.env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /I remember: alpha; beta; gamma\./, 'a text caller gets the answer');
  });

  test('stdout is byte-identical to what cursor-agent printed', async () => {
    const capture = join(tempDir(), 'agent.out');
    const tee = scriptAgent('tee-agent.sh', `#!/bin/bash\nset -o pipefail\n"${STAND_IN}" "$@" | tee "${capture}"\n`);
    const c = new Conversation(world({ CURSOR_RESUME_AGENT: tee }));
    for (const [text, mode] of [
      ['remember: x', 'malformed-lines'],
      ['CALL_TOOL read {"path":"a"}', 'call-id-newline'],
      ['plain', 'thinking'],
    ] as const) {
      const t = await c.turn(text, { mode });
      assert.equal(t.code, 0, t.stderr);
      assert.equal(t.stdout, readFileSync(capture, 'utf8'));
    }
  });

  test('a turn in which cursor ran its own tools: a text or json caller, who saw no calls, is resumed after with the answer it got', async () => {
    // A stream-json caller saw the calls and may answer them: such a turn is not recorded (opencode-session.test.ts).
    const answerOf: Record<string, (stdout: string) => string> = {
      text: (stdout) => stdout,
      json: (stdout) => (JSON.parse(stdout) as { result: string }).result,
    };
    for (const [format, answer] of Object.entries(answerOf)) {
      const c = new Conversation(world());
      const args = ['--print', '--output-format', format];
      c.messages.push({ role: 'user', content: 'remember: alpha\nCALL_TOOL read_file {"path": "a.txt"}' });
      const first = await runCli(args, { input: c.body(), env: c.env });
      assert.equal(first.code, 0, first.stderr);
      assert.match(first.stdout, /read_file/, `${format}: cursor ran its tool`);
      c.messages.push({ role: 'assistant', content: answer(first.stdout) }, { role: 'user', content: 'remember: beta' });
      const second = await runCli(args, { input: c.body(), env: c.env });
      assert.equal(second.code, 0, second.stderr);
      assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['resume-delta', 'delta'], format);
      assert.equal(c.lastInvocation().stdin, 'remember: beta', `${format}: only the new message was sent`);
      assert.deepEqual(factsOf(answer(second.stdout)), ['alpha', 'beta'], `${format}: the chat remembers`);
    }
  });

  // hang: the stand-in prints its init line, then waits for a signal. The line can reach the
  // caller only if it is passed on while cursor-agent runs; held until exit, it never would.
  test('the first line arrives while the agent is still running, on a fresh turn and on a resumed one', async () => {
    const fresh = new Conversation(world());
    fresh.messages.push({ role: 'user', content: 'remember: alpha' });
    const resumed = new Conversation(world());
    await resumed.turn('remember: alpha');
    resumed.messages.push({ role: 'user', content: 'remember: beta' });
    for (const c of [fresh, resumed]) {
      const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: 'hang' });
      groups.push(run.pid!);
      run.stdin!.end(c.body());
      await waitFor('the first line, while cursor-agent hangs', () => run.output.stdout.includes('\n'));
      assert.equal(run.exitCode, null, 'cursor-resume is still running');
      assert.ok(!readLog(c.log).some((e) => e.event === 'signal'), 'cursor-agent was never stopped: it is still running');
      const init = JSON.parse(run.output.stdout.split('\n')[0]!) as { subtype: string; session_id: string };
      assert.equal(init.subtype, 'init');
      assert.equal(init.session_id, c.lastInvocation().chatId);
      if (c === resumed) assert.deepEqual(c.lastInvocation().argv.slice(-2), ['--resume', c.invocations()[0]!.chatId]);
      process.kill(run.pid!, 'SIGTERM');
      assert.equal((await run.closed).code, 143);
    }
  });

  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    test(`${signal} reaches the agent, the exit status is ${status}, and the interrupted turn is not known history`, async () => {
      const c = new Conversation(world());
      await c.turn('remember: before');
      c.messages.push({ role: 'user', content: 'this turn hangs' });
      const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: 'hang' });
      groups.push(run.pid!);
      run.stdin!.end(c.body());
      await waitFor('the first output, while cursor-agent hangs', () => run.output.stdout !== '');
      run.kill(signal);
      assert.equal((await run.closed).code, status);
      assert.deepEqual(
        readLog(c.log)
          .filter((e) => e.event === 'signal')
          .map((e) => e.signal),
        [signal],
        'relayed to cursor-agent, which died of it',
      );
      const next = await c.turn('after the interruption');
      assert.equal(next.code, 0, next.stderr);
      assert.equal(c.lastTrace().reason, 'interrupted');
      assert.ok(!c.lastInvocation().argv.includes('--resume'), 'no delta into a chat whose last turn is unknown');
    });
  }

  test('a caller that signals and stops reading is not kept waiting on output it will never read: the run ends of the signal, as cursor-agent would', async () => {
    const c = new Conversation(world());
    await c.turn('remember: before');
    c.messages.push({ role: 'user', content: 'a long answer nobody reads to its end' });
    // 300 KB in one line, then slowly on: far more than a pipe holds, so output waits in our process.
    const written = join(tempDir(), 'stdout.jsonl');
    const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: 'long-line=300000,slow=300', CURSOR_STAND_IN_STDOUT_LOG: written });
    groups.push(run.pid!);
    run.stdout!.pause();
    run.stdin!.end(c.body());
    await waitFor('cursor-agent to print the long line', () => existsSync(written) && readFileSync(written, 'utf8').length > 300_000);
    run.kill('SIGINT');
    // Never read again: it must end all the same (cursor-agent run directly dies at once). A minute bounds a hang.
    const end = await Promise.race([run.closed, sleep(60_000, 'still running a minute later', { ref: false })]);
    assert.deepEqual(typeof end === 'string' ? end : [end.code, end.signal], [null, 'SIGINT']);
    assert.deepEqual(
      readLog(c.log)
        .filter((e) => e.event === 'signal')
        .map((e) => e.signal),
      ['SIGINT'],
    );
    assert.equal(c.lastTrace().exit, 130, 'its bookkeeping done first: the trace of an interrupted turn');
    const next = await c.turn('after the interruption');
    assert.equal(next.code, 0, next.stderr);
    assert.equal(c.lastTrace().reason, 'interrupted');
  });

  /**
   * A resumed turn whose caller's stdout is a real pipe (a FIFO, as a shell's) that nobody reads, and
   * whose end stays in our process: the message is a little longer than the pipe holds (measured, not
   * assumed), so the stream, which echoes it, fills the pipe, and the rest, the result line among it, is
   * less than Node buffers before it asks cursor-agent to wait. Returns once cursor-agent has exited.
   */
  async function unreadEnd() {
    const fifo = (): string => {
      const file = join(tempDir(), 'stdout');
      execFileSync('mkfifo', [file]);
      return file;
    };
    const probe = openSync(fifo(), constants.O_RDWR | constants.O_NONBLOCK);
    let holds = 0;
    try {
      for (;;) holds += writeSync(probe, Buffer.alloc(4096));
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'EAGAIN');
    } finally {
      closeSync(probe);
    }
    const c = new Conversation(world());
    await c.turn('remember: before');
    const chatId = c.invocations()[0]!.chatId;
    c.messages.push({ role: 'user', content: 'y'.repeat(holds) });
    const stdout = fifo();
    const reader = openSync(stdout, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(stdout, constants.O_WRONLY);
    const run = spawn(process.execPath, [BIN, ...STREAM_ARGS], { env: c.env, stdio: ['pipe', writer, 'pipe'], detached: true });
    closeSync(writer);
    groups.push(run.pid!);
    const { closed } = watch(run);
    run.stdin!.end(c.body());
    await waitFor('cursor-agent to start the turn', () => c.invocations().length === 2);
    const agent = c.lastInvocation().pid;
    await waitFor('cursor-agent to finish the turn and exit', () => !alive(agent));
    const unrecorded = async (): Promise<void> => {
      const kept = (await entries(c.env)).find((e) => e.chatId === chatId);
      assert.deepEqual(
        [kept?.['turns'], kept?.['lastOutcome'], kept?.['state']],
        [1, 'interrupted', 'unknown'],
        'the turn its caller never got is not recorded: what the chat holds is unknown',
      );
      const next = await c.turn('after the caller gave up');
      assert.equal(next.code, 0, next.stderr);
      assert.ok(!c.lastInvocation().argv.includes('--resume'), 'no delta into a chat whose last turn the caller never got');
    };
    return { c, run, closed, reader, unrecorded };
  }

  test('a caller that goes away before it read the end of a turn cursor-agent finished: exit 141, and the turn is not recorded', async () => {
    const { c, closed, reader, unrecorded } = await unreadEnd();
    closeSync(reader);
    const end = await closed;
    assert.deepEqual([end.code, end.signal, end.stderr], [141, null, '']);
    assert.equal(c.lastTrace().exit, 141);
    await unrecorded();
  });

  test('a caller that signals before it read the end of a turn cursor-agent finished: the run dies of the signal, and the turn is not recorded', async () => {
    const { c, run, closed, reader, unrecorded } = await unreadEnd();
    try {
      run.kill('SIGINT');
      const end = await closed;
      assert.deepEqual([end.code, end.signal], [null, 'SIGINT']);
      assert.equal(c.lastTrace().exit, 130, 'its bookkeeping done first');
    } finally {
      closeSync(reader);
    }
    await unrecorded();
  });

  test('SIGTERM before the resumed chat named itself, to a cursor-agent that exits 0 on it: its status kept, not run again, the chat kept as interrupted', async () => {
    const c = new Conversation(world());
    await c.turn('remember: before');
    const chatId = c.invocations()[0]!.chatId;
    c.messages.push({ role: 'user', content: 'this turn is stopped early' });
    const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: 'start-wait=60000,signal-exit=0' });
    groups.push(run.pid!);
    run.stdin!.end(c.body());
    await waitFor('cursor-agent to start on the resumed chat', () => c.invocations().length === 2);
    assert.deepEqual(c.lastInvocation().argv.slice(-2), ['--resume', chatId]);
    run.kill('SIGTERM');
    const end = await run.closed;
    assert.equal(end.code, 0, end.stderr);
    assert.deepEqual([run.output.stdout, end.stderr], ['', '']);
    assert.equal(c.invocations().length, 2, 'the stopped turn is not run again as a fresh chat');
    assert.deepEqual(
      readLog(c.log)
        .filter((e) => e.event === 'signal')
        .map((e) => e.signal),
      ['SIGTERM'],
    );
    const kept = (await entries(c.env)).find((e) => e.chatId === chatId);
    assert.ok(kept, 'a chat nothing showed to be gone keeps its entry');
    assert.deepEqual([kept['lastOutcome'], kept['state']], ['interrupted', 'unknown']);
  });

  test("cursor-agent's subcommands pass through with stdio and exit status", async () => {
    const env = world();
    const created = await runCli(['create-chat'], { env });
    assert.equal(created.code, 0);
    assert.match(created.stdout, /^[0-9a-f-]{36}\n$/);
    const status = await runCli(['status'], { env });
    assert.match(status.stdout, /Logged in as/);
    const worker = await runCli(['worker'], { env });
    assert.equal(worker.code, 1);
    const authFail = await runCli(['models'], { env: { ...env, CURSOR_STAND_IN_MODE: 'auth' } });
    assert.equal(authFail.code, 1);
  });
});

/**
 * A helper started in a world of its own, behind a proxy that holds the first request of `op`
 * until `letGo()`: `seen` resolves when that request arrives. A test closes `proxy` at its end.
 */
async function holdingProxy(op: string) {
  const real = world();
  const started = await runCli(['helper', 'start'], { env: real });
  assert.equal(started.code, 0, started.stderr);
  let arrived: () => void = () => {};
  const seen = new Promise<void>((resolve) => (arrived = resolve));
  let letGo: () => void = () => {};
  const held = new Promise<void>((resolve) => (letGo = resolve));
  const proxy = await helperProxy(socketOf(real), async (line) => {
    if (!line.includes(`"op":"${op}"`)) return;
    arrived();
    await held;
  });
  return { env: { ...real, CURSOR_RESUME_RUNTIME_DIR: proxy.runtimeDir }, seen, letGo, proxy };
}

describe('a signal after cursor-agent ended', () => {
  test("SIGTERM again and again until the process is gone, its teardown included: the exit is still cursor-agent's", async () => {
    const env = world();
    for (let i = 0; i < 5; i++) {
      const c = new Conversation(env);
      c.messages.push({ role: 'user', content: 'remember: alpha' });
      // It exits 0 when signalled: whatever reaches it, the turn's exit is 0, never a death by signal.
      const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: 'signal-exit=0' });
      groups.push(run.pid!);
      let spam: NodeJS.Timeout | undefined;
      run.stdout!.once('data', () => {
        spam = setInterval(() => run.kill('SIGTERM'), 1);
      });
      run.stdin!.end(c.body());
      const end = await run.closed;
      clearInterval(spam);
      assert.deepEqual([end.code, end.signal], [0, null], `run ${i}: ${end.stderr}`);
    }
  });

  test("so are a line handed to cursor-agent whole and one that continues a chat itself: the exit is cursor-agent's", async () => {
    const env = world();
    const c = new Conversation(env);
    assert.equal((await c.turn('remember: alpha')).code, 0);
    const chatId = c.lastInvocation().chatId!;
    const lines: Array<[string, string[], string]> = [
      ['a prompt word (handed over)', [...STREAM_ARGS, '--workspace', c.workspace, 'remember: beta'], ''],
      [
        '--resume ID and a prompt word (handed over, its chat forgotten before and after)',
        [...STREAM_ARGS, '--workspace', c.workspace, '--resume', chatId, 'remember: delta'],
        '',
      ],
      [
        '--resume ID with a transcript (the run path, its chat forgotten)',
        [...STREAM_ARGS, '--workspace', c.workspace, '--resume', chatId],
        'remember: gamma',
      ],
    ];
    for (const [what, args, input] of lines) {
      for (let i = 0; i < 3; i++) {
        const run = spawnCli(args, { ...c.env, CURSOR_STAND_IN_MODE: 'signal-exit=0' });
        groups.push(run.pid!);
        let spam: NodeJS.Timeout | undefined;
        run.stdout!.once('data', () => {
          spam = setInterval(() => run.kill('SIGTERM'), 1);
        });
        run.stdin!.end(input);
        const end = await run.closed;
        clearInterval(spam);
        assert.deepEqual([end.code, end.signal], [0, null], `${what}, run ${i}: ${end.stderr}`);
      }
    }
  });

  test("SIGTERM while the turn is being recorded: the record and the trace still land, the exit is cursor-agent's", async () => {
    // The record waits in a proxy until the signal has been sent: cursor-agent has exited by then.
    const { env, seen, letGo, proxy } = await holdingProxy('record');
    try {
      const c = new Conversation(env);
      c.messages.push({ role: 'user', content: 'remember: alpha' });
      const run = spawnCli(STREAM_ARGS, c.env);
      groups.push(run.pid!);
      run.stdin!.end(c.body());
      await seen;
      run.kill('SIGTERM');
      // Let the signal land before the record goes on.
      await new Promise((resolve) => setTimeout(resolve, 100));
      letGo();
      const end = await run.closed;
      assert.deepEqual([end.code, end.signal], [0, null], end.stderr);
      assert.equal(resultOf(run.output.stdout).result.includes('alpha'), true);
      assert.equal(c.traces().length, 1, 'the trace line was written');
      c.messages.push({ role: 'assistant', content: resultOf(run.output.stdout).result });
      const next = await c.turn('remember: beta');
      assert.equal(next.code, 0, next.stderr);
      assert.equal(c.lastTrace().decision, 'resume-delta', 'the record landed: the next turn resumes');
    } finally {
      letGo();
      await proxy.close();
    }
  });
});

describe('a signal between a resume that failed unseen and its retry', () => {
  test("SIGINT while the chat that answered as another is evicted: no retry, nothing shown, and the signal's status, never a success with no answer", async () => {
    // The evict waits in a proxy until the caller's signal has landed: no cursor-agent runs then.
    const { env, seen, letGo, proxy } = await holdingProxy('evict');
    try {
      const c = new Conversation(env);
      assert.equal((await c.turn('remember: alpha')).code, 0);
      c.messages.push({ role: 'user', content: 'remember: beta' });
      // The resumed chat answers as another: stopped unseen, evicted, and retried, unless the caller says stop.
      const run = spawnCli(STREAM_ARGS, { ...c.env, CURSOR_STAND_IN_MODE: 'session-id=f0f0f0f0-0000-4000-8000-000000000000' });
      groups.push(run.pid!);
      run.stdin!.end(c.body());
      await seen;
      run.kill('SIGINT');
      // Long enough for the signal to land before the evict's answer, on a loaded machine too.
      await sleep(500);
      letGo();
      const end = await run.closed;
      assert.equal(c.invocations().length, 2, 'not run again after the signal');
      assert.equal(run.output.stdout, '', 'the run that answered as another chat is never shown');
      // 130, or (its bookkeeping outlasting the signal's grace on a slow machine) death by the signal itself: never 0.
      assert.ok((end.code === 130 && end.signal === null) || (end.code === null && end.signal === 'SIGINT'), JSON.stringify(end));
    } finally {
      letGo();
      await proxy.close();
    }
  });
});

describe('the helper never sees message text', () => {
  test('everything that crosses the socket during real turns is hashes, IDs and counts', async () => {
    const real = world();
    const started = await runCli(['helper', 'start'], { env: real });
    assert.equal(started.code, 0, started.stderr);
    // A proxy in another runtime dir records every byte between cursor-resume and the real helper.
    const proxy = await helperProxy(socketOf(real));
    try {
      const c = new Conversation({ ...real, CURSOR_RESUME_RUNTIME_DIR: proxy.runtimeDir });
      c.messages[0] = { role: 'system', content: 'SECRET-SYSTEM-PROMPT' };
      c.tools = [
        { type: 'function', function: { name: 'SECRETTOOL', description: 'SECRET-TOOL-DESCRIPTION', parameters: { type: 'object' } } },
      ];
      await c.turn('remember: SECRET-FACT-ONE');
      const t2 = await c.turn('SECRET-QUESTION-TWO');
      assert.equal(c.lastTrace().decision, 'resume-delta', t2.stderr);
      const traffic = Buffer.concat(proxy.traffic).toString('utf8');
      assert.match(traffic, new RegExp(c.lastTrace().anchor as string), 'the traffic was captured');
      for (const secret of ['SECRET', 'remember', 'I remember', 'Turn 1 of this chat'])
        assert.ok(!traffic.includes(secret), `"${secret}" crossed the socket`);
    } finally {
      await proxy.close();
    }
  });
});
