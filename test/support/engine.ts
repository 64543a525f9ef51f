// Builders for the engine's unit tests: transcripts as the caller sends them, and
// cache branches as a successful earlier turn would have recorded them.
import { KnownSequence, pack, prefixHash } from '../../src/cache/known.js';
import type { Branch, MatchedBranch } from '../../src/cache/types.js';
import { analyze, decide, type Analysis, type DecideSettings, type Decision } from '../../src/resume/decide.js';
import { replyDigest, type ReplyToolCall } from '../../src/resume/digests.js';
import { parseTranscript } from '../../src/transcript/parse.js';

/** No configured side-call patterns: OpenCode's title requests are detected all the same. */
export const PATTERNS: RegExp[] = [];
export const ON: DecideSettings = { enabled: true, pluginResumes: false, unsafeDelta: 'fresh' };

export type Msg = Record<string, unknown>;
export const sys = (content: unknown): Msg => ({ role: 'system', content });
export const user = (content: unknown): Msg => ({ role: 'user', content });
export const asst = (content: string | null, toolCalls?: Array<{ id: string; name: string; args?: string }>): Msg => ({
  role: 'assistant',
  content,
  ...(toolCalls
    ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args ?? '{}' } })) }
    : {}),
});
export const toolMsg = (id: string, content: string): Msg => ({ role: 'tool', tool_call_id: id, content });
export const fn = (name: string, description = `the ${name} tool`, parameters: unknown = { type: 'object', properties: {} }) => ({
  type: 'function',
  function: { name, description, parameters },
});

export interface Body {
  messages: Msg[];
  tools?: unknown[];
  model?: string;
  workspace?: string;
  sessionId?: string;
}

export function analysisOf(body: Body, context: { workspace?: string; model?: string } = {}): Analysis {
  return analyze(parseTranscript(JSON.stringify(body)), {
    workspace: context.workspace ?? '/work/project',
    model: context.model ?? 'gpt-5',
    sideCallPatterns: PATTERNS,
  });
}

/** A branch as the cache holds it, with the digests behind its count and prefix hash (which the cache keeps to itself). */
export type KnownBranch = Branch & { knownDigests: string[] };

/** The branch next to a transcript, matched as a lookup matches it (the cache's own rule: its last message as cursor's reply). */
export function matchedTo(branch: KnownBranch, analysis: Analysis): MatchedBranch {
  const known = KnownSequence.EMPTY.append(pack(branch.knownDigests));
  return { ...branch, matched: known.matchedBy(analysis, pack(analysis.digests)) };
}

/** A branch knowing exactly these digests. */
export function knowing(knownDigests: string[]): Pick<KnownBranch, 'knownDigests' | 'knownCount' | 'prefix'> {
  return { knownDigests, knownCount: knownDigests.length, prefix: prefixHash(pack(knownDigests), knownDigests.length) };
}

/** The branch a successful turn over `body` leaves behind, cursor having replied `reply`. */
export function branchAfter(
  body: Body,
  reply: { text: string; toolCalls?: ReplyToolCall[] },
  overrides: Partial<Branch> = {},
): KnownBranch {
  return branchFrom(analysisOf(body), reply, overrides);
}

/** The branch a successful turn leaves behind, for a transcript of any shape already analysed. */
export function branchFrom(
  a: Analysis,
  reply: { text: string; toolCalls?: ReadonlyArray<ReplyToolCall> },
  overrides: Partial<Branch> = {},
): KnownBranch {
  return {
    anchor: a.anchor!,
    chatId: 'c6b62c6f-7ead-4fd6-9922-e952131177ff',
    toolsFingerprint: a.toolsFingerprint,
    workspace: a.workspace,
    model: a.model,
    ...knowing([...a.digests, replyDigest(a, reply.text, reply.toolCalls ?? [])]),
    bytesSaved: 0,
    version: 3,
    turns: 1,
    state: 'ok',
    lastOutcome: 'success',
    createdAt: 1_000,
    updatedAt: 2_000,
    ttlLeftMs: 1_800_000,
    leased: false,
    ...overrides,
  };
}

export function decideFor(
  body: Body,
  branches: KnownBranch[] | null,
  options: { settings?: Partial<DecideSettings>; missing?: string[]; callerResume?: boolean } = {},
): Decision {
  const analysis = analysisOf(body);
  return decide({
    analysis,
    settings: { ...ON, ...options.settings },
    callerResume: options.callerResume ?? false,
    branches: branches && branches.map((b) => matchedTo(b, analysis)),
    missingChats: new Set(options.missing ?? []),
  });
}
