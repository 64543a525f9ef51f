// One connection to the helper. A run keeps it for its whole turn (lookup,
// lease, ..., record or release), because a lease lives as long as the
// connection that took it. Every call is one round trip with a bounded wait:
// the helper can never hang a run.
import net from 'node:net';
import path from 'node:path';
import { knownPrefixHash, pack, prefixHashes, type TranscriptDigests } from '../cache/known.js';
import type { PrefixesResult } from '../cache/store.js';
import type { Branch, MatchedBranch, Outcome } from '../cache/types.js';
import { searchShared } from '../resume/prefix.js';
import { VERSION } from '../version.js';
import { LineReader, MAX_DIGESTS_PER_LINE, MAX_REPLY_BYTES, PROTOCOL_VERSION, encode, isCount } from './protocol.js';
import { isJsonObject } from '../json-object.js';
import { replacedDirReason, runtimeDirId } from './paths.js';
import type {
  BranchSummary,
  EvictTarget,
  HelloReply,
  HelperLimits,
  LeaseReply,
  Op,
  RecordReply,
  RecordRequest,
  ReplyPayloads,
  StatsReply,
} from './protocol.js';

export const DEFAULT_CONNECT_TIMEOUT_MS = 250;
export const DEFAULT_REQUEST_TIMEOUT_MS = 500;
/**
 * Longer deadlines, where waiting costs nobody a turn's time: a person's command (inspect,
 * evict, helper status and stop) and a forget. A turn that gives up on a slow helper only
 * misses a resume; these would give a wrong answer, or leave a chat to be resumed wrongly.
 */
export const PATIENT: ClientOptions = { connectTimeoutMs: 1_000, requestTimeoutMs: 3_000 };

export type HelperErrorCode =
  /** Nothing listens on the socket (no helper, or a dead one's socket file). */
  | 'not-running'
  | 'timeout'
  /** The connection closed before the reply came. */
  | 'closed'
  | 'bad-reply'
  /** Connection-level errors (EACCES, ...). */
  | 'connect-failed'
  /** An error reply from the helper carries its own code (bad-request, too-many-connections, ...). */
  | (string & {});

export class HelperError extends Error {
  override name = 'HelperError';
  constructor(
    readonly code: HelperErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
}

/**
 * Ops sent once more on a new connection when the first one closed or the helper was
 * gone: a record is compare-and-set, so it is never applied twice. A release is not:
 * a lease belongs to its connection, and the helper ends it when that closes.
 */
const RESENT: ReadonlySet<Op> = new Set(['record']);

/** A turn to record, as the run path knows it; recordTurn() sends only what the branch lacks. */
export interface TurnRecord extends Omit<RecordRequest, 'base' | 'staged' | 'added'> {
  /** The transcript's message digests, in order. */
  digests: ReadonlyArray<string>;
  /** The digest of cursor's reply to this turn. */
  reply: string;
  /**
   * The branch the turn resumed (its version and knownCount, as looked up, and the digest its last
   * message, cursor's reply, is known by there: `Analysis.replyDigestAt`), or null for a new chat.
   */
  base: { version: number; count: number; lastAsReply: string } | null;
}

/**
 * The base of a resumed turn's record as the helper checks it: the branch's version, count and
 * prefix hash as the turn read them, and the turn's copy of cursor's reply, which the branch
 * knows it by from then on.
 */
export function recordBase(digests: ReadonlyArray<string>, base: NonNullable<TurnRecord['base']>): NonNullable<RecordRequest['base']> {
  const { version, count, lastAsReply } = base;
  return { version, count, prefix: knownPrefixHash(pack(digests), count, lastAsReply), last: digests[count - 1]! };
}

interface Pending {
  op: Op;
  resolve: (value: Record<string, unknown>) => void;
  reject: (error: HelperError) => void;
  timer: NodeJS.Timeout;
}

export class HelperClient {
  readonly socketPath: string;
  /** The helper's hello, once `hello()` ran. */
  server: HelloReply | undefined;
  readonly #connectTimeoutMs: number;
  readonly #requestTimeoutMs: number;
  #socket: net.Socket | undefined;
  #reader = new LineReader(MAX_REPLY_BYTES);
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed = false;
  #revive: (() => Promise<boolean>) | undefined;
  /** The runtime dir's identity at the first connection (paths.ts); null before it. */
  #dirId: string | undefined | null = null;

