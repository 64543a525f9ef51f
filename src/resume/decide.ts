// The heart: may this turn continue an existing Cursor chat? Pure: everything it
// needs comes in as arguments (the cache's branches, which chats are gone), so a
// real run, --dry-run, inspect and simulate cannot disagree.
import type { MatchedBranch } from '../cache/types.js';
import type { Conversation } from '../transcript/types.js';
import { anchorOf, firstRealUserIndex } from './anchor.js';
import { isSafeChatId } from './chat-id.js';
import { messageDigests, replyDigestAt } from './digests.js';
import { toolsBlockFingerprint, toolsFingerprint } from './fingerprint.js';
import { provePrefix, type PrefixProof } from './prefix.js';
import { REASONS, type Reason } from './reasons.js';
import { fullPromptBytes, renderDelta, renderFull, type DeltaResult } from './render.js';
import { renderOpencodeDelta } from './render-opencode.js';
import { detectSideCall, type SideCallMatch } from './side-call.js';

export type DecisionKind = 'fresh' | 'resume-delta' | 'resume-full';

export interface DecideSettings {
  enabled: boolean;
  /**
   * OpenCode's Cursor plugin resumes by itself (the shared switch is on): it continues the chat it
   * remembers for its session, proof or not, so a chat we continued for another session could take its turn.
   */
  pluginResumes: boolean;
  /** When the chat is proven but the new messages cannot go as text: resume it with the full prompt, or start fresh. */
  unsafeDelta: 'fresh' | 'resume-full';
}

export interface Analysis {
  conversation: Conversation;
  /** Absolute, real path. */
  workspace: string;
  /** Concrete Cursor model, "" for cursor-agent's default. */
  model: string;
  sideCall: SideCallMatch | null;
  /** One digest per message, in order. */
  digests: string[];
  /** The digest of message `index` as a chat that knows it as its last message holds it: as cursor's reply (digests.ts). */
  replyDigestAt: (index: number) => string;
  /** Index of the first real user message, or -1. */
  opener: number;
  anchor: string | null;
  toolsFingerprint: string;
  /** The whole conversation as one prompt: rendered when first asked for, as only a turn that sends it needs it. */
  fullPrompt: () => string;
  /** Its size in UTF-8 bytes, on first call: counted without rendering it, or taken from it once rendered. */
  fullPromptBytes: () => number;
}

/** renderFull once, on first call; its size without a second walk over the conversation. */
function lazyFull(conversation: Conversation): Pick<Analysis, 'fullPrompt' | 'fullPromptBytes'> {
  let rendered: string | undefined;
  let bytes: number | undefined;
  return {
    fullPrompt: () => (rendered ??= renderFull(conversation)),
    fullPromptBytes: () => (bytes ??= rendered === undefined ? fullPromptBytes(conversation) : Buffer.byteLength(rendered)),
  };
}

/** Everything about the transcript itself, computed once per run. */
export function analyze(
  conversation: Conversation,
  context: { workspace: string; model: string; sideCallPatterns: ReadonlyArray<RegExp>; account?: string },
): Analysis {
  const digests = messageDigests(conversation);
  const opener = firstRealUserIndex(conversation.messages);
  const sideCall = conversation.shape === 'text' ? null : detectSideCall(conversation.messages, context.sideCallPatterns);
  return {
    conversation,
    workspace: context.workspace,
    model: context.model,
    sideCall,
    digests,
    replyDigestAt: (index) => replyDigestAt(conversation, index),
    opener,
    anchor:
      opener < 0
        ? null
        : anchorOf({
            workspace: context.workspace,
            model: context.model,
            sessionId: conversation.sessionId,
            opener: digests[opener]!,
            account: context.account,
          }),
    toolsFingerprint: conversation.layout ? toolsBlockFingerprint(toolsBlock(conversation)) : toolsFingerprint(conversation.tools),
    ...lazyFull(conversation),
  };
}

