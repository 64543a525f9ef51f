// The helper's wire protocol: one JSON object per line each way.
//   request: {"id": <n>, "op": "<op>", ...}
//   reply:   {"id": <n>, "ok": true, ...} | {"id": <n>, "ok": false, "error": {"code", "message"}}
// Requests are validated strictly (unknown fields refused, hashes must be hex), so
// no message text can reach the helper even by mistake. `hello` and `shutdown`
// keep this shape in every protocol version: that is how a client meets and stops
// a helper of another version.
import * as z from 'zod/mini';
import { PREFIX_HEX } from '../cache/known.js';
import type { PrefixesResult } from '../cache/store.js';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';
import type { Branch } from '../cache/types.js';
import { CHAT_ID_PATTERN } from '../resume/chat-id.js';

/** Bump on any incompatible change; a client replaces a helper speaking another one. */
export const PROTOCOL_VERSION = 3;
/**
 * Longest request line the helper reads. Longer: error reply, connection closed. A
 * record's digests that do not fit one line (a new chat of over 30,000 messages) go
 * ahead in `append` lines.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** Hex digests per `append` line and in a record's `added`: half a line, leaving room for the other fields. */
export const MAX_DIGESTS_PER_LINE = MAX_REQUEST_BYTES / 2 / MESSAGE_DIGEST_HEX;
/** Most prefix hashes one `prefixes` request asks for. */
export const MAX_PROBES = 64;
/** Longest reply line a client reads (a lookup returns several branches). */
export const MAX_REPLY_BYTES = 16 * 1024 * 1024;
/** Longest workspace path or model name accepted (as for transcripts). */
const MAX_FIELD_LENGTH = 4096;

export const OPS = [
  'hello',
  'lookup',
  'peek',
  'prefixes',
  'lease',
  'release',
  'append',
  'record',
  'evict',
  'list',
  'stats',
  'limits',
  'shutdown',
] as const;
export type Op = (typeof OPS)[number];

export type ErrorCode = 'bad-json' | 'bad-request' | 'unknown-op' | 'too-large' | 'too-many-connections' | 'shutting-down' | 'internal';

// ---- field shapes -------------------------------------------------------------

const HEX = /^[0-9a-f]*$/;
// Paths and model names: no control characters (no newlines to smuggle prose through).
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

/**
 * The request schemas, built on first use: only the helper parses requests. A run
 * loads this module for the framing below, and building them cost it about a
 * millisecond of start-up.
 */
