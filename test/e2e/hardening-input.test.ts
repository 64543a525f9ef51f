// Bad input, through the built binary: every malformed or hostile transcript in
// test/fixtures/bad/ (and a few too large to commit, generated here) is run as a real
// turn with resume on. What the user sees (exit status, one line on stderr) is checked,
// and that nothing ran, nothing started, and memory stayed bounded.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CLOSING_LINE } from '../../src/transcript/opencode-text.js';
import { BIN, ROOT, runCli, tempDir } from '../support/cli.js';
import { STREAM_ARGS, readLog, resultOf } from '../support/conversation.js';
import { measuredRun, worlds } from '../support/hardening.js';

const DIR = join(ROOT, 'test', 'fixtures', 'bad');

interface Expectation {
  expect: 'refused' | 'accepted';
  why: string;
  message?: string;
  prompt?: string | null;
  promptStartsWith?: string;
  argvIncludes?: [string, string];
  /** Plain text: cursor-agent's stdin is the file's bytes, exactly. */
  passedAsIs?: boolean;
}
const manifest = JSON.parse(readFileSync(join(DIR, 'manifest.json'), 'utf8')) as Record<string, Expectation>;

/** Peak RSS of a run on a small input: node itself takes ~45 MiB. */
const SMALL_INPUT_PEAK_MIB = 150;

const newWorld = worlds();
const world = (): NodeJS.ProcessEnv => newWorld({ CURSOR_STAND_IN_LOG: join(tempDir('cr-log-'), 'agent.jsonl') });

/** Runs `jobs` at most `width` at a time (the machine has two cores; each job is a node process). */
async function pool<T>(jobs: Array<() => Promise<T>>, width = 4): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        results[i] = await jobs[i]!();
      }
    }),
  );
  return results;
}

function assertRefused(
  r: { code: number | null; stdout: string; stderr: string },
  env: NodeJS.ProcessEnv,
  message: RegExp | string,
  name: string,
): void {
  assert.equal(r.code, 2, `${name}: exit 2 (stderr: ${r.stderr.slice(0, 300)})`);
  assert.equal(r.stdout, '', `${name}: nothing on stdout`);
  assert.match(r.stderr, /^cursor-resume: [^\n]+\n$/, `${name}: exactly one line on stderr, no stack trace`);
  assert.doesNotMatch(r.stderr, /unexpected error/, name);
  const line = r.stderr.slice('cursor-resume: '.length, -1);
  if (typeof message === 'string') assert.match(line, new RegExp(message), name);
  else assert.match(line, message, name);
  assert.ok(line.length < 400, `${name}: a short line, whatever the input (${line.length} characters)`);
  assert.deepEqual(readLog(env.CURSOR_STAND_IN_LOG!), [], `${name}: cursor-agent never ran`);
  assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, `${name}: no helper was started`);
}

