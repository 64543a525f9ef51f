// The run line through the built binary: what --dry-run may and may not do, which
// help a person gets, the order settings are taken in, and that a bad setting never
// stands in the way of cursor-agent.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HelperClient } from '../../src/helper/client.js';
import { VERSION } from '../../src/version.js';
import { BIN, runCli, sandboxEnv, tempDir } from '../support/cli.js';
import { Conversation, readLog, STREAM_ARGS } from '../support/conversation.js';
import { fakeHelper, hello, helperProxy, socketOf, worlds } from '../support/hardening.js';
import { watch } from '../support/processes.js';

const world = worlds();

const body = JSON.stringify({
  model: 'gpt-5',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'remember: alpha' },
  ],
});

/** A conversation whose first turn the helper holds (it is listening), and the next turn's transcript. */
async function warm(): Promise<{ c: Conversation; next: string }> {
  const c = new Conversation(world());
  const first = await c.turn('remember: alpha');
  assert.equal(first.code, 0, first.stderr);
  // The first turn starts the helper and does not wait for it; tests that stand between
  // the run and the helper need it listening, which status waits for.
  const status = await runCli(['helper', 'status', '--json'], { env: c.env });
  assert.equal(JSON.parse(status.stdout).entries, 1, status.stderr);
  c.messages.push({ role: 'user', content: 'remember: beta' });
  return { c, next: c.body() };
}

/** A listener of ours at the run's helper socket: counts connections and answers hello as `version` (or never). */
function listener(env: NodeJS.ProcessEnv, version?: string): ReturnType<typeof fakeHelper> {
  mkdirSync(env.CURSOR_RESUME_RUNTIME_DIR!, { recursive: true, mode: 0o700 });
  return fakeHelper(socketOf(env), (r) => (r.op === 'hello' && version !== undefined ? hello(version) : undefined));
}

describe('--dry-run runs nothing', { concurrency: true }, () => {
  for (const args of [['--print', 'hello'], ['create-chat'], ['--version']]) {
    test(`not with ${args.join(' ')}: exit 2, cursor-agent never started`, async () => {
      const log = join(tempDir(), 'agent.log');
      const r = await runCli(['--dry-run', ...args], { input: body, env: sandboxEnv({ CURSOR_STAND_IN_LOG: log }) });
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '', 'no reply, no chat ID, no version from cursor-agent');
      assert.match(
        r.stderr,
        /^cursor-resume: --dry-run plans a transcript turn read from stdin; a prompt word, a subcommand or --version is not one: drop [^\n]+\n$/,
      );
      assert.deepEqual(readLog(log), [], 'cursor-agent never ran');
    });
  }

  test('a transcript that comes late still finds the warm helper', async () => {
    const { c, next } = await warm();
    const plan = JSON.parse((await runCli(['--dry-run', ...STREAM_ARGS], { input: next, env: c.env, delayMs: 500 })).stdout);
    assert.deepEqual([plan.decision, plan.reason], ['resume-delta', 'delta']);
  });

  test('a helper of another version: planned against an empty cache (as a run that replaces it), and left alone', async () => {
    const env = world();
    const old = await listener(env, '0.0.1-old');
    try {
      const r = await runCli(['--dry-run'], { input: body, env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).reason, 'no-entry');
      assert.deepEqual(old.ops, ['hello'], 'not asked to stop');
    } finally {
      await old.close();
    }
  });

  test('a stdout that fails its writes (/dev/full): one line saying so, exit 1, no stack trace; our commands too', async () => {
    for (const args of [['--dry-run'], ['config', 'list'], ['helper', 'status', '--json'], ['--help']]) {
      const full = openSync('/dev/full', 'w');
      const child = spawn(process.execPath, [BIN, ...args], { env: sandboxEnv(), stdio: ['pipe', full, 'pipe'] });
      closeSync(full);
      const { closed } = watch(child);
      child.stdin!.end(body);
      const { code, stderr } = await closed;
      assert.equal(
        stderr,
        'cursor-resume: cannot write to stdout (ENOSPC: no space left on device, write): the rest of the output is lost\n',
      );
      assert.equal(code, 1, args.join(' '));
    }
  });

  test('a reader that went away: exit 141, no stack trace', async () => {
    const child = spawn(process.execPath, [BIN, '--dry-run'], { env: sandboxEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.destroy();
    const { closed } = watch(child);
    child.stdin.end(body);
    const { code, stderr } = await closed;
    assert.equal(stderr, '');
    assert.equal(code, 141);
  });
});

describe('the output format', () => {
  test('an output format we could not print: exit 2 before anything runs', async () => {
    const log = join(tempDir(), 'agent.log');
    const r = await runCli(['--print', '--output-format', 'xml'], {
      input: body,
      env: sandboxEnv({ CURSOR_STAND_IN_LOG: log, CURSOR_ACP_SESSION_RESUME: '1' }),
    });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'cursor-resume: --output-format must be text, json or stream-json, not "xml"\n');
    assert.deepEqual(readLog(log), [], 'cursor-agent never ran');
  });
});