const toolsBlock = (conversation: Conversation): string | null =>
  conversation.layout?.flatMap((b) => ('frame' in b && b.frame === 'tools' ? [b.text] : []))[0] ?? null;

/** The new messages after the known ones, as the caller's shape sends them. */
const deltaOf = (conversation: Conversation, known: number): DeltaResult =>
  conversation.shape === 'opencode-text' ? renderOpencodeDelta(conversation, known) : renderDelta(conversation.messages, known);

/** A transcript that first differs from the chat at a system message has a new system prompt, not an edited history. */
const divergedReason = (proof: PrefixProof, analysis: Analysis): Reason =>
  proof.verdict === 'diverged' && analysis.conversation.messages[proof.matched]?.role === 'system' ? 'system-changed' : 'diverged';

export interface BranchCheck {
  chatId: string;
  version: number;
  /** The first check this branch failed, or 'delta' / 'unsafe-delta' when its chat can be continued. */
  verdict: Reason;
  detail: string;
  proof: PrefixProof;
  /** The delta prompt, when the proof holds and it could be rendered. */
  delta?: string;
}

export interface DecideInput {
  analysis: Analysis;
  settings: DecideSettings;
  /** The caller passed --resume or --continue itself. */
  callerResume: boolean;
  /** The anchor's branches from the cache, matched against this transcript; null when the cache could not be reached. */
  branches: ReadonlyArray<MatchedBranch> | null;
  /** Chat IDs whose store is known to be gone (checked before resuming: the silent-fresh trap). */
  missingChats: ReadonlySet<string>;
}

interface DecisionBase {
  reason: Reason;
  detail: string;
  prompt: string;
  checks: BranchCheck[];
}

/** A new chat: nothing to resume, and an anchor only when the transcript has one. */
export interface FreshDecision extends DecisionBase {
  decision: 'fresh';
  anchor: string | null;
  chatId: null;
  baseVersion: null;
  baseCount: null;
  /** Whether the outcome of this turn belongs in the cache. */
  record: boolean;
}

/** A known chat continued: its ID, and its branch's version for the compare-and-set when the turn is recorded. */
export interface ResumeDecision extends DecisionBase {
  decision: 'resume-delta' | 'resume-full';
  anchor: string;
  chatId: string;
  baseVersion: number;
  /** How many messages the resumed branch knows: the record sends only what follows them. */
  baseCount: number;
  record: true;
}

export type Decision = FreshDecision | ResumeDecision;

function describeProof(proof: PrefixProof, analysis: Analysis): string {
  const at = proof.matched;
  switch (proof.verdict) {
    case 'holds':
      return `all ${proof.known} known messages match; ${analysis.digests.length - proof.known} new`;
    case 'nothing-new':
      return `all ${proof.known} known messages match, and nothing follows them`;
    case 'shorter':
      return `the transcript ends after ${at} of the ${proof.known} messages the chat knows: it dropped turns the chat has`;
    case 'diverged': {
      const role = analysis.conversation.messages[at]?.role ?? 'message';
      const how =
        role === 'assistant'
          ? at === proof.known - 1
            ? 'differs from what cursor replied'
            : 'differs from the assistant message the chat was sent'
          : role === 'system'
            ? 'differs from the system message the chat was given'
            : 'was edited, removed or reordered';
      return `${at} of ${proof.known} known messages match; message ${at + 1} (${role}) ${how}`;
    }
  }
}

const RAN_ITS_CALLS =
  "the chat's last turn ran its tool calls itself, before the caller could, so it holds results the caller may send again";

