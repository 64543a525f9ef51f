// One turn's plan: the decision plus the exact argv and prompt cursor-agent gets.
// A real run, --dry-run, inspect and simulate all come through here.
import { buildAgentArgv, type CallerArgs, type OutputFormat } from '../agent/argv.js';
import type { MatchedBranch } from '../cache/types.js';
import type { Settings } from '../config.js';
import { concreteModel } from '../transcript/model.js';
import { bridgeOfferIn, type BridgeOffer } from '../resume/bridge-calls.js';
import { accountOf } from '../resume/anchor.js';
import { analyze, decide, type Analysis, type Decision, type ResumeDecision } from '../resume/decide.js';
import { SHARED_SWITCH, sharedSwitchOn } from '../resume/enabled.js';
import { REASONS } from '../resume/reasons.js';
import { compileSideCallPatterns } from '../resume/side-call.js';
import type { Conversation } from '../transcript/types.js';

/** What a decision becomes on the wire to cursor-agent. */
interface Invocation {
  argv: string[];
  /** What the caller asked for; when it is not stream-json and the turn is recorded, we translate. */
  callerFormat: OutputFormat;
  /** cursor-agent's stdin: `prompt`, or a flattened transcript's bytes as they came when it goes whole (`prompt` shows them as text). */
  stdin: string | Uint8Array;
  promptBytes: number;
  /** The full prompt's size in bytes, counted on first call: a resumed turn needs it only for its record and trace. */
  fullPromptBytes: () => number;
  /** For a recorded stream-json turn of the OpenCode plugin: the bridge envelopes it turns into tool calls (bridge-calls.ts). */
  bridge: BridgeOffer | null;
}

/** A decision with its argv and stdin: the union says when there is a chat to resume. */
export type Plan = Decision & Invocation;
export type ResumePlan = ResumeDecision & Invocation;

export interface TurnContext {
  caller: CallerArgs;
  settings: Settings;
  env: NodeJS.ProcessEnv;
  /** The workspace as an absolute, real path (the command line's, the transcript's, or the current directory). */
  workspace: string;
}

export function analyzeTurn(conversation: Conversation, context: TurnContext): Analysis {
  const model = context.caller.model ?? conversation.model;
  return analyze(conversation, {
    workspace: context.workspace,
    model: model === undefined ? '' : concreteModel(model),
    sideCallPatterns: compileSideCallPatterns(context.settings.sideCallPatterns),
    account: runAccount(context),
  });
}

/**
 * The API key the run's cursor-agent uses and where it comes from: --api-key, else CURSOR_API_KEY,
 * an empty one being none (as the stand-in reads them: `--api-key=` leaves the environment's key).
 */
export function runApiKey(context: Pick<TurnContext, 'caller' | 'env'>): { key: string; from: 'flag' | 'environment' } | null {
  if (context.caller.apiKey) return { key: context.caller.apiKey, from: 'flag' };
  const key = context.env.CURSOR_API_KEY;
  return key ? { key, from: 'environment' } : null;
}

/** The account the run's cursor-agent uses (resume/anchor.ts, accountOf). */
const runAccount = (context: TurnContext): string => accountOf(runApiKey(context)?.key, context.caller.endpoint);

/**
 * Whether a run asks the cache about this turn at all: resume on, a structured
 * transcript (JSON, or text in the OpenCode plugin's layout), no --resume/--continue
 * of the caller's, an anchor, not a side call.
 * Otherwise the plan is fresh whatever the cache holds, the cache is not touched,
 * and `why` says so (inspect shows it).
 */
export function cacheUse(analysis: Analysis, context: TurnContext): { asked: true; anchor: string } | { asked: false; why: string } {
  // In decide()'s order, so that inspect gives one reason.
  if (context.caller.callerResume) return { asked: false, why: 'the caller chose the chat' };
  if (analysis.conversation.shape === 'text') return { asked: false, why: 'plain text is never resumed' };
  if (!context.settings.resume) return { asked: false, why: 'resume is off' };
  if (analysis.sideCall) return { asked: false, why: 'a side call never touches the cache' };
  if (pluginResumes(context) && analysis.conversation.shape === 'opencode-text') {
    return { asked: false, why: "OpenCode's plugin resumes by itself" };
  }
  if (analysis.anchor === null) return { asked: false, why: 'there is no anchor' };
  return { asked: true, anchor: analysis.anchor };
}

/** The shared switch is on where the caller runs: OpenCode's plugin, which reads it too, then resumes by itself. */
const pluginResumes = (context: TurnContext): boolean => sharedSwitchOn(context.env[SHARED_SWITCH] ?? '');

export function planTurn(
  analysis: Analysis,
  context: TurnContext,
  cache: { branches: ReadonlyArray<MatchedBranch> | null; missingChats?: ReadonlySet<string> },
): Plan {
  const decision = decide({
    analysis,
    settings: {
      enabled: context.settings.resume,
      pluginResumes: pluginResumes(context),
      unsafeDelta: context.settings.unsafeDelta,
    },
    callerResume: context.caller.callerResume,
    branches: cache.branches,
    missingChats: cache.missingChats ?? new Set(),
  });
  return withArgv(decision, analysis, context);
}

/** The argv for a decision; also used when a failed resume is retried as a fresh chat. */
export function withArgv(decision: Decision, analysis: Analysis, context: TurnContext): Plan {
  const { caller } = context;
  const { conversation } = analysis;
  const callerFormat = caller.outputFormat ?? 'text';
  const transcriptModel = conversation.model === undefined ? undefined : concreteModel(conversation.model);
  const argv = buildAgentArgv(caller, {
    model: transcriptModel,
    workspace: conversation.workspace,
    resumeChatId: decision.decision === 'fresh' ? null : decision.chatId,
    streamJson: decision.record,
  });
  // A prompt the caller flattened goes whole as its own bytes; only a delta is ours.
  const stdin = conversation.raw !== undefined && decision.decision !== 'resume-delta' ? conversation.raw : decision.prompt;
  const bytes = typeof stdin === 'string' ? Buffer.byteLength(stdin) : stdin.length;
  return {
    ...decision,
    argv,
    callerFormat,
    stdin,
    promptBytes: bytes,
    fullPromptBytes: conversation.raw ? () => conversation.raw!.length : analysis.fullPromptBytes,
    bridge: decision.record && callerFormat === 'stream-json' ? bridgeOfferIn(conversation.layout) : null,
  };
}

/** The same turn as a fresh chat with the whole conversation, after the chat it resumed could not be. */
export function retryFresh(plan: ResumePlan, analysis: Analysis, context: TurnContext): Plan {
  return withArgv(
    {
      decision: 'fresh',
      reason: 'resume-failed',
      detail: REASONS['resume-failed'],
      anchor: plan.anchor,
      chatId: null,
      baseVersion: null,
      baseCount: null,
      prompt: analysis.fullPrompt(),
      record: true,
      checks: plan.checks,
    },
    analysis,
    context,
  );
}

/** Exactly the object the README promises for --dry-run ("The run line"). */
export function dryRunView(plan: Plan): object {
  return {
    decision: plan.decision,
    reason: plan.reason,
    anchor: plan.anchor,
    chatId: plan.chatId,
    argv: plan.argv,
    prompt: plan.prompt,
  };
}
