// cursor-resume must never run itself as its cursor-agent (CURSOR_RESUME_AGENT, the
// agent setting or a `cursor-agent` on PATH naming it, through a symlink or a wrapper
// script): that nests processes without end. Every cursor-resume marks the environment
// its children inherit with its pid and how many cursor-resumes are above it; one whose
// parent is a cursor-resume (directly, or through a wrapper that execs), or that is
// nested deeper than any real use goes (a wrapper that does not exec), refuses to run.
export const MARK = 'CURSOR_RESUME_CALLER';

/**
 * How many cursor-resumes may run inside one another: one started from a shell
 * that cursor-agent runs for a tool is fine, and so is one more inside that.
 */
export const MAX_NESTING = 3;

export const SELF_CALL_MESSAGE =
  'the cursor-agent it runs is cursor-resume itself (CURSOR_RESUME_AGENT, the agent setting, or a cursor-agent on PATH names it, maybe through a symlink or a script), which would start itself without end; set CURSOR_RESUME_AGENT (or cursor-resume config set agent PATH) to the real cursor-agent';

function parse(mark: string | undefined): { pid: number; depth: number } | undefined {
  const match = /^(\d+) (\d+)$/.exec(mark ?? '');
  return match ? { pid: Number(match[1]), depth: Number(match[2]) } : undefined;
}

/** Whether this process is cursor-resume started, in the end, by itself. */
export function isSelfCall(env: NodeJS.ProcessEnv, parentPid: number): boolean {
  const above = parse(env[MARK]);
  return above !== undefined && (above.pid === parentPid || above.depth >= MAX_NESTING);
}

/** Marks the environment this process's children inherit. */
export function markChildren(env: NodeJS.ProcessEnv, pid: number): void {
  env[MARK] = `${pid} ${(parse(env[MARK])?.depth ?? 0) + 1}`;
}