function checkBranch(branch: MatchedBranch, input: DecideInput): BranchCheck {
  const { analysis } = input;
  const proof = provePrefix(branch.knownCount, branch.matched, analysis.digests.length);
  const base = { chatId: branch.chatId, version: branch.version, proof };
  const fail = (verdict: Reason, detail: string): BranchCheck => ({ ...base, verdict, detail });
  if (branch.ttlLeftMs <= 0) return fail('expired', REASONS.expired);
  if (!isSafeChatId(branch.chatId)) return fail('unsafe-chat-id', REASONS['unsafe-chat-id']);
  if (branch.toolsFingerprint !== analysis.toolsFingerprint) return fail('tools-changed', REASONS['tools-changed']);
  if (proof.verdict === 'nothing-new') return fail('nothing-new', describeProof(proof, analysis));
  if (proof.verdict !== 'holds') return fail(divergedReason(proof, analysis), describeProof(proof, analysis));
  // A chat a run is driving now is busy whatever its state says: the state changes when that run ends.
  if (branch.leased) return fail('busy', REASONS.busy);
  // A turn that succeeded and left the history unknown is one in which cursor ran the calls it showed (after-run.ts, settle).
  if (branch.state !== 'ok') return fail('interrupted', branch.lastOutcome === 'success' ? RAN_ITS_CALLS : REASONS.interrupted);
  if (input.missingChats.has(branch.chatId)) return fail('chat-missing', REASONS['chat-missing']);
  const delta = deltaOf(analysis.conversation, proof.known);
  if (!delta.ok) return fail('unsafe-delta', delta.why);
  return { ...base, verdict: 'delta', detail: describeProof(proof, analysis), delta: delta.prompt };
}

/** The branch a person would call closest: most messages matched, then the most recently used. */
function closest(checks: BranchCheck[], branches: ReadonlyArray<MatchedBranch>): BranchCheck | undefined {
  const updated = new Map(branches.map((b) => [b.chatId, b.updatedAt]));
  return [...checks].sort((a, b) => b.proof.matched - a.proof.matched || (updated.get(b.chatId) ?? 0) - (updated.get(a.chatId) ?? 0))[0];
}

export function decide(input: DecideInput): Decision {
  const { analysis, settings } = input;
  const fresh = (reason: Reason, record: boolean, checks: BranchCheck[] = [], detail: string = REASONS[reason]): FreshDecision => ({
    decision: 'fresh',
    reason,
    detail,
    anchor: analysis.anchor,
    chatId: null,
    baseVersion: null,
    baseCount: null,
    prompt: analysis.fullPrompt(),
    record,
    checks,
  });

  // First: whatever the transcript and the settings, the run passes such a line on and forgets that chat.
  if (input.callerResume) return fresh('caller-resume', false);
  if (analysis.conversation.shape === 'text') return fresh('plain-text', false);
  if (!settings.enabled) return fresh('disabled', false);
  if (analysis.sideCall) {
    return fresh(
      'side-call',
      false,
      [],
      `${REASONS['side-call']} (matched /${analysis.sideCall.pattern}/ in the first ${analysis.sideCall.role} message)`,
    );
  }
  if (settings.pluginResumes && analysis.conversation.shape === 'opencode-text') return fresh('plugin-resumes', false);
  const { anchor } = analysis;
  if (anchor === null) return fresh('no-anchor', false);
  if (input.branches === null) return fresh('no-cache', false);
  if (input.branches.length === 0) return fresh('no-entry', true);

  const checks = input.branches.map((b) => checkBranch(b, input));
  const usable = closest(
    checks.filter((c) => c.verdict === 'delta' || c.verdict === 'unsafe-delta'),
    input.branches,
  );
  if (usable?.verdict === 'delta') {
    return {
      decision: 'resume-delta',
      reason: 'delta',
      detail: usable.detail,
      anchor,
      chatId: usable.chatId,
      baseVersion: usable.version,
      baseCount: usable.proof.known,
      prompt: usable.delta!,
      record: true,
      checks,
    };
  }
  if (usable && settings.unsafeDelta === 'resume-full') {
    return {
      decision: 'resume-full',
      reason: 'unsafe-delta',
      detail: usable.detail,
      anchor,
      chatId: usable.chatId,
      baseVersion: usable.version,
      baseCount: usable.proof.known,
      prompt: analysis.fullPrompt(),
      record: true,
      checks,
    };
  }
  const best = usable ?? closest(checks, input.branches)!;
  return fresh(best.verdict, true, checks, best.detail);
}
