// The main job: a transcript on stdin → one cursor-agent turn (or, with --dry-run,
// its plan). The steps live in src/turn/; this is their order. Everything the cache
// touches is best-effort: if the helper cannot be reached the turn runs as a fresh
// chat with the whole conversation, correctly.
import { isatty } from 'node:tty';
import { callerChat, handsOver, parseCallerArgs, type CallerArgs } from '../agent/argv.js';
import { UsageError } from '../errors.js';
import { passthrough } from '../agent/passthrough.js';
import { HOLD_LIMIT, runAgent, type AgentRun } from '../agent/run-agent.js';
import { callerReply, type StreamTap } from '../agent/stream-tap.js';
import { describeResume, resolveRunSettings, type Settings } from '../config.js';
import type { HelperClient, TurnRecord } from '../helper/client.js';
import type { HeldHelper } from '../helper/launcher.js';
import { parseTranscript } from '../transcript/parse.js';
import { readStdin } from '../transcript/read-input.js';
import { judge, settle, whyNotResumed, type CacheUpdate } from '../turn/after-run.js';
import { closedStdoutExit, writeStdout } from '../stdout.js';
import { viewCache } from '../turn/cache-view.js';
import { chatStoreSeen, goneChats, localContextFor } from '../turn/input.js';
import { leaseOrReplan } from '../turn/lease.js';
import { deliver, translates } from '../turn/output.js';
import { analyzeTurn, dryRunView, planTurn, retryFresh, type Plan, type TurnContext } from '../turn/plan.js';
import { knownAfter, placeFor, recordFor } from '../turn/record.js';
import { isSafeChatId } from '../resume/chat-id.js';
import { LateSignals } from '../turn/late-signals.js';
import { forgetCallerChat } from '../turn/caller-chat.js';
import { writeTrace } from '../turn/trace.js';
import { boundYoungHeap } from '../turn/young-heap.js';
import type { Analysis } from '../resume/decide.js';
import type { MatchedBranch } from '../cache/types.js';
import { monotonicMs } from '../monotonic.js';