  private constructor(socketPath: string, options: ClientOptions) {
    this.socketPath = socketPath;
    this.#connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  /** Connects (no hello yet). Rejects with HelperError 'not-running', 'timeout' or 'connect-failed'. */
  static async connect(socketPath: string, options: ClientOptions = {}): Promise<HelperClient> {
    const client = new HelperClient(socketPath, options);
    await client.#open();
    return client;
  }

  /**
   * How to bring a helper back when a record finds none (the launcher
   * starts one): a first turn that outlives the helper's idle limits is still recorded.
   */
  reviveWith(revive: () => Promise<boolean>): void {
    this.#revive = revive;
  }

  /** Exchanges versions; whether the helper's suits us is the caller's call (the launcher replaces another one). */
  async hello(): Promise<HelloReply> {
    const reply = await this.request('hello', { protocol: PROTOCOL_VERSION, version: VERSION });
    this.server = reply;
    return reply;
  }

  /**
   * The anchor's branches, most recently updated first, each matched against a
   * transcript's digests; an expired one comes once with ttlLeftMs <= 0. A use: they
   * become the most recently used.
   */
  lookup(anchor: string, transcript: TranscriptDigests): Promise<MatchedBranch[]> {
    return this.#branches('lookup', anchor, transcript);
  }

  /** The anchor's branches as lookup() returns them, without changing anything in the helper (dry runs, explanations). */
  peek(anchor: string, transcript: TranscriptDigests): Promise<MatchedBranch[]> {
    return this.#branches('peek', anchor, transcript);
  }

  async #branches(op: 'lookup' | 'peek', anchor: string, transcript: TranscriptDigests): Promise<MatchedBranch[]> {
    const { branches } = await this.request(op, { anchor });
    if (!Array.isArray(branches) || !branches.every(isBranch)) {
      throw new HelperError('bad-reply', `the helper answered the ${op} with something that is not a list of branches`);
    }
    const packed = pack(transcript.digests);
    const matched: MatchedBranch[] = [];
    for (const branch of branches) matched.push({ ...branch, matched: await this.#shared(branch, packed, transcript) });
    return matched;
  }

  /**
   * How many of the transcript's messages begin the branch's history: its whole
   * history when the prefix hashes at its count agree (one hash, no round trip),
   * else found by comparing prefix hashes with the helper's, a few rounds of 64.
   * The search compares counts below the branch's, where every message is one it was
   * sent. A branch that moves meanwhile stops the search at what is proven so far.
   */
  async #shared(branch: Branch, packed: Buffer, transcript: TranscriptDigests): Promise<number> {
    const known = branch.knownCount;
    const messages = transcript.digests.length;
    if (known >= 1 && known <= messages && knownPrefixHash(packed, known, transcript.replyDigestAt(known - 1)) === branch.prefix)
      return known;
    const search = searchShared(0, Math.min(messages, known - (known <= messages ? 1 : 0)));
    let proven = 0;
    for (let step = search.next(); ;) {
      if (step.done) return step.value;
      const at = step.value;
      const reply = await this.prefixes(branch.anchor, branch.chatId, branch.version, at);
      if (!reply.found) return proven;
      const mine = prefixHashes(packed, at);
      const same = at.map((_, i) => reply.prefixes[i] === mine[i]);
      at.forEach((count, i) => {
        if (same[i]) proven = Math.max(proven, count);
      });
      step = search.next(same);
    }
  }

  /** The branch's prefix hashes at these counts (at most MAX_PROBES), if it is still at `version`. */
  async prefixes(anchor: string, chatId: string, version: number, at: number[]): Promise<PrefixesResult> {
    const reply = await this.request('prefixes', { anchor, chatId, version, at });
    const ok = reply.found
      ? Array.isArray(reply.prefixes) &&
        reply.prefixes.length === at.length &&
        reply.prefixes.every((p) => p === null || (typeof p === 'string' && /^[0-9a-f]{32}$/.test(p)))
      : typeof reply.reason === 'string';
    if (!ok)
      throw new HelperError('bad-reply', 'the helper answered the prefixes request with something that is not a list of prefix hashes');
    return reply;
  }

  /** Lowers the helper's cache limits (it never raises them); resolves to those in force. */
  async lowerLimits(limits: { ttlMs?: number; maxEntries?: number }): Promise<HelperLimits> {
    return (await this.request('limits', limits)).limits;
  }

  /** Leases a branch for this turn, for as long as this connection stays open or until record/release. */
  lease(anchor: string, chatId: string, version: number): Promise<LeaseReply> {
    return this.request('lease', { anchor, chatId, version });
  }

  /** Ends this connection's leases; with an outcome, the leased branches take it (and state). */
  async release(outcome?: Outcome, state?: Branch['state']): Promise<number> {
    return (await this.request('release', { outcome, state })).released;
  }

  /** Records a turn as given (compare-and-set on its base); ends this connection's lease on that branch. */
  record(record: RecordRequest): Promise<RecordReply> {
    return this.request('record', { record });
  }

  /**
   * Records a turn, sending only the digests the branch lacks. If the branch expired
   * or was evicted while the turn ran, the record holds the whole known sequence and
   * the chat just answered, so it stands as a new branch. Ends this connection's
   * lease on that branch.
   */
  async recordTurn(turn: TurnRecord): Promise<RecordReply> {
    const { digests, reply, base, ...fields } = turn;
    if (base !== null) {
      const known = recordBase(digests, base);
      const delta = await this.#resending(() => this.#record(fields, known, digests.slice(base.count), reply));
      if (delta.recorded || delta.reason !== 'gone') return delta;
    }
    let whole = await this.#resending(() => this.#record(fields, null, digests, reply));
    // The digests sent ahead went to a connection that closed before the record: once more, all of it.
    if (!whole.recorded && whole.reason === 'staged') whole = await this.#resending(() => this.#record(fields, null, digests, reply));
    return whole;
  }

  /** One record: digests that do not fit its line go ahead in `append` lines on the same connection. */
  async #record(
    fields: Omit<RecordRequest, 'base' | 'staged' | 'added'>,
    base: RecordRequest['base'],
    digests: ReadonlyArray<string>,
    reply: string,
  ): Promise<RecordReply> {
    const all = [...digests, reply];
    const ahead = Math.max(0, all.length - MAX_DIGESTS_PER_LINE);
    for (let at = 0; at < ahead; at += MAX_DIGESTS_PER_LINE) {
      await this.#request('append', { digests: all.slice(at, Math.min(at + MAX_DIGESTS_PER_LINE, ahead)).join('') });
    }
    const record: RecordRequest = { ...fields, base, ...(ahead > 0 ? { staged: ahead } : {}), added: all.slice(ahead).join('') };
    return this.#request('record', { record });
  }

