// A run line that is cursor-agent's whole goes to it before the CLI bundle loads;
// a slip of one of our commands never reaches it; a cursor-resume that would run
// itself as its cursor-agent stops at once with one line.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, ROOT, runCli, sandboxEnv, scriptAgent, spawnCli, tempDir } from '../support/cli.js';
import { readLog } from '../support/conversation.js';
import { killGroup, waitFor } from '../support/processes.js';

const groups: number[] = [];
after(() => groups.forEach(killGroup));

/** An agent that says what it was given and how: argv, stdin, an exit status. */
const echoAgent = (): string =>
  scriptAgent('echo-agent.sh', '#!/bin/sh\nprintf "argv:%s\\n" "$*"\nprintf "stdin:%s\\n" "$(cat)"\necho "to stderr" >&2\nexit 7\n');

describe('hand-over before the CLI loads', () => {
  test('--version, a subcommand and a prompt word go to the agent even with the CLI bundle gone', async () => {
    // A copy of the build without dist/cli.cjs: only boot.cjs can have handed these over.
    const copy = tempDir('cr-copy-');
    cpSync(join(ROOT, 'bin'), join(copy, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    rmSync(join(copy, 'dist', 'cli.cjs'));
    const env = sandboxEnv({ CURSOR_RESUME_AGENT: echoAgent() });
    const run = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, [join(copy, 'bin', 'cursor-resume.js'), ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.on('close', (code) => resolve({ code, out }));
        child.stdin.end('given on stdin');
      });
    for (const args of [['--version'], ['status', '--json'], ['--print', 'fix the bug']]) {
      const r = await run(args);
      assert.deepEqual(r, { code: 7, out: `argv:${args.join(' ')}\nstdin:given on stdin\n` }, args.join(' '));
    }
    // The run path does need the bundle: the copy is really without it.
    assert.notEqual((await run(['--dry-run'])).code, 0);
  });

  test('stdio inherited and the exit status kept, through the built binary', async () => {
    const r = await runCli(['models', '--flag', 'x y'], { env: sandboxEnv({ CURSOR_RESUME_AGENT: echoAgent() }), input: 'abc' });
    assert.deepEqual(r, { code: 7, signal: null, stdout: 'argv:models --flag x y\nstdin:abc\n', stderr: 'to stderr\n' });
  });

  test('the agent setting as a run resolves it: the config file, else the default on PATH', async () => {
    const env = sandboxEnv();
    delete env.CURSOR_RESUME_AGENT;
    const file = join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ agent: echoAgent() }));
    assert.equal((await runCli(['--version'], { env })).stdout, 'argv:--version\nstdin:\n');
    rmSync(file);
    // No setting anywhere: `cursor-agent` on PATH.
    const onPath = dirname(scriptAgent('cursor-agent', '#!/bin/sh\necho "the one on PATH: $1"\n'));
    const r = await runCli(['--version'], { env: { ...env, PATH: `${onPath}:${env.PATH}` } });
    assert.deepEqual([r.code, r.stdout], [0, 'the one on PATH: --version\n']);
  });

  test('an agent that is not there: exit 127 and one line; one that cannot run: 126', async () => {
    const missing = await runCli(['--version'], { env: sandboxEnv({ CURSOR_RESUME_AGENT: '/no/such/agent' }) });
    assert.equal(missing.code, 127);
    assert.equal(
      missing.stderr,
      'cursor-resume: cursor-agent not found: "/no/such/agent". Install it, or set CURSOR_RESUME_AGENT (or `cursor-resume config set agent PATH`) to its path.\n',
    );
    const plain = join(tempDir(), 'not-executable');
    writeFileSync(plain, 'echo hi\n');
    const denied = await runCli(['status'], { env: sandboxEnv({ CURSOR_RESUME_AGENT: plain }) });
    assert.equal(denied.code, 126);
    assert.match(denied.stderr, /^cursor-resume: cannot run cursor-agent "[^"]+": [^\n]*EACCES[^\n]*\n$/);
  });

  test('SIGTERM reaches the agent, and its own exit status is kept', async () => {
    const agent = scriptAgent(
      'trap-agent.sh',
      '#!/bin/sh\ntrap \'echo "got TERM" >&2; exit 9\' TERM\necho ready\nwhile :; do sleep 0.05; done\n',
    );
    const run = spawnCli(['status'], sandboxEnv({ CURSOR_RESUME_AGENT: agent }));
    groups.push(run.pid!);
    await waitFor('the agent to start', () => run.output.stdout === 'ready\n');
    // 'exit', not 'close': an agent left running would hold the pipes open, and the test must fail, not hang.
    const exited = new Promise((resolve) => run.once('exit', (code, signal) => resolve({ code, signal })));
    process.kill(run.pid!, 'SIGTERM');
    assert.deepEqual(await exited, { code: 9, signal: null });
    await run.closed;
    assert.equal(run.output.stderr, 'got TERM\n');
  });

  test('an agent that dies of a signal: 128+N', async () => {
    const agent = scriptAgent('self-kill.sh', '#!/bin/sh\nkill -HUP $$\n');
    assert.equal((await runCli(['--version'], { env: sandboxEnv({ CURSOR_RESUME_AGENT: agent }) })).code, 129);
  });
});

