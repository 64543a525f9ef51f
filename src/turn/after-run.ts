// What happens after cursor-agent ran: pure, from the plan and what the run showed
// to the next step (retry fresh, evict, record or release, the exit status and the
// message), so the rules are unit-tested the way decide() is. Two steps, because a
// text or json caller's answer is printed between them and printing can fail:
// `judge` says whether the run's output is passed on at all, `settle` what the
// cache learns and how the turn exits.
import { classifyFailure, type FailureKind } from '../agent/failure.js';
import { notFoundMessage, signalExit } from '../agent/passthrough.js';
import type { AgentRun } from '../agent/run-agent.js';
import { callerReply, endsAtHeldCalls, type StreamTap } from '../agent/stream-tap.js';
import type { Outcome } from '../cache/types.js';
import { escapeControls } from '../escape.js';
import { isSafeChatId } from '../resume/chat-id.js';
import type { ReplyToolCall } from '../resume/digests.js';
import { plural } from '../plural.js';
import { closedStdoutExit } from '../stdout.js';
import type { Plan } from './plan.js';

/** What a run showed (type-only: this step does no I/O). */
export type RunFacts = Pick<
  AgentRun,
  'code' | 'signal' | 'stderr' | 'wroteOutput' | 'stopped' | 'endedByCaller' | 'killedHard' | 'promptCut' | 'spawnError'
> & {
  tap: Pick<
    StreamTap,
    'sessionId' | 'sessionChanged' | 'answerStarted' | 'results' | 'isError' | 'resultText' | 'replyText' | 'pastCalls' | 'unheldCall'
  > & {
    toolCalls: ReadonlyArray<ReplyToolCall>;
    bridgeCalls?: ReadonlyArray<ReplyToolCall> | undefined;
  };
};

const OUTCOME_OF: Record<FailureKind, Outcome> = {
  resume: 'resume-failed',
  auth: 'auth',
  quota: 'quota',
  network: 'network',
  model: 'model',
  oom: 'error',
  signal: 'interrupted',
  'error-result': 'error',
  other: 'error',
};

/** We stopped the run before the caller saw anything: it answered as another chat, or named none. */
const stoppedUnseen = (run: RunFacts): boolean => run.stopped === 'session-mismatch' || run.stopped === 'unverified';

/** The failure of a run, counting a resumed chat that answered under another ID, or under none, as a failed resume. */
export function failureOf(run: RunFacts, plan: Plan): FailureKind | null {
  if (stoppedUnseen(run)) return 'resume';
  const failure = classifyFailure({ code: run.code, signal: run.signal, stderr: run.stderr, errorResult: run.tap.isError });
  if (failure !== null || plan.decision === 'fresh') return failure;
  if (run.tap.sessionId === plan.chatId && !run.tap.sessionChanged) return null;
  // Cut short by our caller before it named any chat (one that exits 0 on SIGTERM): nothing says the chat is gone.
  if (run.endedByCaller !== null && run.tap.sessionId === undefined) return 'signal';
  return 'resume';
}

/** cursor-agent ended with an error of its own (its message and status are passed on as they are). */
const failedOnItsOwn = (run: RunFacts): boolean => run.stopped === null && run.signal === null && run.code !== 0;

/** Why a resumed run did not continue the chat it was given, for a message. */
export function whyNotResumed(run: RunFacts, plan: Plan & { chatId: string }, holdLimit: number): string {
  const id = run.tap.sessionId;
  if (run.stopped === 'unverified') return `its output named no chat in its first ${holdLimit / 1024 / 1024} MiB`;
  if (failedOnItsOwn(run)) return 'a resume error';
  if (id === undefined) return 'its output named no chat';
  if (id !== plan.chatId) return `it answered as ${isSafeChatId(id) ? `chat ${id}` : 'another chat'}, which has none of the conversation`;
  return 'its chat ID changed during the answer';
}

export type Judgement =
  /** Pass on what the run printed (and held). */
  | { next: 'deliver'; failure: FailureKind | null; evict: string | null }
  /** The chat is gone and nothing was shown: evict it, run the turn again as a fresh chat. */
  | { next: 'retry-fresh'; failure: 'resume'; evict: string; say: string }
  /** The chat is gone, nothing was shown, and no retry is allowed: print nothing of it, say why, exit 1. */
  | { next: 'lost'; failure: 'resume'; evict: string; error: string };