  async evict(target: EvictTarget): Promise<number> {
    const { evicted } = await this.request('evict', { ...target });
    if (!isCount(evicted)) throw new HelperError('bad-reply', 'the helper answered the evict with something that is not a count');
    return evicted;
  }

  /** Every live branch without its digests (`knownCount` instead). */
  async list(): Promise<BranchSummary[]> {
    const { branches } = await this.request('list', {});
    if (!Array.isArray(branches) || !branches.every(isSummary)) {
      throw new HelperError('bad-reply', 'the helper answered the list with something that is not a list of branches');
    }
    return branches;
  }

  async stats(): Promise<StatsReply> {
    const stats = await this.request('stats', {});
    if (!isStats(stats)) throw new HelperError('bad-reply', 'the helper answered the stats with something that is not its figures');
    return stats;
  }

  /** Asks the helper to exit; resolves once it acknowledged. */
  async shutdown(): Promise<void> {
    await this.request('shutdown', {});
    this.close();
  }

  close(): void {
    this.#closed = true;
    this.#socket?.destroy();
    this.#socket = undefined;
  }

  /**
   * One request, one reply. If the helper closed this connection meanwhile (it
   * closes idle connections that hold no lease), it is opened again first (and,
   * once we met a helper, greeted again: see #helloAgain); a
   * lease lost that way was already released as interrupted by the helper, and
   * the next record of that branch is refused, never silently applied. A record
   * whose connection closed before the reply, or that finds no helper (one that
   * exited idle under a long turn), is sent once more on a new connection, to a
   * helper started again if need be.
   */
  request<K extends Op>(op: K, fields: Record<string, unknown>): Promise<ReplyPayloads[K]> {
    return RESENT.has(op) ? this.#resending(() => this.#request(op, fields)) : this.#request(op, fields);
  }

