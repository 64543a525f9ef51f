// The main job: a transcript on stdin → one cursor-agent turn (or, with --dry-run,
// its plan). Everything the cache touches is best-effort: if the helper cannot be
// reached the turn runs as a fresh chat with the whole conversation, correctly.
import { appendFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { handsOver, parseCallerArgs, type CallerArgs } from '../agent/argv.js';
import { UsageError } from '../errors.js';
import { classifyFailure, type FailureKind } from '../agent/failure.js';
import { notFoundMessage, passthrough, signalExit } from '../agent/passthrough.js';
import { HOLD_LIMIT, MAX_HELD_TAP_LINE, runAgent, type AgentRun } from '../agent/run-agent.js';
import type { Branch, Outcome } from '../cache/types.js';
import { resolveRunSettings, type Settings } from '../config.js';
import type { HelperClient } from '../helper/client.js';
import { connectHelper, underSettings } from '../helper/launcher.js';
import { helperEnv } from '../helper-env.js';
import { analyzeTurn, dryRunView, planTurn, usesCache, withArgv, type Plan, type TurnContext } from '../plan.js';
import { chatStoreSeen, goneChats, localContextFor } from '../turn-input.js';
import { isSafeChatId } from '../resume/chat-id.js';
import type { Analysis } from '../resume/decide.js';
import { assistantDigest } from '../resume/digests.js';
import { REASONS } from '../resume/reasons.js';
import { parseTranscript } from '../transcript/parse.js';
import { readStdin } from '../transcript/read-input.js';
import { EXIT_STDOUT_CLOSED, writeStdout } from '../stdout.js';

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

export async function runCommand(argv: ReadonlyArray<string>, caller: CallerArgs = parseCallerArgs(argv)): Promise<number> {
  // isatty(0), not process.stdin.isTTY: creating that stream would make fd 0 non-blocking, and readStdin reads it directly.
  const stdinIsTty = isatty(0);
  const handedOver = handsOver(caller);
  if (caller.dryRun && handedOver) {
    // Handing these to cursor-agent would run something; a dry run runs nothing.
    const what = caller.version ? '--version' : `"${caller.positionals[0]}"`;
    throw new UsageError(`--dry-run plans a transcript turn read from stdin; a prompt word, a subcommand or --version is not one: drop ${what}, or drop --dry-run to run it`);
  }
  if (caller.dryRun && stdinIsTty) throw new UsageError('--dry-run reads a transcript on stdin: cursor-resume --dry-run < transcript.json');
  const { settings, ignored, runtimeDirIgnored } = resolveRunSettings(process.env, {
    ...(caller.verbose ? { verbose: true } : {}),
    ...(caller.trace !== undefined ? { trace: caller.trace } : {}),
  });
  // A bad setting other than the agent must not stand in the way of cursor-agent: said once, then ignored.
  for (const line of ignored) process.stderr.write(`cursor-resume: ${line}\n`);
  // cursor-agent's subcommands, a prompt on its command line, an interactive session: not ours to touch.
  if (handedOver || stdinIsTty) return passthrough(settings.agent, caller.agentArgs, process.env);

  const started = performance.now();
  const conversation = parseTranscript(await readStdin());
  const { context, given } = localContextFor(conversation, caller, settings, process.env);
  const analysis = analyzeTurn(conversation, context);
  const say = (line: string): void => {
    if (settings.verbose) process.stderr.write(`cursor-resume: ${line}\n`);
  };

  let client: HelperClient | null = null;
  let branches: Branch[] | null = [];
  const cached = usesCache(analysis, context);
  if (cached && runtimeDirIgnored) {
    branches = null;
    say('running without the cache: the runtimeDir setting is not usable (see the warning above)');
  } else if (cached) {
    const env = helperEnv(settings);
    const connected = await connectHelper({ start: !caller.dryRun, env });
    if (connected.ok) {
      client = connected.client;
      try {
        // A dry run changes nothing in the helper (its lookup neither counts as a use nor drops an expired
        // branch, and its limits stay as they are), yet plans as the run after it will.
        branches = caller.dryRun ? underSettings(await client.peek(analysis.anchor!), connected.server, env) : await client.lookup(analysis.anchor!);
      } catch (error) {
        say(`the helper did not answer the lookup (${(error as Error).message}); running without the cache`);
        client.close();
        client = null;
        branches = null;
      }
    } else {
      // A dry run starts nothing: with no helper, or one a real run would replace, it plans against an empty cache as that run would.
      branches = caller.dryRun && (connected.code === 'not-running' || connected.code === 'version-mismatch') ? [] : null;
      if (branches === null) say(`running without the cache: ${connected.reason}`);
    }
  }
  const missing = goneChats(context, given, branches);
  let plan = planTurn(analysis, context, { branches, missingChats: missing });

  if (caller.dryRun) {
    client?.close();
    return (await writeStdout(`${JSON.stringify(dryRunView(plan))}\n`)) ? 0 : EXIT_STDOUT_CLOSED;
  }

  try {
    // A chat Cursor no longer has must not keep its entry.
    for (const check of plan.checks) {
      if (check.verdict === 'chat-missing') await quietly(say, 'evict', () => client?.evict({ anchor: plan.anchor!, chatId: check.chatId }));
    }
    plan = await leaseOrReplan(plan, analysis, context, branches, missing, client, say, given);
    say(`${plan.decision} (${plan.reason}): ${plan.detail}; prompt ${plan.promptBytes} of ${plan.fullPromptBytes} bytes`);

    let run = await execute(plan, settings);
    let failure = failureOf(run, plan);
    let retried = false;
    // A resumed chat that is gone, with nothing shown and no retry: said, not passed on.
    let lostChat: string | null = null;
    if (plan.decision !== 'fresh' && failure === 'resume') {
      // The chat is gone: it must never be resumed again.
      await quietly(say, 'evict', () => client?.evict({ anchor: plan.anchor!, chatId: plan.chatId! }));
      const why = whyNotResumed(run, plan);
      if (settings.retryFresh && !run.wroteOutput) {
        say(`cursor could not resume chat ${plan.chatId} (${why}); retrying once as a fresh chat with the whole conversation`);
        plan = withArgv(
          { ...plan, decision: 'fresh', reason: 'resume-failed', detail: REASONS['resume-failed'], chatId: null, baseVersion: null, prompt: analysis.fullPrompt },
          analysis,
          context,
        );
        run = await execute(plan, settings);
        failure = failureOf(run, plan);
        retried = true;
      } else if (!run.wroteOutput && !failedOnItsOwn(run)) {
        // What cursor printed may be an answer without the conversation's context: never passed on as one.
        lostChat = `cursor could not resume chat ${plan.chatId}: ${why}. Nothing was printed and its entry was dropped (retryFresh is off); run the turn again to start a fresh chat with the whole conversation`;
      }
    }
    if (lostChat !== null) process.stderr.write(`cursor-resume: ${lostChat}\n`);
    else await deliver(run, plan);

    if (run.spawnError) {
      const { code, kind, message } = notFoundMessage(settings.agent, run.spawnError);
      process.stderr.write(`cursor-resume: ${message}\n`);
      // Only a resumed chat was leased; cursor-agent never ran, so its history is as it was.
      if (plan.decision !== 'fresh') await quietly(say, 'release', () => client?.release('error', 'ok'));
      writeTrace(settings, plan, { exit: code, failure: kind, retried, started });
      return code;
    }
    const storeSeen = (chatId: string): boolean => chatStoreSeen(context, given, chatId);
    if (plan.record && client) await quietly(say, 'record', () => remember(client!, plan, analysis, run, failure, storeSeen, say));

    const exit = lostChat !== null ? 1 : run.stopped === 'stdout-closed' ? EXIT_STDOUT_CLOSED : run.signal ? signalExit(run.signal) : (run.code ?? 1);
    writeTrace(settings, plan, { exit, failure, retried, started, chatId: run.tap.sessionId });
    return exit;
  } finally {
    client?.close();
  }
}

/**
 * Takes the lease on the chat to resume. If another run holds it, plans again
 * without it (busy); if the branch expired or was evicted since the lookup, plans
 * without it; if it moved on (another run finished a turn of it since the lookup,
 * 'stale'), looks it up once more and plans on what it is now. A branch that moves
 * again at once is being driven by another run: busy.
 */
async function leaseOrReplan(
  plan: Plan,
  analysis: Analysis,
  context: TurnContext,
  branches: Branch[] | null,
  missing: ReadonlySet<string>,
  client: HelperClient | null,
  say: (line: string) => void,
  given: string | undefined,
): Promise<Plan> {
  let current = plan;
  let known = branches;
  let gone = missing;
  let lookedUpAgain = false;
  while (current.decision !== 'fresh' && client && known) {
    let lease;
    try {
      lease = await client.lease(current.anchor!, current.chatId!, current.baseVersion!);
    } catch (error) {
      // Without a lease the chat is not ours to drive: the whole conversation goes to a fresh chat.
      say(`the helper did not answer the lease (${(error as Error).message}); running without the cache`);
      return planTurn(analysis, context, { branches: null, missingChats: gone });
    }
    if (lease.granted) return current;
    say(`chat ${current.chatId} cannot be leased (${lease.reason}: ${lease.message})`);
    const taken = current.chatId;
    if (lease.reason === 'stale' && !lookedUpAgain) {
      lookedUpAgain = true;
      try {
        known = await client.lookup(current.anchor!);
      } catch (error) {
        say(`the helper did not answer the lookup (${(error as Error).message}); running without the cache`);
        return planTurn(analysis, context, { branches: null, missingChats: gone });
      }
      gone = goneChats(context, given, known);
    } else if (lease.reason === 'gone') {
      known = known.filter((b) => b.chatId !== taken);
    } else {
      known = known.map((b) => (b.chatId === taken ? { ...b, leased: true } : b));
    }
    current = planTurn(analysis, context, { branches: known, missingChats: gone });
  }
  return current;
}

/**
 * The helper is best-effort once the turn is under way: if it dies or stalls now, the
 * turn still ends with cursor-agent's own status (the next one then starts fresh).
 */
async function quietly(say: (line: string) => void, what: string, call: () => Promise<unknown> | undefined): Promise<void> {
  try {
    await call();
  } catch (error) {
    say(`the helper failed on ${what} (${(error as Error).message}); going on without the cache`);
  }
}

function execute(plan: Plan, settings: Settings): Promise<AgentRun> {
  return runAgent({
    agent: settings.agent,
    argv: plan.argv,
    prompt: plan.stdin,
    env: process.env,
    stdout: translates(plan) ? 'hold' : 'stream',
    ...(plan.decision !== 'fresh' ? { expectSession: plan.chatId! } : {}),
  });
}

/** A caller that asked for text or json while we run stream-json to learn the chat ID. */
const translates = (plan: Plan): boolean => plan.record && plan.callerFormat !== 'stream-json';

/**
 * Passes on what a judged run still holds and, for a caller that asked for text or json,
 * prints what that format would have printed.
 */
async function deliver(run: AgentRun, plan: Plan): Promise<void> {
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
    process.stderr.write(`cursor-resume: cursor-agent's answer has a line over ${MAX_HELD_TAP_LINE / 1024 / 1024} MiB, too long to print as ${plan.callerFormat}; ask for --output-format stream-json to get it whole\n`);
  }
}

