// --dry-run through the built binary: the plan as the README promises it, and every
// bad input refused with exit 2, one clear line, and nothing run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, ROOT, runCli, sandboxEnv, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS } from '../support/conversation.js';

const body = (extra: object = {}) =>
  JSON.stringify({
    model: 'cursor-acp/gpt-5',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ],
    ...extra,
  });

describe('--dry-run', () => {
  test('prints exactly the plan object and runs nothing', async () => {
    const env = sandboxEnv({ CURSOR_STAND_IN_LOG: join(tempDir(), 'agent.log') });
    const r = await runCli(['--dry-run', '--print', '--output-format', 'stream-json', '--force'], { input: body(), env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const plan = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(plan), ['decision', 'reason', 'anchor', 'chatId', 'argv', 'prompt']);
    const documented = /`--dry-run` \(print the plan as one JSON object, with (.*?), and run nothing\)/.exec(
      readFileSync(join(ROOT, 'README.md'), 'utf8').replace(/\s+/g, ' '),
    );
    assert.deepEqual(
      [...(documented?.[1] ?? '').matchAll(/`(\w+)`/g)].map((m) => m[1]),
      Object.keys(plan),
      'the README names the fields in order',
    );
    assert.deepEqual(plan, {
      decision: 'fresh',
      reason: 'disabled',
      anchor: plan.anchor,
      chatId: null,
      argv: ['--print', '--output-format', 'stream-json', '--force', '--model', 'gpt-5'],
      prompt: 'SYSTEM: Be brief.\n\nUSER: hi',
    });
    assert.match(plan.anchor, /^[0-9a-f]{32}$/);
    assert.equal(existsSync(env.CURSOR_STAND_IN_LOG!), false, 'cursor-agent never ran');
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no helper was started');
  });

  test('with --verbose, says the decision line a run would say, on stderr, beside the plan', async () => {
    const env = sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1' });
    const r = await runCli(['--dry-run', '--verbose', '--output-format', 'text'], { input: body(), env });
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout);
    const bytes = Buffer.byteLength(plan.prompt);
    assert.match(r.stderr, new RegExp(`^cursor-resume: fresh \\(no-entry\\): [^\\n]+; prompt ${bytes} of ${bytes} bytes$`, 'm'));
    const quiet = await runCli(['--dry-run', '--output-format', 'text'], { input: body(), env });
    assert.equal(quiet.stderr, '', 'said only with --verbose');
  });

  test('with resume on, a first turn is fresh and will be recorded', async () => {
    const r = await runCli(['--dry-run', '--output-format', 'text'], {
      input: body(),
      env: sandboxEnv({ CURSOR_ACP_SESSION_RESUME: ' Yes ' }),
    });
    const plan = JSON.parse(r.stdout);
    assert.equal(plan.reason, 'no-entry');
    // The chat ID must be read from the stream, so a text run becomes stream-json.
    assert.deepEqual(plan.argv, ['--print', '--output-format', 'stream-json', '--model', 'gpt-5']);
  });

  test('the workspace is absolute and real: a symlinked path anchors like its target', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const env = sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1' });
    const viaLink = JSON.parse((await runCli(['--dry-run', '--workspace', join(dir, 'link')], { input: body(), env })).stdout);
    const viaCwd = JSON.parse((await runCli(['--dry-run'], { input: body(), env, cwd: join(dir, 'real') })).stdout);
    assert.equal(viaLink.anchor, viaCwd.anchor);
    assert.deepEqual(viaLink.argv.slice(0, 2), ['--workspace', join(dir, 'link')], 'the caller’s own flag is passed on as given');
  });

  test('the command line model wins over the transcript', async () => {
    const plan = JSON.parse((await runCli(['--dry-run', '--model', 'sonnet-4'], { input: body() })).stdout);
    assert.deepEqual(plan.argv, ['--model', 'sonnet-4']);
  });

  test('plain text is passed on as it is', async () => {
    const text = 'hello\n\nASSISTANT: hi\n';
    const plan = JSON.parse((await runCli(['--dry-run'], { input: text, env: sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1' }) })).stdout);
    assert.equal(plan.reason, 'plain-text');
    assert.equal(plan.prompt, text);
    assert.equal(plan.anchor, null);
  });

  test('a lone surrogate in a JSON string: the plan says the U+FFFD cursor-agent reads, fresh and in a delta', async () => {
    // JSON may escape half a surrogate pair, which UTF-8 cannot carry: stdin gets U+FFFD, and the plan is exactly stdin.
    const c = new Conversation(sandboxEnv({ CURSOR_RESUME_ENABLED: '1' }));
    const plan = async (): Promise<{ decision: string; prompt: string }> => {
      const r = await runCli(['--dry-run', ...STREAM_ARGS], { input: c.body(), env: c.env });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, /\\ud[89a-f]/i, 'no escaped surrogate in the plan');
      return JSON.parse(r.stdout) as { decision: string; prompt: string };
    };
    for (const [text, decision] of [
      ['first \uD800 half', 'fresh'],
      ['then \uDC00 the other', 'resume-delta'],
    ] as const) {
      c.messages.push({ role: 'user', content: text });
      const planned = await plan();
      assert.equal(planned.decision, decision);
      assert.ok(planned.prompt.includes(text.replace(/[\uD800-\uDFFF]/, '\uFFFD')), planned.prompt);
      const r = await c.send();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(c.lastInvocation().stdin, planned.prompt, 'the planned prompt is what cursor-agent read');
    }
  });
});

describe('bad input: exit 2, one clear line, nothing run', () => {
  const cases: Array<[string, string | Buffer, RegExp]> = [
    ['empty stdin', '', /stdin is empty/],
    ['truncated JSON', '{"messages":[', /not valid JSON/],
    ['unknown role', '{"messages":[{"role":"bot","content":"x"}]}', /messages\[0\]\.role: unknown role "bot"/],
    ['bad content', '{"messages":[{"role":"user","content":{}}]}', /messages\[0\]\.content: expected a string or an array of parts/],
    ['model as a flag', body({ model: '--resume=x' }), /model: "--resume=x" begins with "-"/],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]), /not valid UTF-8/],
  ];
  for (const [name, input, expected] of cases) {
    test(name, async () => {
      const log = join(tempDir(), 'agent.log');
      const r = await runCli(['--print'], { input, env: sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1', CURSOR_STAND_IN_LOG: log }) });
      assert.equal(r.code, 2);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, expected);
      assert.match(r.stderr, /^cursor-resume: [^\n]+\n$/, 'one line, no stack trace');
      assert.equal(existsSync(log), false, 'cursor-agent never ran');
    });
  }
  test('stdin redirected from a file reads as the same bytes piped, to its end, from where the file descriptor stands', async () => {
    const env = sandboxEnv();
    const file = join(tempDir(), 'transcript.json');
    const skipped = 'prompt for another program\n';
    writeFileSync(file, skipped + body());
    const fromFile = (): { code: number | null; stdout: string; stderr: string } => {
      // The caller read a line of it already: its size is no longer what is left to read.
      const fd = openSync(file, 'r');
      readSync(fd, Buffer.alloc(skipped.length), 0, skipped.length, null);
      try {
        const r = spawnSync(process.execPath, [BIN, '--dry-run'], { env, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8' });
        return { code: r.status, stdout: r.stdout, stderr: r.stderr };
      } finally {
        closeSync(fd);
      }
    };
    const piped = await runCli(['--dry-run'], { input: body(), env });
    assert.equal(piped.code, 0, piped.stderr);
    assert.deepEqual(fromFile(), { code: 0, stdout: piped.stdout, stderr: '' });
    assert.equal(JSON.parse(piped.stdout).prompt, 'SYSTEM: Be brief.\n\nUSER: hi');
  });

  test('a value flag without its value', async () => {
    const r = await runCli(['--dry-run', '--model'], { input: body() });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'cursor-resume: --model needs a value\n');
  });
  test('--trace followed by a flag, not a file: exit 2, nothing run, no file named like the flag; --trace=FILE takes any name', async () => {
    const cwd = tempDir();
    const log = join(tempDir(), 'agent.jsonl');
    const env = sandboxEnv({ CURSOR_STAND_IN_LOG: log });
    for (const flag of ['--dry-run', '--verbose', '-p', '-']) {
      const r = await runCli(['--trace', flag, '--print'], { input: body(), env, cwd });
      assert.deepEqual(
        [r.code, r.stdout, r.stderr],
        [
          2,
          '',
          `cursor-resume: --trace needs a file to append to, and ${JSON.stringify(flag)} is taken for a flag; nothing was run. A file of that name goes as --trace=${flag}\n`,
        ],
      );
      assert.equal(existsSync(join(cwd, flag)), false);
    }
    assert.equal(existsSync(log), false, 'cursor-agent never ran');
    const named = await runCli(['--trace=-odd.jsonl', '--dry-run'], { input: body(), env, cwd });
    assert.equal(named.code, 0, named.stderr);
    assert.equal(JSON.parse(named.stdout).decision, 'fresh');
  });
  test('a value the config file may not hold is named and ignored, as by a run', async () => {
    const env = sandboxEnv();
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'cursor-resume'), { recursive: true });
    const file = join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
    (await import('node:fs')).writeFileSync(file, '{"ttlMinutes": 90}');
    const r = await runCli(['--dry-run'], { input: body(), env });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^cursor-resume: ignoring ttlMinutes \(in .*config\.json\): [^\n]*cursor-resume config unset ttlMinutes\n$/);
    assert.equal(JSON.parse(r.stdout).reason, 'disabled');
    assert.equal(readFileSync(file, 'utf8'), '{"ttlMinutes": 90}', 'left as it was');
  });

  test('a side-call pattern V8 cannot compile (too large for its stack) is ignored, as an invalid one', async () => {
    // new RegExp accepts it; V8 compiles it at its first use: it crashed every JSON turn there.
    const env = sandboxEnv();
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'cursor-resume'), { recursive: true });
    const file = join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
    (await import('node:fs')).writeFileSync(file, JSON.stringify({ sideCallPatterns: ['a?'.repeat(7000)] }));
    const r = await runCli(['--dry-run'], { input: body(), env });
    assert.equal(r.code, 0, r.stderr.slice(0, 300));
    assert.match(
      r.stderr,
      /^cursor-resume: ignoring sideCallPatterns\[0\] \(in .*config\.json\): is not a valid regular expression[^\n]*\n$/,
    );
    assert.equal(JSON.parse(r.stdout).reason, 'disabled');
  });
});
