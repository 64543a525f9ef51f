// End-to-end tests of the cursor-agent stand-in: the built dist/stand-in/cursor-agent.js run as a
// real child process, with a private CURSOR_CONFIG_DIR and temp workspaces.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { waitFor, watch, type RunResult } from '../support/processes.js';

const AGENT = resolve('dist/stand-in/cursor-agent.js');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let root = '';
let config = '';
let logFile = '';
let wsCount = 0;

before(() => {
  assert.ok(existsSync(AGENT), `build first: ${AGENT} is missing (npm run build)`);
  root = realpathSync(mkdtempSync(join(tmpdir(), 'stand-in-test-')));
  config = join(root, 'config');
  logFile = join(root, 'agent.log');
});

after(() => {
  rmSync(root, { recursive: true, force: true });
});

/** A new, empty workspace folder. */
function workspace(): string {
  const dir = join(root, `ws-${++wsCount}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

interface RunOptions {
  stdin?: string | null;
  mode?: string;
  env?: Record<string, string>;
  cwd?: string;
}

function spawnAgent(args: string[], opts: RunOptions = {}): ChildProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, CURSOR_CONFIG_DIR: config, CURSOR_STAND_IN_LOG: logFile, ...opts.env };
  delete env['CURSOR_API_KEY'];
  if (opts.mode !== undefined) env['CURSOR_STAND_IN_MODE'] = opts.mode;
  else delete env['CURSOR_STAND_IN_MODE'];
  const child = spawn(process.execPath, [AGENT, ...args], { cwd: opts.cwd ?? root, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.on('error', () => {}); // the agent may exit before reading everything
  if (opts.stdin === null) child.stdin!.end();
  else child.stdin!.end(opts.stdin ?? 'hello');
  return child;
}

function collectClose(child: ChildProcess): Promise<void> {
  return new Promise((res) => child.on('close', () => res()));
}

function run(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return watch(spawnAgent(args, opts)).closed;
}

type Event = Record<string, any>;

function events(stdout: string): Event[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Event);
}

function textOf(e: Event): string {
  return e['message']['content'][0]['text'] as string;
}

const STREAM = ['-p', '--output-format', 'stream-json'];
const PARTIAL = [...STREAM, '--stream-partial-output'];

async function turn(ws: string, prompt: string, extra: string[] = [], mode?: string): Promise<Event> {
  const r = await run(['-p', '--output-format', 'json', '--workspace', ws, ...extra], { stdin: prompt, mode });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Event;
}

function storeFile(ws: string, chatId: string): string {
  const key = createHash('md5').update(realpathSync(ws)).digest('hex');
  return join(config, 'chats', key, chatId, 'store.db');
}

function readStore(ws: string, chatId: string): { chatId: string; turns: Array<{ prompt: string; reply: string; toolCalls: any[] }> } {
  return JSON.parse(readFileSync(storeFile(ws, chatId), 'utf8'));
}

function logLines(): Event[] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Event);
}

function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let buf = '';
    const onData = (d: Buffer): void => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl !== -1) {
        child.stdout!.off('data', onData);
        resolvePromise(buf.slice(0, nl));
      }
    };
    child.stdout!.on('data', onData);
    child.on('close', () => reject(new Error(`exited before a line: ${buf}`)));
  });
}

describe('output formats', () => {
  test('text prints the final assistant text and a newline', async () => {
    const r = await run(['-p', '--workspace', workspace()], { stdin: 'hi there' });
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, 'Turn 1 of this chat. I know nothing yet. This prompt was 8 bytes.\n');
  });

  test('json prints only the result object, on one line', async () => {
    const r = await run(['-p', '--output-format', 'json', '--workspace', workspace()], { stdin: 'remember: the sky is green' });
    assert.equal(r.code, 0);
    assert.equal(r.stdout.split('\n').length, 2);
    const res = JSON.parse(r.stdout) as Event;
    assert.equal(res['type'], 'result');
    assert.equal(res['subtype'], 'success');
    assert.equal(res['is_error'], false);
    assert.match(res['session_id'], UUID);
    assert.match(res['request_id'], UUID);
    assert.equal(typeof res['duration_ms'], 'number');
    assert.equal(typeof res['duration_api_ms'], 'number');
    assert.match(res['result'], /I remember: the sky is green\./);
    assert.deepEqual(Object.keys(res['usage']).sort(), ['cacheReadTokens', 'cacheWriteTokens', 'inputTokens', 'outputTokens']);
  });

  test('stream-json: init, user, one assistant event, result; all carry the session_id', async () => {
    const ws = workspace();
    const r = await run([...STREAM, '--workspace', ws, '--model', 'gpt-5'], { stdin: 'say hi' });
    assert.equal(r.code, 0);
    const evs = events(r.stdout);
    assert.deepEqual(
      evs.map((e) => `${e['type']}${e['subtype'] ? '/' + e['subtype'] : ''}`),
      ['system/init', 'user', 'assistant', 'result/success'],
    );
    const [init, user, assistant, result] = evs as [Event, Event, Event, Event];
    assert.equal(init['cwd'], ws);
    assert.equal(init['model'], 'GPT-5');
    assert.equal(init['apiKeySource'], 'login');
    assert.equal(init['permissionMode'], 'default');
    assert.match(init['session_id'], UUID);
    assert.deepEqual(user['message'], { role: 'user', content: [{ type: 'text', text: 'say hi' }] });
    assert.equal(assistant['timestamp_ms'], undefined);
    assert.equal(assistant['model_call_id'], undefined);
    assert.equal(textOf(assistant), result['result']);
    for (const e of evs) assert.equal(e['session_id'], init['session_id']);
  });

  test('--stream-partial-output: deltas concatenate to the text, then the final flush', async () => {
    const r = await run([...PARTIAL, '--workspace', workspace()], { stdin: 'remember: alpha\nremember: beta\nok' });
    assert.equal(r.code, 0);
    const evs = events(r.stdout);
    const assistants = evs.filter((e) => e['type'] === 'assistant');
    const deltas = assistants.filter((e) => e['timestamp_ms'] !== undefined && e['model_call_id'] === undefined);
    const finals = assistants.filter((e) => e['timestamp_ms'] === undefined && e['model_call_id'] === undefined);
    const result = evs.at(-1)!;
    assert.ok(deltas.length >= 3, `expected several deltas, got ${deltas.length}`);
    assert.equal(deltas.map(textOf).join(''), result['result']);
    assert.equal(finals.length, 1);
    assert.equal(textOf(finals[0]!), result['result']);
    assert.equal(assistants.at(-1), finals[0]);
  });

  test('CALL_TOOL: flush with model_call_id before the tool call, function shape, recorded in the store', async () => {
    const ws = workspace();
    const prompt = 'USER: please read\nCALL_TOOL read_file {"path": "a.txt"}';
    const r = await run([...PARTIAL, '--workspace', ws], { stdin: prompt });
    assert.equal(r.code, 0);
    const evs = events(r.stdout);
    const startedAt = evs.findIndex((e) => e['type'] === 'tool_call' && e['subtype'] === 'started');
    assert.ok(startedAt > 0);
    const started = evs[startedAt]!;
    const completed = evs.find((e) => e['type'] === 'tool_call' && e['subtype'] === 'completed')!;
    const flush = evs[startedAt - 1]!;
    assert.equal(flush['type'], 'assistant');
    assert.equal(typeof flush['timestamp_ms'], 'number');
    assert.equal(typeof flush['model_call_id'], 'string');
    assert.equal(textOf(flush), 'Calling tool read_file.\n\n');
    assert.equal(started['call_id'], completed['call_id']);
    assert.match(started['call_id'], /^call_/);
    assert.deepEqual(started['tool_call'], { function: { name: 'read_file', arguments: '{"path":"a.txt"}' } });
    assert.deepEqual(completed['tool_call']['function']['result'], { success: { content: 'stand-in result of read_file' } });
    // Deltas (timestamp only) still concatenate to the whole text.
    const result = evs.at(-1)!;
    const deltas = evs.filter((e) => e['type'] === 'assistant' && e['timestamp_ms'] !== undefined && e['model_call_id'] === undefined);
    assert.equal(deltas.map(textOf).join(''), result['result']);
    assert.match(result['result'], /^Calling tool read_file\.\n\nTurn 1 of this chat\./);
    const store = readStore(ws, result['session_id']);
    assert.equal(store.turns[0]!.toolCalls[0].name, 'read_file');
    assert.equal(store.turns[0]!.toolCalls[0].callId, started['call_id']);
    // A CALL_TOOL line before a TOOL_RESULT line is answered already.
    const r2 = await run([...STREAM, '--workspace', ws], { stdin: `${prompt}\nTOOL_RESULT (name: read_file, call_id: x):\nfile text` });
    assert.equal(events(r2.stdout).filter((e) => e['type'] === 'tool_call').length, 0);
  });

  test('thinking events for thinking models', async () => {
    const r = await run([...STREAM, '--workspace', workspace(), '--model', 'sonnet-4-thinking'], { stdin: 'x' });
    const types = events(r.stdout).map((e) => `${e['type']}/${e['subtype'] ?? ''}`);
    assert.ok(types.includes('thinking/delta'));
    assert.ok(types.indexOf('thinking/completed') > types.indexOf('thinking/delta'));
    assert.ok(types.indexOf('thinking/completed') < types.indexOf('assistant/'));
  });
});

describe("caller's tool calls (the OpenCode plugin's loop)", () => {
  // The caller's tools block: only a chat offered the caller's tools calls them.
  const OFFER = 'SYSTEM: You have access to the following tools.\n\nAvailable tools:\n- read: Read a file\n  Parameters: {}';

  test('READ_NOTES: deltas, the buffered flush, a readToolCall; the agent keeps working until SIGTERM kills it', async () => {
    const ws = workspace();
    const prompt = `${OFFER}\n\nUSER: "remember: codeword ALPHA"\n\nASSISTANT: noted\n\nUSER: "READ_NOTES: please read notes.txt"`;
    const child = spawnAgent([...PARTIAL, '--workspace', ws, '--force'], { stdin: prompt });
    const done = watch(child).closed;
    let out = '';
    await new Promise<void>((res) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        if (out.includes('"type":"tool_call"')) res();
      });
    });
    // Still running well after the call: only a kill ends it soon.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(child.exitCode, null);
    child.kill('SIGTERM');
    const r = await done;
    assert.equal(r.signal, 'SIGTERM');
    const evs = events(r.stdout);
    const started = evs.at(-1)!;
    const chatId = started['session_id'] as string;
    assert.deepEqual(
      { ...started, timestamp_ms: 0, model_call_id: '' },
      {
        type: 'tool_call',
        subtype: 'started',
        call_id: started['call_id'],
        tool_call: { readToolCall: { args: { path: `${realpathSync(ws)}/notes.txt` } } },
        model_call_id: '',
        session_id: chatId,
        timestamp_ms: 0,
      },
    );
    assert.match(started['call_id'], /^call_/);
    const flush = evs.at(-2)!;
    assert.equal(flush['model_call_id'], started['model_call_id']);
    assert.equal(textOf(flush), 'Reading notes.txt.\n\n');
    const deltas = evs.filter((e) => e['type'] === 'assistant' && e['model_call_id'] === undefined);
    assert.equal(deltas.map(textOf).join(''), 'Reading notes.txt.\n\n');
    assert.equal(evs.filter((e) => e['type'] === 'result').length, 0);
    // The chat holds the turn up to the call: prompt, partial reply, the call without a result.
    const store = readStore(ws, chatId);
    assert.equal(store.turns.length, 1);
    assert.equal(store.turns[0]!.prompt, prompt);
    assert.equal(store.turns[0]!.reply, 'Reading notes.txt.\n\n');
    assert.deepEqual(store.turns[0]!.toolCalls, [
      {
        callId: started['call_id'],
        name: 'readToolCall',
        arguments: JSON.stringify({ path: `${realpathSync(ws)}/notes.txt` }),
        result: null,
      },
    ]);
    // Resumed with only the tool result, the chat still knows the fact of the first prompt.
    const next = await turn(ws, `TOOL_RESULT (name: read, call_id: ${started['call_id']}): remember: nothing\nremember: codeword CHARLIE`, [
      '--resume',
      chatId,
    ]);
    assert.match(next['result'], /^Turn 2 of this chat\. I remember: codeword ALPHA; codeword CHARLIE\. /);
  });

  test('RUN_SHELL: a shellToolCall in the workspace; left alone (tool-wait), it completes and stores the whole turn', async () => {
    const ws = workspace();
    const r = await run([...PARTIAL, '--workspace', ws], { stdin: `${OFFER}\n\n"RUN_SHELL: make check"`, mode: 'tool-wait=0' });
    assert.equal(r.code, 0, r.stderr);
    const evs = events(r.stdout);
    const calls = evs.filter((e) => e['type'] === 'tool_call');
    assert.deepEqual(
      calls.map((e) => e['subtype']),
      ['started', 'completed'],
    );
    assert.deepEqual(calls[0]!['tool_call'], { shellToolCall: { args: { command: 'make check', workingDirectory: realpathSync(ws) } } });
    assert.deepEqual(calls[1]!['tool_call']['shellToolCall']['result'], { success: { content: 'stand-in result of shellToolCall' } });
    const result = evs.at(-1)!;
    assert.match(result['result'], /^Running make check\.\n\nTurn 1 of this chat\./);
    const store = readStore(ws, result['session_id']);
    assert.equal(store.turns.length, 1);
    assert.equal(store.turns[0]!.reply, result['result']);
    assert.notEqual(store.turns[0]!.toolCalls[0].result, null);
  });

  test('a tool result holding a trigger leads to the next call; answered triggers and chats never offered tools make none', async () => {
    const ws = workspace();
    const first = await run([...STREAM, '--workspace', ws], {
      stdin: `${OFFER}\n\nUSER: "READ_NOTES: go"\n\nTOOL_RESULT (name: read, call_id: c1): Notes.\nRUN_SHELL: ls -l\n\n\nThe above tool calls have been executed.`,
      mode: 'tool-wait=0',
    });
    const started = events(first.stdout).find((e) => e['type'] === 'tool_call')!;
    assert.deepEqual(started['tool_call'], { shellToolCall: { args: { command: 'ls -l', workingDirectory: realpathSync(ws) } } });
    const answered = await run([...STREAM, '--workspace', ws], {
      stdin: `${OFFER}\n\nUSER: "READ_NOTES: go"\n\nTOOL_RESULT (name: read, call_id: c1): Notes.`,
    });
    assert.equal(events(answered.stdout).filter((e) => e['type'] === 'tool_call').length, 0);
    // A title request: no tools offered, so no call.
    const title = await run([...STREAM, '--workspace', ws], { stdin: 'SYSTEM: You are a title generator.\n\nUSER: "READ_NOTES: go"' });
    assert.equal(title.code, 0);
    assert.equal(events(title.stdout).filter((e) => e['type'] === 'tool_call').length, 0);
  });

  test('BRIDGE_WRITE: the reply is the write envelope alone, held by the chat; left alone it completes with that text', async () => {
    const ws = workspace();
    const BRIDGE = 'SYSTEM: opencode bridge mode is active.\nRespond with exactly one JSON object.';
    const envelope = JSON.stringify({ name: 'write', arguments: { path: 'out.md', content: 'stand-in content of out.md\n' } });
    const r = await run([...PARTIAL, '--workspace', ws], { stdin: `${BRIDGE}\n\nUSER: "BRIDGE_WRITE: out.md"`, mode: 'tool-wait=0' });
    assert.equal(r.code, 0, r.stderr);
    const evs = events(r.stdout);
    const deltas = evs.filter((e) => e['type'] === 'assistant' && e['timestamp_ms'] !== undefined);
    assert.ok(deltas.length > 1, 'in pieces');
    assert.equal(deltas.map(textOf).join(''), envelope);
    assert.equal(evs.filter((e) => e['type'] === 'tool_call').length, 0);
    assert.equal(evs.at(-1)!['result'], envelope);
    assert.equal(readStore(ws, evs.at(-1)!['session_id']).turns[0]!.reply, envelope);
    // Without the bridge instructions the trigger is a plain message.
    const plain = await run([...PARTIAL, '--workspace', ws], { stdin: 'USER: "BRIDGE_WRITE: out.md"' });
    assert.match(events(plain.stdout).at(-1)!['result'], /^Turn 1 of this chat\./);
  });

  test("CURSOR_STAND_IN_STDOUT_LOG: the turn's stdout writes, in order, byte for byte", async () => {
    const stdoutLog = join(root, 'stdout.jsonl');
    const r = await run([...PARTIAL, '--workspace', workspace()], {
      stdin: 'remember: é and 🙂',
      env: { CURSOR_STAND_IN_STDOUT_LOG: stdoutLog },
    });
    assert.equal(r.code, 0);
    const writes = readFileSync(stdoutLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { pid: number; data: string });
    assert.ok(writes.length > 3);
    assert.equal(Buffer.concat(writes.map((w) => Buffer.from(w.data, 'base64'))).toString('utf8'), r.stdout);
  });

  test('a bad tool-wait is refused loudly', async () => {
    const r = await run([...STREAM], { mode: 'tool-wait=soon' });
    assert.deepEqual(
      [r.code, r.stderr],
      [2, "cursor-agent stand-in: bad CURSOR_STAND_IN_MODE: tool-wait needs a whole number up to 600000, got 'soon'\n"],
    );
  });
});

describe('chats and memory', () => {
  test('a resumed chat remembers earlier facts; a fresh chat does not', async () => {
    const ws = workspace();
    const first = await turn(ws, 'remember: the password is swordfish');
    const id = first['session_id'] as string;
    assert.match(first['result'], /^Turn 1 of this chat\. I remember: the password is swordfish\./);
    const second = await turn(ws, 'USER: remember: the port is 8080', ['--resume', id]);
    assert.equal(second['session_id'], id);
    assert.match(
      second['result'],
      /^Turn 2 of this chat\. I remember: the password is swordfish; the port is 8080\. This prompt was 32 bytes\.$/,
    );
    const third = await turn(ws, 'what do you know?', [`--resume=${id}`]);
    assert.match(third['result'], /^Turn 3 .*swordfish; the port is 8080\./);
    const fresh = await turn(ws, 'what do you know?');
    assert.notEqual(fresh['session_id'], id);
    assert.match(fresh['result'], /^Turn 1 of this chat\. I know nothing yet\./);
    const store = readStore(ws, id);
    assert.equal(store.chatId, id);
    assert.deepEqual(
      store.turns.map((t) => t.prompt),
      ['remember: the password is swordfish', 'USER: remember: the port is 8080', 'what do you know?'],
    );
    assert.equal(store.turns[2]!.reply, third['result']);
  });

  test('create-chat prints a bare ID, creates the store, and --resume continues it', async () => {
    const ws = workspace();
    const r = await run(['create-chat', '--workspace', ws], { stdin: null });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^[0-9a-f-]{36}\n$/);
    const id = r.stdout.trim();
    assert.match(id, UUID);
    assert.equal(readStore(ws, id).turns.length, 0);
    const res = await turn(ws, 'remember: created first', ['--resume', id]);
    assert.equal(res['session_id'], id);
    assert.match(res['result'], /^Turn 1 of this chat\. I remember: created first\./);
    const log = logLines().filter((l) => l['chatId'] === id);
    assert.equal(log[0]!['command'], 'create-chat');
    assert.equal(log[1]!['resumed'], true);
  });

  test('the store lives under md5 of the real workspace path (symlinks resolved)', async () => {
    const ws = workspace();
    const link = join(root, `link-${wsCount}`);
    symlinkSync(ws, link);
    const res = await turn(link, 'hi');
    assert.ok(existsSync(storeFile(ws, res['session_id'])));
    // cwd is the workspace when --workspace is absent
    const r = await run(['-p', '--output-format', 'json', '--resume', res['session_id']], { cwd: link, stdin: 'again' });
    assert.match(JSON.parse(r.stdout)['result'], /^Turn 2 /);
  });

  test('--continue (and bare --resume) resume the latest chat of the workspace', async () => {
    const ws = workspace();
    await turn(ws, 'remember: old chat');
    const latest = await turn(ws, 'remember: newest chat');
    const c = await turn(ws, 'next', ['--continue']);
    assert.equal(c['session_id'], latest['session_id']);
    assert.match(c['result'], /^Turn 2 .*I remember: newest chat\./);
    const r = await run(['-p', '--output-format', 'json', '--workspace', ws, '--resume'], { stdin: 'more' });
    assert.equal(JSON.parse(r.stdout)['session_id'], latest['session_id']);
    const empty = await run(['-p', '--continue', '--workspace', workspace()], { stdin: 'x' });
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /failed to resume/);
  });

  test('positional prompt words, stdin appended; empty prompt fails', async () => {
    const r = await run(['-p', '--workspace', workspace(), 'remember:', 'x'], { stdin: '' });
    assert.equal(r.stdout, 'Turn 1 of this chat. I remember: x. This prompt was 11 bytes.\n');
    const both = await run(['-p', '--workspace', workspace(), 'abc'], { stdin: 'def' });
    assert.match(both.stdout, /This prompt was 8 bytes\./); // "abc\n\ndef"
    const empty = await run(['-p', '--workspace', workspace()], { stdin: '  \n' });
    assert.equal(empty.code, 1);
    assert.equal(empty.stdout, '');
    assert.match(empty.stderr, /No prompt provided/);
  });
});

describe('failure modes', () => {
  const cases: Array<[string, RegExp]> = [
    ['auth', /^Error: Authentication required\. Please run 'agent login' first, or set CURSOR_API_KEY environment variable\.\n$/],
    ['usage-limit', /^Error: You've hit your usage limit\n(  .+\n)+$/],
    ['invalid-session-token', /invalid session token/],
    ['network', /^Error: fetch failed\n[\s\S]*ECONNREFUSED/],
    ['network=ETIMEDOUT', /fetch failed[\s\S]*ETIMEDOUT/],
    ['model-error', /^Error: T: \[resource_exhausted\]\n$/],
    ['model-error=unavailable', /^Error: T: \[unavailable\]\n$/],
    ['trust-required', /Workspace Trust Required[\s\S]*Pass --trust, --yolo, or -f/],
    ['model-unavailable', /^Cannot use this model: gpt-5\. Available models: /],
  ];
  for (const [mode, stderr] of cases) {
    test(`${mode}: stderr text, exit 1, no stdout, no chat written`, async () => {
      const ws = workspace();
      const r = await run([...STREAM, '--workspace', ws, '--model', 'gpt-5'], { stdin: 'x', mode });
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, stderr);
      assert.ok(!existsSync(join(config, 'chats', createHash('md5').update(ws).digest('hex'))));
    });
  }

  test('trust-required passes with --trust or -f', async () => {
    const r = await run(['-p', '--trust', '--workspace', workspace()], { stdin: 'x', mode: 'trust-required' });
    assert.equal(r.code, 0);
  });

  test('fail-after-init prints init and user before failing', async () => {
    const r = await run([...STREAM, '--workspace', workspace()], { stdin: 'x', mode: 'model-error,fail-after-init' });
    assert.equal(r.code, 1);
    assert.deepEqual(
      events(r.stdout).map((e) => e['type']),
      ['system', 'user'],
    );
  });

  test('resume-not-found fails only with --resume', async () => {
    const ws = workspace();
    const id = (await turn(ws, 'remember: kept'))['session_id'] as string;
    const r = await run([...STREAM, '--workspace', ws, '--resume', id], { stdin: 'x', mode: 'resume-not-found' });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `Error: chat not found: ${id}\n`);
    const other = await run([...STREAM, '--workspace', ws, '--resume', id], { stdin: 'x', mode: 'resume-not-found=expired' });
    assert.match(other.stderr, /chat expired/);
    const fresh = await run(['-p', '--workspace', ws], { stdin: 'x', mode: 'resume-not-found' });
    assert.equal(fresh.code, 0);
    assert.equal(readStore(ws, id).turns.length, 1);
  });

  test('resuming a chat whose store is missing fails (no silent-fresh switch)', async () => {
    const ws = workspace();
    const missing = '0b5e7c1a-1111-4222-8333-944444444444';
    const r = await run([...PARTIAL, '--workspace', ws, '--resume', missing], { stdin: 'x' });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, `Error: chat not found: ${missing}\n`);
    const bad = await run(['-p', '--workspace', ws, '--resume', '../etc'], { stdin: 'x' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /invalid chat id/);
  });

  test('silent-fresh: unknown ID gives exit 0 and a new empty chat under a new ID', async () => {
    const ws = workspace();
    const missing = '0b5e7c1a-1111-4222-8333-955555555555';
    const r = await run([...STREAM, '--workspace', ws, '--resume', missing], { stdin: 'remember: lost?', mode: 'silent-fresh' });
    assert.equal(r.code, 0);
    const evs = events(r.stdout);
    const sid = evs[0]!['session_id'];
    assert.notEqual(sid, missing);
    assert.match(sid, UUID);
    assert.match(evs.at(-1)!['result'], /^Turn 1 of this chat\./);
    assert.ok(existsSync(storeFile(ws, sid)));
    assert.ok(!existsSync(storeFile(ws, missing)));
    // A known chat still resumes normally under silent-fresh.
    const known = await turn(ws, 'remember: a', []);
    const again = await turn(ws, 'b', ['--resume', known['session_id']], 'silent-fresh');
    assert.match(again['result'], /^Turn 2 .*I remember: a\./);
    const log = logLines().find((l) => l['requestedChatId'] === missing)!;
    assert.equal(log['silentFresh'], true);
    assert.equal(log['resumed'], false);
  });

  test('silent-fresh-same-id: same ID, empty history, the old store replaced', async () => {
    const ws = workspace();
    const id = (await turn(ws, 'remember: the secret'))['session_id'] as string;
    const res = await turn(ws, 'what is the secret?', ['--resume', id], 'silent-fresh-same-id');
    assert.equal(res['session_id'], id);
    assert.match(res['result'], /^Turn 1 of this chat\. I know nothing yet\./);
    const store = readStore(ws, id);
    assert.deepEqual(
      store.turns.map((t) => t.prompt),
      ['what is the secret?'],
    );
  });

  test('is-error: a result with is_error true, exit 0, store untouched', async () => {
    const ws = workspace();
    const id = (await turn(ws, 'one'))['session_id'] as string;
    const before = readFileSync(storeFile(ws, id), 'utf8');
    const r = await run([...STREAM, '--workspace', ws, '--resume', id], { stdin: 'two', mode: 'is-error' });
    assert.equal(r.code, 0);
    const result = events(r.stdout).at(-1)!;
    assert.equal(result['type'], 'result');
    assert.equal(result['subtype'], 'error');
    assert.equal(result['is_error'], true);
    assert.equal(readFileSync(storeFile(ws, id), 'utf8'), before);
  });

  test('a failing or crashing resumed turn leaves the store as it was', async () => {
    const ws = workspace();
    const id = (await turn(ws, 'remember: stable'))['session_id'] as string;
    const before = readFileSync(storeFile(ws, id), 'utf8');
    for (const mode of ['auth', 'model-error', 'usage-limit,fail-after-init']) {
      const r = await run([...PARTIAL, '--workspace', ws, '--resume', id], { stdin: 'x', mode });
      assert.equal(r.code, 1, mode);
    }
    const crash = await run([...PARTIAL, '--workspace', ws, '--resume', id], { stdin: 'x', mode: 'crash' });
    assert.equal(crash.signal, 'SIGKILL');
    const evs = events(crash.stdout);
    assert.deepEqual(
      evs.map((e) => e['type']),
      ['system', 'user', 'assistant'],
    );
    assert.equal(typeof evs[2]!['timestamp_ms'], 'number');
    assert.equal(readFileSync(storeFile(ws, id), 'utf8'), before);
    // the chat still works afterwards
    assert.match((await turn(ws, 'y', ['--resume', id]))['result'], /^Turn 2 .*stable/);
  });

  test('exit=<n> exits with that code after normal output (turn recorded)', async () => {
    const ws = workspace();
    const r = await run(['-p', '--output-format', 'json', '--workspace', ws], { stdin: 'x', mode: 'exit=3' });
    assert.equal(r.code, 3);
    const res = JSON.parse(r.stdout) as Event;
    assert.equal(readStore(ws, res['session_id']).turns.length, 1);
  });

  test('an unknown CURSOR_STAND_IN_MODE switch is refused loudly', async () => {
    const r = await run(['-p'], { stdin: 'x', mode: 'auht' });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown switch 'auht'/);
  });
});

describe('stream oddities', () => {
  test('session-id=<value> on every event; the store keeps the real ID', async () => {
    const ws = workspace();
    const r = await run([...PARTIAL, '--workspace', ws], { stdin: 'x', mode: 'session-id=../x y' });
    const evs = events(r.stdout);
    for (const e of evs) assert.equal(e['session_id'], '../x y');
    const log = logLines().filter((l) => l['workspace'] === ws)[0]!;
    assert.ok(existsSync(storeFile(ws, log['chatId'])));
  });

  test('session-id-change and session-id-nonstring', async () => {
    const change = events((await run([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: 'session-id-change' })).stdout);
    assert.notEqual(change[0]!['session_id'], change.at(-1)!['session_id']);
    assert.equal(change[0]!['session_id'], change[1]!['session_id']);
    const num = events((await run([...STREAM, '--workspace', workspace()], { stdin: 'x', mode: 'session-id-nonstring' })).stdout);
    for (const e of num) assert.equal(typeof e['session_id'], 'number');
  });

  test('malformed-lines, two-results, after-result', async () => {
    const r = await run([...STREAM, '--workspace', workspace()], { stdin: 'x', mode: 'malformed-lines,two-results,after-result' });
    assert.equal(r.code, 0);
    const lines = r.stdout.split('\n').filter((l) => l !== '');
    const bad = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    assert.ok(bad.length >= 3);
    assert.ok(
      bad.some((l) => l.startsWith('{"type":"assistant"')),
      'a truncated JSON line',
    );
    const good = lines.filter((l) => !bad.includes(l)).map((l) => JSON.parse(l) as Event);
    const results = good.map((e, i) => [e, i] as const).filter(([e]) => e['type'] === 'result');
    assert.equal(results.length, 2);
    assert.ok(lines.at(-1) !== undefined && !lines.at(-1)!.includes('"result"'), 'output after the result');
  });

  test('long-line=<bytes> gives one delta of that size', async () => {
    const r = await run([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: 'long-line=300000' });
    const evs = events(r.stdout);
    const big = evs.filter(
      (e) =>
        e['type'] === 'assistant' && e['model_call_id'] === undefined && e['timestamp_ms'] !== undefined && textOf(e).length === 300000,
    );
    assert.equal(big.length, 1);
    assert.ok(evs.at(-1)!['result'].startsWith(textOf(big[0]!)));
  });

  test('slow=<ms>: the first line arrives while the agent is still running', async () => {
    const child = spawnAgent([...STREAM, '--workspace', workspace()], { stdin: 'x', mode: 'slow=150' });
    const done = watch(child).closed;
    // What has arrived by the first line: all of it, result included, if the stand-in wrote its output at the end.
    let early = '';
    const onData = (d: string | Buffer): void => {
      early += String(d);
    };
    child.stdout!.on('data', onData);
    const line = await firstLine(child);
    child.stdout!.off('data', onData);
    assert.equal(JSON.parse(line)['subtype'], 'init');
    assert.ok(!early.includes('"type":"result"'), `the result came later, not with the first line: ${early}`);
    const end = await done;
    assert.equal(end.code, 0);
    assert.match(end.stdout, /"type":"result"/);
  });

  test('flood=<bytes>: many delta lines, every one valid JSON, then the result', async () => {
    const bytes = 4_000_000;
    const child = spawnAgent([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: `flood=${bytes}` });
    let lines = 0;
    let deltaBytes = 0;
    let last = '';
    let buf = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        lines++;
        last = line;
        const e = JSON.parse(line) as Event;
        if (e['type'] === 'assistant' && e['timestamp_ms'] !== undefined) deltaBytes += textOf(e).length;
      }
    });
    const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
    assert.equal(code, 0);
    assert.ok(lines > 1000, `many lines (${lines})`);
    assert.ok(deltaBytes >= bytes);
    assert.equal(JSON.parse(last)['type'], 'result');
  });

  test('flood respects backpressure: a stalled reader keeps the agent small', async () => {
    // Peak RSS from /proc (we run on Linux, as the hardening tests do).
    // 512 MB of deltas to a reader that stops reading: an agent that ignored backpressure would
    // queue hundreds of MB in memory while we wait; one that waits for 'drain' stays flat.
    const child = spawnAgent([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: 'flood=536870912' });
    const closed = collectClose(child);
    await firstLine(child);
    child.stdout!.pause();
    await new Promise((r) => setTimeout(r, 700));
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
    child.kill('SIGKILL');
    await closed;
    assert.ok(peakKb > 0 && peakKb < 160 * 1024, `peak RSS ${Math.round(peakKb / 1024)} MB`);
  });

  test('hang, then SIGINT: logged, and the agent dies of SIGINT', async () => {
    const ws = workspace();
    const child = spawnAgent([...STREAM, '--workspace', ws], { stdin: 'x', mode: 'hang' });
    const done = watch(child).closed;
    const line = await firstLine(child);
    assert.equal(JSON.parse(line)['subtype'], 'init');
    child.kill('SIGINT');
    const r = await done;
    assert.equal(r.signal, 'SIGINT');
    assert.equal(r.code, null);
    const sig = logLines().find((l) => l['event'] === 'signal' && l['pid'] === child.pid);
    assert.equal(sig?.['signal'], 'SIGINT');
    assert.equal(sig?.['chatId'], JSON.parse(line)['session_id']);
    assert.ok(!existsSync(storeFile(ws, JSON.parse(line)['session_id'])));
  });

  test('SIGTERM during a slow turn: dies of SIGTERM', async () => {
    const child = spawnAgent([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: 'slow=200' });
    const done = watch(child).closed;
    await firstLine(child);
    child.kill('SIGTERM');
    assert.equal((await done).signal, 'SIGTERM');
  });

  test('start-wait and signal-exit: nothing printed for a while, then a signal there is an exit with the given status', async () => {
    const child = spawnAgent([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: 'start-wait=60000,signal-exit=0' });
    const done = watch(child).closed;
    await waitFor('the invocation to be logged', () => logLines().some((l) => l['event'] === 'invoke' && l['pid'] === child.pid));
    child.kill('SIGTERM');
    const r = await done;
    assert.deepEqual([r.code, r.signal, r.stdout], [0, null, ''], 'exits 0, having printed nothing');
    assert.ok(logLines().some((l) => l['event'] === 'signal' && l['pid'] === child.pid && l['signal'] === 'SIGTERM'));
  });

  test('start-gate: nothing printed until the file exists, then the whole turn', async () => {
    const gate = join(mkdtempSync(join(tmpdir(), 'si-gate-')), 'open');
    const child = spawnAgent([...PARTIAL, '--workspace', workspace()], { stdin: 'x', mode: `start-gate=${gate}` });
    const run = watch(child);
    await waitFor('the invocation to be logged', () => logLines().some((l) => l['event'] === 'invoke' && l['pid'] === child.pid));
    await new Promise((done) => setTimeout(done, 300));
    assert.equal(run.output.stdout, '', 'waits at the gate');
    writeFileSync(gate, '');
    const r = await run.closed;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /"type":"result"/);
    rmSync(dirname(gate), { recursive: true, force: true });
  });
});

describe('command line', () => {
  test('unknown options fail commander-style', async () => {
    for (const [args, msg] of [
      [['--x'], "error: unknown option '--x'"],
      [['-p', '--session-id', 'abc'], "error: unknown option '--session-id'"],
      [['-pZ'], "error: unknown option '-Z'"],
      [
        ['--output-format', 'xml'],
        "error: option '--output-format <format>' argument 'xml' is invalid. Allowed choices are text, json, stream-json.",
      ],
      [['--model'], "error: option '--model <model>' argument missing"],
    ] as Array<[string[], string]>) {
      const r = await run(args, { stdin: 'x' });
      assert.equal(r.code, 1, args.join(' '));
      assert.equal(r.stdout, '');
      assert.equal(r.stderr, msg + '\n');
    }
  });

  test('--flag=value forms and pass-through options are accepted', async () => {
    const ws = workspace();
    const r = await run(
      [
        '-p',
        '--output-format=json',
        `--workspace=${ws}`,
        '--model=claude-opus-4-8[context=1m,effort=high]',
        '-f',
        '--yolo',
        '--trust',
        '--api-key',
        'k',
        '--mode',
        'ask',
        '--sandbox',
        'disabled',
        '--approve-mcps',
        '--add-dir',
        root,
        '-H',
        'X-A: 1',
        '--header=X-B: 2',
        '-e',
        'https://example.invalid',
      ],
      { stdin: 'x' },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout)['subtype'], 'success');
  });

  test('the log: one line per invocation with argv, stdin, cwd, workspace, chatId, resumed, mode, pid', async () => {
    const ws = workspace();
    const id = (await turn(ws, 'first'))['session_id'] as string;
    const args = ['-p', '--output-format', 'json', '--workspace', ws, '--resume', id];
    const r = await run(args, { stdin: 'second\n', mode: 'slow=0' });
    const line = logLines()
      .filter((l) => l['chatId'] === id)
      .at(-1)!;
    assert.deepEqual(line['argv'], args);
    assert.equal(line['stdin'], 'second\n');
    assert.equal(line['prompt'], 'second\n');
    assert.equal(line['cwd'], root);
    assert.equal(line['workspace'], ws);
    assert.equal(line['resumed'], true);
    assert.equal(line['requestedChatId'], id);
    assert.equal(line['mode'], 'slow=0');
    assert.equal(typeof line['pid'], 'number');
    assert.equal(JSON.parse(r.stdout)['session_id'], id);
    // Parallel invocations append whole lines (one write each).
    const tag = `parallel-${Date.now()}`;
    await Promise.all(Array.from({ length: 8 }, (_, i) => run(['-p', '--workspace', ws], { stdin: `${tag} ${i} ${'z'.repeat(20000)}` })));
    const mine = logLines().filter((l) => typeof l['stdin'] === 'string' && l['stdin'].startsWith(tag));
    assert.equal(mine.length, 8);
    const unknown = await run(['--leaked-flag'], { stdin: 'x' });
    assert.equal(unknown.code, 1);
    assert.equal(logLines().at(-1)!['error'], "error: unknown option '--leaked-flag'");
  });

  test('subcommands: --version, --help, status, models, ls, mcp, unknown command, too many args', async () => {
    const ws = workspace();
    assert.match((await run(['--version'], { stdin: null })).stdout, /^\d{4}\.\d{2}\.\d{2}-\S+\n$/);
    const help = await run(['--help'], { stdin: null });
    assert.match(help.stdout, /^Usage: cursor-agent \[options\] \[command\] \[prompt\.\.\.\]/);
    assert.match(help.stdout, /create-chat/);
    assert.match((await run(['status'], { stdin: null })).stdout, /Logged in/);
    const notLogged = await run(['status'], { stdin: null, mode: 'auth' });
    assert.equal(notLogged.code, 1);
    assert.match((await run(['models'], { stdin: null })).stdout, /gpt-5 - GPT-5/);
    assert.match((await run(['about'], { stdin: null })).stdout, /CLI Version/);
    assert.match((await run(['ls', '--workspace', ws], { stdin: null })).stdout, /No chats/);
    const id = (await turn(ws, 'list me'))['session_id'] as string;
    assert.match((await run(['ls', '--workspace', ws], { stdin: null })).stdout, new RegExp(`^${id} .*list me`));
    assert.equal((await run(['mcp', 'list'], { stdin: null })).code, 0);
    assert.equal((await run(['mcp', 'frob'], { stdin: null })).code, 1);
    const unknown = await run(['frobnicate'], { stdin: null });
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, "error: unknown command 'frobnicate'\n");
    const excess = await run(['create-chat', 'extra'], { stdin: null });
    assert.equal(excess.code, 1);
    assert.match(excess.stderr, /too many arguments for 'create-chat'/);
    for (const cmd of [
      'login',
      'logout',
      'update',
      'whoami',
      'install-shell-integration',
      'uninstall-shell-integration',
      'sandbox',
      'help',
    ]) {
      assert.equal((await run([cmd], { stdin: null })).code, 0, cmd);
    }
    for (const cmd of ['generate-rule', 'rule', 'worker']) {
      assert.equal((await run([cmd], { stdin: null })).code, 1, cmd);
    }
  });

  test('acp answers initialize over JSON-RPC on stdio', async () => {
    const r = await run(['acp'], {
      stdin: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n{"jsonrpc":"2.0","id":2,"method":"nope"}\n',
    });
    const [a, b] = events(r.stdout) as [Event, Event];
    assert.equal(a['result']['protocolVersion'], 1);
    assert.equal(b['error']['code'], -32601);
  });
});