  /** `send` once more on a new connection when the first one closed or found no helper, then once more to a revived helper. */
  async #resending<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      if (this.#closed || !(error instanceof HelperError) || !['closed', 'not-running', 'shutting-down'].includes(error.code)) throw error;
      // Never the connection that just failed: the retry opens a new one.
      this.#socket?.destroy();
      this.#socket = undefined;
    }
    try {
      return await send();
    } catch (error) {
      const gone = error instanceof HelperError && (error.code === 'not-running' || error.code === 'shutting-down');
      if (!gone || this.#closed || !this.#revive || !(await this.#revive())) throw error;
    }
    return send();
  }

  async #request<K extends Op>(op: K, fields: Record<string, unknown>): Promise<ReplyPayloads[K]> {
    if (this.#closed) throw new HelperError('closed', 'this helper client was closed');
    if (!this.#socket || this.#socket.destroyed) {
      await this.#open();
      if (this.server !== undefined && op !== 'hello') await this.#helloAgain();
    }
    const socket = this.#socket!;
    const id = this.#nextId++;
    const line = encode({ id, op, ...withoutUndefined(fields) });
    return new Promise<ReplyPayloads[K]>((resolve, reject) => {
      const timer = setTimeout(() => {
        // A late reply would be ambiguous: drop the connection (and with it any lease).
        this.#failAll(new HelperError('timeout', `the helper did not answer ${op} within ${this.#requestTimeoutMs} ms`));
        socket.destroy();
      }, this.#requestTimeoutMs);
      this.#pending.set(id, { op, resolve: resolve as Pending['resolve'], reject, timer });
      // Keep the process alive only while a reply is awaited.
      socket.ref();
      socket.write(line);
    });
  }

  /**
   * A new connection may reach another helper than the one we met (replaced meanwhile
   * by another installation): nothing more is sent unless it speaks our version.
   */
  async #helloAgain(): Promise<void> {
    const reply = await this.#request('hello', { protocol: PROTOCOL_VERSION, version: VERSION });
    if (isSameVersion(reply)) {
      this.server = reply;
      return;
    }
    this.#socket?.destroy();
    this.#socket = undefined;
    throw new HelperError(
      'version-mismatch',
      `the helper now answering is version ${reply.version} (protocol ${reply.protocol}), not ${VERSION} (protocol ${PROTOCOL_VERSION})`,
    );
  }

  /** The runtime dir's identity when this client first connected (undefined: it was not there). */
  get runtimeDirId(): string | undefined {
    return this.#dirId ?? undefined;
  }

