// What a run, `inspect --transcript` and `simulate` share to plan a turn the same
// way: reading a transcript from a file, the TurnContext a run builds for it
// (workspace resolved the same way), and the chat-store checks around a resume.
import { createReadStream } from 'node:fs';
import { isatty } from 'node:tty';
import { chatStoreExists, missingChats } from '../agent/chat-store.js';
import { parseCallerArgs, type CallerArgs } from '../agent/argv.js';
import { UsageError } from '../errors.js';
import { slipOnRunLine } from '../near-miss.js';
import { absoluteWorkspace, checkWorkspace, resolveWorkspace } from '../agent/workspace.js';
import type { Branch } from '../cache/types.js';
import type { Settings } from '../config.js';
import type { TurnContext } from './plan.js';
import { decodeInput } from '../transcript/decode.js';
import { TranscriptError } from '../transcript/errors.js';
import { parseTranscript } from '../transcript/parse.js';
import { readInput, readStdin } from '../transcript/read-input.js';
import type { Conversation } from '../transcript/types.js';

/** A file's bytes, or stdin's for "-"; a file we cannot open is a usage error (exit 2). */
export async function readSource(file: string): Promise<Buffer> {
  if (file === '-') {
    // isatty(0), not process.stdin.isTTY: creating that stream would make fd 0 non-blocking, and readStdin reads it directly.
    if (isatty(0)) throw new UsageError('"-" reads the transcript from stdin; pipe one in: ... < transcript.json');
    // As a run reads it: a directory on stdin is named as one, where a stream of it read as empty.
    return readStdin();
  }
  try {
    return await readInput(createReadStream(file));
  } catch (error) {
    if (error instanceof TranscriptError) throw relabel(error, file);
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    throw new UsageError(`cannot read the transcript ${file}: ${why}`);
  }
}

/** Text → Conversation, with the file (and line) named in any error instead of "stdin". */
export function parseFrom(text: string | Buffer, where: string): Conversation {
  return named(where, () => parseTranscript(text));
}

/** Bytes → text (strict UTF-8), the file named in the error. */
export function decodeFrom(bytes: Buffer, where: string): string {
  return named(where, () => decodeInput(bytes));
}

function named<T>(where: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof TranscriptError) throw relabel(error, where);
    throw error;
  }
}

function relabel(error: TranscriptError, where: string): TranscriptError {
  if (where === '-') return error;
  const message = error.message
    .replace(/^stdin(: | is )/, (_m, sep: string) => (sep === ': ' ? '' : 'it is '))
    // Advice for stdin; a file is given, not piped.
    .replace(/: pipe a transcript \((.*)\) into cursor-resume$/, ': a transcript is $1');
  return new TranscriptError(`${where}: ${message}`);
}

/** The caller's run line as a run would see it: --model/--workspace options first, then the rest. */
export function runLine(options: { model?: string; workspace?: string }, rest: ReadonlyArray<string> = []): CallerArgs {
  // Refused as the run itself refuses it (cli.ts): a slip must not be explained as a flag for cursor-agent.
  const slip = slipOnRunLine(rest);
  if (slip !== undefined) throw new UsageError(slip);
  return parseCallerArgs([
    ...(options.model !== undefined ? ['--model', options.model] : []),
    ...(options.workspace !== undefined ? ['--workspace', options.workspace] : []),
    ...rest,
  ]);
}

/** Where the workspace came from, for `inspect`. */
export type WorkspaceSource = 'flag' | 'transcript' | 'current directory';

/**
 * The TurnContext a run builds: the command line's workspace, else the transcript's, else the current
 * directory. `given` is that path made absolute, not resolved (cursor-agent may keep chats under it):
 * taken once, so that a current directory deleted later, while cursor-agent runs, is no error.
 */
export function contextFor(
  conversation: Conversation,
  caller: CallerArgs,
  settings: Settings,
  env: NodeJS.ProcessEnv,
): { context: TurnContext; given: string; workspaceFrom: WorkspaceSource } {
  const path = caller.workspace ?? conversation.workspace;
  const given = absoluteWorkspace(path ?? '.');
  const workspace = resolveWorkspace(given);
  const workspaceFrom: WorkspaceSource =
    caller.workspace !== undefined ? 'flag' : conversation.workspace !== undefined ? 'transcript' : 'current directory';
  return { context: { caller, settings, env, workspace }, given, workspaceFrom };
}

/** contextFor, for a turn that runs here (a run, --dry-run, inspect --transcript): its workspace must be a folder. */
export function localContextFor(
  conversation: Conversation,
  caller: CallerArgs,
  settings: Settings,
  env: NodeJS.ProcessEnv,
): ReturnType<typeof contextFor> {
  const found = contextFor(conversation, caller, settings, env);
  if (found.workspaceFrom !== 'current directory')
    checkWorkspace(found.context.workspace, found.workspaceFrom === 'flag' ? 'from --workspace' : 'from the transcript');
  return found;
}

/** Where cursor-agent may keep a turn's chats: under the real and under the given workspace path. */
const chatWorkspaces = (context: TurnContext, given: string): string[] => [context.workspace, given];

/** The known chats Cursor no longer has (the silent-fresh trap). */
export function goneChats(context: TurnContext, given: string, branches: ReadonlyArray<Branch> | null): Set<string> {
  if (!branches || branches.length === 0) return new Set();
  return missingChats(context.env, chatWorkspaces(context, given), branches);
}

/** Whether Cursor's store of the chat exists now (checked right after a turn, and recorded). */
export function chatStoreSeen(context: TurnContext, given: string, chatId: string): boolean {
  return chatStoreExists(context.env, chatWorkspaces(context, given), chatId);
}