describe('a turn that needs no cache never connects to the helper', { concurrency: true }, () => {
  test('plain text and a bad transcript; a structured turn does (the probe sees it)', async () => {
    const env = world();
    const silent = await listener(env);
    try {
      const plain = await runCli(STREAM_ARGS, { input: 'hello, in plain words', env });
      assert.equal(plain.code, 0, plain.stderr);
      const bad = await runCli(STREAM_ARGS, { input: '{"messages":[', env });
      assert.equal(bad.code, 2);
      const dry = await runCli(['--dry-run'], { input: 'hello, in plain words', env });
      assert.equal(JSON.parse(dry.stdout).reason, 'plain-text');
      assert.equal(silent.connections(), 0);
      // The probe is where a run looks: a turn that does need the cache reaches it (and, as it never
      // answers, plans as the run that would replace it: on an empty cache).
      const structured = await runCli(['--dry-run'], { input: body, env });
      assert.equal(JSON.parse(structured.stdout).reason, 'no-entry');
      assert.equal(silent.connections(), 1);
    } finally {
      await silent.close();
    }
  });
});

describe('an interactive run', () => {
  test('stdin a terminal: cursor-agent gets the command line untouched, its status comes back', async () => {
    const log = join(tempDir(), 'agent.log');
    const env = sandboxEnv({ CURSOR_STAND_IN_LOG: log, CURSOR_ACP_SESSION_RESUME: '1' });
    // script(1) gives the run a terminal for stdin and stdout, as a person's shell would.
    const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
    const command = [process.execPath, BIN, '--model', 'gpt-5', '--trust'].map(quote).join(' ');
    const r = spawnSync('script', ['-qec', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    assert.equal(r.status, 1, "the stand-in's own status: no prompt on a terminal");
    assert.match(r.stdout, /No prompt provided/);
    const [run, ...more] = readLog(log);
    assert.deepEqual(more, [], 'cursor-agent ran once');
    assert.deepEqual([run!.argv, run!.stdin], [['--model', 'gpt-5', '--trust'], null], 'its argv untouched, its stdin the terminal');
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no helper was asked');
  });
});

describe('help', { concurrency: true }, () => {
  test("--help after a cursor-agent subcommand is cursor-agent's; alone it is ours", async () => {
    const mcp = await runCli(['mcp', '--help']);
    assert.equal(mcp.code, 0, mcp.stderr);
    assert.match(mcp.stdout, /^Usage: cursor-agent mcp /);
    assert.match((await runCli(['login', '-h'])).stdout, /^Usage: cursor-agent login /);
    assert.match((await runCli(['--help'])).stdout, /^Usage: cursor-resume /);
    assert.match((await runCli(['--print', '-h'])).stdout, /^Usage: cursor-resume /);
  });

  test("--our-version is ours, --version is cursor-agent's", async () => {
    const ours = await runCli(['--our-version']);
    assert.deepEqual([ours.code, ours.stdout, ours.stderr], [0, `${VERSION}\n`, '']);
    const theirs = await runCli(['--version']);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.notEqual(theirs.stdout, ours.stdout);
  });

  test("our help lists no `help` command: `help` is cursor-agent's", async () => {
    const ours = await runCli(['--help']);
    assert.doesNotMatch(ours.stdout, /^\s+help \[command\]/m);
    const theirs = await runCli(['help', 'inspect']);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.match(theirs.stdout, /^Usage: cursor-agent /);
  });
});

describe('settings: flag > environment > file > default', { concurrency: true }, () => {
  test('--verbose and --trace FILE win over the environment', async () => {
    const c = new Conversation(world({ CURSOR_RESUME_VERBOSE: '0' }));
    const mine = join(tempDir(), 'mine.jsonl');
    const r = await c.turn('remember: alpha', { args: [...STREAM_ARGS, '--verbose', '--trace', mine] });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^cursor-resume: fresh \(no-entry\)/m);
    assert.equal(readFileSync(mine, 'utf8').trim().split('\n').length, 1);
    assert.equal(existsSync(c.trace), false, 'CURSOR_RESUME_TRACE lost to the flag');
    const list = JSON.parse((await runCli(['config', 'list', '--json', '--', '--verbose'], { env: c.env })).stdout);
    assert.deepEqual(list.settings.verbose, { value: true, source: 'flag', default: false, env: 'CURSOR_RESUME_VERBOSE' });
  });

  test('a bad environment value names its variable and what it takes', async () => {
    const r = await runCli(['config', 'get', 'verbose'], { env: sandboxEnv({ CURSOR_RESUME_VERBOSE: 'maybe' }) });
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      'cursor-resume: verbose (from CURSOR_RESUME_VERBOSE): "maybe" is not a boolean; use 1, true, on or yes, or 0, false, off or no\n',
    );
  });
});

