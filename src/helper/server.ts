// The helper daemon: a BranchStore behind a Unix socket. It holds only what the
// store holds (hashes, chat IDs, counts, times), in memory, and never writes it
// anywhere. Process concerns (signals, exit) live in server-main.ts; this module
// can also run inside a test process.
import fs from 'node:fs';
import net from 'node:net';
import { randomInt, randomUUID } from 'node:crypto';
import { sleep } from '../sleep.js';
import { BranchStore } from '../cache/store.js';
import type { Limits } from '../cache/limits.js';
import { MAX_KNOWN_MESSAGES } from '../cache/known.js';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';
import { envValue } from '../env-value.js';
import { monotonicMs } from '../monotonic.js';
import { VERSION } from '../version.js';
import { compactHeap } from './heap.js';
import { noteForgot, takeForgetMarks } from './forget-marks.js';
import { ensureRuntimeDir } from './paths.js';
import { removeStaleSocket, socketAnswers } from './stale-socket.js';
import { acquireStartLock, releaseStartLock } from './start-lock.js';
import type { RuntimePaths } from './paths.js';
import { LineReader, MAX_REQUEST_BYTES, PROTOCOL_VERSION, encode, errorReply, parseRequest, summarize } from './protocol.js';
import type { ErrorCode, HelperLimits, Request, ReplyPayloads, StatsReply } from './protocol.js';

export const DEFAULT_IDLE_MS = 5 * 60 * 1000;
export const MAX_IDLE_MS = 60 * 60 * 1000;
const MIN_IDLE_MS = 100;
export const DEFAULT_CONNECTION_IDLE_MS = 30_000;
/** A request line must be complete this long after its first byte arrived. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_CONNECTIONS = 256;
/** A client that does not read its replies is cut off past this much unsent output. */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
/** Digests sent ahead (`append`) held at once across connections: one record's worth, 32 MB. */
export const MAX_STAGED_DIGESTS = MAX_KNOWN_MESSAGES;

/** Limits given here (a helper in a test process) are clamped like any request for them. */
export interface ServerSettings extends Partial<Limits> {
  idleMs: number;
}

/**
 * The helper's own settings from its environment: CURSOR_RESUME_IDLE_MS sets the idle
 * exit (default 5 min, 100 ms to 1 h). The cache limits are not among them: a helper
 * starts with the seed's, and every client that may start one lowers them to its
 * settings with a `limits` request, as typed values (see cache/limits.ts).
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): ServerSettings {
  return { idleMs: between(num(env.CURSOR_RESUME_IDLE_MS), DEFAULT_IDLE_MS) };
}

/** CURSOR_RESUME_CONNECTION_IDLE_MS (tests): how long a connection holding no lease may stay silent (default 30 s, 100 ms to 1 h). */
export function connectionIdleFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return between(num(env.CURSOR_RESUME_CONNECTION_IDLE_MS), DEFAULT_CONNECTION_IDLE_MS);
}

function num(value: string | undefined): number | undefined {
  const given = envValue(value);
  if (given === undefined) return undefined;
  const n = Number(given);
  return Number.isFinite(n) ? n : undefined;
}

/** A time from the environment, within 100 ms to 1 h; missing or not positive: the default. */
function between(ms: number | undefined, fallback: number): number {
  return ms === undefined || ms <= 0 ? fallback : Math.min(Math.max(Math.floor(ms), MIN_IDLE_MS), MAX_IDLE_MS);
}

export type ExitReason = 'idle' | 'shutdown' | 'signal' | 'socket-taken' | 'closed';

export interface ServerOptions {
  paths: RuntimePaths;
  settings?: Partial<ServerSettings>;
  connectionIdleMs?: number;
  requestTimeoutMs?: number;
  maxConnections?: number;
  /** Called once when the server has stopped by itself (idle, shutdown op, socket taken). */
  onExit?: (reason: ExitReason) => void;
}

export type StartResult =
  | { started: true; server: HelperServer }
  /** Another helper answers on the socket: nothing to do. */
  | { started: false; reason: string };

/**
 * Starts a helper on `paths.socket` unless one already answers there. Under a
 * cross-process start lock: if the socket answers, someone is running; else
 * remove the stale socket, bind, listen (turbo's order). Throws on real errors.
 */
export async function startHelperServer(options: ServerOptions): Promise<StartResult> {
  const { paths } = options;
  ensureRuntimeDir(paths);
  const lock = await acquireStartLock(paths.lock);
  try {
    if (await socketAnswers(paths.socket)) return { started: false, reason: `a helper already answers on ${paths.socket}` };
    removeStaleSocket(paths.socket);
    const server = new HelperServer(options);
    try {
      await server.listen();
    } catch (error) {
      // Another helper bound it first (possible only if the lock was broken twice at once).
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') return { started: false, reason: `${paths.socket} is in use` };
      throw error;
    }
    return { started: true, server };
  } finally {
    releaseStartLock(lock);
  }
}

