// Cursor's own chat store, looked at before a resume: `--resume <id>` with a chat
// Cursor has garbage-collected does not fail, it silently starts an empty chat
// (the silent-fresh trap). Layout (reported): <config>/chats/<md5 of workspace>/<chatId>/store.db.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { BranchRecord } from '../cache/types.js';

export function chatsRoot(env: NodeJS.ProcessEnv): string {
  return join(env.CURSOR_CONFIG_DIR || join(homedir(), '.cursor'), 'chats');
}

const md5 = (text: string): string => createHash('md5').update(text).digest('hex');

const folders = (env: NodeJS.ProcessEnv, workspaces: ReadonlyArray<string>): string[] =>
  [...new Set(workspaces)].map((w) => join(chatsRoot(env), md5(w)));

const hasStore = (dirs: ReadonlyArray<string>, chatId: string): boolean => dirs.some((dir) => existsSync(join(dir, chatId, 'store.db')));

/** The chat's store.db exists under one of the workspaces (recorded with each turn as `storeSeen`). */
export function chatStoreExists(env: NodeJS.ProcessEnv, workspaces: ReadonlyArray<string>, chatId: string): boolean {
  return hasStore(folders(env, workspaces), chatId);
}

/**
 * The known chats that are gone. A chat whose store was seen after its last turn is
 * gone once that store.db is absent, whatever is left above it (an empty chat folder,
 * or no workspace folder at all: Cursor may remove it with the workspace's last
 * chat). A chat whose store was never seen lives where we do not know: it counts as
 * gone only when its workspace folder exists without it; otherwise nothing is known
 * and the session-ID check on the stream still guards the resume.
 */
export function missingChats(
  env: NodeJS.ProcessEnv,
  workspaces: ReadonlyArray<string>,
  chats: ReadonlyArray<Pick<BranchRecord, 'chatId' | 'storeSeen'>>,
): Set<string> {
  const dirs = folders(env, workspaces);
  // Only a chat whose store was never seen needs to know which workspace folders exist.
  let found: string[] | undefined;
  const gone = chats.filter(({ chatId, storeSeen }) => {
    if (storeSeen === true) return !hasStore(dirs, chatId);
    found ??= dirs.filter((dir) => existsSync(dir));
    return found.length > 0 && !found.some((dir) => existsSync(join(dir, chatId)));
  });
  return new Set(gone.map((c) => c.chatId));
}