describe('a slip of one of our commands or flags', () => {
  for (const [args, meant] of [
    [['hepler', 'status'], 'helper'],
    [['simluate', 'a.json'], 'simulate'],
    [['inpsect'], 'inspect'],
    [['Inspect'], 'inspect'],
    [['evitc', '--all'], 'evict'],
    [['confg', 'list'], 'config'],
    [['--dryrun'], '--dry-run'],
    [['--print', '--verbsoe'], '--verbose'],
    [['--trace=/tmp/x', '--dry-rn'], '--dry-run'],
    [['--trcae', '/tmp/t'], '--trace'],
  ] as const) {
    test(`${args.join(' ')}: exit 2, one line naming ${meant}, nothing run`, async () => {
      const log = join(tempDir(), 'agent.jsonl');
      const r = await runCli([...args], {
        env: sandboxEnv({ CURSOR_STAND_IN_LOG: log }),
        input: '{"messages":[{"role":"user","content":"hi"}]}',
      });
      assert.equal(r.code, 2);
      assert.equal(
        r.stderr,
        `cursor-resume: unknown ${args.find((a) => a !== '--print' && !a.startsWith('--trace='))!.startsWith('-') ? 'option' : 'command'} "${args.find((a) => a !== '--print' && !a.startsWith('--trace='))}": did you mean "${meant}"? Nothing was run (cursor-resume --help lists ours)\n`,
      );
      assert.equal(r.stdout, '');
      assert.deepEqual(readLog(log), [], 'cursor-agent never ran');
    });
  }

  test('--our-version after another word, or with a value: exit 2, one line saying it goes first alone, nothing run', async () => {
    for (const args of [
      ['--print', '--our-version'],
      ['--dry-run', '--our-version'],
      ['--verbose', '--our-version=1'],
      // As the first word it is ours only alone: with a value it is no version request, and no option of cursor-agent's.
      ['--our-version=1'],
    ]) {
      const log = join(tempDir(), 'agent.jsonl');
      const r = await runCli(args, {
        env: sandboxEnv({ CURSOR_STAND_IN_LOG: log }),
        input: '{"messages":[{"role":"user","content":"hi"}]}',
      });
      assert.deepEqual(
        [r.code, r.stderr, r.stdout],
        [2, 'cursor-resume: --our-version goes alone, as the first word: cursor-resume --our-version. Nothing was run\n', ''],
        args.join(' '),
      );
      assert.deepEqual(readLog(log), [], 'cursor-agent never ran');
    }
    // inspect refuses it alike in the run line given after "--", its first word included.
    const transcript = join(tempDir(), 'body.json');
    writeFileSync(transcript, '{"messages":[{"role":"user","content":"hi"}]}');
    const explained = await runCli(['inspect', '--transcript', transcript, '--', '--our-version'], { env: sandboxEnv() });
    assert.deepEqual(
      [explained.code, explained.stderr],
      [2, 'cursor-resume: --our-version goes alone, as the first word: cursor-resume --our-version. Nothing was run\n'],
    );
    // After "--" every word of a run line is cursor-agent's.
    const passed = await runCli(['--', '--our-version'], { env: sandboxEnv({ CURSOR_RESUME_AGENT: echoAgent() }) });
    assert.equal(passed.stdout.split('\n')[0], 'argv:-- --our-version');
  });

  test("cursor-agent's own words and flags near ours still go to it: help, --version, --force, a prompt", async () => {
    const env = sandboxEnv({ CURSOR_RESUME_AGENT: echoAgent() });
    for (const args of [['help'], ['--version'], ['--force', 'status'], ['--print', 'inspect the helper'], ['helpers are nice']]) {
      const r = await runCli(args, { env });
      assert.equal(r.stdout.split('\n')[0], `argv:${args.join(' ')}`, args.join(' '));
    }
  });
});

