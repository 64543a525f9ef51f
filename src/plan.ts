// One turn's plan: the decision plus the exact argv and prompt cursor-agent gets.
// A real run, --dry-run, inspect and simulate all come through here.
import { buildAgentArgv, type CallerArgs, type OutputFormat } from './agent/argv.js';
import type { Branch } from './cache/types.js';
import type { Settings } from './config.js';
import { concreteModel } from './transcript/model.js';
import { analyze, decide, type Analysis, type Decision } from './resume/decide.js';
import { compileSideCallPatterns } from './resume/side-call.js';
import type { Conversation } from './transcript/types.js';


export interface Plan extends Decision {
  argv: string[];
  /** What the caller asked for; when it is not stream-json and the turn is recorded, we translate. */
  callerFormat: OutputFormat;
  /** cursor-agent's stdin: `prompt`, or a plain-text transcript's bytes as they came (`prompt` shows them as text). */
  stdin: string | Uint8Array;
  promptBytes: number;
  fullPromptBytes: number;
}

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
  });
}

/**
 * Whether a run asks the cache about this turn at all: resume on, a structured
 * transcript, no --resume/--continue of the caller's, an anchor, not a side call.
 * Otherwise the plan is fresh whatever the cache holds, and the cache is not touched.
 */
export function usesCache(analysis: Analysis, context: TurnContext): boolean {
  return (
    context.settings.resume &&
    analysis.conversation.shape !== 'text' &&
    !context.caller.callerResume &&
    analysis.anchor !== null &&
    analysis.sideCall === null
  );
}

export function planTurn(
  analysis: Analysis,
  context: TurnContext,
  cache: { branches: ReadonlyArray<Branch> | null; missingChats?: ReadonlySet<string> },
): Plan {
  const decision = decide({
    analysis,
    settings: {
      enabled: context.settings.resume,
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
  // Plain text is always a fresh chat whose prompt is the whole text: its bytes go instead.
  const stdin = conversation.raw ?? decision.prompt;
  const bytes = typeof stdin === 'string' ? Buffer.byteLength(stdin) : stdin.length;
  return {
    ...decision,
    argv,
    callerFormat,
    stdin,
    promptBytes: bytes,
    fullPromptBytes: conversation.raw ? bytes : Buffer.byteLength(analysis.fullPrompt),
  };
}

/** Exactly the object SPEC.md promises for --dry-run. */
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
