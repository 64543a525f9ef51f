// What a new user trips on (issue 13): the package, settings checked when set, a
// config file with a syntax error, a workspace that is not there, the stand-in's chats.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { delimiter, join, posix, relative } from 'node:path';
import { describe, test } from 'node:test';
import { BIN, ROOT, runCli, sandboxEnv, STAND_IN, tempDir } from '../support/cli.js';
import { Conversation, readLog } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';

const world = worlds();
const configOf = (env: NodeJS.ProcessEnv): string => join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');
function writeConfig(env: NodeJS.ProcessEnv, text: string): string {
  const file = configOf(env);
  // Private whatever the umask: a file others may write is not read (README, "config file").
  mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
  writeFileSync(file, text, { mode: 0o600 });
  return file;
}

/**
 * What `npm pack` would ship, listed in a copy of the checkout (but node_modules/ and .git/)
 * whose package.json has no prepare script: npm 10, which every Node 20 comes with, runs
 * prepare on `npm pack --dry-run --ignore-scripts` all the same, and that build would empty
 * dist/ under the tests running beside this one.
 */
function packedFiles(): string[] {
  const copy = tempDir('cr-pack-');
  cpSync(ROOT, copy, { recursive: true, filter: (src) => !/^(node_modules|\.git)(\/|$)/.test(relative(ROOT, src)) });
  const pkg = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  delete pkg.scripts.prepare;
  writeFileSync(join(copy, 'package.json'), JSON.stringify(pkg, null, 2));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: copy, encoding: 'utf8' })) as [
    { files: { path: string }[] },
  ];
  return packed[0].files.map((f) => f.path);
}

