// Why a cursor-agent run failed, from its exit and its stderr. Only a resume-specific
// failure discards a cached chat; everything else (auth, quota, network, memory,
// signals) says nothing about whether the chat is still good.

export type FailureKind = 'resume' | 'auth' | 'quota' | 'network' | 'model' | 'oom' | 'signal' | 'error-result' | 'other';

// Order matters: auth is tried first, because Cursor's auth errors talk about sessions
// ("[unauthenticated] Your session has expired. Please log in again.", "invalid session
// token"): an expired login must keep the chat. The resume pattern holds only the
// chat-specific texts cursor-agent is known to print (the stand-in's failures.ts prints each).
const PATTERNS: Array<[Exclude<FailureKind, 'signal' | 'error-result'>, RegExp]> = [
  [
    'auth',
    /authentication required|agent login|invalid session token|not logged in|\bunauthenticated\b|unauthori[sz]ed|log ?in again|sign in again|invalid api key|CURSOR_API_KEY/i,
  ],
  ['resume', /(chat|session) not found|chat (has )?expired|failed to resume|invalid chat id|no such chat/i],
  ['quota', /usage limit|quota|rate limit|resource_exhausted|too many requests/i],
  ['oom', /out of memory|ENOMEM|heap limit/i],
  [
    'network',
    /fetch failed|ECONNREFUSED|ETIMEDOUT|ECONNRESET|EAI_AGAIN|ENOTFOUND|connection stalled|deadline_exceeded|\[unavailable\]|network/i,
  ],
  ['model', /cannot use this model|\[[a-z_]+\]/i],
];

export interface RunEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** The stream's result said is_error. */
  errorResult: boolean;
}

/** null when the run succeeded. */
export function classifyFailure(end: RunEnd): FailureKind | null {
  if (end.signal !== null) return 'signal';
  if (end.code === 0) return end.errorResult ? 'error-result' : null;
  for (const [kind, pattern] of PATTERNS) if (pattern.test(end.stderr)) return kind;
  return 'other';
}