function buildSchemas() {
  const count = z.int().check(z.minimum(0), z.maximum(Number.MAX_SAFE_INTEGER));
  const id = count;
  const positive = z.int().check(z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER));
  const anchor = z.string().check(z.regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex characters'));
  const chatId = z.string().check(z.regex(CHAT_ID_PATTERN, `must match ${CHAT_ID_PATTERN.source}`));
  const outcome = z.enum(['success', 'auth', 'quota', 'network', 'model', 'resume-failed', 'interrupted', 'error']);
  const state = z.enum(['ok', 'unknown']);
  const digests = (min: number) =>
    z.string().check(
      z.minLength(min),
      z.maxLength(MAX_DIGESTS_PER_LINE * MESSAGE_DIGEST_HEX),
      z.regex(HEX, 'must be lowercase hex digests'),
      z.refine((s) => s.length % MESSAGE_DIGEST_HEX === 0, `must be whole ${MESSAGE_DIGEST_HEX}-hex-character digests`),
    );
  const prefix = z.string().check(z.regex(new RegExp(`^[0-9a-f]{${PREFIX_HEX}}$`), `must be ${PREFIX_HEX} lowercase hex characters`));
  const plainText = (min: number) =>
    z.string().check(z.minLength(min), z.maxLength(MAX_FIELD_LENGTH), z.regex(NO_CONTROL, 'must not contain control characters'));

  const recordSchema = z.strictObject({
    anchor,
    chatId,
    toolsFingerprint: z.string().check(z.minLength(16), z.maxLength(128), z.regex(HEX, 'must be lowercase hex')),
    workspace: plainText(1),
    /** "" is cursor-agent's default model. */
    model: plainText(0),
    /** The branch as the turn read it; null: a new chat, whose whole sequence is `staged` digests then `added`. */
    base: z.nullable(z.strictObject({ version: positive, count, prefix })),
    /** How many digests this connection sent ahead in `append` lines for this record (they come before `added`). */
    staged: z.optional(count),
    added: digests(0),
    savedBytes: count,
    outcome: z.optional(outcome),
    state: z.optional(state),
    storeSeen: z.optional(z.boolean()),
  });

  const requestSchemas = {
    hello: z.strictObject({ id, op: z.literal('hello'), protocol: z.int(), version: z.string().check(z.maxLength(64)) }),
    lookup: z.strictObject({ id, op: z.literal('lookup'), anchor }),
    peek: z.strictObject({ id, op: z.literal('peek'), anchor }),
    prefixes: z.strictObject({
      id,
      op: z.literal('prefixes'),
      anchor,
      chatId,
      version: positive,
      at: z.array(count).check(z.minLength(1), z.maxLength(MAX_PROBES)),
    }),
    lease: z.strictObject({ id, op: z.literal('lease'), anchor, chatId, version: count }),
    release: z.strictObject({ id, op: z.literal('release'), outcome: z.optional(outcome), state: z.optional(state) }),
    append: z.strictObject({ id, op: z.literal('append'), digests: digests(MESSAGE_DIGEST_HEX) }),
    record: z.strictObject({ id, op: z.literal('record'), record: recordSchema }),
    evict: z
      .strictObject({
        id,
        op: z.literal('evict'),
        anchorPrefix: z.optional(z.string().check(z.minLength(1), z.maxLength(32), z.regex(HEX, 'must be lowercase hex'))),
        anchor: z.optional(anchor),
        chatId: z.optional(chatId),
        all: z.optional(z.literal(true)),
      })
      .check(
        z.refine(
          (r) =>
            (r.anchor === undefined) === (r.chatId === undefined) &&
            [r.anchorPrefix !== undefined, r.anchor !== undefined, r.all === true].filter(Boolean).length === 1,
          'give exactly one of: anchorPrefix, anchor with chatId, all: true',
        ),
      ),
    list: z.strictObject({ id, op: z.literal('list') }),
    stats: z.strictObject({ id, op: z.literal('stats') }),
    limits: z.strictObject({ id, op: z.literal('limits'), ttlMs: z.optional(positive), maxEntries: z.optional(positive) }),
    shutdown: z.strictObject({ id, op: z.literal('shutdown') }),
  } satisfies Record<Op, z.ZodMiniType>;

  return { id, recordSchema, requestSchemas };
}

type Schemas = ReturnType<typeof buildSchemas>;
let schemas: Schemas | undefined;

export type Request = { [K in Op]: z.infer<Schemas['requestSchemas'][K]> }[Op];
export type RecordRequest = z.infer<Schemas['recordSchema']>;
export type EvictTarget = { anchorPrefix: string } | { anchor: string; chatId: string } | { all: true };

export type ParseResult = { ok: true; request: Request } | { ok: false; id: number | null; code: ErrorCode; message: string };

/** Parses and validates one request line. Never throws. */
export function parseRequest(line: string): ParseResult {
  const { id, requestSchemas } = (schemas ??= buildSchemas());
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, id: null, code: 'bad-json', message: `request is not JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, id: null, code: 'bad-request', message: 'request must be a JSON object {"id", "op", ...}' };
  }
  const raw = value as { id?: unknown; op?: unknown };
  const replyId = id.safeParse(raw.id).success ? (raw.id as number) : null;
  if (typeof raw.op !== 'string' || !(OPS as readonly string[]).includes(raw.op)) {
    return {
      ok: false,
      id: replyId,
      code: 'unknown-op',
      message: `unknown op ${JSON.stringify(raw.op)}; expected one of ${OPS.join(', ')}`,
    };
  }
  const parsed = requestSchemas[raw.op as Op].safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : raw.op;
    return { ok: false, id: replyId, code: 'bad-request', message: `invalid ${raw.op} request: ${where}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, request: parsed.data as Request };
}

