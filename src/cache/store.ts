// The resume cache itself: branches of conversations in memory, with a time to
// live, a maximum number of entries (least recently used evicted first), leases
// for turns in flight and compare-and-set records. Pure: no I/O, no sockets and no
// timers of its own, so the helper daemon and the in-process `simulate` command
// share exactly the same behaviour.
import { LRUCache } from 'lru-cache';
import { DIGEST_BYTES, KnownSequence, MAX_KNOWN_MESSAGES, type TranscriptDigests } from './known.js';
import { clampLimits, lowered, type Limits } from './limits.js';
import type { Branch, BranchRecord, Outcome } from './types.js';

export interface StoreOptions extends Partial<Limits> {
  /** Monotonic milliseconds for expiry (default: lru-cache's `performance.now`). Tests inject one. */
  clock?: () => number;
  /** Wall-clock milliseconds for `createdAt`/`updatedAt`, display only (default `Date.now`). */
  wallClock?: () => number;
  /** Where the version counter starts (default 0): the helper starts each instance somewhere else (see server.ts). */
  versionsFrom?: number;
}

/** The branch a turn resumed, as it read it: a record adds to exactly that. */
export interface RecordBase {
  version: number;
  /** Its knownCount and prefix hash. */
  count: number;
  prefix: string;
  /**
   * The digest of its last message, cursor's reply, as the turn's transcript carries it: the
   * branch knows the reply by this from now on, as it knows every message the chat was sent.
   */
  last: string;
}

/** A record of a turn that just ran. `savedBytes` is added to the branch's `bytesSaved`. */
export interface RecordInput extends Omit<BranchRecord, 'bytesSaved'> {
  /**
   * The branch this turn started from, or null for a chat that did not exist
   * before this turn (then `added` is its whole known sequence).
   */
  base: RecordBase | null;
  /** The digests the turn adds to the base, packed (DIGEST_BYTES each). */
  added: Uint8Array;
  /** Prompt bytes this turn saved against sending the full prompt. */
  savedBytes: number;
  /** Default 'success'. */
  outcome?: Outcome;
  /** Default 'ok': a recorded turn's chat state is known. */
  state?: Branch['state'];
  /**
   * When the turn started, on the clock forgetAll() and forgetBefore() are given: a turn that
   * started by the latest of their times is refused (without it, any turn is once either has run).
   */
  startedAt?: number;
}

export type LeaseRefusal = 'busy' | 'stale' | 'gone';
export type RecordRefusal = 'conflict' | 'gone' | 'busy' | 'too-long' | 'forgotten';

/**
 * How many chats forgotten by evict(), evictChat(), forgetAll() and forgetBefore() are remembered
 * as such (a few KiB each thousand). The oldest is dropped first, its time then refusing the
 * whole records of turns started by it (see #remember).
 */
export const MAX_FORGOTTEN_CHATS = 1024;
/** How many evicted anchor prefixes are remembered with their time (oldest dropped first, as a chat forgotten is). */
export const MAX_EVICTED_ANCHORS = 256;

export type LeaseResult = { granted: true; branch: Branch } | { granted: false; reason: LeaseRefusal; message: string };

export type RecordResult = { recorded: true; branch: Branch } | { recorded: false; reason: RecordRefusal; message: string };

export interface StoreStats extends Limits {
  /** Live branches (each branch is one entry). */
  entries: number;
  anchors: number;
  leases: number;
}

export type PrefixesResult = { found: true; prefixes: Array<string | null> } | { found: false; reason: 'gone' | 'stale'; message: string };

/** What the store keeps: the sequence packed; `knownCount`, `prefix`, `ttlLeftMs` and `leased` are filled in when read. */
type Stored = Omit<Branch, 'ttlLeftMs' | 'leased' | 'knownCount' | 'prefix'> & {
  known: KnownSequence;
  /** When the turn that began this branch here started (see forgetBefore); -Infinity when it did not say. */
  begunBy: number;
};

const keyOf = (anchor: string, chatId: string): string => `${anchor}/${chatId}`;

