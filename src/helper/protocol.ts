// The helper's wire protocol: one JSON object per line each way.
//   request: {"id": <n>, "op": "<op>", ...}
//   reply:   {"id": <n>, "ok": true, ...} | {"id": <n>, "ok": false, "error": {"code", "message"}}
// Requests are validated strictly (unknown fields refused, hashes must be hex), so
// no message text can reach the helper even by mistake. `hello` and `shutdown`
// keep this shape in every protocol version: that is how a client meets and stops
// a helper of another version.
import * as z from '../zod.js';
import { PREFIX_HEX } from '../cache/known.js';
import type { PrefixesResult, RecordRefusal } from '../cache/store.js';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';
import type { Branch } from '../cache/types.js';
import { CHAT_ID_PATTERN } from '../resume/chat-id.js';
import { isJsonObject } from '../json-object.js';

/** Bump on any incompatible change; a client replaces a helper speaking another one. */
export const PROTOCOL_VERSION = 7;
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
const OUTCOMES = ['success', 'auth', 'quota', 'network', 'model', 'resume-failed', 'interrupted', 'error'] as const;
const STATES = ['ok', 'unknown'] as const;

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
  const outcome = z.enum(OUTCOMES);
  const state = z.enum(STATES);
  const digests = (min: number) =>
    z.string().check(
      z.minLength(min),
      z.maxLength(MAX_DIGESTS_PER_LINE * MESSAGE_DIGEST_HEX),
      z.regex(HEX, 'must be lowercase hex digests'),
      z.refine((s) => s.length % MESSAGE_DIGEST_HEX === 0, `must be whole ${MESSAGE_DIGEST_HEX}-hex-character digests`),
    );
  const prefix = z.string().check(z.regex(new RegExp(`^[0-9a-f]{${PREFIX_HEX}}$`), `must be ${PREFIX_HEX} lowercase hex characters`));
  const digest = z.string().check(z.regex(DIGEST, `must be one digest: ${MESSAGE_DIGEST_HEX} lowercase hex characters`));
  const plainText = (min: number) =>
    z.string().check(z.minLength(min), z.maxLength(MAX_FIELD_LENGTH), z.regex(NO_CONTROL, 'must not contain control characters'));

  const recordSchema = z.strictObject({
    anchor,
    chatId,
    toolsFingerprint: z.string().check(z.minLength(16), z.maxLength(128), z.regex(HEX, 'must be lowercase hex')),
    workspace: plainText(1),
    /** "" is cursor-agent's default model. */
    model: plainText(0),
    /**
     * The branch as the turn read it, and `last`, the turn's copy of its last message (cursor's
     * reply), which takes that message's place before `staged` and `added` digests; null: a new
     * chat, whose whole sequence is `staged` digests then `added`.
     */
    base: z.nullable(z.strictObject({ version: positive, count: positive, prefix, last: digest })),
    /** How many digests this connection sent ahead in `append` lines for this record (they come before `added`). */
    staged: z.optional(count),
    added: digests(0),
    savedBytes: count,
    outcome: z.optional(outcome),
    state: z.optional(state),
    storeSeen: z.optional(z.boolean()),
    /** When the turn started, in milliseconds on the machine's monotonic clock (see BranchStore.forgetAll). */
    startedAt: z.number().check(z.minimum(0)),
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
            (r.anchor === undefined || r.chatId !== undefined) &&
            [r.anchorPrefix !== undefined, r.chatId !== undefined, r.all === true].filter(Boolean).length === 1,
          'give exactly one of: anchorPrefix, chatId (with or without its anchor), all: true',
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
/**
 * `{ chatId }` alone: that chat's branches under every anchor (a chat the caller continued itself),
 * never recorded again; `all`: every branch, and no record of a chat cached or leased now, or of a
 * turn started by now (BranchStore.forgetAll).
 */
export type EvictTarget = { anchorPrefix: string } | { anchor: string; chatId: string } | { chatId: string } | { all: true };

export type ParseResult = { ok: true; request: Request } | { ok: false; id: number | null; code: ErrorCode; message: string };

/**
 * Parses and validates one request line. Never throws. The requests of a turn pass
 * checks written out (hotRequest, a fifth of the helper's CPU a request less than the
 * schemas'); anything they do not pass, and every other request, gets the schemas'
 * verdict, so a refusal and its message are always the schemas' own.
 */
export function parseRequest(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, id: null, code: 'bad-json', message: `request is not JSON: ${(error as Error).message}` };
  }
  const request = hotRequest(value);
  return request ? { ok: true, request } : checkRequest(value);
}

