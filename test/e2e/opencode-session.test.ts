// OpenCode's Cursor plugin as the caller (README: "Using it from OpenCode"): the stand-in
// caller, one process per user turn as `opencode run` scripts do, runs the built
// cursor-resume in front of the stand-in cursor-agent. It flattens every request, kills the
// agent with SIGTERM at each tool call, and sends the tool's result as the next request.
import assert from 'node:assert/strict';
import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, sandboxEnv, tempDir } from '../support/cli.js';
import { printedBy, readJsonLines } from '../support/json-lines.js';
import { readRuns, runCallerPerTurn, stdoutOf } from '../support/opencode-caller.js';
import { stopHelpersAt } from '../support/hardening.js';
import { ChatStore, configDir } from '../fixtures/stand-in/chat-store.js';

/** Turn 2's notes lead to a second call (two in a row inside one user turn); turn 4 makes one more. */
const SESSION = [
  'remember: codeword ALPHA',
  'READ_NOTES: please read notes.txt and tell me its codeword.',
  'remember: codeword BRAVO',
  'RUN_SHELL: npm test',
  'Which codewords do you know?',
];
const NOTES = 'Notes of the project.\nremember: codeword CHARLIE\nRUN_SHELL: make check\n';

async function session(pluginResume: boolean, turns: string[] = SESSION, mode?: string) {
  const dir = tempDir('cr-opencode-');
  const workspace = tempDir('cr-ws-');
  writeFileSync(join(workspace, 'notes.txt'), NOTES);
  const files = {
    trace: join(dir, 'trace.jsonl'),
    printed: join(dir, 'printed.jsonl'),
    record: join(dir, 'runs.jsonl'),
    log: join(dir, 'agent.jsonl'),
  };
  const env = sandboxEnv({
    CURSOR_AGENT_EXECUTABLE: BIN,
    CURSOR_RESUME_ENABLED: '1',
    // The plugin's own resume: the same variable, which cursor-resume leaves to its own switch.
    CURSOR_ACP_SESSION_RESUME: pluginResume ? '1' : '0',
    CURSOR_RESUME_TRACE: files.trace,
    CURSOR_STAND_IN_STDOUT_LOG: files.printed,
    CURSOR_STAND_IN_LOG: files.log,
    ...(mode ? { CURSOR_STAND_IN_MODE: mode } : {}),
  });
  try {
    for (const r of await runCallerPerTurn({ state: join(dir, 'session.json'), workspace, record: files.record, env }, turns)) {
      assert.equal(r.code, 0, r.stderr);
    }
  } finally {
    await stopHelpersAt(env.CURSOR_RESUME_RUNTIME_DIR!);
  }
  const runs = readRuns(files.record).filter((r) => r.kind !== 'version');
  const traces = readJsonLines<{ decision: string; reason: string; promptBytes: number }>(files.trace);
  const printed = printedBy(files.printed);
  const received = readJsonLines<{ event: string; argv: string[]; stdinBase64: string | null }>(files.log).filter(
    (e) => e.event === 'invoke',
  );
  const store = new ChatStore(configDir(env), realpathSync(workspace));
  return { runs, traces, printed: [...printed.values()], received, store };
}