export async function runCommand(argv: ReadonlyArray<string>, caller: CallerArgs = parseCallerArgs(argv)): Promise<number> {
  // isatty(0), not process.stdin.isTTY: creating that stream would make fd 0 non-blocking, and readStdin reads it directly.
  const stdinIsTty = isatty(0);
  const handedOver = handsOver(caller);
  if (caller.dryRun && handedOver) {
    // Handing these to cursor-agent would run something; a dry run runs nothing.
    const what = caller.version ? '--version' : JSON.stringify(caller.positionals[0] ?? '');
    throw new UsageError(
      `--dry-run plans a transcript turn read from stdin; a prompt word, a subcommand or --version is not one: drop ${what}, or drop --dry-run to run it`,
    );
  }
  if (caller.dryRun && stdinIsTty) throw new UsageError('--dry-run reads a transcript on stdin: cursor-resume --dry-run < transcript.json');
  const resolved = resolveRunSettings(process.env, {
    ...(caller.verbose ? { verbose: true } : {}),
    ...(caller.trace !== undefined ? { trace: caller.trace } : {}),
  });
  const { settings, ignored, runtimeDirIgnored } = resolved;
  // A bad setting other than the agent must not stand in the way of cursor-agent: said once, then ignored.
  for (const line of ignored) process.stderr.write(`cursor-resume: ${line}\n`);
  const say = (line: string): void => {
    if (settings.verbose) process.stderr.write(`cursor-resume: ${line}\n`);
  };
  const chat = callerChat(caller, () => stdinIsTty);
  let forgetFailed = false;
  let unanswered = false;
  const forget = async (seen?: unknown): Promise<void> => {
    if (chat === null || runtimeDirIgnored) return;
    // A helper that did not answer the forget before the run is not waited for as long again after it.
    const outcome = await forgetCallerChat(chat, seen, settings, process.env, say, !unanswered);
    unanswered ||= outcome.unanswered;
    // Once: the run before and after it would say the same.
    if (outcome.failure !== null && !forgetFailed) process.stderr.write(`cursor-resume: ${outcome.failure}\n`);
    forgetFailed ||= outcome.failure !== null;
  };
  // cursor-agent's subcommands, a prompt on its command line, an interactive session: not ours to touch.
  if (handedOver || stdinIsTty) {
    await forget();
    const exit = await passthrough(settings.agent, caller.agentArgs, process.env);
    await forget();
    return exit;
  }

  // Before any lookup: a turn that read a chat started before that chat could be forgotten, which is
  // what lets a forget refuse records by time alone (BranchStore.forgetAll, forget-marks.ts).
  const started = monotonicMs();
  const input = await readStdin();
  boundYoungHeap(input.length);
  const conversation = parseTranscript(input, { ownsRoomAfter: true });
  const { context, given } = localContextFor(conversation, caller, settings, process.env);
  const analysis = analyzeTurn(conversation, context);

  const cache = await viewCache(analysis, context, { mode: caller.dryRun ? 'peek' : 'run', runtimeDirIgnored });
  if (cache.branches === null) say(`running without the cache: ${cache.note}`);
  else if (cache.reconnect || cache.replaced) say(cache.note);
  const missing = goneChats(context, given, cache.branches);
  const plan = planTurn(analysis, context, { branches: cache.branches, missingChats: missing });
  // Which setting turned resume off, as inspect --transcript names it: the decision's line says only that one did.
  if (plan.reason === 'disabled') say(`resume is off: ${describeResume(resolved, process.env).why}`);

  if (caller.dryRun) {
    // The line the run after it would say (its lease aside), as --verbose promises the decision.
    if (settings.verbose) say(decisionLine(plan));
    return (await writeStdout(`${JSON.stringify(dryRunView(plan))}\n`)) ? 0 : closedStdoutExit();
  }

  // Before the run, so that no turn resumes the chat while the caller's runs (caller-chat.ts).
  await forget();
  const helper = new LazyClient(cache.client, cache.reconnect, cache.hold, cache.handOff);
  try {
    return await runTurn({
      plan,
      analysis,
      context,
      settings,
      helper,
      say,
      given,
      started,
      branches: cache.branches ?? [],
      missing,
      forget,
    });
  } finally {
    helper.close();
  }
}

/** The decision, its reason and the prompt's size, for --verbose; the full prompt is counted only then. */
const decisionLine = (plan: Plan): string =>
  `${plan.decision} (${plan.reason}): ${plan.detail}; prompt ${plan.promptBytes} of ${plan.fullPromptBytes()} bytes`;

/**
 * The run's connection to the helper: open from the lookup, or, when none ran, made
 * to a helper started when the turn first needs one; a turn that needs it only for
 * its record hands that to a helper it starts, and does not wait (hand-off.ts), one
 * whose start it held ready while cursor-agent ran (held-start.ts).
 */
class LazyClient {
  #connecting: Promise<HelperClient | null> | null = null;
  #held: HeldHelper | null = null;

  constructor(
    private client: HelperClient | null,
    private readonly reconnect: ((held: HeldHelper | null) => Promise<HelperClient | null>) | null,
    private readonly holdStart: (() => HeldHelper | null) | null,
    private readonly handOffTo: ((record: TurnRecord, held: HeldHelper | null) => string) | null,
  ) {}

  /** How to hand the record to a helper started for it (saying what became of it): none ran at the lookup, and none was needed since. */
  get handOff(): ((record: TurnRecord) => string) | null {
    const handOffTo = this.handOffTo;
    if (this.client !== null || this.#connecting !== null || handOffTo === null) return null;
    return (record) => handOffTo(record, this.#takeHeld());
  }

  /**
   * Holds a helper's start ready (held-start.ts) for a turn with no helper that may end
   * in a record; called once cursor-agent is spawned, so that its start is not delayed.
   */
  hold(): void {
    if (this.handOff !== null && this.holdStart !== null) this.#held ??= this.holdStart();
  }

  /** The client the lookup used (and leases go through), if there was one. */
  get now(): HelperClient | null {
    return this.client;
  }

  get reconnects(): boolean {
    return this.reconnect !== null;
  }

  get(): Promise<HelperClient | null> {
    const reconnect = this.reconnect;
    if (this.client || !reconnect) return Promise.resolve(this.client);
    // A helper still starting may answer a later call: a failed attempt is not remembered.
    this.#connecting ??= reconnect(this.#takeHeld()).then((c) => {
      this.client = c;
      this.#connecting = null;
      return c;
    });
    return this.#connecting;
  }

