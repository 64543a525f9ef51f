// The caller's tool loop: OpenCode's plugin kills cursor-agent (here: cursor-resume)
// with SIGTERM as soon as the stream shows a tool_call, runs the tool, and sends the
// result as the next request. That run is a turn that ended at its tool calls: it is
// recorded, so that the request with the result resumes and sends only the result.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, runCli, sandboxEnv, scriptAgent, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS } from '../support/conversation.js';
import { readJsonLines } from '../support/json-lines.js';
import { helperPids } from '../support/processes.js';
import { CLOSING, WRITE_BRIDGE } from '../fixtures/opencode-caller/layout.js';

const CHAT = 'c6b62c6f-7ead-4fd6-9922-e952131177ff';
/** The trace of a first request that went fresh and a second that resumed it: decision, reason, failure. */
const FRESH_THEN_RESUMED = [
  ['fresh', 'no-entry', null],
  ['resume-delta', 'delta', null],
];

/**
 * A cursor-agent that answers a fresh chat with a little text and a read tool call, then
 * keeps working until it is killed, and takes 300 ms to die of SIGTERM (so the next
 * request arrives while the killed run still holds its chat); a resumed chat gets a
 * result. Every run's stdin is appended to `log`, one JSON string a line.
 */
function toolAgent(log: string): string {
  return scriptAgent(
    'tool-agent.cjs',
    `#!/usr/bin/env node
const fs = require('node:fs');
const args = process.argv.slice(2);
const at = args.indexOf('--resume');
const sid = at >= 0 ? args[at + 1] : '${CHAT}';
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(input) + '\\n');
  const say = (e) => process.stdout.write(JSON.stringify({ ...e, session_id: sid }) + '\\n');
  say({ type: 'system', subtype: 'init' });
  if (at >= 0) {
    say({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'The file says 42.' }] }, timestamp_ms: 1 });
    say({ type: 'result', subtype: 'success', is_error: false, result: 'The file says 42.' });
    return;
  }
  say({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Let me ' }] }, timestamp_ms: 1 });
  say({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'look.' }] }, timestamp_ms: 2 });
  say({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }] }, timestamp_ms: 3, model_call_id: 'm1' });
  // Told to, it leaves a process behind holding its stdout and stderr as it starts the call, as a tool's background job may.
  if (process.env.TOOL_AGENT_LEAVES_CHILD) require('node:child_process').spawn('sleep', ['3'], { stdio: ['ignore', 'inherit', 'inherit'] }).unref();
  say({ type: 'tool_call', subtype: 'started', call_id: 'call_1', tool_call: { readToolCall: { args: { path: 'notes.txt' } } } });
  // Told to, it runs the read itself at once, as cursor-agent may before its caller's signal arrives.
  if (process.env.TOOL_AGENT_RUNS_TOOLS) say({ type: 'tool_call', subtype: 'completed', call_id: 'call_1', tool_call: { readToolCall: { args: { path: 'notes.txt' }, result: { success: {} } } } });
  setTimeout(() => {}, 60000);
  process.on('SIGTERM', () => setTimeout(() => {
    process.removeAllListeners('SIGTERM');
    process.kill(process.pid, 'SIGTERM');
  }, 300));
});
`,
  );
}

const tools = [
  {
    type: 'function',
    function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
];
const opening = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'What does notes.txt say?' },
];
const withResult = [
  ...opening,
  {
    role: 'assistant',
    content: 'Let me look.',
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"notes.txt"}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: '42' },
];

/** Runs one turn and sends SIGTERM the moment its stdout shows `until` (a tool_call, as the plugin does). */
function runUntil(body: string, env: NodeJS.ProcessEnv, until: RegExp = /"type":"tool_call"/) {
  const child = spawn(process.execPath, [BIN, ...STREAM_ARGS], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const killed = new Promise<void>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (until.test(stdout) && child.signalCode === null && !child.killed) {
        child.kill('SIGTERM');
        resolve();
      }
    });
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  child.stdin.end(body);
  return { killed, ended };
}