export function judge(plan: Plan, run: RunFacts, options: { retryFresh: boolean; holdLimit: number }): Judgement {
  const failure = failureOf(run, plan);
  if (plan.decision === 'fresh' || failure !== 'resume') return { next: 'deliver', failure, evict: null };
  // The chat is gone: it must never be resumed again.
  const why = whyNotResumed(run, plan, options.holdLimit);
  // Shown already, or the caller asked us to stop: never run again, never a "lost" turn in place of its signal's status.
  if (run.wroteOutput || run.endedByCaller !== null) return { next: 'deliver', failure, evict: plan.chatId };
  if (options.retryFresh) {
    return {
      next: 'retry-fresh',
      failure,
      evict: plan.chatId,
      say: `cursor could not resume chat ${plan.chatId} (${why}); retrying once as a fresh chat with the whole conversation`,
    };
  }
  // What cursor printed may be an answer without the conversation's context: never passed on as one.
  if (failedOnItsOwn(run)) return { next: 'deliver', failure, evict: plan.chatId };
  return {
    next: 'lost',
    failure,
    evict: plan.chatId,
    error: `cursor could not resume chat ${plan.chatId}: ${why}. Nothing was printed and its entry was dropped (retryFresh is off); run the turn again to start a fresh chat with the whole conversation`,
  };
}

/** What the turn tells the helper. */
export type CacheUpdate =
  /** The chat's history is now the sent messages and this reply: `ended` says whether the turn finished or stopped at its tool calls. */
  | { kind: 'record'; chatId: string; reply: { text: string; calls: ReadonlyArray<ReplyToolCall> }; ended: 'result' | 'tool-calls' }
  /** A leased chat's turn ended without a record: how, and whether its history is still what the cache knows. */
  | { kind: 'release'; outcome: Outcome; state: 'ok' | 'unknown' };

export interface Settlement {
  update: CacheUpdate | null;
  /** Said with --verbose when a finished turn cannot be recorded. */
  say: string | null;
  /** Said always (stderr), when cursor-agent could not be started. */
  error: string | null;
  exit: number;
  /** For the trace: the failure, if any (a run handed over at its tool calls is none). */
  failure: string | null;
}

/**
 * A run the caller ended right after cursor's tool calls is the normal end of a tool
 * turn (the caller runs the tools and sends their results as the next request). Where the
 * chat holds the turn up to those calls (endsAtHeldCalls) it is recorded as such. Any
 * other cut-short run leaves the chat's history unknown.
 */
function endedAtCalls(run: RunFacts, plan: Plan): boolean {
  const { tap } = run;
  return (
    run.endedByCaller !== null &&
    !run.killedHard &&
    // The caller saw the calls live: a text or json caller, who gets the answer at the end, ended nothing at them.
    plan.callerFormat === 'stream-json' &&
    callerReply(tap).calls.length > 0 &&
    !tap.pastCalls &&
    tap.replyText !== undefined &&
    tap.results === 0 &&
    (run.stopped === null || run.stopped === 'stdout-closed') &&
    (plan.decision === 'fresh' || tap.sessionId === plan.chatId)
  );
}