  close(): void {
    this.client?.close();
    this.#takeHeld()?.start.dismiss();
  }

  /** The held start, for one use. */
  #takeHeld(): HeldHelper | null {
    const held = this.#held;
    this.#held = null;
    return held;
  }
}

interface Turn {
  plan: Plan;
  analysis: Analysis;
  context: TurnContext;
  settings: Settings;
  helper: LazyClient;
  say: (line: string) => void;
  given: string;
  started: number;
  branches: ReadonlyArray<MatchedBranch>;
  missing: ReadonlySet<string>;
  /** Forgets the chat the caller continued itself, if it did, and the one the stream named (caller-chat.ts). */
  forget: (seen?: unknown) => Promise<void>;
}

async function runTurn(turn: Turn): Promise<number> {
  const { analysis, context, settings, say } = turn;
  const client = turn.helper.now;
  const helper = async (what: string, call: (c: HelperClient) => Promise<unknown>): Promise<void> =>
    quietly(say, what, await turn.helper.get(), call);
  let plan = turn.plan;
  // A chat Cursor no longer has must not keep its entry.
  for (const check of plan.checks) {
    if (check.verdict === 'chat-missing' && plan.anchor !== null) {
      const anchor = plan.anchor;
      await helper('evict', (c) => c.evict({ anchor, chatId: check.chatId }));
    }
  }
  if (client) plan = await leaseOrReplan(plan, turn.branches, analysis, context, { client, say, given: turn.given });
  // Only --verbose counts the full prompt before cursor-agent starts.
  if (settings.verbose) say(decisionLine(plan));

  // A fresh chat recorded early, at its first tool call, and held for the rest of the turn (see placeFor).
  let placed: string | null = null;
  const place = (fresh: Plan) => {
    if ((!client && !turn.helper.reconnects) || fresh.decision !== 'fresh' || !fresh.record || fresh.anchor === null) return undefined;
    const anchor = fresh.anchor;
    return async (tap: StreamTap): Promise<void> => {
      const chatId = tap.sessionId;
      if (!isSafeChatId(chatId) || tap.sessionChanged || tap.replyText === undefined) return;
      const { text, calls } = callerReply(tap);
      const reply = { text: text!, calls: [...calls] };
      await helper('place', async (c) => {
        const recorded = await c.recordTurn(placeFor({ ...fresh, anchor }, analysis, chatId, reply, turn.started));
        if (!recorded.recorded) return;
        placed = chatId;
        await c.lease(anchor, chatId, recorded.branch.version);
      });
    };
  };
  // From here to the process's exit (see late-signals.ts).
  const late = new LateSignals();
  const first = execute(plan, settings, late, place(plan));
  if (plan.record && plan.anchor !== null) turn.helper.hold();
  let run = await first;
  let judged = judge(plan, run, { retryFresh: settings.retryFresh, holdLimit: HOLD_LIMIT });
  let retried = false;
  if (judged.evict !== null && plan.decision !== 'fresh') {
    const { anchor } = plan;
    const chatId = judged.evict;
    await helper('evict', (c) => c.evict({ anchor, chatId }));
    // A retry says why itself; a run passed on as it is (shown already, or ended by the caller) says it here.
    if (judged.next === 'deliver')
      say(`cursor did not continue chat ${chatId} (${whyNotResumed(run, plan, HOLD_LIMIT)}); its entry is dropped`);
  }
  // A caller's signal once cursor-agent had ended asks us to stop as well: never a run again.
  if (judged.next === 'retry-fresh' && late.signal !== null) {
    run.endedByCaller ??= late.signal;
    judged = judge(plan, run, { retryFresh: settings.retryFresh, holdLimit: HOLD_LIMIT });
  }
  if (judged.next === 'retry-fresh' && plan.decision !== 'fresh') {
    say(judged.say);
    plan = retryFresh(plan, analysis, context);
    run = await execute(plan, settings, late, place(plan));
    judged = judge(plan, run, { retryFresh: settings.retryFresh, holdLimit: HOLD_LIMIT });
    retried = true;
  }
  if (judged.next === 'lost') process.stderr.write(`cursor-resume: ${judged.error}\n`);
  else await deliver(run, plan);

  const end = settle(plan, run, { failure: judged.failure, lost: judged.next === 'lost' }, settings.agent);
  if (end.error !== null) process.stderr.write(`cursor-resume: ${end.error}\n`);
  if (end.say !== null) say(end.say);
  const change = end.update;
  const handOff = turn.helper.handOff;
  if (change?.kind === 'record' && handOff) {
    if (plan.anchor !== null) say(handOff(recordOf({ ...plan, anchor: plan.anchor }, analysis, change, turn)));
  } else if (change) await helper(change.kind, (c) => update(c, plan, analysis, change, turn, say));
  else if (placed !== null && plan.anchor !== null) {
    // The turn did not end in a record: a chat whose history is unknown has no place in the cache.
    const { anchor } = plan;
    const chatId: string = placed;
    await helper('evict', (c) => c.evict({ anchor, chatId }));
  }
  await turn.forget(run.tap.sessionChanged ? undefined : run.tap.sessionId);
  writeTrace(settings.trace, plan, { exit: end.exit, failure: end.failure, retried, started: turn.started, chatId: run.tap.sessionId });
  if (run.endedByCaller !== null && run.endedByCaller !== 'stdout-closed') late.endedBy(run.endedByCaller);
  return end.exit;
}