describe('a bad setting does not stand in the way of cursor-agent', { concurrency: true }, () => {
  const warning =
    /^cursor-resume: ignoring runtimeDir \(from CURSOR_RESUME_RUNTIME_DIR\): must be an absolute path whose helper\.sock fits the Unix limit of 103 bytes, or empty for the automatic folder\. [^\n]*; unset CURSOR_RESUME_RUNTIME_DIR or fix its value\n/;

  test('subcommands, --version and a prompt word go through, with one warning', async () => {
    const cwd = tempDir();
    for (const bad of [{ CURSOR_RESUME_RUNTIME_DIR: 'relative' }, { CURSOR_RESUME_VERBOSE: 'maybe' }]) {
      const env = sandboxEnv(bad);
      const status = await runCli(['status'], { env, cwd });
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, /Logged in as/);
      assert.match(status.stderr, /^cursor-resume: ignoring (runtimeDir|verbose) \(from CURSOR_RESUME_\w+\): [^\n]+\n$/, 'one line');
      const version = await runCli(['--version'], { env, cwd });
      assert.equal(version.code, 0, version.stderr);
      assert.match(version.stdout, /stand-in/);
      const prompt = await runCli(['--print', 'hello'], { env, cwd });
      assert.equal(prompt.code, 0, prompt.stderr);
    }
    assert.equal(existsSync(join(cwd, 'relative')), false, 'no helper folder made of the relative path');
  });

  test('a cache limit in the environment that asks for nothing is said once, on a run, the helper commands (evict --all looks twice), inspect --transcript and simulate', async () => {
    for (const [variable, value, unit] of [
      ['CURSOR_RESUME_TTL_MS', 'abc', 'milliseconds'],
      ['CURSOR_RESUME_MAX_ENTRIES', '0', 'branches'],
      ['CURSOR_RESUME_TTL_MS', '-5', 'milliseconds'],
    ]) {
      const env = sandboxEnv({ [variable!]: value });
      const line = `cursor-resume: ignoring ${variable}: "${value}" is not a number of ${unit} of at least 1; unset ${variable} or fix its value\n`;
      const turn = await runCli(['--print', 'hello'], { env });
      assert.equal(turn.code, 0, turn.stderr);
      assert.equal(turn.stderr, line);
      const transcript = join(tempDir(), 'turn.json');
      writeFileSync(transcript, JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] }));
      for (const args of [
        ['helper', 'status'],
        ['evict', '--all'],
        ['inspect'],
        ['inspect', '--transcript', transcript],
        ['simulate', transcript],
      ]) {
        const r = await runCli(args, { env });
        assert.equal(r.stderr, line, `${args.join(' ')}, ${variable}=${value}`);
      }
    }
  });

  test('blanks around a runtime dir are dropped, as the helper commands drop them: run and helper share one', async () => {
    const dir = join(tempDir(), 'run');
    const c = new Conversation(world({ CURSOR_RESUME_RUNTIME_DIR: ` ${dir} ` }));
    const t = await c.turn('remember: alpha');
    assert.equal(t.code, 0, t.stderr);
    assert.equal(t.stderr, '', 'no warning');
    const status = JSON.parse((await runCli(['helper', 'status', '--json'], { env: c.env })).stdout);
    assert.equal(status.socketPath, join(dir, 'helper.sock'));
    assert.equal(status.entries, 1, 'the run recorded its turn in that helper');
  });

  test('a transcript turn with an unusable runtime dir runs without the cache; resume off runs as ever', async () => {
    const cwd = tempDir();
    const c = new Conversation(world({ CURSOR_RESUME_RUNTIME_DIR: 'relative' }));
    const r = await c.turn('remember: alpha', { args: [...STREAM_ARGS, '--verbose'] });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, warning);
    assert.match(r.stderr, /^cursor-resume: running without the cache: the runtimeDir setting is not usable/m);
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['fresh', 'no-cache']);
    const off = await runCli(STREAM_ARGS, { input: body, env: { ...c.env, CURSOR_ACP_SESSION_RESUME: '' }, cwd });
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stderr, warning);
    assert.equal(c.invocations().length, 2);
    assert.equal(existsSync(join(cwd, 'relative')), false);

    // A folder whose socket path is over the Unix limit is as unusable, and said as loudly.
    const long = new Conversation(world({ CURSOR_RESUME_RUNTIME_DIR: `/${'a'.repeat(91)}` }));
    const t = await long.turn('remember: alpha');
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stderr, warning);
    assert.deepEqual([long.lastTrace().decision, long.lastTrace().reason], ['fresh', 'no-cache']);
  });

  test('a bad value in the config file is ignored with a warning; a bad agent setting still stops the run', async () => {
    const env = sandboxEnv({ CURSOR_STAND_IN_LOG: join(tempDir(), 'agent.log') });
    const dir = join(env.XDG_CONFIG_HOME!, 'cursor-resume');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'config.json');
    writeFileSync(file, '{"ttlMinutes": 90, "agent": ""}');
    const ignored = await runCli(['status'], { env });
    assert.equal(ignored.code, 0, ignored.stderr);
    assert.match(
      ignored.stderr,
      /^cursor-resume: ignoring ttlMinutes \(in .*config\.json\): must be at most 60[^\n]*; fix with cursor-resume config set ttlMinutes VALUE, or cursor-resume config unset ttlMinutes$/m,
    );
    assert.match(
      ignored.stderr,
      /^cursor-resume: ignoring agent \(in .*config\.json\)/m,
      'CURSOR_RESUME_AGENT decides, the bad file value is said',
    );
    const { CURSOR_RESUME_AGENT: _agent, ...noAgent } = env;
    const stopped = await runCli(['status'], { env: noAgent });
    assert.equal(stopped.code, 2);
    assert.match(stopped.stderr, /^cursor-resume: agent \(in .*config\.json\): must not be empty/);
    assert.equal(readLog(env.CURSOR_STAND_IN_LOG!).length, 1, 'only the first status ran');
  });
});