  #open(): Promise<void> {
    // A new connection goes only to the folder the first one went to: one made again knows none of the forgets noted in the old one.
    const dir = path.dirname(this.socketPath);
    const dirId = runtimeDirId(dir);
    if (this.#dirId === null) this.#dirId = dirId;
    else if (dirId !== this.#dirId) return Promise.reject(new HelperError('dir-replaced', replacedDirReason(dir)));
    this.#reader = new LineReader(MAX_REPLY_BYTES);
    return new Promise((resolve, reject) => {
      const socket = net.createConnection(this.socketPath);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new HelperError('timeout', `connecting to the helper at ${this.socketPath} took over ${this.#connectTimeoutMs} ms`));
      }, this.#connectTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onConnectError);
        socket.on('error', () => {
          // reported through 'close' to whoever waits for a reply
        });
        socket.on('data', (chunk: Buffer) => this.#onData(chunk));
        socket.on('close', () => {
          if (this.#socket === socket) this.#socket = undefined;
          this.#failAll(new HelperError('closed', 'the helper closed the connection before answering'));
        });
        socket.unref();
        this.#socket = socket;
        resolve();
      });
      const onConnectError = (error: NodeJS.ErrnoException): void => {
        clearTimeout(timer);
        const missing = error.code === 'ENOENT' || error.code === 'ECONNREFUSED';
        reject(
          new HelperError(
            missing ? 'not-running' : 'connect-failed',
            missing ? `no helper answers at ${this.socketPath}` : `cannot connect to the helper at ${this.socketPath}: ${error.message}`,
          ),
        );
      };
      socket.once('error', onConnectError);
    });
  }

  #onData(chunk: Buffer): void {
    const { lines, overflow } = this.#reader.push(chunk);
    for (const line of lines) this.#onReply(line);
    if (overflow) {
      this.#failAll(new HelperError('bad-reply', `a helper reply went over ${MAX_REPLY_BYTES} bytes`));
      this.#socket?.destroy();
    }
  }

  #onReply(line: string): void {
    let reply: { id?: unknown; ok?: unknown; error?: { code?: unknown; message?: unknown } };
    try {
      reply = JSON.parse(line);
    } catch {
      this.#failAll(new HelperError('bad-reply', 'the helper sent a reply that is not JSON'));
      this.#socket?.destroy();
      return;
    }
    const error =
      reply.ok === false
        ? new HelperError(String(reply.error?.code ?? 'error'), String(reply.error?.message ?? 'the helper refused the request'))
        : undefined;
    const pending = typeof reply.id === 'number' ? this.#pending.get(reply.id) : undefined;
    if (!pending) {
      // An error not tied to a request (too many connections, shutting down) concerns all of them.
      if (error) this.#failAll(error);
      return;
    }
    this.#settle(reply.id as number);
    if (error) pending.reject(error);
    else {
      const { id: _id, ok: _ok, ...payload } = reply;
      pending.resolve(payload);
    }
  }

  #settle(id: number): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    clearTimeout(pending.timer);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#socket?.unref();
  }

  #failAll(error: HelperError): void {
    for (const [id, pending] of [...this.#pending]) {
      this.#settle(id);
      pending.reject(error);
    }
  }
}

/** A time or a span: a finite number (a Date of it must not throw). */
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 8.64e15;

/** A branch as the run path relies on it (a summary and its prefix hash): whatever else comes over the socket is a bad reply, never a crash. */
function isBranch(value: unknown): value is Branch {
  if (!isSummary(value)) return false;
  const { prefix } = value as { prefix?: unknown };
  return typeof prefix === 'string' && /^[0-9a-f]{32}$/.test(prefix);
}

/** A branch as inspect shows it (every field it prints): anything else is a bad reply, never a crash. */
function isSummary(b: unknown): b is BranchSummary {
  if (!isJsonObject(b)) return false;
  return (
    typeof b.anchor === 'string' &&
    typeof b.chatId === 'string' &&
    typeof b.toolsFingerprint === 'string' &&
    typeof b.workspace === 'string' &&
    typeof b.model === 'string' &&
    isCount(b.bytesSaved) &&
    isCount(b.knownCount) &&
    typeof b.version === 'number' &&
    isCount(b.turns) &&
    (b.state === 'ok' || b.state === 'unknown') &&
    typeof b.lastOutcome === 'string' &&
    isTime(b.createdAt) &&
    isTime(b.updatedAt) &&
    isTime(b.ttlLeftMs) &&
    typeof b.leased === 'boolean' &&
    (b.storeSeen === undefined || typeof b.storeSeen === 'boolean')
  );
}

const isLimits = (value: unknown): value is HelperLimits =>
  isJsonObject(value) &&
  [value.ttlMs, value.maxEntries, value.idleMs, value.connectionIdleMs, value.maxRequestBytes, value.maxConnections].every(isCount);

/** The helper's figures as `helper status` shows them. */
function isStats(s: unknown): s is StatsReply {
  if (!isJsonObject(s)) return false;
  return (
    isCount(s.pid) &&
    typeof s.version === 'string' &&
    typeof s.protocol === 'number' &&
    isTime(s.startedAt) &&
    isTime(s.uptimeMs) &&
    typeof s.socketPath === 'string' &&
    typeof s.runtimeDir === 'string' &&
    [s.entries, s.anchors, s.leases, s.connections].every(isCount) &&
    isJsonObject(s.memory) &&
    isCount(s.memory.rss) &&
    isCount(s.memory.heapUsed) &&
    isLimits(s.limits)
  );
}

export function isSameVersion(hello: Pick<HelloReply, 'protocol' | 'version'>): boolean {
  return hello.protocol === PROTOCOL_VERSION && hello.version === VERSION;
}

function withoutUndefined(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
