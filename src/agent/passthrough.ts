// Hands a command line to cursor-agent unchanged (its subcommands, --version, a prompt
// word, an interactive session): stdio inherited, SIGINT, SIGTERM and SIGHUP relayed,
// its exit status kept (128+N when it died of signal N). node:child_process alone, so
// that boot.cjs can do this before the CLI bundle loads (src/handover.ts).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** The agent setting's default: cursor-agent on PATH. */
export const DEFAULT_AGENT = 'cursor-agent';

export const EXIT_NOT_FOUND = 127;
export const EXIT_NOT_EXECUTABLE = 126;

export function signalExit(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Why cursor-agent could not be started: its exit status, its trace failure, and what to do. */
export function notFoundMessage(
  agent: string,
  error: NodeJS.ErrnoException,
): { code: number; kind: 'not-found' | 'not-executable'; message: string } {
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

const RELAYED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function passthrough(agent: string, argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(agent, argv, { stdio: 'inherit', env });
    const relay = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    for (const s of RELAYED) process.on(s, relay);
    const done = (code: number): void => {
      for (const s of RELAYED) process.off(s, relay);
      resolve(code);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      const { code, message } = notFoundMessage(agent, error);
      process.stderr.write(`cursor-resume: ${message}\n`);
      done(code);
    });
    child.once('exit', (code, signal) => done(signal ? signalExit(signal) : (code ?? 1)));
  });
}
