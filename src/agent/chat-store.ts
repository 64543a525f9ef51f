// Cursor's own chat store, looked at before a resume: `--resume <id>` with a chat
// Cursor has garbage-collected does not fail, it silently starts an empty chat
// (the silent-fresh trap). Layout (reported): <config>/chats/<md5 of workspace>/<chatId>/.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export function chatsRoot(env: NodeJS.ProcessEnv): string {
  return join(env.CURSOR_CONFIG_DIR || join(homedir(), '.cursor'), 'chats');
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

/**
 * The chats among `chatIds` that are known to be gone. Only a workspace folder that
 * exists counts as found; where none does, nothing is known and nothing is reported
 * missing (the session-ID check on the stream still guards the resume).
 */
export function missingChats(env: NodeJS.ProcessEnv, workspaces: ReadonlyArray<string>, chatIds: ReadonlyArray<string>): Set<string> {
  const root = chatsRoot(env);
  const folders = [...new Set(workspaces)].map((w) => join(root, md5(w))).filter((dir) => existsSync(dir));
  if (folders.length === 0) return new Set();
  return new Set(chatIds.filter((id) => !folders.some((dir) => existsSync(join(dir, id)))));
}
