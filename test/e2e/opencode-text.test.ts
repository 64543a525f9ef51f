// The OpenCode plugin's flattened prompt through the built binary, the real helper and
// the stand-in cursor-agent: a fresh chat gets the caller's bytes, the next turn
// resumes with the delta the plugin itself would send, and inspect shows the reading.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runCli, tempDir } from '../support/cli.js';
import { STREAM_ARGS, readLog, resultOf } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';

const world = worlds();
const FIXTURES = new URL('../fixtures/opencode-plugin/', import.meta.url);
const TASK_BRIDGE = '\n\nSYSTEM: OpenCode Task bridge mode is active.';

const write = (name: string, text: string): string => {
  const file = join(tempDir(), name);
  writeFileSync(file, text);
  return file;
};

/** A session in one workspace, driven one process per turn as `opencode run` scripts do. */
function session() {
  const workspace = tempDir('cr-ws-');
  const log = join(tempDir('cr-log-'), 'agent.jsonl');
  const trace = join(tempDir('cr-trace-'), 'trace.jsonl');
  // Our own switch, the plugin's off, as the README asks for OpenCode (with the plugin's on, none of its prompts is resumed).
  const env = {
    ...world(),
    CURSOR_ACP_SESSION_RESUME: '0',
    CURSOR_RESUME_ENABLED: '1',
    CURSOR_STAND_IN_LOG: log,
    CURSOR_RESUME_TRACE: trace,
  };
  const first = readFileSync(new URL('turn1-off-chat.txt', FIXTURES), 'utf8').replaceAll('@WORKSPACE@', workspace);
  return {
    workspace,
    env,
    first,
    args: [...STREAM_ARGS, '--workspace', workspace, '--model', 'auto'],
    invocations: () => readLog(log).filter((e) => e.event === 'invoke'),
    traces: (): Array<Record<string, unknown>> =>
      existsSync(trace)
        ? readFileSync(trace, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l))
        : [],
  };
}

/** The next full prompt as the plugin writes it: cursor's reply and the new user message before the Task bridge. */
const next = (prompt: string, reply: string, said: string): string => {
  const at = prompt.lastIndexOf(TASK_BRIDGE);
  return `${prompt.slice(0, at)}\n\nASSISTANT: ${reply}\n\nUSER: ${said}${prompt.slice(at)}`;
};

