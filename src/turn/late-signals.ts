// A caller's SIGINT, SIGTERM or SIGHUP that comes once cursor-agent has ended. While it
// runs, runAgent relays such a signal to it; after, Node's default action would kill us
// in the middle of the turn's record and trace (the OpenCode plugin sends SIGTERM as soon
// as it sees a tool call, which a held burst of output may show only after cursor-agent
// has exited). Instead the turn finishes its bookkeeping and exits with cursor-agent's own
// status, as if the signal had reached cursor-agent run directly, after its exit; a turn
// that cannot finish within LATE_SIGNAL_GRACE_MS (passthrough.ts) dies of the signal after all. Installed
// until the process exits: a signal while it closes its connections, flushes its output
// or is torn down is as late, and must not turn cursor-agent's status into a death by signal.
import { dieOfLater, exitWhenDone, RELAYED_SIGNALS } from '../agent/passthrough.js';
import type { AgentRun } from '../agent/run-agent.js';

export class LateSignals {
  /** The first signal that came while no cursor-agent ran, if any. */
  signal: NodeJS.Signals | null = null;
  #running = false;
  /** A signal that came while cursor-agent ran: runAgent's relay took it, unless cursor-agent had just exited. */
  #whileRunning: NodeJS.Signals | null = null;
  readonly #handler = (signal: NodeJS.Signals): void => {
    if (this.#running) this.#whileRunning ??= signal;
    else this.#late(signal);
  };

  constructor() {
    for (const signal of RELAYED_SIGNALS) process.on(signal, this.#handler);
    // The OpenCode plugin's SIGTERM, read late on a busy machine, may land as the process ends.
    exitWhenDone();
  }

  /** Waits for a cursor-agent run; a signal in the moment between its exit and the run's end, which nobody relayed, counts as late. */
  async around(run: Promise<AgentRun>): Promise<AgentRun> {
    this.#running = true;
    this.#whileRunning = null;
    const result = await run.finally(() => (this.#running = false));
    if (result.endedByCaller === null && this.#whileRunning !== null) this.#late(this.#whileRunning);
    return result;
  }

  /**
   * Once the turn's bookkeeping is done after the caller's signal ended cursor-agent: output
   * the caller has still not read LATE_SIGNAL_GRACE_MS later is not waited for any longer, and
   * the process dies of the signal, as cursor-agent would have at once. Anything else still
   * under way then (a record handed to a helper starting) goes on.
   */
  endedBy(signal: NodeJS.Signals): void {
    if (this.signal !== null) return;
    dieOfLater(signal, this.#handler, () => this.signal === null && process.stdout.writableLength > 0);
  }

  #late(signal: NodeJS.Signals): void {
    if (this.signal !== null) return;
    this.signal = signal;
    dieOfLater(signal, this.#handler);
  }
}
