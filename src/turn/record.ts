// What a turn that cursor answered tells the cache: one builder for a run and for
// `simulate`, so the two record exactly the same sequence for the same turn.
import type { TurnRecord } from '../helper/client.js';
import type { Analysis } from '../resume/decide.js';
import { replyDigest, type ReplyToolCall } from '../resume/digests.js';
import type { Plan } from './plan.js';

/** Cursor's reply to the turn: its text and its tool calls. */
export interface Reply {
  text: string;
  calls: ReadonlyArray<ReplyToolCall>;
}

/**
 * The record of a turn: every message sent so far, then cursor's reply, for the
 * anchor's branch the plan resumed (compare-and-set on its version, count and prefix) or a new one.
 * `startedAt`: when the turn started, on the machine's monotonic clock (src/monotonic.ts).
 */
export function recordFor(
  plan: Plan & { anchor: string },
  analysis: Analysis,
  chatId: string,
  reply: Reply,
  startedAt: number,
  storeSeen?: boolean,
): TurnRecord {
  return {
    anchor: plan.anchor,
    chatId,
    toolsFingerprint: analysis.toolsFingerprint,
    workspace: analysis.workspace,
    model: analysis.model,
    digests: analysis.digests,
    reply: replyDigest(analysis, reply.text, reply.calls),
    base:
      plan.decision === 'fresh'
        ? null
        : { version: plan.baseVersion, count: plan.baseCount, lastAsReply: analysis.replyDigestAt(plan.baseCount - 1) },
    savedBytes: plan.fullPromptBytes() - plan.promptBytes,
    outcome: 'success',
    startedAt,
    ...(storeSeen === undefined ? {} : { storeSeen }),
  };
}

/**
 * A fresh chat recorded at its first tool call, as far as it got, and leased for the
 * rest of the turn: a caller that ends the run there (its tool loop) may send the call's
 * result at once, and that request must find this chat and wait for the turn's end
 * (src/turn/lease.ts) rather than start a chat of its own. Its history stays unknown
 * until the turn's own record replaces this one.
 */
export function placeFor(plan: Plan & { anchor: string }, analysis: Analysis, chatId: string, soFar: Reply, startedAt: number): TurnRecord {
  return { ...recordFor(plan, analysis, chatId, soFar, startedAt), base: null, savedBytes: 0, outcome: 'interrupted', state: 'unknown' };
}

/** Messages a recorded chat knows: the sent ones and the reply. */
export const knownAfter = (analysis: Analysis): number => analysis.digests.length + 1;
