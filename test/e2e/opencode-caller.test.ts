// The stand-in OpenCode caller: its reading and rendering of the plugin's layouts against the
// captured bytes, and whole sessions against the built stand-in cursor-agent (real processes).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STAND_IN, sandboxEnv, tempDir } from '../support/cli.js';
import { CAPTURES, WORKSPACE_MARK, capture } from '../fixtures/opencode-caller/frame.js';
import { CLOSING, parseFull, renderDelta, renderFull, type Message, type Request } from '../fixtures/opencode-caller/layout.js';
import { pluginArgv, runAgent, type AgentRun } from '../fixtures/opencode-caller/agent.js';
import { chatRuns, readRuns, runCaller, runCallerPerTurn, stdinOf, stdoutOf, type CallerSetup } from '../support/opencode-caller.js';

const captured = (name: string): Request => parseFull(capture(name));

describe('the captured prompts', () => {
  const names = readdirSync(CAPTURES).filter((f) => f.endsWith('.txt'));

  test('every full prompt is read into messages and rendered back byte for byte', () => {
    const full = names.filter((f) => f.includes('-off-') || f.startsWith('turn1-'));
    assert.equal(full.length, 8);
    for (const name of full) {
      for (const workspace of [WORKSPACE_MARK, '/home/me/my project']) {
        const text = capture(name, workspace);
        assert.equal(renderFull(parseFull(text)), text, name);
      }
    }
  });

  test('the reading finds the tools, the frame and the conversation', () => {
    const request = captured('turn3-off-toolresult.txt');
    assert.equal(request.tools.length, 24);
    assert.ok(request.tools.some((t) => t.name === 'task') && request.tools.some((t) => t.name === 'write'));
    assert.deepEqual(
      request.messages.map((m) => m.role),
      ['system', 'system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'tool'],
    );
    assert.match((request.messages[0] as { content: string }).content, /<env>[\s\S]*Today's date: Thu Dec 03 2026/);
    assert.match((request.messages[1] as { content: string }).content, /^Available OpenCode tools/);
    const call = request.messages[7] as Extract<Message, { role: 'assistant' }>;
    assert.equal(call.content, '');
    assert.deepEqual(call.toolCalls, [{ id: 'call_72f615510e0b', name: 'read', arguments: `{"path":"${WORKSPACE_MARK}/notes.txt"}` }]);
    assert.deepEqual(request.messages[8], {
      role: 'tool',
      toolCallId: 'call_72f615510e0b',
      name: 'read',
      content: 'The codeword is CHARLIE.\n',
    });
    const title = captured('turn1-off-title.txt');
    assert.equal(title.tools.length, 0);
    assert.deepEqual(title.messages.slice(1), [
      { role: 'user', content: 'Generate a title for this conversation:\n' },
      { role: 'user', content: '"Hello. The codeword is ALPHA."' },
    ]);
  });

  test("the plugin's deltas are rendered from the same conversations byte for byte", () => {
    assert.equal(renderDelta(captured('turn2-off-chat.txt')), capture('turn2-on-chat.txt'));
    assert.equal(renderDelta(captured('turn3-off-chat-toolcall.txt')), capture('turn3-on-chat-toolcall.txt'));
    assert.equal(renderDelta(captured('turn4-off-chat.txt')), capture('turn4-on-chat.txt'));
    // The resume-on session's read call had its own call_id.
    const toolResult = parseFull(capture('turn3-off-toolresult.txt').replaceAll('call_72f615510e0b', 'call_302869075602'));
    assert.equal(renderDelta(toolResult), capture('turn3-on-toolresult.txt'));
  });

  test('a text that is not the layout is refused with the reason', () => {
    assert.throws(() => parseFull('hello'), /not a block of the plugin's layout: "hello"/);
    assert.throws(() => parseFull(`USER: a\n\n${CLOSING}`), /the closing line must end a prompt exactly when it holds tool results/);
  });
});

describe('the captured prompts replayed against the stand-in agent', () => {
  const replay = (env: NodeJS.ProcessEnv, workspace: string, name: string, resume?: string): Promise<AgentRun> =>
    runAgent(STAND_IN, env, {
      kind: 'chat',
      turn: 0,
      argv: pluginArgv(workspace, 'auto', resume),
      prompt: capture(name, workspace),
      fullPromptBytes: null,
      pluginDeltaBytes: null,
      bridgeOffered: true,
    }).then((o) => o.run);

  test("the plugin's resume off: every prompt a fresh chat; the READ_NOTES prompt ends in a read call and SIGTERM", async () => {
    const workspace = tempDir('cr-replay-');
    const env = sandboxEnv();
    for (const name of ['turn1-off-chat.txt', 'turn2-off-chat.txt', 'turn3-off-toolresult.txt', 'turn4-off-chat.txt']) {
      const run = await replay(env, workspace, name);
      assert.equal(run.exitCode, 0, name);
      assert.match(resultOf(run), /^Turn 1 of this chat\. /, name);
    }
    const call = await replay(env, workspace, 'turn3-off-chat-toolcall.txt');
    assert.deepEqual([call.killedAfterToolCall, call.signal], [true, 'SIGTERM']);
    assert.match(stdoutOf(call), new RegExp(`"tool_call":\\{"readToolCall":\\{"args":\\{"path":"${workspace}/notes.txt"\\}\\}\\}`));
  });

  test("the plugin's resume on: its deltas with --resume continue one chat, the killed call's turn included", async () => {
    const workspace = tempDir('cr-replay-');
    const env = sandboxEnv();
    const first = await replay(env, workspace, 'turn1-on-chat.txt');
    const chatId = first.sessionId!;
    const replies = [resultOf(first)];
    const call = await replay(env, workspace, 'turn2-on-chat.txt', chatId).then(async (r) => {
      replies.push(resultOf(r));
      return replay(env, workspace, 'turn3-on-chat-toolcall.txt', chatId);
    });
    assert.deepEqual([call.killedAfterToolCall, call.signal, call.sessionId], [true, 'SIGTERM', chatId]);
    for (const name of ['turn3-on-toolresult.txt', 'turn4-on-chat.txt']) replies.push(resultOf(await replay(env, workspace, name, chatId)));
    // As the captured agent counted: the killed turn is in the chat (turn 3), so the tool result is turn 4.
    assert.deepEqual(
      replies.map((r) => r.slice(0, 20)),
      ['Turn 1 of this chat.', 'Turn 2 of this chat.', 'Turn 4 of this chat.', 'Turn 5 of this chat.'],
    );
  });
});

interface World extends CallerSetup {
  log: string;
}

/** A private world; its workspace's notes.txt holds `notes`. */
function world(notes: string, extraEnv: NodeJS.ProcessEnv = {}): World {
  const dir = tempDir('cr-caller-');
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.txt'), notes);
  const log = join(dir, 'agent.jsonl');
  const env = sandboxEnv({ CURSOR_AGENT_EXECUTABLE: STAND_IN, CURSOR_STAND_IN_LOG: log, ...extraEnv });
  return { state: join(dir, 'session.json'), workspace, record: join(dir, 'runs.jsonl'), env, log };
}

// The notes give a fact and lead to a second call: two tool calls in a row in one user turn.
const NOTES = 'Notes of the project.\nremember: codeword CHARLIE\nRUN_SHELL: make check\n';
const SCRIPT = [
  'remember: codeword ALPHA',
  'READ_NOTES: please read notes.txt and tell me its codeword.',
  'remember: codeword BRAVO',
  'Which codewords do you know?',
];
const ALL_FACTS = 'I remember: codeword ALPHA; codeword CHARLIE; codeword BRAVO.';

const resultOf = (run: AgentRun): string => {
  const last = stdoutOf(run).trim().split('\n').at(-1)!;
  return (JSON.parse(last) as { result: string }).result;
};

function agentLog(w: World): Array<Record<string, unknown>> {
  return readFileSync(w.log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function assertAllOk(results: ReadonlyArray<{ code: number | null; stderr: string }>): void {
  for (const r of results) assert.equal(r.code, 0, r.stderr);
}

describe('the caller against the stand-in agent', () => {
  test('replaying the captured session, one process per turn: the captured bytes, probe, title, SIGTERM after the tool call', async () => {
    const w = world('The codeword is CHARLIE.\n');
    const messages = JSON.parse(readFileSync(join(CAPTURES, 'index.json'), 'utf8')).userMessages as string[];
    // Given bare, as to `opencode run`: the caller wraps them in double quotes.
    assertAllOk(await runCallerPerTurn(w, messages));
    const runs = readRuns(w.record);
    assert.deepEqual(
      runs.map((r) => `${r.turn}:${r.kind}`),
      ['1:version', '1:title', '1:chat', '2:version', '2:chat', '3:version', '3:chat', '3:chat', '4:version', '4:chat'],
    );
    for (const r of runs.filter((x) => x.kind === 'version')) {
      assert.deepEqual(r.argv, ['--version']);
      assert.equal(r.stdinBytes, 0);
    }
    const [title, chat1, chat2] = runs.filter((r) => r.kind !== 'version');
    assert.equal(stdinOf(title!), capture('turn1-off-title.txt', w.workspace));
    assert.equal(stdinOf(chat1!), capture('turn1-off-chat.txt', w.workspace));
    assert.deepEqual(chat1!.argv, [
      '--print',
      '--output-format',
      'stream-json',
      '--stream-partial-output',
      '--workspace',
      w.workspace,
      '--model',
      'auto',
      '--force',
    ]);
    // Turn 2 is the captured prompt with this agent's reply in place of the captured one.
    const turn2 = parseFull(capture('turn2-off-chat.txt', w.workspace));
    (turn2.messages[2] as { content: string }).content = resultOf(chat1!);
    assert.equal(stdinOf(chat2!), renderFull(turn2));
    // Turn 3: the read call ended the run by SIGTERM; the agent died of it.
    const [killed, continued] = chatRuns(runs).filter((r) => r.turn === 3);
    assert.equal(killed!.killedAfterToolCall, true);
    assert.equal(killed!.signal, 'SIGTERM');
    assert.equal(killed!.exitCode, null);
    const lastLine = JSON.parse(stdoutOf(killed!).trim().split('\n').at(-1)!);
    assert.deepEqual([lastLine.type, lastLine.subtype, Object.keys(lastLine.tool_call)], ['tool_call', 'started', ['readToolCall']]);
    const invoke = agentLog(w).find((l) => l['event'] === 'invoke' && l['stdinBase64'] === killed!.stdinBase64)!;
    assert.ok(agentLog(w).some((l) => l['event'] === 'signal' && l['pid'] === invoke['pid'] && l['signal'] === 'SIGTERM'));
    assert.match(
      stdinOf(continued!),
      new RegExp(`TOOL_RESULT \\(name: read, call_id: ${lastLine.call_id}\\): The codeword is CHARLIE\\.\\n\\n\\n${CLOSING}`),
    );
    assert.equal(continued!.exitCode, 0);
  });

  test("the plugin's resume off: full prompts, every run a fresh chat that knows what its prompt holds", async () => {
    const w = world(NOTES);
    assertAllOk(await runCallerPerTurn(w, SCRIPT));
    const chats = chatRuns(readRuns(w.record));
    assert.equal(chats.length, 6);
    for (const r of chats) {
      assert.equal(r.passedResume, false);
      assert.equal(r.stdinBytes, r.fullPromptBytes);
    }
    const done = chats.filter((r) => !r.killedAfterToolCall).map(resultOf);
    assert.match(done[0]!, /^Turn 1 of this chat\. I remember: codeword ALPHA\. /);
    assert.match(done[1]!, /^Turn 1 of this chat\. I remember: codeword ALPHA; codeword CHARLIE\. /);
    assert.match(done.at(-1)!, new RegExp(`^Turn 1 of this chat\\. ${ALL_FACTS} `));
  });

  test("the plugin's resume on, one process: deltas with --resume, and the resumed chat remembers", async () => {
    const w = world(NOTES, { CURSOR_ACP_SESSION_RESUME: '1' });
    assertAllOk([await runCaller(w, SCRIPT)]);
    const runs = readRuns(w.record);
    assert.deepEqual(
      runs.map((r) => r.kind),
      ['version', 'title', 'chat', 'chat', 'chat', 'chat', 'chat', 'chat'],
    );
    const [first, ...later] = chatRuns(runs);
    assert.equal(first!.passedResume, false);
    for (const r of later) {
      assert.deepEqual(r.argv.slice(-3), ['--resume', first!.sessionId, '--force']);
      assert.equal(r.stdinBytes, r.pluginDeltaBytes);
      assert.doesNotMatch(stdinOf(r), /codeword ALPHA/); // only the chat itself can remember it
    }
    const final = later.at(-1)!;
    assert.equal(resultOf(final), `Turn 6 of this chat. ${ALL_FACTS} This prompt was ${final.stdinBytes} bytes.`);
  });

  test('two tool calls in a row in one user turn: two killed runs, then the continuation', async () => {
    const w = world(NOTES, { CURSOR_ACP_SESSION_RESUME: '1' });
    assertAllOk(await runCallerPerTurn(w, SCRIPT.slice(0, 2)));
    const turn2 = chatRuns(readRuns(w.record)).filter((r) => r.turn === 2);
    assert.deepEqual(
      turn2.map((r) => [r.killedAfterToolCall, r.signal, r.passedResume]),
      [
        [true, 'SIGTERM', false], // a new caller process: the plugin's cache is gone
        [true, 'SIGTERM', true],
        [false, null, true],
      ],
    );
    const shellCall = /tool_call\(id: (call_\S+), name: shell, args: (\{.*\})\)/.exec(stdinOf(turn2[2]!))!;
    assert.deepEqual(JSON.parse(shellCall[2]!), { command: 'make check', cwd: w.workspace, timeout: 30 });
    // The delta carries only the latest call and its result; the full prompt has both, the closing line once.
    assert.doesNotMatch(stdinOf(turn2[2]!), /name: read/);
    const state = JSON.parse(readFileSync(w.state, 'utf8'));
    const full = renderFull({ tools: parseFull(capture('turn1-off-chat.txt', w.workspace)).tools, messages: state.conversation });
    assert.equal(full.match(/^ASSISTANT: Reading notes\.txt\.\n\n\ntool_call\(id: call_\S+, name: read, /gm)?.length, 1);
    assert.equal(full.match(/^TOOL_RESULT \(name: (read|shell), /gm)?.length, 2);
    assert.equal(full.split(CLOSING).length, 2);
    // A fresh chat for the turn's first request, resumed twice.
    assert.match(resultOf(turn2[2]!), /^Turn 3 of this chat\. I remember: codeword ALPHA; codeword CHARLIE\. /);
  });

  test('bad setups: a clear one-line message and the exit code; an agent failure keeps the session file whole', async () => {
    const w = world(NOTES);
    const noAgent = await runCaller({ ...w, env: { ...w.env, CURSOR_AGENT_EXECUTABLE: '' } }, ['hi']);
    assert.deepEqual(
      [noAgent.code, noAgent.stderr],
      [2, 'opencode-caller: CURSOR_AGENT_EXECUTABLE must name the agent by an absolute path\n'],
    );
    const unknown = await runCaller(w, ['hi'], ['--frob']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^opencode-caller: Unknown option '--frob'\.[^\n]*\n$/);
    const badList = await runCaller(w, ['hi'], ['--tools-list', 'sometimes']);
    assert.deepEqual([badList.code, badList.stderr], [2, 'opencode-caller: --tools-list takes on, off, alternate, not sometimes\n']);
    const failing = await runCaller({ ...w, env: { ...w.env, CURSOR_STAND_IN_MODE: 'auth' } }, ['hi']);
    assert.deepEqual([failing.code, failing.stderr], [1, 'opencode-caller: the title request failed: the agent exited with 1\n']);
    assert.deepEqual(JSON.parse(readFileSync(w.state, 'utf8')).conversation, [{ role: 'user', content: '"hi"' }]);
  });
});