/** The failure of a run, counting a resumed chat that answered under another ID, or under none, as a failed resume. */
function failureOf(run: AgentRun, plan: Plan): FailureKind | null {
  if (run.stopped === 'session-mismatch' || run.stopped === 'unverified') return 'resume';
  const failure = classifyFailure({ code: run.code, signal: run.signal, stderr: run.stderr, errorResult: run.tap.isError });
  if (failure !== null || plan.decision === 'fresh') return failure;
  return run.tap.sessionId === plan.chatId && !run.tap.sessionChanged ? null : 'resume';
}

/** cursor-agent ended with an error of its own (its message and status are passed on as they are). */
const failedOnItsOwn = (run: AgentRun): boolean => run.stopped === null && run.signal === null && run.code !== 0;

/** Why a resumed run did not continue the chat it was given, for a message. */
function whyNotResumed(run: AgentRun, plan: Plan): string {
  const id = run.tap.sessionId;
  if (run.stopped === 'unverified') return `its output named no chat in its first ${HOLD_LIMIT / 1024 / 1024} MiB`;
  if (failedOnItsOwn(run)) return 'a resume error';
  if (id === undefined) return 'its output named no chat';
  if (id !== plan.chatId) return `it answered as ${isSafeChatId(id) ? `chat ${id}` : 'another chat'}, which has none of the conversation`;
  return 'its chat ID changed during the answer';
}