// ---- replies ------------------------------------------------------------------

export interface HelperLimits {
  ttlMs: number;
  maxEntries: number;
  /** The helper exits after this long with no connections and an empty cache. */
  idleMs: number;
  /** A connection holding no lease is closed after this long without a request. */
  connectionIdleMs: number;
  maxRequestBytes: number;
  maxConnections: number;
}

export interface HelloReply {
  protocol: number;
  version: string;
  pid: number;
  limits: HelperLimits;
}

/** A branch as `list` shows it. */
export type BranchSummary = Omit<Branch, 'prefix'>;

export interface StatsReply {
  pid: number;
  version: string;
  protocol: number;
  /** Wall-clock start, for display. */
  startedAt: number;
  uptimeMs: number;
  socketPath: string;
  runtimeDir: string;
  entries: number;
  anchors: number;
  leases: number;
  connections: number;
  memory: { rss: number; heapUsed: number };
  limits: HelperLimits;
}

export type LeaseReply = { granted: true; branch: Branch } | { granted: false; reason: 'busy' | 'stale' | 'gone'; message: string };

export type RecordReply =
  | { recorded: true; branch: Branch }
  /** 'staged': the digests sent ahead are not the `staged` the record counts on (a new connection lost them). */
  | { recorded: false; reason: 'conflict' | 'gone' | 'busy' | 'too-long' | 'staged'; message: string };

/** The payload of a successful reply, per op. */
export interface ReplyPayloads {
  hello: HelloReply;
  lookup: { branches: Branch[] };
  peek: { branches: Branch[] };
  prefixes: PrefixesResult;
  lease: LeaseReply;
  release: { released: number };
  /** How many digests this connection holds for its next record. */
  append: { staged: number };
  record: RecordReply;
  evict: { evicted: number };
  list: { branches: BranchSummary[] };
  stats: StatsReply;
  /** The limits in force after the request (which only ever lowers them). */
  limits: { limits: HelperLimits };
  shutdown: { stopping: true };
}

export interface ErrorReply {
  id: number | null;
  ok: false;
  error: { code: ErrorCode; message: string };
}

export function summarize(branch: Branch): BranchSummary {
  const { prefix: _prefix, ...rest } = branch;
  return rest;
}

export function encode(message: object): string {
  return `${JSON.stringify(message)}\n`;
}

export function errorReply(id: number | null, code: ErrorCode, message: string): string {
  return encode({ id, ok: false, error: { code, message } } satisfies ErrorReply);
}

// ---- framing ------------------------------------------------------------------

/**
 * Splits a byte stream into lines, holding at most `maxLineBytes` of an
 * unfinished line: a peer cannot make us buffer without bound.
 */
export class LineReader {
  readonly #max: number;
  #chunks: Buffer[] = [];
  #pending = 0;

  constructor(maxLineBytes: number) {
    this.#max = maxLineBytes;
  }

  /** Bytes of an unfinished line held now. */
  get pending(): number {
    return this.#pending;
  }

  /** The complete lines in `chunk` (without '\n'), and whether a line went over the bound. */
  push(chunk: Buffer): { lines: string[]; overflow: boolean } {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const part = chunk.subarray(start, nl);
      if (this.#pending + part.length > this.#max) return { lines, overflow: true };
      const line = this.#chunks.length === 0 ? part : Buffer.concat([...this.#chunks, part]);
      this.#chunks = [];
      this.#pending = 0;
      const text = line.toString('utf8').replace(/\r$/, '');
      if (text.trim() !== '') lines.push(text);
      start = nl + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (this.#pending + rest.length > this.#max) return { lines, overflow: true };
      // Copy: the caller's buffer may be reused.
      this.#chunks.push(Buffer.from(rest));
      this.#pending += rest.length;
    }
    return { lines, overflow: false };
  }
}