/** The schemas' verdict on a parsed request line. */
export function checkRequest(value: unknown): ParseResult {
  const { id, requestSchemas } = (schemas ??= buildSchemas());
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

// ---- the requests of a turn, checked by hand ------------------------------------
// Each check accepts only what its schema above accepts, and the value as parsed is
// what the schema would give back (test/unit/request-checks.test.ts holds them to
// that); a request they let through goes no further, anything else goes to the schemas.

type Fields = Record<string, unknown>;

const ANCHOR = /^[0-9a-f]{32}$/;
const PREFIX = new RegExp(`^[0-9a-f]{${PREFIX_HEX}}$`);
const DIGEST = new RegExp(`^[0-9a-f]{${MESSAGE_DIGEST_HEX}}$`);
const isOutcome = (v: unknown): boolean => (OUTCOMES as readonly unknown[]).includes(v);
const isState = (v: unknown): boolean => (STATES as readonly unknown[]).includes(v);

/** Also the client's, for the replies it checks. */
export const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isPositive = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 1;
const isAnchor = (v: unknown): boolean => typeof v === 'string' && ANCHOR.test(v);
const isChatId = (v: unknown): boolean => typeof v === 'string' && CHAT_ID_PATTERN.test(v);
const isDigests = (v: unknown, min: number): boolean =>
  typeof v === 'string' &&
  v.length >= min &&
  v.length <= MAX_DIGESTS_PER_LINE * MESSAGE_DIGEST_HEX &&
  v.length % MESSAGE_DIGEST_HEX === 0 &&
  HEX.test(v);
const isPlainText = (v: unknown, min: number): boolean =>
  typeof v === 'string' && v.length >= min && v.length <= MAX_FIELD_LENGTH && NO_CONTROL.test(v);
const isOptional = (v: Fields, key: string, check: (value: unknown) => boolean): boolean => !(key in v) || check(v[key]);

/** True when every key of `v` is one of `keys` (a strict object's unknown key is refused). */
function onlyKeys(v: Fields, keys: ReadonlySet<string>): boolean {
  for (const key in v) if (!keys.has(key)) return false;
  return true;
}

const keys = (...names: string[]): ReadonlySet<string> => new Set(names);
const HELLO_KEYS = keys('id', 'op', 'protocol', 'version');
const ANCHOR_KEYS = keys('id', 'op', 'anchor');
const PREFIXES_KEYS = keys('id', 'op', 'anchor', 'chatId', 'version', 'at');
const LEASE_KEYS = keys('id', 'op', 'anchor', 'chatId', 'version');
const RELEASE_KEYS = keys('id', 'op', 'outcome', 'state');
const APPEND_KEYS = keys('id', 'op', 'digests');
const RECORD_KEYS = keys('id', 'op', 'record');
const RECORD_FIELDS = keys(
  'anchor',
  'chatId',
  'toolsFingerprint',
  'workspace',
  'model',
  'base',
  'staged',
  'added',
  'savedBytes',
  'outcome',
  'state',
  'storeSeen',
  'startedAt',
);
const BASE_KEYS = keys('version', 'count', 'prefix', 'last');

function isRecord(r: unknown): boolean {
  if (!isJsonObject(r) || !onlyKeys(r, RECORD_FIELDS)) return false;
  const { base, toolsFingerprint: tools } = r;
  return (
    isAnchor(r.anchor) &&
    isChatId(r.chatId) &&
    typeof tools === 'string' &&
    tools.length >= 16 &&
    tools.length <= 128 &&
    HEX.test(tools) &&
    isPlainText(r.workspace, 1) &&
    isPlainText(r.model, 0) &&
    (base === null ||
      (isJsonObject(base) &&
        onlyKeys(base, BASE_KEYS) &&
        isPositive(base.version) &&
        isPositive(base.count) &&
        typeof base.prefix === 'string' &&
        PREFIX.test(base.prefix) &&
        typeof base.last === 'string' &&
        DIGEST.test(base.last))) &&
    isOptional(r, 'staged', isCount) &&
    isDigests(r.added, 0) &&
    isCount(r.savedBytes) &&
    isOptional(r, 'outcome', isOutcome) &&
    isOptional(r, 'state', isState) &&
    isOptional(r, 'storeSeen', (v) => typeof v === 'boolean') &&
    typeof r.startedAt === 'number' &&
    Number.isFinite(r.startedAt) &&
    r.startedAt >= 0
  );
}

/** `value` as a request when it is a well-formed hello, lookup, peek, prefixes, lease, release, append or record; else undefined. */
export function hotRequest(value: unknown): Request | undefined {
  if (!isJsonObject(value) || !isCount(value.id)) return undefined;
  const v = value;
  let valid: boolean;
  switch (v.op) {
    case 'hello':
      valid = onlyKeys(v, HELLO_KEYS) && Number.isSafeInteger(v.protocol) && typeof v.version === 'string' && v.version.length <= 64;
      break;
    case 'lookup':
    case 'peek':
      valid = onlyKeys(v, ANCHOR_KEYS) && isAnchor(v.anchor);
      break;
    case 'prefixes': {
      const { at } = v;
      valid =
        onlyKeys(v, PREFIXES_KEYS) &&
        isAnchor(v.anchor) &&
        isChatId(v.chatId) &&
        isPositive(v.version) &&
        Array.isArray(at) &&
        at.length >= 1 &&
        at.length <= MAX_PROBES &&
        at.every(isCount);
      break;
    }
    case 'lease':
      valid = onlyKeys(v, LEASE_KEYS) && isAnchor(v.anchor) && isChatId(v.chatId) && isCount(v.version);
      break;
    case 'release':
      valid = onlyKeys(v, RELEASE_KEYS) && isOptional(v, 'outcome', isOutcome) && isOptional(v, 'state', isState);
      break;
    case 'append':
      valid = onlyKeys(v, APPEND_KEYS) && isDigests(v.digests, MESSAGE_DIGEST_HEX);
      break;
    case 'record':
      valid = onlyKeys(v, RECORD_KEYS) && isRecord(v.record);
      break;
    default:
      valid = false;
  }
  return valid ? (v as Request) : undefined;
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
  | { recorded: false; reason: RecordRefusal | 'staged'; message: string };

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