export class BranchStore {
  /** Only ever lowered, by lower(). */
  limits: Limits;
  #cache: LRUCache<string, Stored>;
  /** anchor → chat IDs of its branches (including expired ones not yet dropped). */
  readonly #index = new Map<string, Set<string>>();
  /**
   * Chats forgotten because a caller continued them itself (evictChat, forgetAll), or a mark said
   * one may have been (forgetBefore), or their conversation was evicted (evict): never recorded
   * again, so that a turn that read one before it was forgotten cannot bring it back; with when.
   */
  readonly #forgotten = new Map<string, number>();
  /** Anchor prefixes evicted, and when: a turn of such a conversation started by then records nothing. */
  readonly #evictedAt = new Map<string, number>();
  /** The latest time of forgetAll() or forgetBefore(): a turn started by then may have used a chat forgotten since. */
  #allForgottenAt: number | undefined;
  /**
   * The latest time of a forget no longer remembered by its chat or anchor (the oldest, dropped to
   * keep the count): a whole record (no base) of a turn started by then may bring back what it forgot.
   * A record on a base still cached at its version cannot: a forget drops its chat's branches.
   */
  #droppedForgetAt: number | undefined;
  /** When a chat was last forgotten (evict, evictChat, forgetAll, forgetBefore): only a turn started by then can have read one. */
  #lastForgetAt: number | undefined;
  /** branch key → the holder of its lease. */
  readonly #leases = new Map<string, string>();
  /** holder → branch keys it leases. */
  readonly #held = new Map<string, Set<string>>();
  readonly #wallClock: () => number;
  /** The clock expiry runs on; lru-cache treats a start time of 0 as "no TTL", so an injected clock is kept off 0. */
  readonly #monotonic: () => number;
  /**
   * Versions come from one counter for the whole store, so a branch that was
   * evicted and recreated can never match a version someone read before.
   */
  #lastVersion: number;

  constructor(options: StoreOptions = {}) {
    this.limits = clampLimits(options);
    this.#lastVersion = options.versionsFrom ?? 0;
    this.#wallClock = options.wallClock ?? Date.now;
    const clock = options.clock;
    this.#monotonic = clock ? () => clock() + 1 : () => performance.now();
    this.#cache = this.#newCache(this.limits);
  }

  #newCache(limits: Limits): LRUCache<string, Stored> {
    return new LRUCache<string, Stored>({
      max: limits.maxEntries,
      ttl: limits.ttlMs,
      // No cached "now": it would need a timer, and an injected clock must be read every time.
      ttlResolution: 0,
      perf: { now: this.#monotonic },
      dispose: (value, key, reason) => {
        // 'set' replaces the value under the same key: the branch stays.
        if (reason !== 'set') this.#forget(value.anchor, value.chatId, key);
      },
    });
  }

