// What reaches the caller besides cursor-agent's live stream: the answer translated
// for a caller that asked for text or json.
import { MAX_HELD_TAP_LINE, type AgentRun } from '../agent/run-agent.js';
import { writeStdout } from '../stdout.js';
import type { Plan } from './plan.js';

/** A caller that asked for text or json while we run stream-json to learn the chat ID. */
export const translates = (plan: Plan): boolean => plan.record && plan.callerFormat !== 'stream-json';

/**
 * Passes on what a judged run still holds and, for a caller that asked for text or json,
 * prints what that format would have printed.
 */
export async function deliver(run: AgentRun, plan: Plan): Promise<void> {
  run.flushHeld();
  if (!translates(plan) || run.stopped !== null) return;
  if (run.tap.resultLine !== undefined) {
    run.wroteOutput = true;
    // A caller that went away never saw the answer: the turn is not recorded, as in a stream.
    if (!(await writeStdout(plan.callerFormat === 'json' ? `${run.tap.resultLine}\n` : `${run.tap.resultText ?? ''}\n`))) {
      run.stopped = 'stdout-closed';
    }
  } else if (run.tap.results === 0 && run.tap.oversizedLines > 0) {
    // Never an answer silently lost: say why there is nothing to print.
    process.stderr.write(
      `cursor-resume: cursor-agent's answer has a line over ${MAX_HELD_TAP_LINE / 1024 / 1024} MiB, too long to print as ${plan.callerFormat}; ask for --output-format stream-json to get it whole\n`,
    );
  } else if (run.tap.results === 0 && run.code === 0 && run.endedByCaller === null) {
    // It says it finished, yet gave no answer: an empty stdout alone would look like an empty one.
    process.stderr.write(
      `cursor-resume: cursor-agent exited 0 without an answer (its stream had no result), so there is nothing to print as ${plan.callerFormat}; run the line with --output-format stream-json to see what it printed\n`,
    );
  }
}