describe('our commands that find the helper and a bad setting', { concurrency: true }, () => {
  test('inspect, evict and helper say what they ignore and keep the good values', async () => {
    const env = sandboxEnv();
    const elsewhere = join(tempDir(), 'run');
    const { CURSOR_RESUME_RUNTIME_DIR: _dir, ...fileDecides } = env;
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'cursor-resume'), { recursive: true, mode: 0o700 });
    writeFileSync(join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json'), JSON.stringify({ ttlMinutes: 999, runtimeDir: elsewhere }), {
      mode: 0o600,
    });
    for (const args of [['helper', 'start'], ['inspect'], ['evict', '--all'], ['helper', 'stop']]) {
      const r = await runCli(args, { env: fileDecides });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^cursor-resume: ignoring ttlMinutes \(in .*config\.json\): must be at most 60/m, args.join(' '));
      if (args[1] === 'start') assert.ok(existsSync(join(elsewhere, 'helper.sock')), 'the helper was started where the file says');
    }
    assert.equal(existsSync(join(elsewhere, 'helper.sock')), false, 'and stopped there');
  });
});

describe('the lease', { concurrency: true }, () => {
  test('a branch that moved on between lookup and lease is looked up again, and resumed as it is now', async () => {
    const { c, next } = await warm();
    // Between the run and the real helper: before passing the run's lease on, another
    // client takes and releases the branch, which gives it a new version.
    const helperSocket = socketOf(c.env);
    const ops: string[] = [];
    let moved = false;
    const proxy = await helperProxy(helperSocket, async (line) => {
      const request = JSON.parse(line) as { op: string; anchor: string; chatId: string; version: number };
      ops.push(request.op);
      if (request.op === 'lease' && !moved) {
        moved = true;
        const other = await HelperClient.connect(helperSocket);
        await other.hello();
        assert.equal((await other.lease(request.anchor, request.chatId, request.version)).granted, true);
        await other.release('error', 'ok');
        other.close();
      }
    });
    const proxyEnv = { ...c.env, CURSOR_RESUME_RUNTIME_DIR: proxy.runtimeDir };
    try {
      const r = await runCli([...STREAM_ARGS, '--verbose'], { input: next, env: proxyEnv });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /cannot be leased \(stale: /);
      assert.deepEqual(ops.slice(0, 5), ['hello', 'lookup', 'lease', 'lookup', 'lease']);
      assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['resume-delta', 'delta']);
    } finally {
      await proxy.close();
    }
  });
});