  /**
   * The anchor's branches, most recently updated first. A branch that expired is
   * returned once with `ttlLeftMs <= 0` (so the caller can say "expired") and
   * dropped. Reading a branch makes it the most recently used.
   */
  lookup(anchor: string): Branch[] {
    return this.#branches(anchor, (key, ttlLeftMs) => {
      const value = this.#cache.get(key, { allowStale: true });
      if (value && ttlLeftMs <= 0) this.#cache.delete(key);
      return value;
    });
  }

  /**
   * The anchor's branches as lookup() returns them, changing nothing: no branch
   * becomes more recently used and an expired one stays until it is pruned (a dry
   * run or an explanation must not move what the next run finds).
   */
  peek(anchor: string): Branch[] {
    return this.#branches(anchor, (key) => this.#cache.peek(key, { allowStale: true }));
  }

  #branches(anchor: string, read: (key: string, ttlLeftMs: number) => Stored | undefined): Branch[] {
    const chatIds = this.#index.get(anchor);
    if (!chatIds) return [];
    const found: Branch[] = [];
    for (const chatId of [...chatIds]) {
      const key = keyOf(anchor, chatId);
      const ttlLeftMs = this.#cache.getRemainingTTL(key);
      const value = read(key, ttlLeftMs);
      if (value) found.push(this.#view(key, value, ttlLeftMs));
    }
    return found.sort((a, b) => b.updatedAt - a.updatedAt || b.version - a.version);
  }

  /**
   * Lowers the limits (a request to raise one is ignored): a branch older than the
   * new lifetime expires, and branches over the new count go least recently used
   * first. Every other branch keeps its age, recency, lease and version.
   */
  lower(requested: Partial<Limits>): Limits {
    const next = lowered(this.limits, requested);
    if (next.ttlMs === this.limits.ttlMs && next.maxEntries === this.limits.maxEntries) return this.limits;
    // Set least recently used first, each started as long ago as it was: that keeps recency and age. Ages come
    // from the cache's own monotonic clock (dump/load would go through Date.now, and move with the wall clock).
    const before = this.#cache;
    // Expired branches go first, not live ones over the new count.
    before.purgeStale();
    const entries = before.dump();
    const now = this.#monotonic();
    this.#cache = this.#newCache(next);
    for (const [key, { value }] of entries) {
      const age = this.limits.ttlMs - before.getRemainingTTL(key);
      this.#cache.set(key, value, { start: now - age });
    }
    this.limits = next;
    return this.limits;
  }

  /**
   * Leases a branch for one turn: nobody else may lease or record it until the
   * holder records or releases. `version` is the one the caller looked up, so a
   * decision made on an older state is refused ('stale').
   */
  lease(anchor: string, chatId: string, version: number, holder: string): LeaseResult {
    const key = keyOf(anchor, chatId);
    const value = this.#cache.get(key);
    if (!value) {
      return {
        granted: false,
        reason: 'gone',
        message: `branch ${chatId} of ${anchor} is not in the cache (expired, evicted or never recorded)`,
      };
    }
    const current = this.#leases.get(key);
    if (current !== undefined && current !== holder) {
      return { granted: false, reason: 'busy', message: `a turn of chat ${chatId} is running now` };
    }
    if (value.version !== version) {
      return {
        granted: false,
        reason: 'stale',
        message: `branch ${chatId} moved from version ${version} to ${value.version}; look it up again`,
      };
    }
    this.#leases.set(key, holder);
    let keys = this.#held.get(holder);
    if (!keys) this.#held.set(holder, (keys = new Set()));
    keys.add(key);
    return { granted: true, branch: this.#view(key, value) };
  }

  /**
   * Ends every lease `holder` has. With an outcome or a state, each leased branch takes
   * what is given (and a new version, so decisions made before are stale); with
   * neither the branches stay as they were. Returns how many leases ended.
   * A holder that vanished is released with ('interrupted', 'unknown').
   */
  release(holder: string, outcome?: Outcome, state?: Branch['state']): number {
    const keys = this.#held.get(holder);
    if (!keys) return 0;
    this.#held.delete(holder);
    for (const key of keys) {
      this.#leases.delete(key);
      if (outcome !== undefined || state !== undefined) this.#ended(key, outcome, state);
    }
    return keys.size;
  }

  /** A leased turn's end as its holder says it: the branch takes the outcome and state given, and a new version. */
  #ended(key: string, outcome?: Outcome, state?: Branch['state']): void {
    const value = this.#cache.get(key, { allowStale: false, updateAgeOnGet: false });
    if (!value) return;
    this.#cache.set(
      key,
      {
        ...value,
        // An unknown history with no outcome said is an interrupted turn: 'success' with 'unknown' means cursor ran its calls itself (decide.ts).
        lastOutcome: outcome ?? (state === 'unknown' ? 'interrupted' : value.lastOutcome),
        state: state ?? value.state,
        version: ++this.#lastVersion,
        updatedAt: this.#wallClock(),
      },
      // A failed or interrupted turn does not extend the branch's life.
      { noUpdateTTL: true },
    );
  }

  /**
   * Records a turn with compare-and-set: the base's version, count and prefix hash
   * must be the stored branch's ('conflict' otherwise, 'gone' when it is no longer
   * cached), and the added digests extend it; a null base creates the branch from
   * `added` alone, or replaces one with the same chat ID (a chat that Cursor just
   * created is new by definition). A branch leased by another holder is refused
   * ('busy'). Any record attempt ends `holder`'s lease on that branch; a refused one leaves it unknown.
   */
  record(input: RecordInput, holder?: string): RecordResult {
    const key = keyOf(input.anchor, input.chatId);
    const leasedBy = this.#leases.get(key);
    if (leasedBy !== undefined && leasedBy !== holder) {
      return { recorded: false, reason: 'busy', message: `a turn of chat ${input.chatId} is running now` };
    }
    if (leasedBy === undefined) return this.#record(key, input);
    this.#endLease(key, holder!);
    const result = this.#record(key, input);
    // The holder's turn ran on its chat: refused, the branch would stay resumable a turn behind that chat,
    // and the next turn's delta would send the chat again what it holds (the same turn asked again, for one).
    if (!result.recorded) this.#ended(key, 'interrupted', 'unknown');
    return result;
  }

  #record(key: string, input: RecordInput): RecordResult {
    if (this.#forgotten.has(input.chatId)) {
      return {
        recorded: false,
        reason: 'forgotten',
        message: `chat ${input.chatId} was forgotten (continued outside cursor-resume's sight, or evicted): it is not to be resumed`,
      };
    }
    const evictedAt = this.#evictedBy(input.anchor);
    if (evictedAt !== undefined && (input.startedAt ?? -Infinity) <= evictedAt) {
      return {
        recorded: false,
        reason: 'forgotten',
        message: `the turn of chat ${input.chatId} started before its conversation ${input.anchor} was evicted: evict asked for a fresh chat`,
      };
    }
    const refusedBy = Math.max(this.#allForgottenAt ?? -Infinity, input.base === null ? (this.#droppedForgetAt ?? -Infinity) : -Infinity);
    if (refusedBy !== -Infinity && (input.startedAt ?? -Infinity) <= refusedBy) {
      return {
        recorded: false,
        reason: 'forgotten',
        message: `the turn of chat ${input.chatId} started before every chat was forgotten (a caller continued one it did not name, evict --all, a helper that had forgotten chats went, or more chats were forgotten than are remembered one by one): its history is not known`,
      };
    }
    const existing = this.#cache.get(key, { updateAgeOnGet: false });
    const { base } = input;
    if (base !== null) {
      if (!existing) {
        return {
          recorded: false,
          reason: 'gone',
          message: `branch ${input.chatId} of ${input.anchor} is no longer cached; record it as new (base null) with its whole known sequence`,
        };
      }
      if (existing.version !== base.version) {
        return {
          recorded: false,
          reason: 'conflict',
          message: `branch ${input.chatId} is at version ${existing.version}, not ${base.version}: another turn recorded first`,
        };
      }
      if (existing.known.count !== base.count || existing.known.prefix !== base.prefix || base.count === 0) {
        return {
          recorded: false,
          reason: 'conflict',
          message: `branch ${input.chatId} knows ${existing.known.count} messages, not the ${base.count} this record adds to (or not the same ones)`,
        };
      }
    }
    const from = base !== null ? existing!.known : KnownSequence.EMPTY;
    if (from.count + input.added.length / DIGEST_BYTES > MAX_KNOWN_MESSAGES) {
      // Its chat has moved on past what the branch can know: left as it was, the branch would be a turn behind it.
      if (base !== null) this.#cache.delete(key);
      return { recorded: false, reason: 'too-long', message: `a branch knows at most ${MAX_KNOWN_MESSAGES} messages` };
    }
    const known = base !== null ? from.revised(Buffer.from(base.last, 'hex'), input.added) : from.append(input.added);
    const now = this.#wallClock();
    const kept = base !== null ? existing : undefined;
    const value: Stored = {
      anchor: input.anchor,
      chatId: input.chatId,
      toolsFingerprint: input.toolsFingerprint,
      workspace: input.workspace,
      model: input.model,
      known,
      bytesSaved: (kept?.bytesSaved ?? 0) + Math.max(0, input.savedBytes),
      version: ++this.#lastVersion,
      turns: (kept?.turns ?? 0) + 1,
      state: input.state ?? 'ok',
      lastOutcome: input.outcome ?? (input.state === 'unknown' ? 'interrupted' : 'success'),
      createdAt: kept?.createdAt ?? now,
      updatedAt: now,
      begunBy: kept?.begunBy ?? input.startedAt ?? -Infinity,
      ...(input.storeSeen !== undefined ? { storeSeen: input.storeSeen } : {}),
    };
    if (base === null) this.#dropCopiesOf(value);
    // A full cache evicts its least recently used branch: let that be an expired one rather than a live one.
    if (this.#cache.size >= this.#cache.max && !this.#cache.has(key)) this.#cache.purgeStale();
    this.#cache.set(key, value);
    // The set may have evicted the least recently used branch; index this one after it.
    let chatIds = this.#index.get(input.anchor);
    if (!chatIds) this.#index.set(input.anchor, (chatIds = new Set()));
    chatIds.add(input.chatId);
    return { recorded: true, branch: this.#view(key, value) };
  }

  /**
   * A new chat whose history is exactly another branch's (the same turn sent again,
   * answered alike) replaces it: either chat continues the conversation the same
   * way, and a copy must not push a real branch out of the cache. A leased one is
   * in use and stays.
   */
  #dropCopiesOf(value: Stored): void {
    for (const chatId of this.#index.get(value.anchor) ?? []) {
      if (chatId === value.chatId) continue;
      const key = keyOf(value.anchor, chatId);
      const other = this.#cache.peek(key);
      if (
        other &&
        !this.#leases.has(key) &&
        other.toolsFingerprint === value.toolsFingerprint &&
        other.known.count === value.known.count &&
        other.known.prefix === value.known.prefix
      ) {
        this.#cache.delete(key);
      }
    }
  }

  /**
   * Prefix hashes of a branch's sequence at the given counts (null past its end),
   * for the search for the first message a transcript changed. Read-only, like
   * peek(); refused when the branch is gone or is no longer at `version`.
   */
  prefixes(anchor: string, chatId: string, version: number, counts: ReadonlyArray<number>): PrefixesResult {
    const value = this.#cache.peek(keyOf(anchor, chatId), { allowStale: true });
    if (!value) return { found: false, reason: 'gone', message: `branch ${chatId} of ${anchor} is not in the cache` };
    if (value.version !== version)
      return { found: false, reason: 'stale', message: `branch ${chatId} moved from version ${version} to ${value.version}` };
    return { found: true, prefixes: value.known.prefixesAt(counts) };
  }

  /** How many of a transcript's messages begin the branch's sequence (0 when it is not cached), as a lookup finds them. For the in-process simulation. */
  matchedBy(anchor: string, chatId: string, transcript: TranscriptDigests, packed: Uint8Array): number {
    return this.#cache.peek(keyOf(anchor, chatId), { allowStale: true })?.known.matchedBy(transcript, packed) ?? 0;
  }

  /**
   * Drops every branch of every anchor starting with `anchorPrefix` (non-empty), and refuses any
   * later record of their chats, and of any turn of those anchors started at `now` or before: a turn
   * still running would otherwise put its chat, or a new one, back. Returns how many branches went.
   */
  evict(anchorPrefix: string, now: number): number {
    if (anchorPrefix === '') throw new Error('evict: empty anchor prefix; use forgetAll() to drop everything');
    // A store that replaces this one knows no anchors: it refuses what every turn started by then records.
    this.#lastForgetAt = Math.max(now, this.#lastForgetAt ?? now);
    this.#remember(this.#evictedAt, anchorPrefix, now, MAX_EVICTED_ANCHORS);
    let count = 0;
    for (const [anchor, chatIds] of [...this.#index]) {
      if (!anchor.startsWith(anchorPrefix)) continue;
      for (const chatId of [...chatIds]) {
        if (!this.#cache.delete(keyOf(anchor, chatId))) continue;
        this.#refuseLater(chatId, now);
        count++;
      }
    }
    return count;
  }

  /** Drops one branch. Returns 1 if it was cached, else 0. */
  evictBranch(anchor: string, chatId: string): number {
    return this.#cache.delete(keyOf(anchor, chatId)) ? 1 : 0;
  }

  /**
   * Drops the chat's branches under every anchor, and refuses any later record of it. Returns how many.
   * `now` is on the clock records' `startedAt` are (see lastForgetAt).
   */
  evictChat(chatId: string, now: number): number {
    this.#lastForgetAt = Math.max(now, this.#lastForgetAt ?? now);
    this.#refuseLater(chatId, now);
    let count = 0;
    for (const [anchor, chatIds] of [...this.#index]) if (chatIds.has(chatId) && this.#cache.delete(keyOf(anchor, chatId))) count++;
    return count;
  }

  /**
   * Drops everything and refuses any later record of the chats dropped or leased now,
   * and of every turn that started at `now` or before: anything cursor-resume knew may be
   * out of date (the user said so, or a caller continued a chat it did not name, and any of
   * them may be it, or a new chat of a turn still running, whose lease may have ended with its branch).
   * `now` is on the clock records' `startedAt` are. Returns how many branches there were.
   */
  forgetAll(now: number): number {
    const count = this.#forgetBranches(now, () => true);
    // Expired branches too, which no lookup reaches but the count of entries still holds.
    this.#cache.clear();
    return count;
  }

  /**
   * When a chat was last forgotten, if ever: what a store that replaces this one must refuse
   * (records of turns started by then) to keep what this one refuses, without knowing which chats.
   */
  get lastForgetAt(): number | undefined {
    return this.#lastForgetAt;
  }

  /**
   * What a mark left by a line or another helper asks (forget-marks.ts): refuses records of turns
   * started at `time` or before, and drops, refusing them later, the branches such a turn began here
   * (one may be a chat a caller continued where this store did not see it) and the chats leased
   * but no longer cached; branches begun by later turns stay. Returns how many branches went.
   */
  forgetBefore(time: number): number {
    return this.#forgetBranches(time, (value) => value.begunBy <= time);
  }

  /**
   * Refuses records of turns started by `time`, and the chats leased but no longer cached; drops,
   * refusing them later, the branches `drops` picks. Returns how many went.
   */
  #forgetBranches(time: number, drops: (value: Stored) => boolean): number {
    this.#allForgottenAt = Math.max(time, this.#allForgottenAt ?? time);
    this.#lastForgetAt = Math.max(time, this.#lastForgetAt ?? time);
    for (const key of this.#leases.keys()) if (!this.#cache.has(key)) this.#refuseLater(key.slice(key.indexOf('/') + 1), time);
    let count = 0;
    for (const [key, value] of [...this.#cache.entries()]) {
      if (!drops(value)) continue;
      this.#refuseLater(value.chatId, time);
      if (this.#cache.delete(key)) count++;
    }
    return count;
  }

  /** The latest eviction of a prefix of `anchor`, if any. */
  #evictedBy(anchor: string): number | undefined {
    let latest: number | undefined;
    for (const [prefix, time] of this.#evictedAt) if (anchor.startsWith(prefix) && (latest === undefined || time > latest)) latest = time;
    return latest;
  }

  #refuseLater(chatId: string, time: number): void {
    this.#remember(this.#forgotten, chatId, time, MAX_FORGOTTEN_CHATS);
  }

  /**
   * Remembers a forget of `key` (a chat, an anchor prefix) at `time`, as the latest. The oldest
   * dropped to keep `max` still refuses what it refused: every whole record of a turn started by
   * its time, the only ones that can have read what it forgot and bring it back (at worst, other
   * turns running then go unrecorded).
   */
  #remember(forgets: Map<string, number>, key: string, time: number, max: number): void {
    forgets.delete(key);
    forgets.set(key, time);
    if (forgets.size <= max) return;
    const [oldest, at] = forgets.entries().next().value!;
    forgets.delete(oldest);
    this.#droppedForgetAt = Math.max(at, this.#droppedForgetAt ?? at);
  }

  /** Live branches, most recently used first. Does not change recency. */
  list(): Branch[] {
    const out: Branch[] = [];
    for (const [key, value] of this.#cache.entries()) out.push(this.#view(key, value));
    return out;
  }

  /** Live branches (expired ones not yet dropped are not counted). */
  get size(): number {
    let n = 0;
    for (const _ of this.#cache.keys()) n++;
    return n;
  }

  stats(): StoreStats {
    const anchors = new Set<string>();
    let entries = 0;
    for (const [, value] of this.#cache.entries()) {
      entries++;
      anchors.add(value.anchor);
    }
    return { entries, anchors: anchors.size, leases: this.#leases.size, ...this.limits };
  }

  /** How many leases `holder` has now. */
  leasesOf(holder: string): number {
    return this.#held.get(holder)?.size ?? 0;
  }

  /** Drops expired branches now (the helper calls this periodically so nothing outlives its TTL in memory). */
  prune(): void {
    this.#cache.purgeStale();
  }

  /**
   * A branch as read. Field by field, in the order record() stores them (a reply's bytes follow it):
   * a rest and a spread made two objects of a slow shape for every branch a request read.
   */
  #view(key: string, value: Stored, ttlLeftMs = this.#cache.getRemainingTTL(key)): Branch {
    return {
      anchor: value.anchor,
      chatId: value.chatId,
      toolsFingerprint: value.toolsFingerprint,
      workspace: value.workspace,
      model: value.model,
      bytesSaved: value.bytesSaved,
      version: value.version,
      turns: value.turns,
      state: value.state,
      lastOutcome: value.lastOutcome,
      createdAt: value.createdAt,
      updatedAt: value.updatedAt,
      ...(value.storeSeen !== undefined ? { storeSeen: value.storeSeen } : {}),
      knownCount: value.known.count,
      prefix: value.known.prefix,
      ttlLeftMs,
      leased: this.#leases.has(key),
    };
  }

  #endLease(key: string, holder: string): void {
    this.#leases.delete(key);
    const keys = this.#held.get(holder);
    keys?.delete(key);
    if (keys?.size === 0) this.#held.delete(holder);
  }

  #forget(anchor: string, chatId: string, key: string): void {
    const chatIds = this.#index.get(anchor);
    chatIds?.delete(chatId);
    if (chatIds?.size === 0) this.#index.delete(anchor);
    const holder = this.#leases.get(key);
    if (holder !== undefined) this.#endLease(key, holder);
  }
}
