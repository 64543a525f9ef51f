// Child processes in the tests: collecting what one prints and how it ends, finding the
// helper processes of a runtime dir (Linux /proc), waiting for a condition, and cleaning up.
// A test waits for what it needs to see, never a fixed time, and never asserts on timing.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** What `child` prints, as it comes (`output`; a stream it does not pipe stays ''), and all of it with how it ended (`closed`). */
export function watch(child: ChildProcess): { output: { stdout: string; stderr: string }; closed: Promise<RunResult> } {
  const output = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (output.stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (output.stderr += d));
  // The program may stop reading early (oversized input, a refused run): that is what some tests check.
  child.stdin?.on('error', () => {});
  const closed = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, ...output }));
  });
  return { output, closed };
}

/** Runs `command` to its end: `input` on its stdin, then closed. */
export function runProcess(
  command: string,
  args: string[],
  options: { env: NodeJS.ProcessEnv; cwd?: string; input?: string | Buffer },
): Promise<RunResult> {
  const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const { closed } = watch(child);
  child.stdin.end(options.input ?? '');
  return closed;
}

/**
 * Generous bounded wait for a condition: a test never asserts on timing, only on outcomes.
 * A test that means a tighter bound (it is part of what it checks) passes its own `timeoutMs`.
 */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(20);
  }
}

/**
 * Helper processes serving `runtimeDir` (running, not zombies), found through /proc (Linux). With
 * 'held', the shells holding a helper's start for a first turn (held-start.ts): the same command
 * and environment, not yet a Node program.
 */
export function helperPids(runtimeDir: string, which: 'running' | 'held' = 'running'): number[] {
  const node = realpathSync(process.execPath);
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!/helper-server\.c?js/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) continue;
      if (!alive(Number(entry))) continue;
      if ((readlinkSync(`/proc/${entry}/exe`) === node) !== (which === 'running')) continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`CURSOR_RESUME_RUNTIME_DIR=${runtimeDir}`))
        pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** Running, not a zombie (a detached helper's parent may never reap it). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Kills whatever is left of a process group a test started (orphaned agents included). */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // nothing left
  }
}