describe('the corpus of malformed and hostile transcripts (test/fixtures/bad)', () => {
  const files = readdirSync(DIR)
    .filter((f) => f !== 'manifest.json' && f !== 'README.md')
    .sort();

  test('the manifest covers every file, and the corpus is at least 30 strong', () => {
    assert.deepEqual(Object.keys(manifest).sort(), files);
    assert.ok(files.length >= 30, `${files.length} files`);
    for (const [name, e] of Object.entries(manifest)) {
      assert.ok(e.why, `${name} says what it tries`);
      assert.ok(e.expect === 'accepted' || typeof e.message === 'string', `${name} names the message it expects`);
      assert.ok(
        e.expect === 'refused' || typeof e.prompt === 'string' || e.promptStartsWith || e.passedAsIs,
        `${name} says what cursor-agent gets`,
      );
    }
  });

  test('refused ones: exit 2, one clear line, nothing run, nothing started, memory bounded', async () => {
    const refused = files.filter((f) => manifest[f]!.expect === 'refused');
    const results = await pool(
      refused.map((name) => async () => {
        const env = world();
        const r = await measuredRun(STREAM_ARGS, { env, input: readFileSync(join(DIR, name)) });
        return { name, env, r };
      }),
    );
    for (const { name, env, r } of results) {
      assertRefused(r, env, manifest[name]!.message!, name);
      assert.ok(r.peakMiB < SMALL_INPUT_PEAK_MIB, `${name}: peak RSS ${r.peakMiB} MiB`);
    }
  });

  test('accepted ones: cursor-agent gets exactly the prompt they stand for', async () => {
    const accepted = files.filter((f) => manifest[f]!.expect === 'accepted');
    const results = await pool(
      accepted.map((name) => async () => {
        const env = world();
        const r = await measuredRun(STREAM_ARGS, { env, input: readFileSync(join(DIR, name)) });
        return { name, env, r };
      }),
    );
    for (const { name, env, r } of results) {
      const e = manifest[name]!;
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      const invocations = readLog(env.CURSOR_STAND_IN_LOG!).filter((l) => l.event === 'invoke');
      assert.equal(invocations.length, 1, `${name}: cursor-agent ran once`);
      const [run] = invocations;
      if (typeof e.prompt === 'string') assert.equal(run!.stdin, e.prompt, name);
      if (e.promptStartsWith) assert.ok(run!.stdin.startsWith(e.promptStartsWith), name);
      if (e.passedAsIs)
        assert.deepEqual(Buffer.from(run!.stdinBase64!, 'base64'), readFileSync(join(DIR, name)), `${name}: the bytes as they came`);
      if (e.argvIncludes) {
        const at = run!.argv.indexOf(e.argvIncludes[0]);
        assert.deepEqual(run!.argv.slice(at, at + 2), e.argvIncludes, name);
      }
      for (const [i, arg] of run!.argv.entries()) {
        if (arg === '--resume') assert.match(run!.argv[i + 1]!, /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, name);
      }
      assert.ok(r.peakMiB < SMALL_INPUT_PEAK_MIB, `${name}: peak RSS ${r.peakMiB} MiB`);
    }
  });
});

