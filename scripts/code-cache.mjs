// The build's last step: the V8 code cache of the CLI bundle (dist/cli.cjs.cache), which
// dist/boot.cjs loads with it (src/boot.ts says why). V8 caches what a run compiled, so
// the cache is taken from a real resumed turn: a private world with its own helper and
// the bundled stand-in agent, a first turn through the CLI, then the second turn in a
// child that compiles the CLI without a cache and writes the cache as it exits.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('..', import.meta.url));
const boot = require('../dist/boot.cjs');
const RUN_LINE = ['--print', '--output-format', 'stream-json', '--stream-partial-output', '--model', 'gpt-5'];

if (process.env.CURSOR_RESUME_CODE_CACHE_CHILD === '1') {
  const { script } = boot.startCli({ useCache: false });
  process.on('exit', () => {
    const data = script.createCachedData();
    writeFileSync(boot.CACHE_FILE, Buffer.concat([boot.cacheDigest(readFileSync(boot.CLI_FILE), data), data]));
  });
} else {
  const world = realpathSync(mkdtempSync(join(tmpdir(), 'cursor-resume-code-cache-')));
  const env = {
    PATH: process.env.PATH,
    HOME: world,
    CURSOR_ACP_SESSION_RESUME: '1',
    CURSOR_RESUME_AGENT: join(root, 'dist', 'stand-in', 'cursor-agent.js'),
    CURSOR_RESUME_RUNTIME_DIR: join(world, 'run'),
    CURSOR_CONFIG_DIR: join(world, 'cursor'),
    XDG_CONFIG_HOME: join(world, 'config'),
  };
  const tools = ['read', 'edit', 'bash'].map((name) => ({
    type: 'function',
    function: {
      name,
      description: `The ${name} tool.`,
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  }));
  const messages = [
    { role: 'system', content: 'You are a careful coding agent.' },
    { role: 'user', content: 'remember: the service listens on port 8080' },
  ];
  const body = () => JSON.stringify({ model: 'gpt-5', workspace: world, messages, tools });
  const turn = (script, extraEnv) => {
    const run = spawnSync(process.execPath, [script, ...RUN_LINE], { env: { ...env, ...extraEnv }, input: body(), encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`a turn failed (exit ${run.status}): ${run.stderr}`);
    return JSON.parse(run.stdout.trim().split('\n').at(-1)).result;
  };
  try {
    messages.push({ role: 'assistant', content: turn(join(root, 'bin', 'cursor-resume.js')) });
    messages.push({ role: 'user', content: 'Which port?' });
    turn(fileURLToPath(import.meta.url), { CURSOR_RESUME_CODE_CACHE_CHILD: '1' });
    if (statSync(boot.CACHE_FILE).size === 0) throw new Error('the code cache is empty');
  } finally {
    spawnSync(process.execPath, [join(root, 'bin', 'cursor-resume.js'), 'helper', 'stop'], { env });
    rmSync(world, { recursive: true, force: true });
  }
}
