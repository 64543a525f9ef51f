// A helper's start held ready while cursor-agent runs. A turn with no helper hands
// its record to a helper it starts at its end (hand-off.ts); spawning there cost the
// end of the turn a fork of the whole run (a 46 MB process), the run blocked until
// the child had exec'd: 7 to 8 ms here. Instead a shell is forked while cursor-agent
// starts, and waits on a pipe using no CPU; the end of the turn only writes to it.
// A run that ends without needing it, or dies, closes the pipe: `read` fails and the
// shell exits having started nothing.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { alive } from './alive.js';

/**
 * The shell's program: one line, then the helper in its place (same pid, session and
 * environment, less the PWD a shell exports: the helper keeps only what it is given).
 * `read` takes a pipe byte by byte, so what follows the line is left on stdin for the
 * helper.
 */
const WAIT_FOR_GO = 'read -r go && unset PWD && exec "$0" "$@"';
const GO = 'go\n';

export class HeldStart {
  #exited = false;
  #released = false;

  private constructor(private readonly child: ChildProcess & { stdin: NonNullable<ChildProcess['stdin']> }) {
    child.once('exit', () => (this.#exited = true));
    // A shell killed while held: its pipe refuses a write (see release).
    child.stdin.on('error', () => {});
    child.unref();
  }

  /**
   * Forks `shell` to wait for the go, with the helper's command, environment and
   * detachment; null if it cannot be started (no shell there): the helper is then
   * spawned at the hand-off itself.
   */
  static hold(command: { file: string; args: string[]; options: SpawnOptions }, shell: string): HeldStart | null {
    let child: ChildProcess;
    try {
      child = spawn(shell, ['-c', WAIT_FOR_GO, command.file, ...command.args], { ...command.options, stdio: ['pipe', 'ignore', 'ignore'] });
    } catch {
      return null;
    }
    // A shell that could not be executed: Node reports it as an event, yet no pid says so now.
    child.once('error', () => {});
    if (child.pid === undefined || !child.stdin) {
      child.stdin?.destroy();
      return null;
    }
    return new HeldStart(child as ChildProcess & { stdin: NonNullable<ChildProcess['stdin']> });
  }

  /**
   * Starts the helper with `input` on its stdin and returns its process (the shell's
   * pid, now the helper's); null when the shell is known to be gone (killed), and
   * `orElse` is called if the pipe turns out to be closed as it is written: either way
   * the caller starts the helper itself. Up to the socket pair's buffer (some 200 KB)
   * this is written at once; a longer input keeps the run until the helper reads it.
   */
  release(input = '', orElse: () => void = () => {}): ChildProcess | null {
    // A shell killed whose exit Node has not reaped yet is a zombie: a pipe to it takes the write and fails later.
    if (this.#exited || this.child.stdin.destroyed || !alive(this.child.pid!)) return null;
    this.#released = true;
    // Nobody read the input (the shell died, or the helper before it had read all): nobody will deliver it.
    this.child.stdin.once('error', orElse);
    this.child.stdin.end(GO + input);
    return this.child;
  }

  /** Lets the shell go without starting anything (the turn did not need it); once released, leaves it be. */
  dismiss(): void {
    if (!this.#released) this.child.stdin.destroy();
  }
}