describe("the OpenCode plugin's prompt, resumed", () => {
  test('turn 1 is fresh with the exact bytes; turn 2 resumes with the plugin-style delta, and the reply shows the context kept', async () => {
    const s = session();
    const t1 = await runCli(s.args, { input: s.first, env: s.env });
    assert.equal(t1.code, 0, t1.stderr);
    const [one] = s.invocations();
    assert.equal(Buffer.from(one!.stdinBase64!, 'base64').toString('utf8'), s.first, 'cursor-agent read the caller’s bytes, exactly');
    assert.equal(one!.argv.includes('--resume'), false);
    assert.deepEqual([s.traces()[0]!.decision, s.traces()[0]!.reason], ['fresh', 'no-entry']);

    // The tool list frame is gone in this turn, as it comes and goes in real sessions.
    const withoutList = s.first.replace(/\n\nSYSTEM: Available OpenCode tools[^\n]*/, '');
    assert.notEqual(withoutList, s.first);
    const second = next(withoutList, resultOf(t1.stdout).result, '"Now the codeword is BRAVO. Which codeword do you know?"');
    const t2 = await runCli(s.args, { input: second, env: s.env });
    assert.equal(t2.code, 0, t2.stderr);
    const two = s.invocations()[1]!;
    assert.deepEqual([s.traces()[1]!.decision, s.traces()[1]!.reason], ['resume-delta', 'delta']);
    assert.equal(two.argv[two.argv.indexOf('--resume') + 1], one!.chatId);
    const bridge = s.first.slice(0, s.first.indexOf('\n\nSYSTEM: You have access'));
    const taskBridge = s.first.slice(s.first.lastIndexOf(TASK_BRIDGE) + 2);
    assert.equal(two.stdin, `${bridge}\n\n"Now the codeword is BRAVO. Which codeword do you know?"\n\n${taskBridge}`);
    // The stand-in answers from the chat's whole history: the resumed chat still holds turn 1.
    assert.equal(two.resumed, true);
    assert.ok(Buffer.byteLength(two.stdin) < Buffer.byteLength(second) / 20, 'the delta is under 5 % of the full prompt');
  });

  test('--dry-run keeps its object, and inspect --transcript shows each block and the proof', async () => {
    const s = session();
    const t1 = await runCli(s.args, { input: s.first, env: s.env });
    assert.equal(t1.code, 0, t1.stderr);
    const second = next(s.first, resultOf(t1.stdout).result, '"Next?"');
    const dry = JSON.parse((await runCli(['--dry-run', ...s.args], { input: second, env: s.env })).stdout);
    assert.deepEqual(Object.keys(dry), ['decision', 'reason', 'anchor', 'chatId', 'argv', 'prompt']);
    assert.deepEqual([dry.decision, dry.reason], ['resume-delta', 'delta']);

    const file = write('turn2.txt', second);
    const human = await runCli(['inspect', '--transcript', file, '--', ...s.args], { env: s.env });
    assert.equal(human.code, 0, human.stderr);
    for (const line of [
      /^transcript +.*turn2\.txt: opencode-text, 4 messages, 4 frame blocks$/m,
      /^  block 1 +frame bridge, 363 B: "SYSTEM: opencode bridge mode is active\./m,
      /^  block 2 +frame tools, 18\.3 KiB: /m,
      /^  block 3 +message 1 \(system\), 9\.3 KiB: "SYSTEM: You are opencode/m,
      /^  block 4 +frame tool-list, 596 B: /m,
      /^  block 5 +message 2 \(user\), 37 B: "USER: \\"Hello\. The codeword is ALPHA\.\\""$/m,
      /^  block 6 +message 3 \(assistant\), /m,
      /^  block 7 +message 4 \(user\), 13 B: "USER: \\"Next\?\\""$/m,
      /^  block 8 +frame task-bridge, 638 B: /m,
      /^tools +the tools block \(18\.3 KiB\), fingerprint [0-9a-f]{12}$/m,
      /^  prefix +all 3 known messages match; the rest is new$/m,
      /^decision +resume-delta \(delta\): all 3 known messages match; 1 new$/m,
    ]) {
      assert.match(human.stdout, line);
    }
    const view = JSON.parse((await runCli(['inspect', '--transcript', file, '--json', '--', ...s.args], { env: s.env })).stdout);
    assert.deepEqual(view.plan, dry, 'inspect and --dry-run make the same plan');
    assert.deepEqual(view.transcript.layout[4], { message: 1, role: 'user', bytes: 37, preview: 'USER: "Hello. The codeword is ALPHA."' });
    assert.equal(view.transcript.notLayout, null);
  });

  test("simulate plays the captured session: the title a side call, then every turn and the tool result resumed with the plugin's own deltas", async () => {
    const files = [
      'turn1-off-title.txt',
      'turn1-off-chat.txt',
      'turn2-off-chat.txt',
      'turn3-off-chat-toolcall.txt',
      'turn3-off-toolresult.txt',
      'turn4-off-chat.txt',
    ];
    const expect = 'fresh:side-call,fresh:no-entry,resume-delta,resume-delta,resume-delta,resume-delta';
    const paths = files.map((f) => new URL(f, FIXTURES).pathname);
    const r = await runCli(['simulate', '--resume-on', '--json', '--expect', expect, ...paths], {
      env: { ...world(), CURSOR_ACP_SESSION_RESUME: '0' },
    });
    assert.equal(r.code, 0, r.stderr);
    const data = JSON.parse(r.stdout);
    assert.equal(data.expect.ok, true);
    const own = ['turn2-on-chat.txt', 'turn3-on-chat-toolcall.txt', 'turn3-on-toolresult.txt', 'turn4-on-chat.txt'];
    const sizes = (names: string[]) => names.map((f) => readFileSync(new URL(f, FIXTURES)).length);
    // Byte for byte the plugin's deltas (the two sessions' call ids differ, not their length).
    assert.deepEqual(
      data.turns.slice(2).map((t: { promptBytes: number }) => t.promptBytes),
      sizes(own),
    );
    assert.deepEqual(
      data.turns.map((t: { fullPromptBytes: number }) => t.fullPromptBytes),
      sizes(files),
    );
    // With the plugin's own resume on, as a run would: none of its prompts resumed, nothing recorded.
    const pluginOn =
      'fresh:side-call,fresh:plugin-resumes,fresh:plugin-resumes,fresh:plugin-resumes,fresh:plugin-resumes,fresh:plugin-resumes';
    const on = await runCli(['simulate', '--resume-on', '--expect', pluginOn, ...paths], {
      env: { ...world(), CURSOR_ACP_SESSION_RESUME: '1' },
    });
    assert.equal(on.code, 0, on.stderr);
  });

  test('plain text that is not in the layout: inspect says why, and the prompt goes as it came', async () => {
    const env = world();
    const text = 'USER: hi\n\nASSISTANT: tool_call(id: c1, name: read, args: {})\n\nTOOL_RESULT (name: read, call_id: c1): x';
    const file = write('plain.txt', text);
    const view = JSON.parse((await runCli(['inspect', '--transcript', file, '--json'], { env })).stdout);
    assert.equal(view.transcript.shape, 'text');
    assert.equal(view.transcript.notLayout, 'it holds a tool result, and the closing line the plugin then writes does not end it');
    assert.equal(view.decision.reason, 'plain-text');
    assert.equal(view.plan.prompt, text);
    const human = await runCli(['inspect', '--transcript', file], { env });
    assert.match(
      human.stdout,
      /^  layout +not the OpenCode plugin's: it holds a tool result, and the closing line the plugin then writes does not end it$/m,
    );
  });
});
