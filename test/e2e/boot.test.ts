// The code cache (dist/cli.cjs.cache) only saves time: whatever state it is in, every
// kind of run behaves exactly as it does with the cache the build made. Each test works
// on its own copy of bin/ and dist/, started through a probe that reports how the cache
// was taken.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, sandboxEnv, tempDir } from '../support/cli.js';
import { runProcess, type RunResult } from '../support/processes.js';

interface Copy {
  dir: string;
  probe: string;
}

function copyOfBuild(): Copy {
  const dir = tempDir('cr-boot-');
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  // As installed: package.json says dist/program.js is an ES module (Node before 20.19 reads it by that alone).
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  // bin/cursor-resume.js, telling on stderr how the cache was taken.
  const probe = join(dir, 'bin', 'probe.js');
  writeFileSync(probe, "process.stderr.write(`cache: ${require('../dist/boot.cjs').startCli().cache}\\n`);\n");
  return { dir, probe };
}

function run(copy: Copy, args: string[], input: string, nodeFlags: string[] = []): Promise<RunResult> {
  return runProcess(process.execPath, [...nodeFlags, copy.probe, ...args], {
    env: sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1', CURSOR_RESUME_AGENT: join(copy.dir, 'dist', 'stand-in', 'cursor-agent.js') }),
    input,
  });
}

const transcript = JSON.stringify({
  model: 'gpt-5',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'remember: port 8080' },
  ],
});

/** A dry run (the run path), one of our subcommands (program.js) and one of cursor-agent's (a hand-over). */
async function behaviour(copy: Copy, nodeFlags: string[] = []): Promise<{ cache: string[]; outputs: RunResult[] }> {
  const runs = [
    await run(copy, ['--dry-run', '--model', 'gpt-5'], transcript, nodeFlags),
    await run(copy, ['simulate', '--help'], '', nodeFlags),
    await run(copy, ['status'], '', nodeFlags),
  ];
  const cache = runs.map((r) => /^cache: (\w+)$/m.exec(r.stderr)?.[1] ?? 'none');
  // The run's own stderr, without the probe's line.
  return { cache, outputs: runs.map((r) => ({ ...r, stderr: r.stderr.replace(/^cache: \w+\n/m, '') })) };
}

test('as built, every run takes the code cache', async () => {
  const copy = copyOfBuild();
  const { cache, outputs } = await behaviour(copy);
  assert.deepEqual(cache, ['used', 'used', 'used']);
  for (const r of outputs) assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(outputs[0]!.stdout).decision, 'fresh');
  assert.match(outputs[1]!.stdout, /Usage: cursor-resume simulate/);
  assert.match(outputs[2]!.stdout, /Logged in as/);
});

test('a cache that is missing, made of other bytes, damaged or refused by V8 changes nothing but the time', async () => {
  const reference = (await behaviour(copyOfBuild())).outputs;

  const missing = copyOfBuild();
  rmSync(join(missing.dir, 'dist', 'cli.cjs.cache'));

  // The same length, one byte different: V8's own check (the length) would take the cache.
  const edited = copyOfBuild();
  const cli = join(edited.dir, 'dist', 'cli.cjs');
  const source = readFileSync(cli, 'utf8');
  assert.ok(source.includes('unexpected error: '));
  writeFileSync(cli, source.replace('unexpected error: ', 'unexpected error! '));

  // Damaged past V8's own header, which V8 would take, and crash on.
  const damaged = copyOfBuild();
  const cacheFile = join(damaged.dir, 'dist', 'cli.cjs.cache');
  const cache = readFileSync(cacheFile);
  for (let i = 20_000; i < cache.length - 100; i += 997) cache[i]! ^= 0xff;
  writeFileSync(cacheFile, cache);

  const cases: Array<[string, Copy, string[], string]> = [
    ['missing', missing, [], 'absent'],
    ['made of other bytes', edited, [], 'mismatch'],
    ['damaged', damaged, [], 'mismatch'],
    // Other V8 flags: V8 itself refuses the cache (another Node is the test below).
    ['taken under other V8 flags', copyOfBuild(), ['--max-semi-space-size=1'], 'rejected'],
  ];
  for (const [name, copy, flags, expected] of cases) {
    const { cache: used, outputs } = await behaviour(copy, flags);
    assert.deepEqual(used, [expected, expected, expected], name);
    assert.deepEqual(outputs, reference, `${name}: the same output and exit status`);
  }
});

test('a cache made under another Node with the same V8 version is not taken: V8 would take it, and may crash', async () => {
  // Every Node 20 has V8 11.3.244.8, told apart only by Node's own patches ("-node.25" in
  // 20.10.0, "-node.38" in 20.20.2). V8 checks the version numbers, not those: Node 20.10.0
  // took the cache Node 20.20.2 made and died of SIGSEGV on every run. This copy of Node
  // says it is another build of the same V8 (a preload changes process.version and
  // process.versions), as Node 20.10.0 would.
  const reference = (await behaviour(copyOfBuild())).outputs;
  const copy = copyOfBuild();
  const otherNode = join(copy.dir, 'other-node.cjs');
  writeFileSync(
    otherNode,
    [
      "const versions = { ...process.versions, node: '20.10.0', v8: process.versions.v8.replace(/-node\\.\\d+$/, '') + '-node.0' };",
      "Object.defineProperty(process, 'versions', { value: Object.freeze(versions), enumerable: true, configurable: true });",
      "Object.defineProperty(process, 'version', { value: 'v20.10.0', enumerable: true, configurable: true });",
      '',
    ].join('\n'),
  );
  const { cache, outputs } = await behaviour(copy, ['--require', otherNode]);
  assert.deepEqual(cache, ['mismatch', 'mismatch', 'mismatch']);
  assert.deepEqual(outputs, reference, 'the same output and exit status');
});

test("a run line's bundles hold none of our subcommands' packages (commander, chalk, conf, execa, string-width)", () => {
  // Which packages a bundle holds, from its source map: one import of present.ts's helpers put commander in cli.cjs.
  const packagesOf = (bundle: string): string[] => {
    const { sources } = JSON.parse(readFileSync(join(ROOT, 'dist', `${bundle}.map`), 'utf8')) as { sources: string[] };
    return [...new Set(sources.flatMap((s) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(s)?.[1] ?? []))].sort();
  };
  for (const bundle of ['boot.cjs', 'cli.cjs']) {
    const found = packagesOf(bundle);
    for (const heavy of ['commander', 'chalk', 'conf', 'execa', 'string-width'])
      assert.ok(!found.includes(heavy), `${bundle} holds ${heavy}`);
  }
});
