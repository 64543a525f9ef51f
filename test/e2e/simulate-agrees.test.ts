// README, "Using it from CI": `simulate` plans every turn exactly as a run does. Checked
// differentially: each transcript of a sequence goes through the built binary against the
// stand-in cursor-agent, one real run each, in order (each later transcript carrying the
// stand-in's real replies); then `simulate --resume-on --json` gets the same files, and each
// turn's decision and reason must be its run's trace line's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, runCli, tempDir } from '../support/cli.js';
import { STREAM_ARGS, resultOf } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';
import { readJsonLines } from '../support/json-lines.js';
import { readRuns, runCallerPerTurn } from '../support/opencode-caller.js';

const world = worlds();
type Msg = Record<string, unknown>;
const NOTES = 'Notes of the project.\nremember: codeword CHARLIE\n';

/** One sequence: every transcript saved in turn order, run for real, traced. */
class Sequence {
  readonly dir = tempDir('cr-seq-');
  readonly workspace = tempDir('cr-ws-');
  readonly trace = join(this.dir, 'trace.jsonl');
  readonly env: NodeJS.ProcessEnv;
  readonly files: string[] = [];

  constructor(extra: NodeJS.ProcessEnv = {}) {
    this.env = world({ CURSOR_ACP_SESSION_RESUME: '', CURSOR_RESUME_ENABLED: '1', CURSOR_RESUME_TRACE: this.trace, ...extra });
    writeFileSync(join(this.workspace, 'notes.txt'), NOTES);
  }

  #save(input: string): void {
    const file = join(this.dir, `${String(this.files.length + 1).padStart(2, '0')}.json`);
    writeFileSync(file, input);
    this.files.push(file);
  }

  /** A real run of `input`; cursor's reply, or null when it failed (the stand-in `mode` says how). */
  async run(input: string, mode?: string): Promise<string | null> {
    this.#save(input);
    const r = await runCli(STREAM_ARGS, { input, env: { ...this.env, ...(mode ? { CURSOR_STAND_IN_MODE: mode } : {}) } });
    if (mode === undefined) assert.equal(r.code, 0, r.stderr);
    return r.code === 0 ? resultOf(r.stdout).result : null;
  }

  /** A real run ended by SIGTERM at its first tool_call, as OpenCode's plugin ends it: cursor's text so far and the call. */
  async runToCall(input: string): Promise<{ text: string; id: string; name: string }> {
    this.#save(input);
    const child = spawn(process.execPath, [BIN, ...STREAM_ARGS], { env: this.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('"type":"tool_call"') && !child.killed) child.kill('SIGTERM');
    });
    child.stdin.end(input);
    await closed;
    const events = out.split('\n').flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, any>] : []));
    // The text deltas (no model_call_id: the flush before the call repeats them).
    const text = events
      .filter((e) => e.type === 'assistant' && e.timestamp_ms !== undefined && e.model_call_id === undefined)
      .map((e) => e.message.content.map((c: { text: string }) => c.text).join(''))
      .join('');
    const call = events.find((e) => e.type === 'tool_call')!;
    return { text, id: call.call_id, name: Object.keys(call.tool_call)[0]!.replace(/ToolCall$/, '') };
  }

  /** [decision, reason] of every run (its trace line) and of every simulated turn. */
  async both(simulateArgs: string[] = []): Promise<{ real: string[][]; simulated: string[][] }> {
    const real = readJsonLines<{ decision: string; reason: string }>(this.trace).map((t) => [t.decision, t.reason]);
    const r = await runCli(['simulate', '--resume-on', '--json', ...simulateArgs, ...this.files], { env: this.env, cwd: this.workspace });
    assert.equal(r.code, 0, r.stderr);
    const simulated = (JSON.parse(r.stdout) as { turns: Array<{ decision: string; reason: string }> }).turns.map((t) => [
      t.decision,
      t.reason,
    ]);
    return { real, simulated };
  }
}

