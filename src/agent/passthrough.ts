// Hands a command line to cursor-agent unchanged (its subcommands, an interactive
// session): stdio inherited, exit status kept. Not the hot path, so execa's clear
// error reporting is worth its load time here.
import { constants } from 'node:os';

export const EXIT_NOT_FOUND = 127;
export const EXIT_NOT_EXECUTABLE = 126;

export function signalExit(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Why cursor-agent could not be started: its exit status, its trace failure, and what to do. */
export function notFoundMessage(agent: string, error: NodeJS.ErrnoException): { code: number; kind: 'not-found' | 'not-executable'; message: string } {
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

export async function passthrough(agent: string, argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { execa } = await import('execa');
  const child = execa(agent, argv, { stdio: 'inherit', reject: false, env, extendEnv: false });
  const relay = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, relay);
  const result = await child;
  for (const s of signals) process.off(s, relay);
  if (result.signal) return signalExit(result.signal);
  if (result.failed && result.exitCode === undefined) {
    const cause = (result.cause ?? {}) as NodeJS.ErrnoException;
    const { code, message } = notFoundMessage(agent, cause);
    process.stderr.write(`cursor-resume: ${message}\n`);
    return code;
  }
  return result.exitCode ?? 1;
}