describe('the package', () => {
  const files = packedFiles();

  test('ships the launcher, the bundles, the manual and the licence; no stand-in, no source maps, no sources', () => {
    for (const needed of [
      'bin/cursor-resume.js',
      'bin/package.json',
      'dist/boot.cjs',
      'dist/cli.cjs',
      'dist/cli.cjs.cache',
      'dist/zod.cjs',
      'dist/program.js',
      'dist/helper/helper-server.js',
      'man/cursor-resume.1',
      'README.md',
      'LICENSE',
      'package.json',
    ]) {
      assert.ok(files.includes(needed), needed);
    }
    assert.deepEqual(
      files.filter((f) => f.startsWith('dist/stand-in') || f.endsWith('.map') || f.startsWith('src/') || f.startsWith('test/')),
      [],
    );
  });

  test('no runtime dependencies: every file shipped loads only Node builtins and files beside it', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: object; scripts: Record<string, string> };
    assert.equal(pkg.dependencies, undefined);
    assert.equal(pkg.scripts.prepare, 'npm run build', 'a clone, a packed copy and a git install are built');
    for (const file of files.filter((f) => /\.(c?js)$/.test(f))) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      // (Code that ajv writes as text, in strings, is not code that runs.)
      for (const [, name] of text.matchAll(/(?<![`'"\w.])require\("([^"]+)"\)/g)) {
        if (name === undefined) continue;
        assert.ok(isBuiltin(name) || name.startsWith('./') || name.startsWith('../'), `${file} loads ${name}`);
        // A file beside it (dist/zod.cjs, say, loaded only by a turn that needs a schema) must ship too.
        if (!isBuiltin(name))
          assert.ok(files.includes(posix.join(posix.dirname(file), name)), `${file} loads ${name}, which is not shipped`);
      }
    }
  });

  test('an unbuilt copy says so in one line, not a stack trace', () => {
    const copy = tempDir('cr-unbuilt-');
    mkdirSync(join(copy, 'bin'));
    for (const f of ['cursor-resume.js', 'package.json']) writeFileSync(join(copy, 'bin', f), readFileSync(join(ROOT, 'bin', f)));
    const r = spawnSync(process.execPath, [join(copy, 'bin', 'cursor-resume.js'), '--version'], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      `cursor-resume: this copy is not built (no ${copy}/dist/boot.cjs); run npm install in ${copy}, or install a packed copy (README, Installing)\n`,
    );
  });

  test("runs through a symlink, as npm's global bin is, also where Node keeps the link's path (--preserve-symlinks-main)", () => {
    const bin = tempDir('cr-global-bin-');
    const link = join(bin, 'cursor-resume');
    symlinkSync(BIN, link);
    for (const nodeOptions of ['', '--preserve-symlinks-main']) {
      const r = spawnSync(link, ['--our-version'], { encoding: 'utf8', env: sandboxEnv({ NODE_OPTIONS: nodeOptions }) });
      assert.equal(r.stderr, '', nodeOptions);
      assert.equal(r.stdout, `${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}\n`);
      assert.equal(r.status, 0, nodeOptions);
    }
  });
});

describe('config set agent is checked when set', () => {
  const dir = tempDir();
  const plain = join(dir, 'plain-file');
  writeFileSync(plain, 'not a program');
  for (const [value, says] of [
    ['/no/such/file', '/no/such/file does not exist'],
    [dir, `${dir} is a directory`],
    [plain, `${plain} is not executable`],
    ['no-such-agent-anywhere', '"no-such-agent-anywhere" is not an executable on PATH'],
    [BIN, `${BIN} is cursor-resume itself, which would call itself without end`],
  ]) {
    test(`${value}: exit 2, one line, nothing written`, async () => {
      const env = sandboxEnv();
      const r = await runCli(['config', 'set', 'agent', value!], { env });
      assert.equal(r.code, 2);
      assert.match(
        r.stderr,
        new RegExp(
          `^cursor-resume: agent \\(config set\\): ${says!.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}; give the path of the cursor-agent executable, or its name on PATH[^\\n]*\\n$`,
        ),
      );
      assert.equal(existsSync(configOf(env)), false);
    });
  }
  test('a name whose first match on PATH is cursor-resume itself (a symlink): exit 2, nothing written', async () => {
    const bin = tempDir();
    symlinkSync(BIN, join(bin, 'cursor-agent'));
    const env = sandboxEnv({ PATH: `${bin}${delimiter}${process.env.PATH}` });
    const r = await runCli(['config', 'set', 'agent', 'cursor-agent'], { env });
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      `cursor-resume: agent (config set): "cursor-agent" (${join(bin, 'cursor-agent')} on PATH) is cursor-resume itself, which would call itself without end; give the path of the cursor-agent executable, or its name on PATH\n`,
    );
    assert.equal(existsSync(configOf(env)), false);
  });

  test('an executable file, or a name found on PATH, is taken', async () => {
    const env = sandboxEnv();
    assert.equal((await runCli(['config', 'set', 'agent', STAND_IN], { env })).code, 0);
    assert.equal((await runCli(['config', 'set', 'agent', 'sh'], { env })).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(configOf(env), 'utf8')), { agent: 'sh' });
  });
});

describe('a config file with a JSON syntax error', () => {
  const broken = '{\n  "ttlMinutes": 30,\n  "verbose" true\n}\n';

  test('turns run on the defaults, saying once where the error is', async () => {
    const env = world();
    const file = writeConfig(env, '{\n  "ttlMinutes": 30,\n  "verbose": tru\n}\n');
    const c = new Conversation(env);
    const r = await c.turn('remember: alpha');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stderr,
      `cursor-resume: ignoring the config file ${file}, which is not valid JSON: invalid symbol at line 3, column 14: running on the defaults; fix with cursor-resume config set NAME VALUE (the broken file is kept beside it), or edit it\n`,
    );
    assert.equal(c.invocations().length, 1);
    // A hand-over too.
    const status = await runCli(['status'], { env });
    assert.equal(status.code, 0);
    assert.match(status.stderr, /^cursor-resume: ignoring the config file [^\n]*line 3, column 14[^\n]*\n$/);
  });

  test('config list and get refuse it naming line and column; config set repairs it, keeping the broken file', async () => {
    const env = sandboxEnv();
    const file = writeConfig(env, broken);
    const list = await runCli(['config', 'list'], { env });
    assert.equal(list.code, 2);
    assert.match(
      list.stderr,
      /^cursor-resume: the config file \S+ is not valid JSON: colon expected at line 3, column 13; fix with cursor-resume config set NAME VALUE or config unset NAME \(the broken file is kept beside it\), or edit it\n$/,
    );
    const set = await runCli(['config', 'set', 'verbose', 'true'], { env });
    assert.equal(set.code, 0, set.stderr);
    const kept = readdirSync(join(file, '..')).filter((f) => f.startsWith('config.json.broken-'));
    assert.equal(kept.length, 1);
    assert.equal(readFileSync(join(file, '..', kept[0]!), 'utf8'), broken, 'nothing lost');
    assert.match(
      set.stderr,
      new RegExp(
        `^cursor-resume: note: the config file ${file.replace(/[.]/g, '\\.')} is not valid JSON: [^\\n]*: it was kept as \\S+${kept[0]!.replace(/[.]/g, '\\.')}, and a new one started\\n$`,
      ),
    );
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { verbose: true });
    assert.equal((await runCli(['config', 'list'], { env })).code, 0);
  });

  test('config unset of a name that is no setting is refused (exit 2) and leaves a broken file where it is; of a setting, sets it aside and starts no file', async () => {
    const env = sandboxEnv();
    const file = writeConfig(env, broken);
    const slip = await runCli(['config', 'unset', 'ttlMinuts'], { env });
    assert.equal(slip.code, 2);
    assert.equal(slip.stdout, '');
    assert.match(slip.stderr, /^cursor-resume: unknown setting "ttlMinuts"; the settings are: /);
    assert.equal(readFileSync(file, 'utf8'), broken, 'the file as it was, where it was');
    assert.deepEqual(readdirSync(join(file, '..')), ['config.json']);
    const unset = await runCli(['config', 'unset', 'ttlMinutes'], { env });
    assert.equal(unset.code, 0, unset.stderr);
    const kept = readdirSync(join(file, '..')).filter((f) => f.startsWith('config.json.broken-'));
    assert.equal(kept.length, 1);
    assert.equal(readFileSync(join(file, '..', kept[0]!), 'utf8'), broken, 'nothing lost');
    assert.equal(existsSync(file), false, 'nothing to write: no new file');
    assert.match(unset.stderr, /^cursor-resume: note: the config file \S+ is not valid JSON: [^\n]*: it was kept as \S+\n$/);
    assert.equal(unset.stdout, `ttlMinutes is not set in ${file}\n`);
  });
});

describe('a workspace that does not exist, or is a file', () => {
  const file = join(tempDir(), 'a-file');
  writeFileSync(file, '');
  const transcript = (workspace: string) => JSON.stringify({ model: 'gpt-5', workspace, messages: [{ role: 'user', content: 'hi' }] });
  for (const [workspace, problem, shown = workspace] of [
    ['/no/such/workspace', 'does not exist'],
    [file, 'is not a directory'],
    // The transcript may hold C1 and bidi controls in its workspace (C0 ones it may not): said escaped.
    ['/no/such/w\u009b2J\u202e', 'does not exist', '/no/such/w\\u009b2J\\u202e'],
  ]) {
    test(`${problem}: refused up front by a run, --dry-run and inspect --transcript (${shown})`, async () => {
      const env = sandboxEnv({ CURSOR_RESUME_ENABLED: '1', CURSOR_STAND_IN_LOG: join(tempDir(), 'agent.jsonl') });
      const line = (from: string) =>
        `cursor-resume: the workspace ${shown} (${from}) ${problem}; nothing was run. Give an existing folder (--workspace DIR), or run in one\n`;
      for (const args of [['--print'], ['--dry-run']]) {
        const r = await runCli(args, { env, input: transcript(workspace!) });
        assert.deepEqual([r.code, r.stderr, r.stdout], [2, line('from the transcript'), ''], args.join(' '));
      }
      const flag = await runCli(['--dry-run', '--workspace', workspace!], { env, input: transcript(tempDir()) });
      assert.deepEqual([flag.code, flag.stderr], [2, line('from --workspace')]);
      const body = join(tempDir(), 'body.json');
      writeFileSync(body, transcript(workspace!));
      const inspect = await runCli(['inspect', '--transcript', body], { env });
      assert.deepEqual([inspect.code, inspect.stderr], [2, line('from the transcript')]);
      assert.deepEqual(readLog(env.CURSOR_STAND_IN_LOG!), [], 'cursor-agent never ran');
      // simulate stays a reproduction of someone else's transcript: its paths need not exist here.
      assert.equal((await runCli(['simulate', body], { env })).code, 0);
    });
  }
});

describe('a current directory deleted from under the shell', () => {
  // The shell cds into a folder, deletes it and starts cursor-resume there, as a user whose folder went away would.
  const inGone = (args: string[], env: NodeJS.ProcessEnv, input: string) => {
    const dir = join(tempDir(), 'gone');
    mkdirSync(dir);
    const quoted = [process.execPath, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
    return spawnSync('sh', ['-c', `cd '${dir}' && rmdir "$PWD" && exec ${quoted}`], { env, input, encoding: 'utf8' });
  };
  const body = JSON.stringify({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }] });
  const line =
    'cursor-resume: the current directory no longer exists (it was deleted); nothing was run. cd into an existing folder, or give one by its absolute path (--workspace DIR)\n';

  test('a workspace taken from it (none given, or a relative one): exit 2, one line, nothing run; an absolute one still plans', () => {
    const env = sandboxEnv({ CURSOR_RESUME_ENABLED: '1', CURSOR_STAND_IN_LOG: join(tempDir(), 'agent.jsonl') });
    for (const [args, input] of [
      [['--print'], body],
      [['--print'], 'hello, in plain words'],
      [['--dry-run'], body],
      [['--dry-run', '--workspace', 'sub'], body],
      [['inspect', '--transcript', '-'], body],
      [['simulate', '-'], body],
    ] as const) {
      const r = inGone([...args], env, input);
      assert.deepEqual([r.status, r.stderr, r.stdout], [2, line, ''], args.join(' '));
    }
    assert.deepEqual(readLog(env.CURSOR_STAND_IN_LOG!), [], 'cursor-agent never ran');
    const workspace = tempDir('cr-ws-');
    const dry = inGone(['--dry-run', '--workspace', workspace], env, body);
    assert.equal(dry.status, 0, dry.stderr);
    assert.equal(JSON.parse(dry.stdout).decision, 'fresh');
    const sim = inGone(['simulate', '--workspace', workspace, '-'], env, body);
    assert.equal(sim.status, 0, sim.stderr);
  });

  test('config set of a relative trace file or agent path: exit 2, one line, nothing written; an absolute one is taken', () => {
    const env = sandboxEnv();
    for (const setting of ['trace', 'agent']) {
      const r = inGone(['config', 'set', setting, './relative'], env, '');
      assert.deepEqual(
        [r.status, r.stderr, r.stdout],
        [
          2,
          `cursor-resume: the current directory no longer exists (it was deleted); nothing was written. cd into an existing folder, or give ${setting} as an absolute path\n`,
          '',
        ],
      );
    }
    assert.equal(existsSync(configOf(env)), false, 'no config file was started');
    const trace = join(tempDir(), 'trace.jsonl');
    const set = inGone(['config', 'set', 'trace', trace], env, '');
    assert.equal(set.status, 0, set.stderr);
    assert.equal(JSON.parse(readFileSync(configOf(env), 'utf8')).trace, trace);
  });
});

describe('the stand-in', () => {
  test('writes its chats into a private folder, never $HOME/.cursor, unless CURSOR_CONFIG_DIR says where', () => {
    const home = tempDir('cr-home-');
    const tmp = tempDir('cr-tmp-');
    const workspace = tempDir('cr-ws-');
    const env = { PATH: process.env.PATH, HOME: home, TMPDIR: tmp };
    const r = spawnSync(STAND_IN, ['--print', '--workspace', workspace], { env, input: 'hello', encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(existsSync(join(home, '.cursor')), false);
    const own = readdirSync(tmp).filter((f) => f.startsWith('cursor-agent-stand-in-'));
    assert.equal(own.length, 1);
    assert.equal(readdirSync(join(tmp, own[0]!, 'chats')).length, 1);
    const chosen = tempDir('cr-cursor-');
    assert.equal(
      spawnSync(STAND_IN, ['--print', '--workspace', workspace], { env: { ...env, CURSOR_CONFIG_DIR: chosen }, input: 'hello' }).status,
      0,
    );
    assert.equal(readdirSync(join(chosen, 'chats')).length, 1);
  });
});

describe('--json conventions', () => {
  test('helper status gives startedAt as an ISO string; helper stop says running: false', async () => {
    const env = world();
    assert.equal((await runCli(['helper', 'start'], { env })).code, 0);
    const status = JSON.parse((await runCli(['helper', 'status', '--json'], { env })).stdout) as { startedAt: unknown; uptimeMs: unknown };
    assert.equal(typeof status.startedAt, 'string');
    assert.equal(new Date(status.startedAt as string).toISOString(), status.startedAt);
    assert.equal(typeof status.uptimeMs, 'number');
    const stop = JSON.parse((await runCli(['helper', 'stop', '--json'], { env })).stdout) as Record<string, unknown>;
    assert.deepEqual([stop.running, stop.stopped], [false, true]);
    assert.deepEqual(JSON.parse((await runCli(['helper', 'stop', '--json'], { env })).stdout), { running: false, stopped: false });
  });
});
