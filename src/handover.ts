// A run line cursor-agent takes whole (one of its subcommands, --version, a prompt
// word, or an interactive session on a terminal) is handed to it by boot.cjs before
// the CLI bundle loads: the plugin's --version probe, which blocks OpenCode's start,
// then costs one Node start more than cursor-agent alone (BENCHMARKS.md). Anything
// else (one of our commands, a slip of one, --help, --dry-run, a bad command line or
// agent setting) goes to the CLI, which decides and reports as before. The settings
// are resolved as a run resolves them (config.ts), bad ones said the same way; with
// no config file and none of our variables but the agent and the resume switch there
// is nothing to resolve, and the settings table is not even loaded. It is a bundle of its
// own beside boot.cjs (dist/settings.cjs, scripts/build.mjs): boot.cjs is compiled on every
// run, with no code cache, and a turn never uses the table from there.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { callerChat, handsOver, parseCallerArgs, type CallerArgs } from './agent/argv.js';
import { DEFAULT_AGENT, passthrough } from './agent/passthrough.js';
import { configFile } from './config-path.js';
import { envValue } from './env-value.js';
import { builtin } from './lazy-builtin.js';
import { parseSwitch } from './resume/enabled.js';
import { MARK } from './self-call.js';
import { OUR_COMMANDS, slipOnRunLine } from './near-miss.js';

/** cursor-agent's arguments when the whole line is cursor-agent's; undefined when the CLI must look at it. */
export function agentLine(argv: ReadonlyArray<string>, stdinIsTty: () => boolean): CallerArgs | undefined {
  const first = argv[0];
  if (first === '--our-version' || (OUR_COMMANDS as readonly string[]).includes(first ?? '') || slipOnRunLine(argv) !== undefined)
    return undefined;
  let caller: CallerArgs;
  try {
    caller = parseCallerArgs(argv);
  } catch {
    return undefined;
  }
  if (caller.dryRun || (caller.help && caller.positionals.length === 0)) return undefined;
  // A line that continues a chat itself makes the CLI forget that chat's cache entries first (turn/caller-chat.ts).
  if (callerChat(caller, stdinIsTty) !== null) return undefined;
  return handsOver(caller) || stdinIsTty() ? caller : undefined;
}

/**
 * The agent, when nothing about the settings could need saying: no config file, and
 * none of our variables set but the agent and a valid CURSOR_RESUME_ENABLED (the shared
 * CURSOR_ACP_SESSION_RESUME is not ours, and has no wrong value: enabled.ts). Else undefined,
 * and the settings are resolved in full, as a run resolves them.
 */
export function plainAgent(env: NodeJS.ProcessEnv, path: string = configFile()): string | undefined {
  for (const [name, value] of Object.entries(env)) {
    // The self-call mark is not a setting.
    if (name === 'CURSOR_RESUME_AGENT' || name === MARK || envValue(value) === undefined) continue;
    if (name === 'CURSOR_RESUME_ENABLED' ? parseSwitch(value!) === undefined : name.startsWith('CURSOR_RESUME_')) return undefined;
  }
  return existsSync(path) ? undefined : (envValue(env.CURSOR_RESUME_AGENT) ?? DEFAULT_AGENT);
}

/** Hands the line over and gives cursor-agent's exit status, or undefined for the CLI to run it. */
export async function handOver(argv: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<number | undefined> {
  // isatty(0), not process.stdin.isTTY: creating that stream would make fd 0 non-blocking for cursor-agent.
  const caller = agentLine(argv, () => builtin<typeof import('node:tty')>('node:tty').isatty(0));
  if (caller === undefined) return undefined;
  let agent = plainAgent(env);
  if (agent === undefined) {
    // Loaded only now: the settings table (and zod) cost a hand-over about 10 ms.
    const { resolveRunSettings } = createRequire(import.meta.url)('./settings.cjs') as typeof import('./config.js');
    let run;
    try {
      run = resolveRunSettings(env, {
        ...(caller.verbose ? { verbose: true } : {}),
        ...(caller.trace !== undefined ? { trace: caller.trace } : {}),
      });
    } catch {
      // An agent setting that cannot be used: the CLI says why.
      return undefined;
    }
    // As on the run path: a bad setting other than the agent is said once, then ignored.
    for (const line of run.ignored) process.stderr.write(`cursor-resume: ${line}\n`);
    agent = run.settings.agent;
  }
  return passthrough(agent, caller.agentArgs, env);
}
