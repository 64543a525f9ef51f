// `npm run demo`: a three-turn conversation through the built cursor-resume and the
// bundled stand-in cursor-agent, in a private temp world. Turn 1 starts a fresh chat;
// turns 2 and 3 resume it and send only the new message.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const world = realpathSync(mkdtempSync(join(tmpdir(), 'cursor-resume-demo-')));
const trace = join(world, 'trace.jsonl');
const env = {
  ...process.env,
  CURSOR_RESUME_ENABLED: '1',
  CURSOR_RESUME_AGENT: join(root, 'dist', 'stand-in', 'cursor-agent.js'),
  CURSOR_RESUME_RUNTIME_DIR: join(world, 'run'),
  CURSOR_CONFIG_DIR: join(world, 'cursor'),
  XDG_CONFIG_HOME: join(world, 'config'),
  CURSOR_RESUME_TRACE: trace,
};
const cli = (args, input) =>
  spawnSync(process.execPath, [join(root, 'bin', 'cursor-resume.js'), ...args], { env, input, encoding: 'utf8' });

const system = { role: 'system', content: 'You are a careful coding agent. '.repeat(40).trim() };
const tools = ['read', 'edit', 'bash', 'grep'].map((name) => ({
  type: 'function',
  function: { name, description: `The ${name} tool.`, parameters: { type: 'object', properties: { path: { type: 'string' } } } },
}));
const userTurns = [
  'remember: the service listens on port 8080',
  'remember: the config lives in /etc/app.toml',
  'Which port, and where is the config?',
];

const messages = [system];
let failed = false;
try {
  for (const [i, text] of userTurns.entries()) {
    messages.push({ role: 'user', content: text });
    const body = JSON.stringify({ model: 'gpt-5', workspace: world, messages, tools });
    const run = cli(['--print', '--output-format', 'json'], body);
    if (run.status !== 0) throw new Error(`turn ${i + 1} failed (exit ${run.status}): ${run.stderr}`);
    const reply = JSON.parse(run.stdout).result;
    const t = JSON.parse(readFileSync(trace, 'utf8').trim().split('\n').at(-1));
    console.log(
      `turn ${i + 1}: ${t.decision.padEnd(12)} (${t.reason})  sent ${String(t.promptBytes).padStart(5)} of ${t.fullPromptBytes} bytes  chat ${t.chatId.slice(0, 8)}`,
    );
    console.log(`        cursor: ${reply}`);
    messages.push({ role: 'assistant', content: reply });
  }
  console.log('\nThe cache now holds (cursor-resume inspect):');
  process.stdout.write(cli(['inspect'], '').stdout);
} catch (error) {
  failed = true;
  console.error(`demo failed: ${error.message}`);
} finally {
  cli(['helper', 'stop'], '');
  rmSync(world, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