describe('inputs too large to commit, generated here', () => {
  const MiB = 1024 * 1024;
  /** `{"messages":[{"role":"user","content":"aaaa…"}]}` with `size` bytes of content, produced a MiB at a time. */
  function* bigMessage(size: number): Iterable<Buffer> {
    yield Buffer.from('{"messages":[{"role":"user","content":"');
    const block = Buffer.alloc(MiB, 'a');
    for (let sent = 0; sent < size; sent += MiB) yield sent + MiB <= size ? block : block.subarray(0, size - sent);
    yield Buffer.from('"}]}');
  }

  test('a 100 MB stream is refused once it passes 64 MiB, without buffering the rest', async () => {
    const env = world();
    const r = await measuredRun(STREAM_ARGS, { env, input: () => bigMessage(100 * MiB) });
    assertRefused(r, env, /^stdin: the transcript is larger than 64 MiB; nothing was run/, '100 MB');
    assert.ok(r.peakMiB < 64 + 150, `peak RSS ${r.peakMiB} MiB: no more than the cap held`);
  });

  test('a 60 MB model name is refused, with memory proportionate to the input', async () => {
    const env = world();
    const input = Buffer.concat([
      Buffer.from('{"model":"'),
      Buffer.alloc(60 * MiB, 'm'),
      Buffer.from('","messages":[{"role":"user","content":"hi"}]}'),
    ]);
    const r = await measuredRun(STREAM_ARGS, { env, input });
    assertRefused(r, env, /^model: longer than 4096 characters$/, '60 MB model');
    assert.ok(r.peakMiB < 500, `peak RSS ${r.peakMiB} MiB`);
  });

  test('100 000 levels of nesting are refused without overflowing the stack', async () => {
    const env = world();
    const n = 100_000;
    const input = `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"t","parameters":${'['.repeat(n)}${']'.repeat(n)}}}]}`;
    const r = await measuredRun(STREAM_ARGS, { env, input });
    assertRefused(r, env, /^stdin: JSON nested deeper than 64 levels/, 'deep nesting');
    assert.ok(r.peakMiB < SMALL_INPUT_PEAK_MIB, `peak RSS ${r.peakMiB} MiB`);
  });

  test('near the cap, millions of tiny JSON values: refused over the limit, run under it, memory bounded', async () => {
    // A tool schema {"enum":[{},{},…]}: three bytes a value, what costs the most memory per byte.
    const schema = (values: number, size: number): Buffer => {
      const head = '{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"enum":[';
      const tail = ']}}}]}';
      const count = values > 0 ? values : Math.floor((size - head.length - tail.length) / 3);
      return Buffer.from(`${head}${'{},'.repeat(count)}{}${tail}`);
    };
    const hostile = world();
    const over = await measuredRun(STREAM_ARGS, { env: hostile, input: schema(0, 63 * MiB) });
    assertRefused(over, hostile, /^stdin: JSON with more than 2,000,000 values, the limit/, '63 MiB of {}');
    assert.ok(over.peakMiB < 64 * 4 + 100, `peak RSS ${over.peakMiB} MiB for 63 MiB of {}: a few copies of the text, no parsed values`);

    // Just under the limit (an empty object counts as two: its opening and its comma).
    const under = world();
    const run = await measuredRun(STREAM_ARGS, { env: under, input: schema(990_000, 0), keepStdout: 0 });
    assert.equal(run.code, 0, run.stderr);
    const [invoked] = readLog(under.CURSOR_STAND_IN_LOG!);
    assert.ok(invoked!.prompt.includes('"enum":[{},{}'), 'the whole schema reached cursor-agent');
    assert.ok(run.peakMiB < 300, `peak RSS ${run.peakMiB} MiB for 990 000 objects in a tool schema`);
  });

  test('an error quotes at most 60 characters of a huge value, control characters escaped', async () => {
    const long = (c: string) => c.repeat(1_000_000);
    const user = { role: 'user', content: 'hi' };
    for (const [name, body, message] of [
      [
        'a 1 MB role',
        { messages: [{ role: long('x'), content: 'hi' }] },
        /^messages\[0\]\.role: unknown role "x{60}…" \(expected system, user, assistant or tool\)$/,
      ],
      [
        'a 1 MB part type',
        { messages: [{ role: 'user', content: [{ type: long('y') }] }] },
        /^messages\[0\]\.content\[0\]\.type: unknown part type "y{60}…"/,
      ],
      [
        'a role that is a 1 MB array',
        { messages: [{ role: Array(200_000).fill(7), content: 'hi' }] },
        /^messages\[0\]\.role: unknown role \[7(,7){29}…/,
      ],
      [
        'a model that is a flag, with C1 and bidi controls',
        { messages: [user], model: `-\u009b31m\u202e${long('m').slice(0, 4000)}` },
        /^model: "-\\u009b31m\\u202em{54}…" begins with "-"/,
      ],
      [
        'a relative workspace of 4000 characters',
        { messages: [user], workspace: long('w').slice(0, 4000) },
        /^workspace: "w{60}…" is not an absolute path$/,
      ],
    ] as const) {
      const env = world();
      const r = await measuredRun(STREAM_ARGS, { env, input: JSON.stringify(body) });
      assertRefused(r, env, message, name);
      assert.ok(r.stderr.length < 200, `${name}: ${r.stderr.length} bytes on stderr`);
    }
  });

  test('a tool call ID in why a turn is not resumed is quoted short, its controls escaped: --verbose, inspect, simulate', async () => {
    // The unsafe-delta reason held the ID whole, as JSON, which leaves C1 and bidi controls as they are: a 100 KB line.
    const env = world();
    const workspace = tempDir('cr-ws-');
    const messages: unknown[] = [{ role: 'user', content: 'remember: a' }];
    const first = JSON.stringify({ workspace, messages });
    const r1 = await runCli(STREAM_ARGS, { env, input: first });
    assert.equal(r1.code, 0, r1.stderr);
    messages.push({ role: 'assistant', content: resultOf(r1.stdout).result });
    messages.push({ role: 'tool', tool_call_id: `\u009b2J\u202e${'x'.repeat(100_000)}`, content: 'result' });
    const second = JSON.stringify({ workspace, messages });
    const why = `message 3 answers tool call "\\u009b2J\\u202e${'x'.repeat(56)}…", which cursor's last reply did not make`;

    const inspected = await runCli(['inspect', '--transcript', '-'], { env, input: second });
    assert.equal(inspected.code, 0, inspected.stderr);
    assert.match(inspected.stdout, /^ {2}verdict +unsafe-delta: (.*)$/m);
    assert.equal(/^ {2}verdict +unsafe-delta: (.*)$/m.exec(inspected.stdout)![1], why);
    assert.equal(/^decision +fresh \(unsafe-delta\): (.*)$/m.exec(inspected.stdout)![1], why);

    const simulated = await runCli(['simulate', '--resume-on', '-'], { env, input: `${first}\n${second}\n` });
    assert.equal(simulated.code, 0, simulated.stderr);
    assert.equal(/unsafe-delta .* (message 3 .*)$/m.exec(simulated.stdout)![1], why);

    const run = await runCli(['--verbose', ...STREAM_ARGS], { env, input: second });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(run.stderr.includes(`cursor-resume: fresh (unsafe-delta): ${why}; prompt `), run.stderr.slice(0, 500));
    assert.ok(run.stderr.length < 1000, `${run.stderr.length} bytes on stderr`);
  });

  test("a transcript's C1 and bidi controls, and characters that show as nothing, are shown escaped by inspect: the explanation and the table", async () => {
    // JSON escapes C0 controls only, and the model, session ID and workspace were shown as they came.
    const env = world();
    const workspace = join(tempDir('cr-ws-'), 'w\u009b2J');
    mkdirSync(workspace);
    const body = JSON.stringify({
      model: 'gpt\u009b31m',
      sessionId: 's\u202e1',
      workspace,
      messages: [{ role: 'user', content: 'remember: \u009b31m\u202eb\u200bc\u2060d\ufeffe' }],
    });
    const ran = await runCli(STREAM_ARGS, { env, input: body });
    assert.equal(ran.code, 0, ran.stderr);
    const shown = `${workspace.slice(0, -3)}\\u009b2J`;
    const explained = await runCli(['inspect', '--transcript', '-', '--', ...STREAM_ARGS], { env, input: body });
    assert.equal(explained.code, 0, explained.stderr);
    for (const line of [
      `  workspace  ${shown} (from the transcript)`,
      '  model      gpt\\u009b31m (from the transcript)',
      '  session    s\\u202e1',
      '  opener     message 1 (user): "remember: \\u009b31m\\u202eb\\u200bc\\u2060d\\ufeffe"',
      `  argv       ${STREAM_ARGS.join(' ')} --model 'gpt\\u009b31m' --workspace '${shown}'`,
    ]) {
      assert.ok(explained.stdout.split('\n').includes(line), `${line}\n in:\n${explained.stdout}`);
    }
    const listed = await runCli(['inspect'], { env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(listed.stdout.split('\n')[1]!.includes(`  ${shown}  gpt\\u009b31m  `), listed.stdout);
    for (const out of [explained.stdout, listed.stdout]) assert.doesNotMatch(out, /[\u0080-\u009f\u202e\u200b\u2060\ufeff]/);
  });

  test('200,000 bad messages, tool calls or tools: the first is named, exit 2, as for one', async () => {
    // zod listed every bad element's problem and overflowed the stack gathering them: "unexpected error: RangeError", exit 1.
    const bad = <T>(count: number, value: T): T[] => Array(count).fill(value) as T[];
    const user = { role: 'user', content: 'hi' };
    const call = { id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } };
    for (const [name, body, message] of [
      [
        'OpenAI messages, the first bad one after 1,000 good',
        { messages: [...bad(1000, user), ...bad(200_000, { role: 'bogus' })] },
        /^messages\[1000\]\.role: unknown role "bogus"/,
      ],
      [
        'AI SDK messages',
        { prompt: [{ role: 'user', content: 'hi' }, ...bad(200_000, { role: 'user', content: 5 })] },
        /^prompt\[1\]\.content: expected a string or an array of parts$/,
      ],
      [
        "one message's tool calls, the first bad one after 5 good",
        {
          messages: [user, { role: 'assistant', tool_calls: [...bad(5, call), ...bad(200_000, { ...call, id: 5 })] }],
        },
        /^messages\[1\]\.tool_calls\[5\]\.id: expected a string, got a number$/,
      ],
      [
        'tools beside plain messages',
        { messages: [user], tools: bad(200_000, { type: 'function', function: { name: '' } }) },
        /^tools\[0\]\.function\.name: must not be empty/,
      ],
    ] as const) {
      const env = world();
      const r = await measuredRun(STREAM_ARGS, { env, input: JSON.stringify(body) });
      assertRefused(r, env, message, name);
    }
  });

  test('inspect --transcript explains 400,000 messages, block by block', async () => {
    // Its labels were measured with Math.max(...labels), which overflowed the stack: "unexpected error: RangeError".
    const text = Array.from({ length: 200_000 }, (_, i) => `USER: u${i}\n\nASSISTANT: a${i}`).join('\n\n');
    const r = await runCli(['inspect', '--transcript', '-'], { input: text, env: world() });
    assert.equal(r.code, 0, r.stderr.slice(0, 300));
    const lines = r.stdout.split('\n');
    assert.match(lines[0]!, /^transcript +stdin: opencode-text, 400000 messages/);
    assert.ok(lines.includes('  block 400000  message 400000 (assistant), 18 B: "ASSISTANT: a199999"'), 'the last block is listed');
  });

  test('inspect --transcript of a 60 MiB message previews its first words in memory proportionate to it', async () => {
    // The preview collapsed the whitespace of the whole message to show 60 characters: 2.3 GB and 6 s.
    const input = JSON.stringify({ messages: [{ role: 'user', content: 'x '.repeat(30 * MiB) }] });
    const r = await measuredRun(['inspect', '--transcript', '-'], { env: world(), input });
    assert.equal(r.code, 0, r.stderr.slice(0, 300));
    assert.match(r.stdout, /^ {2}opener +message 1 \(user\): "(x ){29}x…"$/m, 'the preview: its first words');
    assert.ok(r.peakMiB < 1000, `peak RSS ${r.peakMiB} MiB for a 60 MiB message`);
  });

  test("text in the plugin's layout with over 2,000,000 blocks is sent whole as plain text, in bounded memory", async () => {
    // Read as 2.2 million messages it took 890 MB (64 MiB of such blocks, 2.5 GB); JSON may hold no more values.
    const input = Array(1_100_000).fill('USER: u\n\nASSISTANT: a').join('\n\n');
    const r = await measuredRun(['--dry-run', '-p'], { env: world(), input, keepStdout: 64 << 20 });
    assert.equal(r.code, 0, r.stderr.slice(0, 300));
    const plan = JSON.parse(r.stdout) as { decision: string; reason: string; prompt: string };
    assert.deepEqual([plan.decision, plan.reason], ['fresh', 'plain-text']);
    assert.equal(plan.prompt, input, 'the text as it came');
    assert.ok(r.peakMiB < 600, `peak RSS ${r.peakMiB} MiB for 25 MB of blocks`);
  });

  test('a directory on stdin is named as such, not as empty, by a run, simulate - and inspect --transcript -', () => {
    for (const args of [STREAM_ARGS, ['simulate', '-'], ['inspect', '--transcript', '-']]) {
      const env = world();
      const r = spawnSync(process.execPath, [BIN, ...args], {
        env,
        stdio: [openSync(tempDir('cr-dir-'), 'r'), 'pipe', 'pipe'],
        encoding: 'utf8',
      });
      assertRefused(
        { code: r.status, stdout: r.stdout, stderr: r.stderr },
        env,
        /^stdin is a directory, not a transcript: pipe a transcript/,
        `a directory (${args.join(' ')})`,
      );
    }
  });

  test("megabytes of text that almost read as the plugin's call lines or tool result heads are read in one pass and run", () => {
    // Backtracking once took time cubic (a call line: hours for 1 MB) and quadratic (a result head: 10 minutes for 8 MB) in their length.
    const opening = 'SYSTEM: You are opencode.\n\nUSER: see below\n\n';
    for (const [name, text] of [
      ['a call line', `${opening}ASSISTANT: tool_call(id: ${'a, name: a, args: '.repeat(60_000)}`],
      // A result is read only with the closing line the plugin then writes.
      ['a result head', `${opening}TOOL_RESULT (name: ${'a, call_id: a'.repeat(640_000)}\n\n${CLOSING_LINE}`],
    ] as const) {
      const env = world();
      const r = spawnSync(process.execPath, [BIN, ...STREAM_ARGS], {
        env,
        input: text,
        encoding: 'utf8',
        timeout: 120_000,
        killSignal: 'SIGKILL',
        maxBuffer: 64 << 20,
      });
      assert.equal(r.signal, null, `${name}: it ended on its own (it is killed after two minutes)`);
      assert.equal(r.status, 0, `${name}: ${r.stderr}`);
      const invoked = readLog(env.CURSOR_STAND_IN_LOG!).filter((l) => l.event === 'invoke');
      assert.equal(invoked.length, 1, `${name}: cursor-agent ran once`);
      assert.equal(Buffer.from(invoked[0]!.stdinBase64!, 'base64').toString(), text, `${name}: cursor-agent got the text as it came`);
    }
  });

  test('a 30 MB message, and 200 000 messages (too many for the cache to record), run whole in bounded memory', async () => {
    const big = world();
    const content = 'é'.repeat(15 * MiB);
    const bigRun = await measuredRun(STREAM_ARGS, {
      env: big,
      input: JSON.stringify({ messages: [{ role: 'user', content }] }),
      keepStdout: 0,
    });
    assert.equal(bigRun.code, 0, bigRun.stderr);
    const [one] = readLog(big.CURSOR_STAND_IN_LOG!) as unknown as Array<{ promptBytes: number }>;
    assert.equal(one!.promptBytes, Buffer.byteLength(`USER: ${content}`), 'the whole message reached cursor-agent');
    assert.ok(bigRun.peakMiB < 500, `peak RSS ${bigRun.peakMiB} MiB for a 30 MB message`);

    const many = world();
    const messages = Array.from({ length: 200_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }));
    const manyRun = await measuredRun(STREAM_ARGS, { env: many, input: JSON.stringify({ messages }), keepStdout: 0 });
    assert.equal(manyRun.code, 0, manyRun.stderr);
    const [all] = readLog(many.CURSOR_STAND_IN_LOG!) as unknown as Array<{ promptBytes: number; prompt: string }>;
    assert.ok(all!.prompt.endsWith('USER: message 199998\n\nASSISTANT: message 199999'), 'the last messages reached cursor-agent');
    assert.ok(manyRun.peakMiB < 500, `peak RSS ${manyRun.peakMiB} MiB for 200 000 messages`);
  });
});