const SYS = { role: 'system', content: 'You are a careful coding agent.' };
const TOOLS = [
  {
    type: 'function',
    function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
];

describe('simulate decides each turn as the real run of it did', () => {
  test('OpenAI bodies: a failed turn retried, a side call, an edit (a fork), a model change, a transcript with no user message', async () => {
    const s = new Sequence();
    const body = (messages: Msg[], extra: Msg = {}): string =>
      JSON.stringify({ model: 'gpt-5', workspace: s.workspace, messages, tools: TOOLS, ...extra });
    const m: Msg[] = [SYS, { role: 'user', content: 'remember: alpha' }];
    m.push({ role: 'assistant', content: await s.run(body(m)) });
    // OpenCode's title request, in the OpenAI shape: it never touches the conversation's chat.
    await s.run(body([{ role: 'system', content: 'You are a title generator. Reply with a title.' }, m[1]!], { tools: [] }));
    m.push({ role: 'user', content: 'remember: beta' });
    const opened = m.slice(0, 3);
    // The turn fails (nothing reaches the chat); the caller sends the same transcript again.
    assert.equal(await s.run(body(m), 'network'), null);
    m.push({ role: 'assistant', content: await s.run(body(m)) });
    m.push({ role: 'user', content: 'remember: gamma' });
    m.push({ role: 'assistant', content: await s.run(body(m)) });
    // The user edits their second message: a branch of its own, then continued.
    const edited: Msg[] = [...opened, { role: 'user', content: 'remember: delta' }];
    edited.push({ role: 'assistant', content: await s.run(body(edited)) });
    edited.push({ role: 'user', content: 'and now?' });
    await s.run(body(edited));
    await s.run(body([SYS, { role: 'user', content: '   ' }]));
    m.push({ role: 'user', content: 'another model' });
    m.push({ role: 'assistant', content: await s.run(body(m, { model: 'claude-4-sonnet' })) });
    m.push({ role: 'user', content: 'still there?' });
    await s.run(body(m, { model: 'claude-4-sonnet' }));

    const { real, simulated } = await s.both();
    assert.deepEqual(real, [
      ['fresh', 'no-entry'],
      ['fresh', 'side-call'],
      ['resume-delta', 'delta'],
      ['resume-delta', 'delta'],
      ['resume-delta', 'delta'],
      ['fresh', 'diverged'],
      ['resume-delta', 'delta'],
      ['fresh', 'no-anchor'],
      ['fresh', 'no-entry'],
      ['resume-delta', 'delta'],
    ]);
    assert.deepEqual(simulated, real);
  });

  test('AI SDK prompts: a tool call the caller ends the run at, its result, a changed tool list, a changed system message', async () => {
    const s = new Sequence();
    const readTool = { type: 'function', name: 'read', description: 'Read a file', inputSchema: { type: 'object' } };
    const writeTool = { type: 'function', name: 'write', description: 'Write a file', inputSchema: { type: 'object' } };
    const body = (prompt: Msg[], tools = [readTool]): string => JSON.stringify({ model: 'gpt-5', workspace: s.workspace, prompt, tools });
    const text = (t: string) => [{ type: 'text', text: t }];
    const p: Msg[] = [
      { role: 'system', content: 'You are OpenCode.' },
      { role: 'user', content: text('remember: alpha') },
    ];
    p.push({ role: 'assistant', content: text((await s.run(body(p)))!) });
    p.push({ role: 'user', content: text('READ_NOTES: what do they say?') });
    const call = await s.runToCall(body(p));
    p.push({
      role: 'assistant',
      content: [...text(call.text), { type: 'tool-call', toolCallId: call.id, toolName: call.name, input: { path: 'notes.txt' } }],
    });
    p.push({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: call.id, toolName: call.name, output: { type: 'text', value: NOTES } }],
    });
    p.push({ role: 'assistant', content: text((await s.run(body(p)))!) });
    p.push({ role: 'user', content: text('you may write now') });
    p.push({ role: 'assistant', content: text((await s.run(body(p, [readTool, writeTool])))!) });
    p.push({ role: 'user', content: text('go on') });
    p.push({ role: 'assistant', content: text((await s.run(body(p, [readTool, writeTool])))!) });
    p.push({ role: 'user', content: text('a new day') });
    await s.run(body([{ role: 'system', content: 'You are OpenCode. Today is another day.' }, ...p.slice(1)], [readTool, writeTool]));

    const { real, simulated } = await s.both();
    assert.deepEqual(real, [
      ['fresh', 'no-entry'],
      ['resume-delta', 'delta'],
      ['resume-delta', 'delta'],
      ['fresh', 'tools-changed'],
      ['resume-delta', 'delta'],
      ['fresh', 'system-changed'],
    ]);
    assert.deepEqual(simulated, real);
  });

  test("the OpenCode plugin's layout: its title request, its tool loop, its prompts read back", async () => {
    const s = new Sequence({ CURSOR_AGENT_EXECUTABLE: BIN, CURSOR_ACP_SESSION_RESUME: '0' });
    const record = join(s.dir, 'runs.jsonl');
    const turns = [
      'remember: codeword ALPHA',
      'READ_NOTES: please read notes.txt and tell me its codeword.',
      'Which codewords do you know?',
    ];
    for (const r of await runCallerPerTurn({ state: join(s.dir, 'session.json'), workspace: s.workspace, record, env: s.env }, turns))
      assert.equal(r.code, 0, r.stderr);
    // What the plugin sent, one prompt per agent run (its --version probes aside), as simulate's files.
    const runs = readRuns(record).filter((r) => r.kind !== 'version');
    for (const [i, r] of runs.entries()) {
      const file = join(s.dir, `${String(i + 1).padStart(2, '0')}-${r.kind}.txt`);
      writeFileSync(file, Buffer.from(r.stdinBase64, 'base64'));
      s.files.push(file);
    }
    const { real, simulated } = await s.both(['--workspace', s.workspace, '--model', 'auto']);
    assert.deepEqual(
      runs.map((r) => r.kind + (r.killedAfterToolCall ? ' (ended at its tool call)' : '')),
      ['title', 'chat', 'chat (ended at its tool call)', 'chat', 'chat'],
    );
    assert.deepEqual(real, [
      ['fresh', 'side-call'],
      ['fresh', 'no-entry'],
      ['resume-delta', 'delta'],
      ['resume-delta', 'delta'],
      ['resume-delta', 'delta'],
    ]);
    assert.deepEqual(simulated, real);
  });
});