function execute(plan: Plan, settings: Settings, late: LateSignals, onToolCall?: (tap: StreamTap) => Promise<void>): Promise<AgentRun> {
  const run = late.around(
    runAgent({
      ...(onToolCall ? { onToolCall } : {}),
      agent: settings.agent,
      argv: plan.argv,
      prompt: plan.stdin,
      env: process.env,
      stdout: translates(plan) ? 'hold' : 'stream',
      bridge: plan.bridge,
      ...(plan.decision !== 'fresh' ? { expectSession: plan.chatId } : {}),
    }),
  );
  // cursor-agent has started: the full prompt's size, which only the record and the trace need, is counted while it works.
  plan.fullPromptBytes();
  return run;
}

/** Records the turn, or tells the helper how the turn of a leased chat ended. */
async function update(
  client: HelperClient,
  plan: Plan,
  analysis: Analysis,
  change: CacheUpdate,
  turn: Turn,
  say: (line: string) => void,
): Promise<void> {
  if (change.kind === 'release') {
    await client.release(change.outcome, change.state);
    return;
  }
  if (plan.anchor === null) return;
  const record = recordOf({ ...plan, anchor: plan.anchor }, analysis, change, turn);
  // A branch that expired or was evicted while the turn ran is recorded whole: the chat just answered.
  const reply = await client.recordTurn(record);
  const how = change.ended === 'tool-calls' ? ', up to its tool calls' : '';
  say(reply.recorded ? `recorded chat ${change.chatId} (${knownAfter(analysis)} messages known${how})` : `not recorded: ${reply.message}`);
}

function recordOf(
  plan: Plan & { anchor: string },
  analysis: Analysis,
  change: Extract<CacheUpdate, { kind: 'record' }>,
  turn: Turn,
): TurnRecord {
  return recordFor(plan, analysis, change.chatId, change.reply, turn.started, chatStoreSeen(turn.context, turn.given, change.chatId));
}

/**
 * The helper is best-effort once the turn is under way: if it dies or stalls now, the
 * turn still ends with cursor-agent's own status (the next one then starts fresh).
 */
async function quietly(
  say: (line: string) => void,
  what: string,
  client: HelperClient | null,
  call: (c: HelperClient) => Promise<unknown>,
): Promise<void> {
  if (!client) return;
  try {
    await call(client);
  } catch (error) {
    say(`the helper failed on ${what} (${(error as Error).message}); going on without the cache`);
  }
}