describe('cursor-resume running itself', () => {
  const line =
    'cursor-resume: the cursor-agent it runs is cursor-resume itself (CURSOR_RESUME_AGENT, the agent setting, or a cursor-agent on PATH names it, maybe through a symlink or a script), which would start itself without end; set CURSOR_RESUME_AGENT (or cursor-resume config set agent PATH) to the real cursor-agent\n';
  const transcript = '{"messages":[{"role":"user","content":"hi"}]}';

  test('named by CURSOR_RESUME_AGENT: exit 2, one line, for a hand-over and for a turn', async () => {
    for (const [args, input] of [
      [['--version'], ''],
      [['--print'], transcript],
    ] as const) {
      const r = await runCli([...args], { env: sandboxEnv({ CURSOR_RESUME_AGENT: BIN, CURSOR_ACP_SESSION_RESUME: '1' }), input });
      assert.deepEqual([r.code, r.stderr, r.stdout], [2, line, ''], args.join(' '));
    }
  });

  test('as cursor-agent on PATH, through a symlink', async () => {
    const dir = tempDir('cr-path-');
    symlinkSync(BIN, join(dir, 'cursor-agent'));
    const env = sandboxEnv();
    delete env.CURSOR_RESUME_AGENT;
    const r = await runCli(['--print'], { env: { ...env, PATH: `${dir}:${env.PATH}` }, input: transcript });
    assert.deepEqual([r.code, r.stderr], [2, line]);
  });

  test('through the config file and a wrapper script that does not exec: stopped within a few levels', async () => {
    const wrapper = scriptAgent(
      'wrapper.sh',
      `#!/bin/sh\n"${process.execPath}" "${BIN}" "$@"\nstatus=$?\necho "wrapper level done" >&2\nexit $status\n`,
    );
    const env = sandboxEnv();
    delete env.CURSOR_RESUME_AGENT;
    const set = await runCli(['config', 'set', 'agent', wrapper], { env });
    assert.equal(set.code, 0, set.stderr);
    const r = await runCli(['status'], { env });
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr
        .split('\n')
        .filter((l) => l.startsWith('cursor-resume:'))
        .join('\n') + '\n',
      line,
      'said once',
    );
    assert.ok(r.stderr.split('\n').filter((l) => l === 'wrapper level done').length <= 3, r.stderr);
  });

  test('one cursor-resume started from a shell its cursor-agent runs is fine', async () => {
    // cursor-agent running a tool that runs cursor-resume: the inner one is not a self-call.
    const agent = scriptAgent(
      'tool-agent.sh',
      `#!/bin/sh\nCURSOR_RESUME_AGENT="${echoAgentPath}" "${process.execPath}" "${BIN}" --version </dev/null\n`,
    );
    const r = await runCli(['status'], { env: sandboxEnv({ CURSOR_RESUME_AGENT: agent }) });
    assert.deepEqual([r.code, r.stdout], [7, 'argv:--version\nstdin:\n']);
  });
});
const echoAgentPath = echoAgent();
