// The OpenCode plugin's "bridge": when its prompt carries the bridge instructions, a reply
// that is nothing but a JSON envelope ({"name":"write","arguments":{...}} or a Task envelope;
// plugins whose Task instructions offer it, an array of them) is turned by the plugin into
// tool calls of its own, with ids made from the envelope's text (`call_bridge_` and 12 hex
// digits of its SHA-256), and the run is ended there as at any tool call. The next request
// shows those calls (and, from some plugin versions, the envelope as text too): knowing
// the ids is what lets that request prove the chat's history and resume. The ids come
// from the very text cursor wrote, so no other transcript can match them; that cursor's
// chat holds nothing after the envelope is for the stream tap to make sure of.
import { isJsonObject } from '../json-object.js';
import type { LayoutBlock } from '../transcript/opencode-text.js';
import type { ReplyToolCall } from './digests.js';
import { sha256Hex } from './hash.js';

/** Which envelopes the plugin turns into calls in this request: the bridge frames its prompt carries say so. */
export interface BridgeOffer {
  write: boolean;
  task: boolean;
  /** An array of envelopes: only plugins whose Task instructions ask for one in parallel read them. */
  arrays: boolean;
}

const ID_PREFIX = 'call_bridge_';

export function bridgeOfferIn(layout: ReadonlyArray<LayoutBlock> | undefined): BridgeOffer | null {
  if (layout === undefined) return null;
  const frame = (kind: 'bridge' | 'task-bridge') => layout.find((b) => 'frame' in b && b.frame === kind);
  const task = frame('task-bridge');
  const offer = {
    write: frame('bridge') !== undefined,
    task: task !== undefined,
    arrays: task !== undefined && 'text' in task && task.text.includes('JSON array'),
  };
  return offer.write || offer.task ? offer : null;
}

/** The calls the plugin makes of a reply that is `text` and nothing else; undefined when it leaves the text as text. */
export function bridgeCallsIn(text: string, offer: BridgeOffer): ReplyToolCall[] | undefined {
  const json = strictJsonText(text);
  if (json === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const id = idOf(json);
  if (!Array.isArray(value)) {
    const name = envelopeName(value, offer);
    return name === undefined ? undefined : [{ id, name }];
  }
  if (!offer.arrays) return undefined;
  const calls: ReplyToolCall[] = [];
  for (const [i, entry] of value.entries()) {
    const name = envelopeName(entry, offer);
    if (name === undefined) return undefined;
    calls.push({ id: `${id}_${i}`, name });
  }
  return calls.length > 0 ? calls : undefined;
}

/**
 * Whether `text` is the envelope these calls were made of: a plugin that shows the envelope
 * as the message's text beside its calls says nothing more than one that shows the calls alone.
 */
export function isBridgeEcho(text: string, calls: ReadonlyArray<{ id: string }>): boolean {
  if (calls.length === 0 || !calls[0]!.id.startsWith(ID_PREFIX)) return false;
  const json = strictJsonText(text);
  if (json === undefined) return false;
  const id = idOf(json);
  // As bridgeCallsIn names them: an object's one call by the id, an array's by the id and their place.
  if (!json.startsWith('[')) return calls.length === 1 && calls[0]!.id === id;
  return calls.every((call, i) => call.id === `${id}_${i}`);
}

const idOf = (json: string): string => `${ID_PREFIX}${sha256Hex(json).slice(0, 12)}`;

/**
 * Follows a reply delta by delta as the plugin reads it, and names the calls at the delta
 * that completes an envelope. Each delta is scanned once (brackets and strings counted), and
 * the whole reply is parsed only where a JSON value or a fence may just have closed, so a
 * long reply costs its length, not its length squared.
 */
export class BridgeFollower {
  #state: 'undecided' | 'json' | 'fence' | 'text' = 'undecided';
  #depth = 0;
  #inString = false;
  #escaped = false;
  /** A fence's first line has ended, and text (not only space) has followed it. */
  #fenceBody = false;
  #bodyBegun = false;
  /** A fence's last characters: looking at the end of the whole reply (a rope of deltas) would flatten it. */
  #tail = '';

  constructor(private readonly offer: BridgeOffer) {}

  /** `delta` has just been added to the reply, which is now `text`: the calls, if it completed an envelope. */
  push(delta: string, text: string): ReplyToolCall[] | undefined {
    let from = 0;
    if (this.#state === 'undecided') {
      from = delta.search(/\S/);
      if (from < 0) return undefined;
      const first = delta.charAt(from);
      this.#state = first === '{' || (first === '[' && this.offer.arrays) ? 'json' : first === '`' ? 'fence' : 'text';
    }
    if (this.#state === 'fence') return this.#fence(delta, from, text);
    if (this.#state !== 'json' || !this.#scan(delta, from)) return undefined;
    // A whole JSON value: an envelope, or text that nothing can turn into one any more.
    this.#state = 'text';
    return bridgeCallsIn(text, this.offer);
  }

  /** Counts brackets outside strings; true when the value closed with only space after it, in this delta. */
  #scan(delta: string, from: number): boolean {
    let closed = false;
    for (let i = from; i < delta.length; i++) {
      const c = delta.charCodeAt(i);
      if (closed) {
        if (!isSpace(c)) return this.#giveUp();
      } else if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === QUOTE) this.#inString = false;
      } else if (c === QUOTE) this.#inString = true;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.#depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) closed = --this.#depth === 0;
      else if (this.#depth === 0 && !isSpace(c)) return this.#giveUp();
    }
    return closed;
  }

  /**
   * The first closing fence after the body has begun ends it: valid JSON holds no line break
   * inside its strings, so no fence line can be part of it. It is read there, once, and
   * nothing after it can be an envelope.
   */
  #fence(delta: string, from: number, text: string): ReplyToolCall[] | undefined {
    let rest = from > 0 ? delta.slice(from) : delta;
    this.#tail = (this.#tail + rest).slice(-TAIL);
    if (!this.#fenceBody) {
      const lineEnd = rest.indexOf('\n');
      if (lineEnd < 0) return undefined;
      this.#fenceBody = true;
      rest = rest.slice(lineEnd + 1);
    }
    this.#bodyBegun ||= /\S/.test(rest);
    if (!this.#bodyBegun || !endsWithFence(this.#tail)) return undefined;
    this.#state = 'text';
    return bridgeCallsIn(text, this.offer);
  }

  #giveUp(): false {
    this.#state = 'text';
    return false;
  }
}