interface Connection {
  id: string;
  socket: net.Socket;
  reader: LineReader;
  idleTimer?: NodeJS.Timeout;
  partialTimer?: NodeJS.Timeout;
  /** Digests sent ahead in `append` lines for this connection's next record, packed. */
  staged: Buffer[];
  stagedCount: number;
  closing: boolean;
  /** performance.now() of its last bytes (or of its arrival). */
  lastActive: number;
}

/** The helper gives back a burst's garbage this long after its last request (see heap.ts). */
const QUIET_MS = 500;

/** Each helper's versions start at random below this (2^47: far from Number.MAX_SAFE_INTEGER, and randomInt's limit is 2^48). */
const VERSIONS_SPREAD = 2 ** 47;

/** At the connection cap, a newcomer displaces a lease-less connection silent for this long rather than being refused. */
const SHED_IDLE_MS = 2_000;

export class HelperServer {
  readonly paths: RuntimePaths;
  readonly store: BranchStore;
  readonly startedAt = Date.now();
  readonly #startedMono = performance.now();
  readonly #idleMs: number;
  readonly #connectionIdleMs: number;
  readonly #requestTimeoutMs: number;
  readonly #maxConnections: number;
  readonly #onExit: ((reason: ExitReason) => void) | undefined;
  readonly #server: net.Server;
  readonly #connections = new Set<Connection>();
  /** Digests sent ahead on every connection, not yet used by a record. */
  #stagedTotal = 0;
  #nextConnection = 0;
  #socketId: { dev: number; ino: number } | undefined;
  #sweepTimer: NodeJS.Timeout | undefined;
  #quietTimer: NodeJS.Timeout | undefined;
  #idleSince: number | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: ServerOptions) {
    this.paths = options.paths;
    // The limits live in the store alone (a client may lower them); the store clamps them.
    this.store = new BranchStore({
      ttlMs: options.settings?.ttlMs,
      maxEntries: options.settings?.maxEntries,
      // Versions a run read from a helper that has since been replaced must never match this one's.
      versionsFrom: randomInt(VERSIONS_SPREAD),
    });
    this.#idleMs = options.settings?.idleMs ?? DEFAULT_IDLE_MS;
    this.#connectionIdleMs = options.connectionIdleMs ?? DEFAULT_CONNECTION_IDLE_MS;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    this.#onExit = options.onExit;
    this.#server = net.createServer((socket) => this.#accept(socket));
  }

  get limits(): HelperLimits {
    return {
      // The store's: a client may have lowered them since the start.
      ttlMs: this.store.limits.ttlMs,
      maxEntries: this.store.limits.maxEntries,
      idleMs: this.#idleMs,
      connectionIdleMs: this.#connectionIdleMs,
      maxRequestBytes: MAX_REQUEST_BYTES,
      maxConnections: this.#maxConnections,
    };
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.paths.socket, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    // The folder is already 0700; the socket itself is private too.
    fs.chmodSync(this.paths.socket, 0o600);
    const stat = fs.lstatSync(this.paths.socket);
    this.#socketId = { dev: stat.dev, ino: stat.ino };
    // Marks left while no helper ran, taken now that one listens (a line that finds none
    // after marking finds us): nothing between here and the first request yields to them.
    this.#takeMarks(true);
    this.#server.on('error', () => {
      // Accept errors (EMFILE...) must not kill the helper; the client retries or goes fresh.
    });
    const sweepMs = Math.min(1000, Math.max(25, Math.floor(this.#idleMs / 4)));
    this.#sweepTimer = setInterval(() => this.#sweep(), sweepMs);
    this.#quietTimer = setTimeout(compactHeap, QUIET_MS).unref();
  }

  /** Stops serving, removes the socket if it is still ours, ends every connection. */
  close(reason: ExitReason = 'closed'): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: ExitReason): Promise<void> {
    clearInterval(this.#sweepTimer);
    clearTimeout(this.#quietTimer);
    if (this.#ownsSocket()) {
      // libuv unlinks the socket path when the server closes: only do that while the path is ours.
      this.#server.close();
    } else {
      // Another helper has the path now; closing would unlink its socket. Just stop accepting.
      this.#server.unref();
      this.#server.removeAllListeners('connection');
    }
    const flushed: Promise<void>[] = [];
    for (const conn of this.#connections) {
      if (conn.closing) {
        flushed.push(new Promise((resolve) => conn.socket.once('close', () => resolve())));
      } else {
        conn.socket.destroy();
      }
    }
    // Let a shutdown reply reach its client, but never wait on a slow reader.
    await Promise.race([Promise.all(flushed), sleep(200)]);
    for (const conn of this.#connections) conn.socket.destroy();
    this.#onExit?.(reason);
  }

  #ownsSocket(): boolean {
    if (!this.#socketId) return false;
    try {
      const stat = fs.lstatSync(this.paths.socket);
      return stat.dev === this.#socketId.dev && stat.ino === this.#socketId.ino;
    } catch {
      return false;
    }
  }

  /** Takes the marks in the runtime dir (forget-marks.ts): what turns started by the latest one's time did is forgotten. */
  #takeMarks(starting = false): void {
    // Only the helper the socket leads to: one replaced must leave the marks, and the notes, to it.
    if (this.#ownsSocket()) this.#takeOwnMarks(starting);
  }

  /**
   * Before a request a turn decides or records on: a helper whose socket another took (deleted, or it
   * stalled and was replaced) no longer hears the forgets, which go to the one serving the socket now,
   * so it answers none on a connection it still has until its sweep ends them; it leaves at once, and
   * the client asks again on a new connection. Then takes the marks, as the one serving the socket.
   */
  #serving(marks: boolean): void {
    if (!this.#ownsSocket()) {
      // Once the refusal below is on its way (#fail marks the connection closing): closed now, the client would
      // get no reply, only a closed connection.
      process.nextTick(() => void this.close('socket-taken'));
      throw new RequestError('shutting-down', 'this helper no longer serves its socket; connect again to reach the one that does');
    }
    if (marks) this.#takeOwnMarks();
  }

  #takeOwnMarks(starting = false): void {
    const time = takeForgetMarks(this.paths, { starting });
    if (time === undefined) return;
    this.store.forgetBefore(time);
    this.#noteForgot();
  }

  /** Notes when it last forgot chats, for when it is gone (forget-marks.ts). */
  #noteForgot(): void {
    const time = this.store.lastForgetAt;
    if (time === undefined) return;
    try {
      noteForgot(this.paths, time);
    } catch {
      // The runtime dir is gone: so is any helper that could take the note.
    }
  }

  #sweep(): void {
    this.store.prune();
    // A connection whose lease ended by someone else's hand since its last request gets its idle timer back.
    for (const conn of this.#connections) if (!conn.idleTimer && !conn.closing && !this.#holdsLease(conn)) this.#schedule(conn);
    if (!this.#ownsSocket()) {
      // Removed or replaced by someone else: nobody can reach us any more.
      void this.close('socket-taken');
      return;
    }
    // Notes of other helpers written since (replaced, stopped, killed), and a mark a line left as we
    // began to listen. Cheap when there is none: one read of a small folder a second. (The socket was found ours just above.)
    this.#takeOwnMarks();
    if (this.#connections.size > 0 || this.store.size > 0) {
      this.#idleSince = undefined;
      return;
    }
    const now = performance.now();
    this.#idleSince ??= now;
    if (now - this.#idleSince >= this.#idleMs) void this.close('idle');
  }

  #accept(socket: net.Socket): void {
    socket.on('error', () => {
      // A client vanishing mid-request (EPIPE, ECONNRESET) concerns that client only.
    });
    if (this.#closing) {
      refuse(socket, errorReply(null, 'shutting-down', 'the helper is shutting down; connect again to start a new one'));
      return;
    }
    if (this.#connections.size >= this.#maxConnections) {
      // Connections left open by someone else must not lock out real runs: the one silent
      // longest, holding no lease, makes room (a client reconnects by itself when it needs to).
      const idle = this.#longestIdle();
      if (idle) idle.socket.destroy();
      else {
        refuse(
          socket,
          errorReply(
            null,
            'too-many-connections',
            `the helper serves at most ${this.#maxConnections} connections at once; try again shortly`,
          ),
        );
        return;
      }
    }
    const conn: Connection = {
      id: `c${++this.#nextConnection}-${randomUUID().slice(0, 8)}`,
      socket,
      reader: new LineReader(MAX_REQUEST_BYTES),
      staged: [],
      stagedCount: 0,
      closing: false,
      lastActive: performance.now(),
    };
    this.#connections.add(conn);
    this.#idleSince = undefined;
    socket.on('data', (chunk: Buffer) => this.#onData(conn, chunk));
    socket.on('close', () => this.#onClose(conn));
    this.#schedule(conn);
  }

  #longestIdle(): Connection | undefined {
    let oldest: Connection | undefined;
    for (const conn of this.#connections) {
      if (this.#holdsLease(conn) || conn.closing || conn.socket.destroyed) continue;
      if (!oldest || conn.lastActive < oldest.lastActive) oldest = conn;
    }
    return oldest && performance.now() - oldest.lastActive >= SHED_IDLE_MS ? oldest : undefined;
  }

  #onData(conn: Connection, chunk: Buffer): void {
    if (conn.closing) return;
    conn.lastActive = performance.now();
    this.#quietTimer?.refresh();
    const { lines, overflow } = conn.reader.push(chunk);
    for (const line of lines) {
      if (conn.closing) return;
      this.#handle(conn, line);
      // Checked at every line: one chunk of small requests with large replies (64 KiB of `list`) would queue gigabytes.
      if (conn.socket.writableLength > MAX_UNSENT_BYTES) {
        conn.closing = true;
        conn.socket.destroy();
        return;
      }
    }
    if (overflow && !conn.closing) {
      this.#fail(conn, errorReply(null, 'too-large', `request line over ${MAX_REQUEST_BYTES} bytes; connection closed`));
      return;
    }
    this.#schedule(conn);
  }

  #onClose(conn: Connection): void {
    clearTimeout(conn.idleTimer);
    clearTimeout(conn.partialTimer);
    this.#connections.delete(conn);
    this.#unstage(conn);
    // The holder vanished mid-turn: its chat's last turn is unknown.
    this.store.release(conn.id, 'interrupted', 'unknown');
  }

  /** Drops what a connection sent ahead (used by its record, or never to be). */
  #unstage(conn: Connection): void {
    this.#stagedTotal -= conn.stagedCount;
    conn.staged = [];
    conn.stagedCount = 0;
  }

  /** Closes a connection after a last error reply. */
  #fail(conn: Connection, reply: string): void {
    conn.closing = true;
    clearTimeout(conn.idleTimer);
    clearTimeout(conn.partialTimer);
    conn.socket.end(reply);
    // A peer that never reads must not keep the socket around.
    setTimeout(() => conn.socket.destroy(), 1000).unref();
  }

  /** Idle connections without a lease are closed; a half-sent request gets a deadline that more bytes do not extend. */
  #schedule(conn: Connection): void {
    if (conn.closing || this.#holdsLease(conn)) {
      clearTimeout(conn.idleTimer);
      conn.idleTimer = undefined;
      if (conn.closing) return;
    } else if (conn.idleTimer) {
      // The same timer pushed back: a new one per request lived long enough to leave young collections as old garbage.
      conn.idleTimer.refresh();
    } else {
      conn.idleTimer = setTimeout(() => conn.socket.destroy(), this.#connectionIdleMs);
    }
    if (conn.reader.pending === 0) {
      clearTimeout(conn.partialTimer);
      conn.partialTimer = undefined;
    } else if (!conn.partialTimer) {
      conn.partialTimer = setTimeout(
        () =>
          this.#fail(
            conn,
            errorReply(null, 'bad-request', `request line not completed within ${this.#requestTimeoutMs} ms; connection closed`),
          ),
        this.#requestTimeoutMs,
      );
    }
  }

  #handle(conn: Connection, line: string): void {
    const parsed = parseRequest(line);
    if (!parsed.ok) {
      this.#fail(conn, errorReply(parsed.id, parsed.code, parsed.message));
      return;
    }
    const request = parsed.request;
    let payload: ReplyPayloads[Request['op']];
    try {
      payload = this.#dispatch(conn, request);
    } catch (error) {
      if (error instanceof RequestError) this.#fail(conn, errorReply(request.id, error.code, error.message));
      else this.#fail(conn, errorReply(request.id, 'internal', `the helper failed on ${request.op}: ${(error as Error).message}`));
      return;
    }
    const reply = encode({ id: request.id, ok: true, ...payload });
    if (request.op === 'shutdown') {
      conn.closing = true;
      conn.socket.end(reply);
      void this.close('shutdown');
      return;
    }
    if (!conn.socket.destroyed) conn.socket.write(reply);
  }

  #dispatch(conn: Connection, request: Request): ReplyPayloads[Request['op']] {
    switch (request.op) {
      case 'hello':
        return { protocol: PROTOCOL_VERSION, version: VERSION, pid: process.pid, limits: this.limits };
      // Marks first: one a line left when this helper did not take its forget (stalled, then back, or
      // refusing it) must be taken before a turn reads or leases a chat that line continued, not at the next sweep.
      case 'lookup':
        this.#serving(true);
        return { branches: this.store.lookup(request.anchor) };
      case 'peek':
        this.#serving(true);
        return { branches: this.store.peek(request.anchor) };
      case 'lease':
        // A mark left since this turn's lookup (a line continued the chat) must refuse its lease.
        this.#serving(true);
        return this.store.lease(request.anchor, request.chatId, request.version, conn.id);
      case 'release':
        return { released: this.store.release(conn.id, request.outcome, request.state) };
      case 'prefixes':
        this.#serving(false);
        return this.store.prefixes(request.anchor, request.chatId, request.version, request.at);
      case 'append': {
        const added = request.digests.length / MESSAGE_DIGEST_HEX;
        if (conn.stagedCount + added > MAX_KNOWN_MESSAGES) {
          throw new RequestError('too-large', `a record holds at most ${MAX_KNOWN_MESSAGES} digests; connection closed`);
        }
        // Bounded across connections too: 256 of them could otherwise hold 32 MB each, never recorded.
        if (this.#stagedTotal + added > MAX_STAGED_DIGESTS) {
          throw new RequestError(
            'too-large',
            `the helper holds at most ${MAX_STAGED_DIGESTS} digests sent ahead across its connections; connection closed`,
          );
        }
        conn.staged.push(Buffer.from(request.digests, 'hex'));
        conn.stagedCount += added;
        this.#stagedTotal += added;
        return { staged: conn.stagedCount };
      }
      case 'record': {
        this.#serving(false);
        const { record } = request;
        const expected = record.staged ?? 0;
        const staged = conn.staged;
        const stagedCount = conn.stagedCount;
        // Whatever happens, what was sent ahead belonged to this record only.
        this.#unstage(conn);
        if (stagedCount !== expected) {
          // Refused as any record is: a chat this connection leased has had a turn its branch does not hold.
          this.store.release(conn.id, 'interrupted', 'unknown');
          return {
            recorded: false,
            reason: 'staged',
            message: `the record counts on ${expected} digests sent ahead, and this connection sent ${stagedCount}; send them again`,
          };
        }
        const added = Buffer.from(record.added, 'hex');
        // A branch that knows no message would prove every transcript of its anchor, and take its delta.
        if (record.base === null && stagedCount === 0 && added.length === 0) {
          // The connection closes, and its lease ends with it (interrupted, as any connection lost).
          throw new RequestError('bad-request', 'a record of a new chat (base null) must hold at least one digest');
        }
        return this.store.record({ ...record, added: staged.length === 0 ? added : Buffer.concat([...staged, added]) }, conn.id);
      }
      case 'evict': {
        if (request.anchor !== undefined) return { evicted: this.store.evictBranch(request.anchor, request.chatId!) };
        const now = monotonicMs();
        const evicted =
          request.anchorPrefix !== undefined
            ? this.store.evict(request.anchorPrefix, now)
            : request.all
              ? this.store.forgetAll(now)
              : this.store.evictChat(request.chatId!, now);
        this.#noteForgot();
        return { evicted };
      }
      case 'list':
        this.#takeMarks();
        return { branches: this.store.list().map(summarize) };
      case 'stats':
        return this.stats();
      case 'limits':
        this.store.lower({ ttlMs: request.ttlMs, maxEntries: request.maxEntries });
        return { limits: this.limits };
      case 'shutdown':
        return { stopping: true };
    }
  }

  /**
   * Asked of the store, never counted here: a lease also ends without a word from its
   * holder (another client's evict, an eviction, expiry, lowered limits).
   */
  #holdsLease(conn: Connection): boolean {
    return this.store.leasesOf(conn.id) > 0;
  }

  stats(): StatsReply {
    const store = this.store.stats();
    const memory = process.memoryUsage();
    return {
      pid: process.pid,
      version: VERSION,
      protocol: PROTOCOL_VERSION,
      startedAt: this.startedAt,
      uptimeMs: Math.round(performance.now() - this.#startedMono),
      socketPath: this.paths.socket,
      runtimeDir: this.paths.dir,
      entries: store.entries,
      anchors: store.anchors,
      leases: store.leases,
      connections: this.#connections.size,
      memory: { rss: memory.rss, heapUsed: memory.heapUsed },
      limits: this.limits,
    };
  }
}

/** A request the helper refuses with a code of its own (the connection is closed after the reply). */
class RequestError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Sends a last error reply on a connection we will not serve, then lets go of it: a peer
 * that never closes its side (half-open) must not keep one of our descriptors.
 */
function refuse(socket: net.Socket, reply: string): void {
  // Read and drop what it sends: closing on unread bytes would reset the connection under the reply.
  socket.resume();
  socket.end(reply);
  setTimeout(() => socket.destroy(), 1000).unref();
}
