// Taking the lease on the chat a plan resumes: one run drives a chat at a time.
import type { MatchedBranch } from '../cache/types.js';
import type { HelperClient } from '../helper/client.js';
import type { Analysis } from '../resume/decide.js';
import { goneChats } from './input.js';
import { planTurn, type Plan, type TurnContext } from './plan.js';
import { monotonicMs } from '../monotonic.js';
import { sleep } from '../sleep.js';

/**
 * How long a turn waits for a chat that another run is driving. The caller's tool loop
 * kills a run right after its tool call and may send the next request (the call's
 * result) within milliseconds, while the killed run is still recording the turn: that
 * request must find the record, not a busy chat. A chat still busy after this is being
 * driven by another turn for real, and this one goes fresh.
 */
export const BUSY_WAIT_MS = 1500;
const BUSY_POLL_MS = 10;

export interface LeaseCache {
  client: HelperClient;
  say: (line: string) => void;
  /** The workspace path as given, made absolute, for the chat-store check. */
  given: string;
}

/**
 * Takes the lease on the chat to resume. A chat another run holds is waited for (up to
 * BUSY_WAIT_MS) and the turn planned again on what the helper then holds: the chat may
 * have moved on ('stale': another run recorded a turn of it), expired or been evicted
 * ('gone'). Past the wait, a chat that cannot be leased counts as busy.
 */
export async function leaseOrReplan(
  first: Plan,
  branches: ReadonlyArray<MatchedBranch>,
  analysis: Analysis,
  context: TurnContext,
  cache: LeaseCache,
): Promise<Plan> {
  const deadline = monotonicMs() + BUSY_WAIT_MS;
  const plan = (known: ReadonlyArray<MatchedBranch>): Plan =>
    planTurn(analysis, context, { branches: known, missingChats: goneChats(context, cache.given, known) });
  let known = branches;
  let current = first;
  for (;;) {
    const waiting = monotonicMs() < deadline;
    if (current.reason === 'busy' && waiting) await sleep(BUSY_POLL_MS);
    else if (current.decision === 'fresh') return current;
    else {
      let lease;
      try {
        lease = await cache.client.lease(current.anchor, current.chatId, current.baseVersion);
      } catch (error) {
        // Without a lease the chat is not ours to drive: the whole conversation goes to a fresh chat.
        cache.say(`the helper did not answer the lease (${(error as Error).message}); running without the cache`);
        return planTurn(analysis, context, { branches: null });
      }
      if (lease.granted) return current;
      cache.say(`chat ${current.chatId} cannot be leased (${lease.reason}: ${lease.message})`);
      if (!waiting) {
        const taken = current.chatId;
        known = known.map((b) => (b.chatId === taken ? { ...b, leased: true } : b));
        current = plan(known);
        continue;
      }
    }
    if (current.anchor === null) return current;
    try {
      known = await cache.client.lookup(current.anchor, analysis);
    } catch (error) {
      cache.say(`the helper did not answer the lookup (${(error as Error).message}); running without the cache`);
      return planTurn(analysis, context, { branches: null });
    }
    current = plan(known);
  }
}