export function settle(plan: Plan, run: RunFacts, judged: { failure: FailureKind | null; lost: boolean }, agent: string): Settlement {
  const resumed = plan.decision !== 'fresh';
  if (run.spawnError) {
    const { code, kind, message } = notFoundMessage(agent, run.spawnError);
    // Only a resumed chat was leased; cursor-agent never ran, so its history is as it was.
    return {
      update: resumed ? { kind: 'release', outcome: 'error', state: 'ok' } : null,
      say: null,
      error: message,
      exit: code,
      failure: kind,
    };
  }
  // A run we stopped unseen showed the caller nothing: its own status means nothing to them. Ended by
  // their signal, the turn ends as cursor-agent signalled before it printed; so does one whose output the
  // caller signalled before it read to its end, as cursor-agent run directly would, blocked on its pipe.
  const callerSignal = run.endedByCaller === 'stdout-closed' ? null : run.endedByCaller;
  const exit = judged.lost
    ? 1
    : run.stopped === 'stdout-closed'
      ? closedStdoutExit()
      : (stoppedUnseen(run) || run.stopped === 'unread') && callerSignal !== null
        ? signalExit(callerSignal)
        : run.signal
          ? signalExit(run.signal)
          : (run.code ?? 1);
  const { tap } = run;
  const atCalls = endedAtCalls(run, plan);
  const held = atCalls && endsAtHeldCalls(tap);
  // A chat never holds a prompt its cursor-agent did not read whole, whatever its stream shows.
  const handover = held && !run.promptCut;
  const failure = handover ? null : judged.failure;
  const done = (update: CacheUpdate | null, say: string | null = null): Settlement => ({ update, say, error: null, exit, failure });
  if (!plan.record) return done(null);

  const answered = failure === null && run.stopped === null && tap.results >= 1;
  const complete = answered && !run.promptCut && tap.resultText !== undefined;
  const usableChat = isSafeChatId(tap.sessionId) && !tap.sessionChanged;
  // A text or json caller gets the answer as its text alone: it never saw the calls. A stream-json
  // caller's finished turn keeps calls only where the stream ended at them (cursor ran none), or a
  // bridge envelope's (the plugin makes calls of one that nothing followed).
  const streamed = plan.callerFormat === 'stream-json';
  const bridged = tap.bridgeCalls !== undefined && !tap.pastCalls && tap.replyText !== undefined;
  // Calls the stream went on past were run by cursor itself, and its chat holds their results. A caller
  // that saw them sends their results too (the plugin runs each call it sees): a delta would give the
  // chat a second result of each call, and for a shell call the command's second run.
  const ranItself = complete && usableChat && streamed && tap.toolCalls.length > 0 && tap.pastCalls;
  if (complete && usableChat && !ranItself) {
    return done({
      kind: 'record',
      chatId: tap.sessionId as string,
      reply: bridged ? { text: '', calls: tap.bridgeCalls! } : { text: tap.resultText!, calls: streamed ? tap.toolCalls : [] },
      ended: 'result',
    });
  }
  if (handover && usableChat) {
    const { text, calls } = callerReply(tap);
    return done({ kind: 'record', chatId: tap.sessionId as string, reply: { text: text!, calls }, ended: 'tool-calls' });
  }
  const unusable = (complete || handover) && !usableChat;
  // Exited by itself as if it had finished, yet its stream never said how the turn ended (a result): what its chat holds is unknown.
  const noResult =
    failure === null && run.stopped === null && run.endedByCaller === null && run.signal === null && run.code === 0 && tap.results === 0;
  const say =
    run.promptCut && (answered || held)
      ? 'not recorded: cursor-agent ended without reading the whole prompt, so its chat does not hold the messages it was sent'
      : noResult
        ? 'not recorded: cursor-agent exited without a result, so what its chat holds is unknown'
        : ranItself
          ? `not recorded: cursor ran ${plural(tap.toolCalls.length, 'tool call', 'tool calls')} itself, which a caller that saw ${tap.toolCalls.length === 1 ? 'it' : 'them'} may answer again`
          : unusable
            ? `not recorded: cursor ${tap.sessionChanged ? 'reported more than one chat ID' : tap.sessionId === undefined ? 'named no chat ID' : `reported an unusable chat ID ${shownChatId(tap.sessionId)}`}`
            : atCalls && !handover
              ? 'not recorded: the caller ended the run at a function or MCP call, which cursor-agent runs itself and its chat may not hold yet'
              : null;
  // Only a resumed chat holds a lease to end; a resume failure has evicted it already.
  if (!resumed || judged.failure === 'resume') return done(null, say);
  // The chat's history is unknown once the model began answering, or when the turn was cut short.
  const unknown = tap.answerStarted || noResult || run.signal !== null || run.stopped !== null || run.endedByCaller !== null;
  const outcome: Outcome = judged.failure ? OUTCOME_OF[judged.failure] : run.stopped ? 'interrupted' : ranItself ? 'success' : 'error';
  return done({ kind: 'release', outcome, state: unknown ? 'unknown' : 'ok' }, say);
}

/**
 * A value cursor sent as its chat ID, as a line on stderr says it: JSON (any value: it was not a
 * usable ID), cut at 128 characters, and with the controls JSON leaves as they are (C1, bidi)
 * escaped too, since a terminal may act on them.
 */
function shownChatId(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return escapeControls(json.length > 130 ? `${json.slice(0, 128)}…` : json);
}