describe('the OpenCode plugin as the caller, one process per turn', () => {
  test("its own resume off: every later request resumes with the plugin's own delta, killed runs included, and the chat keeps every fact", async () => {
    const { runs, traces, printed } = await session(false);
    assert.equal(traces.length, runs.length, 'one trace line per agent run');
    const chats = runs.map((r, i) => ({ ...r, trace: traces[i]! })).filter((r) => r.kind === 'chat');
    assert.equal(chats.filter((r) => r.killedAfterToolCall).length, 3, 'three tool calls, each ended by SIGTERM');
    assert.deepEqual([chats[0]!.trace.decision, chats[0]!.trace.reason], ['fresh', 'no-entry']);
    for (const r of chats.slice(1)) {
      assert.deepEqual([r.turn, r.trace.decision, r.trace.reason], [r.turn, 'resume-delta', 'delta']);
      // What went to cursor-agent is what the plugin itself would send when it resumes.
      assert.equal(r.trace.promptBytes, r.pluginDeltaBytes, `turn ${r.turn}`);
    }
    // Byte for byte what cursor-agent printed, the runs killed at their tool calls included.
    for (const r of runs) {
      const got = Buffer.from(r.stdoutBase64, 'base64');
      assert.ok(
        printed.some((p) => p.equals(got)),
        `turn ${r.turn} ${r.kind}: the caller got what the agent printed`,
      );
    }
    const last = stdoutOf(runs.at(-1)!).trim().split('\n').at(-1)!;
    const reply = String((JSON.parse(last) as { result: unknown }).result);
    for (const fact of ['codeword ALPHA', 'codeword CHARLIE', 'codeword BRAVO']) assert.ok(reply.includes(fact), `${fact} in: ${reply}`);
  });

  test("the plugin's SIGTERM at a tool call of a cursor-agent that ends at once (it ran the tool itself): traced, exit cursor-agent's, not recorded, so no chat gets a call's result twice", async () => {
    // The SIGTERM mostly comes once cursor-agent has ended (its output held while the chat was
    // placed); on a loaded machine it may still reach it, which then exits 0 as asked (signal-exit).
    // run.test.ts ("a signal after cursor-agent ended") makes the late case certain.
    const { runs, traces, store } = await session(false, SESSION.slice(1, 3), 'tool-wait=0,signal-exit=0');
    const chats = runs.map((r, i) => ({ ...r, trace: traces[i] })).filter((r) => r.kind === 'chat');
    assert.equal(traces.length, runs.length, 'one trace line per agent run, the signalled one included');
    const signalled = chats.filter((r) => r.killedAfterToolCall);
    assert.equal(signalled.length, 2, "both tool calls of turn 2 (the notes' own call included)");
    for (const r of signalled) assert.deepEqual([r.signal, r.exitCode], [null, 0], "cursor-agent's exit, not the late signal's");
    // The chat that ran a call holds its result: the plugin's result of it goes to a fresh chat, never a second time to that one.
    let results = 0;
    for (const r of chats) {
      const answered = new Set<string>();
      for (const t of store.read(r.sessionId!)!.turns) {
        for (const [, id] of t.prompt.matchAll(/^TOOL_RESULT \(name: [^,]*, call_id: ([^)]*)\)/gm)) {
          results++;
          assert.ok(!answered.has(id!), `chat ${r.sessionId} was sent the result of ${id}, a call it had run itself`);
        }
        for (const c of t.toolCalls) if (c.result !== null) answered.add(c.callId);
      }
    }
    assert.ok(results >= 2, 'the results of both calls reached cursor-agent');
    for (const [i, r] of chats.entries()) {
      if (i > 0 && chats[i - 1]!.killedAfterToolCall) assert.equal(r.trace!.decision, 'fresh', `run ${i + 1}, turn ${r.turn}`);
    }
    assert.equal(chats.at(-1)!.trace!.decision, 'resume-delta', 'a turn that ended with no call of its own is recorded and resumed');
  });

  test("a file written through the plugin's bridge (a reply that is one JSON envelope, made a call by the plugin): the request with its result resumes", async () => {
    // Killed as soon as the envelope is whole; or, with no wait, mostly done before the SIGTERM comes.
    for (const mode of [undefined, 'tool-wait=0,signal-exit=0']) {
      const turns = ['remember: codeword ALPHA', 'BRIDGE_WRITE: notes.md', 'Which codewords do you know?'];
      const { runs, traces, printed } = await session(false, turns, mode);
      const chats = runs.map((r, i) => ({ ...r, trace: traces[i]! })).filter((r) => r.kind === 'chat');
      const bridged = chats.filter((r) => r.turn === 2);
      assert.equal(bridged.length, 2, `${mode}: the envelope's run, then the request with the write's result`);
      assert.equal(bridged[0]!.killedAfterToolCall, true, `${mode}: the plugin ended the run at the envelope`);
      const delta = Buffer.from(bridged[1]!.stdinBase64, 'base64').toString('utf8');
      assert.match(delta, /^ASSISTANT: tool_call\(id: call_bridge_[0-9a-f]{12}, name: write, args: \{"filePath":"notes\.md",/m);
      for (const r of chats.slice(1)) {
        assert.deepEqual([r.turn, r.trace.decision, r.trace.reason], [r.turn, 'resume-delta', 'delta'], `${mode}`);
        assert.equal(r.trace.promptBytes, r.pluginDeltaBytes, `${mode}: turn ${r.turn}`);
      }
      for (const r of runs)
        assert.ok(
          printed.some((p) => p.equals(Buffer.from(r.stdoutBase64, 'base64'))),
          `${mode}: byte for byte`,
        );
      const last = JSON.parse(stdoutOf(runs.at(-1)!).trim().split('\n').at(-1)!) as { result: string };
      assert.match(last.result, /^Turn 4 of this chat\. I remember: codeword ALPHA\. /, `${mode}: one chat all along`);
    }
  });

  test('its own resume on: what it resumes itself reaches cursor-agent untouched (caller-resume), and we resume none of its prompts (plugin-resumes)', async () => {
    const { runs, traces, received } = await session(true);
    const traced = runs.map((r, i) => ({ ...r, trace: traces[i]! }));
    const byCaller = traced.filter((r) => r.passedResume);
    assert.ok(byCaller.length >= 3, 'the plugin resumes its tool results itself');
    // Two resumers of one chat could each send a turn the other's proof never saw: the plugin's prompts go on as they came.
    for (const r of traced.filter((r) => r.kind === 'chat' && !r.passedResume)) {
      assert.deepEqual([r.turn, r.trace.decision, r.trace.reason], [r.turn, 'fresh', 'plugin-resumes']);
      assert.ok(
        received.some((e) => e.stdinBase64 === r.stdinBase64 && JSON.stringify(e.argv) === JSON.stringify(r.argv)),
        `turn ${r.turn}: the full prompt reached cursor-agent as it came`,
      );
    }
    for (const r of byCaller) {
      assert.deepEqual([r.trace.decision, r.trace.reason], ['fresh', 'caller-resume']);
      assert.ok(
        received.some((e) => e.stdinBase64 === r.stdinBase64 && JSON.stringify(e.argv) === JSON.stringify(r.argv)),
        `turn ${r.turn}: cursor-agent got the caller's argv and stdin as they came`,
      );
    }
  });
});
