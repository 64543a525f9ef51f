// Hands a command line to cursor-agent unchanged (its subcommands, --version, a prompt
// word, an interactive session): stdio inherited, SIGINT, SIGTERM and SIGHUP relayed,
// its exit status kept (128+N when it died of signal N). node:child_process alone, so
// that boot.cjs can do this before the CLI bundle loads (src/handover.ts).
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { constants } from 'node:os';

/** The agent setting's default: cursor-agent on PATH. */
export const DEFAULT_AGENT = 'cursor-agent';

export const EXIT_NOT_FOUND = 127;
export const EXIT_NOT_EXECUTABLE = 126;

export function signalExit(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Whether exec had a file to run as `agent`: the path it names, or a name (the default,
 * cursor-agent) in a folder of the PATH it was looked up on, as execvp looks (an empty
 * entry is the current folder; no PATH, the system's default one).
 */
function agentFileThere(agent: string, env: NodeJS.ProcessEnv): boolean {
  if (agent.includes('/')) return isFile(agent);
  return (env.PATH ?? '/usr/bin:/bin').split(':').some((dir) => isFile(`${dir === '' ? '.' : dir}/${agent}`));
}

/** Why cursor-agent could not be started: its exit status, its trace failure, and what to do. */
export function notFoundMessage(
  agent: string,
  error: NodeJS.ErrnoException,
  env: NodeJS.ProcessEnv = process.env,
): { code: number; kind: 'not-found' | 'not-executable'; message: string } {
  // The file is there, yet exec finds nothing to run: the interpreter its #! line names (or the loader a binary needs) is missing.
  if (error.code === 'ENOENT' && agentFileThere(agent, env)) {
    return {
      code: EXIT_NOT_FOUND,
      kind: 'not-found',
      message: `cannot run cursor-agent "${agent}": the interpreter its #! line names was not found. Fix that line (or install the interpreter), or set CURSOR_RESUME_AGENT (or \`cursor-resume config set agent PATH\`) to another cursor-agent.`,
    };
  }
  if (error.code === 'ENOENT') {
    return {
      code: EXIT_NOT_FOUND,
      kind: 'not-found',
      message: `cursor-agent not found: "${agent}". Install it, or set CURSOR_RESUME_AGENT (or \`cursor-resume config set agent PATH\`) to its path.`,
    };
  }
  return {
    code: EXIT_NOT_EXECUTABLE,
    kind: 'not-executable',
    message: `cannot run cursor-agent "${agent}": ${error.message}. Check CURSOR_RESUME_AGENT and the file's permissions.`,
  };
}

/** The signals a caller ends a run with: relayed to cursor-agent while it runs (and, once it has ended, see turn/late-signals.ts). */
export const RELAYED_SIGNALS: ReadonlyArray<NodeJS.Signals> = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** How long what follows cursor-agent's exit may keep a process a late signal asked to stop (a helper that stalls, 500 ms a request). */
const LATE_SIGNAL_GRACE_MS = 1500;

/**
 * Ends the process by process.exit() once nothing is left to do. Left to itself, Node tears
 * the process down first (V8's heap alone takes tens of ms) with the default action back for
 * the signals it watched, so a caller's signal then kills it after all, cursor-agent's status
 * lost: ending this way keeps the handlers to the very end. A 'beforeExit' listener added
 * after it never runs (node:test reports there: keep this out of an in-process test).
 */
export function exitWhenDone(): void {
  process.once('beforeExit', (code) => process.exit(code));
}

/**
 * A late signal's end: if the process is still there LATE_SIGNAL_GRACE_MS from now (and `still()`
 * holds then), `handler` comes off and it dies of `signal`. Unref'd: a process that ends by itself
 * meanwhile is not kept for it.
 */
export function dieOfLater(signal: NodeJS.Signals, handler: (signal: NodeJS.Signals) => void, still: () => boolean = () => true): void {
  setTimeout(() => {
    if (!still()) return;
    for (const s of RELAYED_SIGNALS) process.off(s, handler);
    process.kill(process.pid, signal);
  }, LATE_SIGNAL_GRACE_MS).unref();
}

export function passthrough(agent: string, argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const relay = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    // Listening before the spawn: a signal sent as soon as cursor-agent shows itself (it may print before
    // this process runs on) would otherwise find no handler and kill us with the default action. A
    // handler runs from the event loop, after `child` is set.
    for (const s of RELAYED_SIGNALS) process.on(s, relay);
    const child = spawn(agent, argv, { stdio: 'inherit', env });
    // Once cursor-agent has ended a signal is late, as one that reached cursor-agent after its exit:
    // the exit stays its own, unless what follows (forgetting a chat the line continued) outlasts the grace.
    let lateSignal: NodeJS.Signals | null = null;
    const late = (signal: NodeJS.Signals): void => {
      if (lateSignal !== null) return;
      lateSignal = signal;
      dieOfLater(signal, late);
    };
    const done = (code: number): void => {
      // The late handler first: with none at all for a moment, Node restores the default action, and a signal then kills.
      for (const s of RELAYED_SIGNALS) process.on(s, late).off(s, relay);
      exitWhenDone();
      resolve(code);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      const { code, message } = notFoundMessage(agent, error, env);
      process.stderr.write(`cursor-resume: ${message}\n`);
      done(code);
    });
    child.once('exit', (code, signal) => done(signal ? signalExit(signal) : (code ?? 1)));
  });
}