describe('the tool-loop handover', () => {
  test('a run killed right after its tool call is recorded; the result resumes the chat with only the result, even sent at once', async () => {
    const log = join(tempDir('cr-log-'), 'stdin.jsonl');
    const trace = join(tempDir('cr-trace-'), 'trace.jsonl');
    const workspace = tempDir('cr-ws-');
    const env = sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1', CURSOR_RESUME_AGENT: toolAgent(log), CURSOR_RESUME_TRACE: trace });
    const body = (messages: unknown[]) => JSON.stringify({ model: 'gpt-5', workspace, messages, tools });

    // The next request starts the moment the kill is sent, without waiting for the killed run to end.
    const first = runUntil(body(opening), env);
    await first.killed;
    const next = runCli(STREAM_ARGS, { input: body(withResult), env });
    const t1 = await first.ended;
    const t2 = await next;

    assert.equal(t1.signal, null);
    assert.equal(t1.code, 143, `the killed run exits as cursor-agent did, 128 + SIGTERM: ${t1.stderr}`);
    assert.match(t1.stdout, /"type":"tool_call"/);
    assert.equal(t2.code, 0, t2.stderr);
    const traces = readJsonLines<Record<string, unknown>>(trace);
    assert.deepEqual(
      traces.map((t) => [t.decision, t.reason, t.failure]),
      FRESH_THEN_RESUMED,
    );
    assert.equal(traces[1]!.chatId, CHAT);
    // The first run found no helper: the one it needed at its tool call was the shell it held while cursor-agent
    // started (its stdin that shell's pipe), not a fork of the run made then (stdin /dev/null).
    const helpers = helperPids(env.CURSOR_RESUME_RUNTIME_DIR!);
    assert.equal(helpers.length, 1);
    assert.match(readlinkSync(`/proc/${helpers[0]}/fd/0`), /^socket:\[\d+\]$/);
    const stdins = readJsonLines<string>(log);
    assert.equal(
      stdins[1],
      'tool_call(id: call_1, name: read, args: {"path":"notes.txt"})\nTOOL_RESULT (name: read, call_id: call_1):\n42\n\nThe above tool calls have been executed. Continue your response based on these results.',
    );
  });

  test("a bridge envelope (the OpenCode plugin makes a call of it) is a tool call: recorded early, so the write's result sent at once resumes", async () => {
    const log = join(tempDir('cr-log-'), 'stdin.jsonl');
    const trace = join(tempDir('cr-trace-'), 'trace.jsonl');
    const envelope = '{"name":"write","arguments":{"path":"notes.md","content":"42"}}';
    const id = `call_bridge_${createHash('sha256').update(envelope).digest('hex').slice(0, 12)}`;
    // In pieces, then working on until killed, and 300 ms to die of SIGTERM, as toolAgent.
    const agent = scriptAgent(
      'bridge-agent.cjs',
      `#!/usr/bin/env node
const fs = require('node:fs');
const at = process.argv.indexOf('--resume');
let input = '';
process.stdin.on('data', (d) => (input += d)).on('end', () => {
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(input) + '\\n');
  const say = (e) => process.stdout.write(JSON.stringify({ ...e, session_id: '${CHAT}' }) + '\\n');
  const text = (t, extra) => say({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: t }] }, ...extra });
  say({ type: 'system', subtype: 'init' });
  if (at >= 0) {
    text('Written.', { timestamp_ms: 1 });
    say({ type: 'result', subtype: 'success', is_error: false, result: 'Written.' });
    return;
  }
  const envelope = ${JSON.stringify(envelope)};
  text(envelope.slice(0, 20), { timestamp_ms: 1 });
  text(envelope.slice(20), { timestamp_ms: 2 });
  setTimeout(() => {}, 60000);
  process.on('SIGTERM', () => setTimeout(() => process.exit(143), 300));
});
`,
    );
    // Our own switch, as the README asks for OpenCode: with the plugin's on, its prompts are never resumed.
    const env = sandboxEnv({ CURSOR_RESUME_ENABLED: '1', CURSOR_RESUME_AGENT: agent, CURSOR_RESUME_TRACE: trace });
    const bridge = `${WRITE_BRIDGE}\n\nUSER: write notes.md`;
    const withWrite = `${bridge}\n\nASSISTANT: tool_call(id: ${id}, name: write, args: {"filePath":"notes.md","content":"42"})\n\nTOOL_RESULT (name: write, call_id: ${id}): Wrote file successfully.\n\n${CLOSING}`;

    const first = runUntil(bridge, env, /"content\\":\\"42\\"}}/);
    await first.killed;
    const next = runCli(STREAM_ARGS, { input: withWrite, env });
    assert.equal((await first.ended).code, 143);
    const t2 = await next;
    assert.equal(t2.code, 0, t2.stderr);
    const traces = readJsonLines<Record<string, unknown>>(trace);
    assert.deepEqual(
      traces.map((t) => [t.decision, t.reason, t.failure]),
      FRESH_THEN_RESUMED,
    );
    const stdins = readJsonLines<string>(log);
    // As the plugin's own delta: its bridge instructions, the call alone, its result, the closing line.
    assert.equal(stdins[1], `${WRITE_BRIDGE}\n\n${withWrite.slice(withWrite.indexOf('ASSISTANT: '))}`);
  });

  test('a run whose agent left a process holding its output is still recorded at its calls once the agent is gone', async () => {
    const log = join(tempDir('cr-log-'), 'stdin.jsonl');
    const workspace = tempDir('cr-ws-');
    const env = sandboxEnv({ CURSOR_RESUME_ENABLED: '1', CURSOR_RESUME_AGENT: toolAgent(log), TOOL_AGENT_LEAVES_CHILD: '1' });
    const body = (messages: unknown[]) => JSON.stringify({ model: 'gpt-5', workspace, messages, tools });
    const first = runUntil(body(opening), env);
    await first.killed;
    const t1 = await first.ended;
    assert.equal(t1.code, 143, t1.stderr);
    // The caller's signal found cursor-agent gone already (not killed); the run stopped waiting for the left process's hold on its output.
    const plan = await runCli(['--dry-run', ...STREAM_ARGS], { input: body(withResult), env });
    assert.equal(plan.code, 0, plan.stderr);
    assert.deepEqual([JSON.parse(plan.stdout).decision, JSON.parse(plan.stdout).reason], ['resume-delta', 'delta']);
  });

  test('a run whose agent ran the tool itself before it was killed is not taken as ended at the call: the result goes to a fresh chat', async () => {
    const log = join(tempDir('cr-log-'), 'stdin.jsonl');
    const trace = join(tempDir('cr-trace-'), 'trace.jsonl');
    const workspace = tempDir('cr-ws-');
    const env = sandboxEnv({
      CURSOR_RESUME_ENABLED: '1',
      CURSOR_RESUME_AGENT: toolAgent(log),
      CURSOR_RESUME_TRACE: trace,
      TOOL_AGENT_RUNS_TOOLS: '1',
    });
    const body = (messages: unknown[]) => JSON.stringify({ model: 'gpt-5', workspace, messages, tools });
    const first = runUntil(body(opening), env, /"subtype":"completed"/);
    await first.killed;
    const t1 = await first.ended;
    assert.equal(t1.code, 143, t1.stderr);
    const plan = await runCli(['--dry-run', ...STREAM_ARGS], { input: body(withResult), env });
    assert.equal(plan.code, 0, plan.stderr);
    assert.deepEqual([JSON.parse(plan.stdout).decision, JSON.parse(plan.stdout).reason], ['fresh', 'no-entry'], 'its early record is gone');
  });

  test('a run ended at a call cursor-agent runs itself (a function call, its chat may not hold the turn yet) is no handover: the result goes to a chat that gets the whole turn', async () => {
    const c = new Conversation(sandboxEnv({ CURSOR_RESUME_ENABLED: '1' }));
    assert.equal((await c.turn('remember: alpha')).code, 0);
    c.messages.push({ role: 'user', content: 'remember: beta\nCALL_TOOL lookup {"q":"x"}' });
    // The stand-in holds the turn only once such a call completes, 400 ms on; the caller ends the run at its start.
    const killed = runUntil(c.body(), { ...c.env, CURSOR_STAND_IN_MODE: 'slow=400' });
    await killed.killed;
    const { stdout } = await killed.ended;
    const call = JSON.parse(stdout.split('\n').find((l) => l.includes('"type":"tool_call"'))!) as { call_id: string };
    const tool_calls = [{ id: call.call_id, type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }];
    c.messages.push(
      { role: 'assistant', content: 'Calling tool lookup.\n\n', tool_calls },
      { role: 'tool', tool_call_id: call.call_id, content: 'remember: gamma' },
    );
    const t3 = await c.send();
    assert.equal(t3.code, 0, t3.stderr);
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['fresh', 'interrupted']);
    assert.match(t3.reply!, /I remember: alpha; beta; gamma\./, 'the chat that answered was given every message');
  });

  test('a run killed before any tool call stays interrupted: the next request starts fresh', async () => {
    const trace = join(tempDir('cr-trace-'), 'trace.jsonl');
    const workspace = tempDir('cr-ws-');
    // This agent never gets to its tool call: it stops after its text.
    const agent = scriptAgent(
      'slow-agent.mjs',
      `#!/usr/bin/env node
process.stdin.resume().on('end', () => {
  process.stdout.write(JSON.stringify({ type: 'system', subtype: 'init', session_id: '${CHAT}' }) + '\\n');
  process.stdout.write(JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }] }, timestamp_ms: 1, session_id: '${CHAT}' }) + '\\n');
  setTimeout(() => {}, 60000);
});
`,
    );
    const env = sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1', CURSOR_RESUME_AGENT: agent, CURSOR_RESUME_TRACE: trace });
    const body = (messages: unknown[]) => JSON.stringify({ model: 'gpt-5', workspace, messages, tools });
    const child = spawn(process.execPath, [BIN, ...STREAM_ARGS], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('Let me look.')) child.kill('SIGTERM');
    });
    child.stdin.end(body(opening));
    assert.equal(await ended, 143);
    const plan = await runCli(['--dry-run', ...STREAM_ARGS], { input: body(withResult), env });
    assert.equal(plan.code, 0, plan.stderr);
    assert.equal(JSON.parse(plan.stdout).reason, 'no-entry');
  });
});
