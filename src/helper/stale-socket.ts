// What a starting helper finds at its socket path: a helper that answers (of any
// version), or what a dead one left behind, which it removes. Only called under the
// start lock.
import fs from 'node:fs';
import { HelperClient, HelperError } from './client.js';

/** How long a socket found at start-up gets to answer hello before it counts as dead. */
const PROBE_TIMEOUT_MS = 1_000;

/** Nothing usable answers: no listener, a dead helper's file, or one connected but silent (wedged: it is replaced, and exits when it sees its socket gone). */
const NO_ANSWER: ReadonlySet<string> = new Set(['not-running', 'timeout', 'closed', 'connect-failed']);

/** True if something at `socketPath` answers a hello (with any version, or an error reply) within PROBE_TIMEOUT_MS. */
export async function socketAnswers(socketPath: string): Promise<boolean> {
  let client: HelperClient | undefined;
  try {
    client = await HelperClient.connect(socketPath, { connectTimeoutMs: PROBE_TIMEOUT_MS, requestTimeoutMs: PROBE_TIMEOUT_MS });
    await client.hello();
    return true;
  } catch (error) {
    return !(error instanceof HelperError && NO_ANSWER.has(error.code));
  } finally {
    client?.close();
  }
}

/** Removes what a dead helper left at the socket path, after it did not answer. */
export function removeStaleSocket(socketPath: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch {
    return;
  }
  if (stat.isDirectory()) {
    throw new Error(`${socketPath} is a directory, not the helper's socket; remove it`);
  }
  fs.rmSync(socketPath, { force: true });
}