const [QUOTE, BACKSLASH, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET] = ['"', '\\', '{', '}', '[', ']'].map((c) =>
  c.charCodeAt(0),
);
// What String.prototype.trim takes away, as the plugin trims the reply before it reads it.
const SPACE = /\s/;
const isSpace = (c: number): boolean => (c < 0x80 ? c === 0x20 || (c >= 0x09 && c <= 0x0d) : SPACE.test(String.fromCharCode(c)));

/** Characters kept of the reply's end: a closing fence and the space after it. */
const TAIL = 64;

/** Whether the text, trailing space aside, ends with a closing fence line. */
function endsWithFence(text: string): boolean {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  return end >= 4 && text.startsWith('\n```', end - 4);
}

/** The text as a whole JSON object or array, or the body of one ```json fence around it. */
function strictJsonText(text: string): string | undefined {
  const trimmed = text.trim();
  if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) return trimmed;
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n```$/i.exec(trimmed);
  return fenced ? fenced[1]!.trim() : undefined;
}

const isFilled = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

/** The tool an envelope calls, when the plugin accepts it: a write with a path and content, or a Task with its three fields. */
function envelopeName(value: unknown, offer: BridgeOffer): string | undefined {
  if (!isJsonObject(value) || !isJsonObject(value.arguments)) return undefined;
  const args = value.arguments;
  if (value.name === 'task') {
    const optional = (v: unknown) => v === undefined || typeof v === 'string';
    const valid =
      isFilled(args.description) &&
      isFilled(args.prompt) &&
      isFilled(args.subagent_type) &&
      optional(args.task_id) &&
      optional(args.command);
    return offer.task && valid ? 'task' : undefined;
  }
  if (value.name !== 'write' || !offer.write) return undefined;
  const content = typeof args.content === 'string' ? args.content : args.contents;
  return isFilled(args.path) && typeof content === 'string' ? 'write' : undefined;
}
