// Runs the built binary as a user would: a real child process, stdin piped in.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { watch, type RunResult } from './processes.js';

export type { RunResult };

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'cursor-resume.js');
export const STAND_IN = join(ROOT, 'dist', 'stand-in', 'cursor-agent.js');

const made: string[] = [];
// Each test file runs in its own process: its temp folders go when it ends.
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = 'cr-test-'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/**
 * A stand-in's slow start that lasts until the test opens it: `mode` for CURSOR_STAND_IN_MODE,
 * then `open()`. Opened after the test whatever happens, so a failing one does not leave the
 * stand-in waiting (and its test file's process with it).
 */
export function startGate(t: { after: (fn: () => void) => void }): { mode: string; open: () => void } {
  const file = join(tempDir('cr-gate-'), 'open');
  const open = (): void => writeFileSync(file, '');
  t.after(open);
  return { mode: `start-gate=${file}`, open };
}

/** An executable script named `name` in a temp folder of its own: `text` whole, its #! line included (a cursor-agent of the test's making). */
export function scriptAgent(name: string, text: string): string {
  const file = join(tempDir('cr-agent-'), name);
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}

/** A private world for one test: runtime dir, config home, Cursor config dir, workspace. */
export function sandboxEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv & { HOME: string } {
  const home = tempDir('cr-home-');
  return {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_RUNTIME_DIR: '',
    CURSOR_RESUME_RUNTIME_DIR: join(home, 'run'),
    CURSOR_CONFIG_DIR: join(home, '.cursor'),
    CURSOR_RESUME_AGENT: STAND_IN,
    ...extra,
  } as NodeJS.ProcessEnv & { HOME: string };
}

export function runCli(
  args: string[],
  options: {
    input?: string | Buffer;
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** Write stdin only after this long (a slow caller). */ delayMs?: number;
  } = {},
): Promise<RunResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? sandboxEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const { closed } = watch(child);
  if (options.delayMs === undefined) child.stdin.end(options.input ?? '');
  else setTimeout(() => child.stdin.end(options.input ?? ''), options.delayMs);
  return closed;
}

/** A spawned cursor-resume in its own process group, so a test can kill it alone and later clean up what it left (killGroup). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess & ReturnType<typeof watch> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  return Object.assign(child, watch(child));
}
