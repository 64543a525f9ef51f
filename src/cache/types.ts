// What the cache holds for one branch of a conversation: hashes, IDs, counts and
// times, never message text. One anchor (an opening) may hold several branches,
// one per Cursor chat; each branch counts against the entry limit.

/** Hex length of one message digest. */
export const MESSAGE_DIGEST_HEX = 32;

/** Why the last turn of a branch ended the way it did. */
export type Outcome = 'success' | 'auth' | 'quota' | 'network' | 'model' | 'resume-failed' | 'interrupted' | 'error';

export interface BranchRecord {
  anchor: string;
  chatId: string;
  toolsFingerprint: string;
  workspace: string;
  model: string;
  /** Prompt bytes this branch has saved against sending the full prompt every turn. */
  bytesSaved: number;
  /**
   * Cursor's store of this chat (…/chats/<md5 of workspace>/<chatId>/store.db) existed
   * right after its last turn: if it is absent later, the chat is gone. Unset: never seen.
   */
  storeSeen?: boolean;
}

export interface Branch extends BranchRecord {
  /**
   * How many messages the chat knows: the messages sent so far and Cursor's own
   * reply to the last turn. The digests themselves stay in the helper.
   */
  knownCount: number;
  /** The prefix hash of those knownCount digests (see cache/known.ts). */
  prefix: string;
  /** Compare-and-set counter: bumped by every record. */
  version: number;
  turns: number;
  /** 'unknown': a turn began and never reported back, so the chat's last turn is unknown. */
  state: 'ok' | 'unknown';
  lastOutcome: Outcome;
  /** Wall-clock milliseconds, for display only; expiry runs on a monotonic clock. */
  createdAt: number;
  updatedAt: number;
  /** Milliseconds of life left when read; 0 or less means expired. */
  ttlLeftMs: number;
  /** A turn of this chat is running now. */
  leased: boolean;
}

/** A branch next to one transcript: how many of its messages the branch's history repeats from the start (found by comparing prefix hashes). */
export interface MatchedBranch extends Branch {
  matched: number;
}