/** Records a successful turn, or tells the helper how the turn of a leased chat ended. */
async function remember(
  client: HelperClient,
  plan: Plan,
  analysis: Analysis,
  run: AgentRun,
  failure: FailureKind | null,
  storeSeen: (chatId: string) => boolean,
  say: (line: string) => void,
): Promise<void> {
  const { tap } = run;
  const resumed = plan.decision !== 'fresh';
  const complete = failure === null && run.stopped === null && tap.results >= 1 && tap.resultText !== undefined;
  const chatId = tap.sessionId;
  if (complete && isSafeChatId(chatId) && !tap.sessionChanged) {
    const record = {
      anchor: plan.anchor!,
      chatId,
      toolsFingerprint: analysis.toolsFingerprint,
      workspace: analysis.workspace,
      model: analysis.model,
      known: analysis.digests.join('') + assistantDigest(tap.resultText!, tap.toolCalls),
      baseVersion: resumed ? plan.baseVersion : null,
      savedBytes: plan.fullPromptBytes - plan.promptBytes,
      outcome: 'success' as const,
      storeSeen: storeSeen(chatId),
    };
    let reply = await client.record(record);
    // The branch expired or was evicted while the turn ran: the record holds the whole
    // known sequence and the chat just answered, so it can stand as a new branch.
    if (!reply.recorded && reply.reason === 'gone') reply = await client.record({ ...record, baseVersion: null });
    say(reply.recorded ? `recorded chat ${chatId} (${analysis.digests.length + 1} messages known)` : `not recorded: ${reply.message}`);
    return;
  }
  if (complete) say(`not recorded: cursor reported ${tap.sessionChanged ? 'more than one chat ID' : `an unusable chat ID ${JSON.stringify(chatId)}`}`);
  if (!resumed) return;
  if (failure === 'resume') return; // already evicted
  // The chat's history is unknown once the model began answering, or when the turn was cut short.
  const unknown = tap.answerStarted || run.signal !== null || run.stopped !== null;
  await client.release(failure ? OUTCOME_OF[failure] : run.stopped ? 'interrupted' : 'error', unknown ? 'unknown' : 'ok');
}

function writeTrace(
  settings: Settings,
  plan: Plan,
  end: { exit: number; failure: string | null; retried: boolean; started: number; chatId?: unknown },
): void {
  if (settings.trace === '') return;
  const line = {
    time: new Date().toISOString(),
    anchor: plan.anchor,
    decision: plan.decision,
    reason: plan.reason,
    chatId: isSafeChatId(end.chatId) ? end.chatId : plan.chatId,
    promptBytes: plan.promptBytes,
    fullPromptBytes: plan.fullPromptBytes,
    exit: end.exit,
    failure: end.failure,
    retried: end.retried,
    durationMs: Math.round(performance.now() - end.started),
  };
  try {
    appendFileSync(settings.trace, `${JSON.stringify(line)}\n`);
  } catch (error) {
    process.stderr.write(`cursor-resume: cannot append to the trace file ${settings.trace}: ${(error as Error).message}\n`);
  }
}
