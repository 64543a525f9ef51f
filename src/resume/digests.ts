// One digest per message: what the prefix proof compares. Every message a chat was
// sent is compared exactly, an assistant message as a prompt carries it (its texts and
// its tool calls with their arguments). The one message a chat knows but was never sent
// is cursor's reply to its last turn: that is compared as what cursor itself produced,
// its text with whitespace normalised and its tool calls by id and name (by id only in
// the OpenCode plugin's layout, whose names and arguments are the plugin's mapping of
// Cursor's calls onto OpenCode's tools). Once a later transcript has proven its copy of
// that reply, the chat's record holds the copy exactly, as it holds every message sent.
//
// The hash is fed field by field, each string framed by its length instead of
// JSON-escaped: escaping every message was the most expensive step of deciding on a
// long transcript (about 60 ms of 300 for 10,000 messages, 20 MB), and a length
// prefix is just as unambiguous. Values that are not strings (tool arguments given as
// objects, AI SDK outputs) still go in as canonical JSON: equal values, equal bytes.
import { createHash, type Hash } from 'node:crypto';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';
import type { Conversation, Message, Part, Shape } from '../transcript/types.js';
import { canonicalJson } from './canonical-json.js';
import { isBridgeEcho } from './bridge-calls.js';
import { sha256Hex } from './hash.js';

export interface ReplyToolCall {
  id: string;
  name: string;
}

/** Strings shorter than this join the pending header; longer ones go to the hash as they are (no copy). */
const INLINE = 1024;

const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** A text Digest writes into its pending header as it is (else it goes to the hash apart, or escaped). */
const inline = (text: string): boolean => text.length < INLINE && isWellFormed(text);

/** Digest's hex() of a header it gathered whole. */
const shortDigest = (head: string): string => sha256Hex(head).slice(0, MESSAGE_DIGEST_HEX);

/** What a digest's header begins with: the kind of message. */
const kindHead = (kind: string): string => `${kind}\n`;

/** A text as a field: framed by its length in UTF-16 code units. */
const field = (text: string): string => `${text.length}:${text}`;

/**
 * A digest built from tagged, self-delimiting fields. Small pieces are gathered into
 * one string, so that a message costs one hash of it; a Hash object is made only
 * when a long string has to go in without a copy.
 */
class Digest {
  #hash: Hash | null = null;
  #head: string;

  constructor(kind: string) {
    this.#head = kindHead(kind);
  }

  /** A tag: one letter saying what the next fields are. */
  tag(letter: string): this {
    this.#head += letter;
    return this;
  }

  /** A string, framed by its length in UTF-16 code units. */
  text(value: string): this {
    if (!isWellFormed(value)) {
      // UTF-8 would turn every lone surrogate into U+FFFD; escaped (and marked), such a text stays distinct.
      const json = JSON.stringify(value);
      return this.tag('j').text(json);
    }
    if (value.length < INLINE) {
      this.#head += field(value);
    } else {
      this.#hash ??= createHash('sha256');
      this.#hash.update(`${this.#head}${value.length}:`);
      this.#hash.update(value);
      this.#head = '';
    }
    return this;
  }

  /** Any value: a string as text, anything else as canonical JSON (always well-formed). */
  value(value: unknown): this {
    return typeof value === 'string' ? this.tag('s').text(value) : this.tag('v').text(canonicalJson(value));
  }

  hex(): string {
    if (this.#hash === null) return shortDigest(this.#head);
    if (this.#head !== '') this.#hash.update(this.#head);
    return this.#hash.digest('hex').slice(0, MESSAGE_DIGEST_HEX);
  }
}

function addPart(digest: Digest, part: Part): void {
  switch (part.type) {
    case 'text':
      digest.tag('T').text(part.text);
      return;
    case 'reasoning':
      digest.tag('R').text(part.text);
      return;
    case 'file':
      digest.tag('F').text(part.mediaType);
      if (part.filename === undefined) digest.tag('-');
      else digest.tag('+').text(part.filename);
      digest.text(part.data);
      return;
    case 'tool-call':
      digest.tag('C').text(part.id).text(part.name).value(part.input);
      return;
    case 'tool-result':
      digest.tag('O').text(part.id).text(part.name).value(part.output);
      return;
  }
}

/** Runs of whitespace as one space, trimmed; text with nothing to replace (most of it) is not copied. */
const normalizeWhitespace = (text: string): string => (/[^\S ]| {2}/.test(text) ? text.replace(/\s+/g, ' ') : text).trim();

/**
 * The digest of cursor's reply: its text, whitespace normalised, and its tool calls, by
 * id and name or (`byId`) by id alone, tagged apart so neither form can stand for the other.
 */
function replyOf(text: string, toolCalls: Iterable<ReplyToolCall>, byId: boolean): string {
  const digest = new Digest('assistant').tag('T').text(normalizeWhitespace(text));
  for (const call of toolCalls) {
    if (byId) digest.tag('I').text(call.id);
    else digest.tag('C').text(call.id).text(call.name);
  }
  return digest.hex();
}

/** The digest of a reply as cursor produced it; equal to replyDigestAt of the transcript's copy of it. */
export const assistantDigest = (text: string, toolCalls: ReadonlyArray<ReplyToolCall>): string => replyOf(text, toolCalls, false);

const byCallId = (shape: Shape): boolean => shape === 'opencode-text';

/**
 * The digest of cursor's reply to a turn, as the next transcript of that conversation
 * will carry it: what a run records after the turn's messages. A turn its caller ended
 * at a tool call (the plugin's tool loop) is recorded the same way: the text cursor
 * wrote before the calls, and the calls it started, in order.
 */
export function replyDigest(analysis: { conversation: { shape: Shape } }, text: string, toolCalls: ReadonlyArray<ReplyToolCall>): string {
  return replyOf(text, toolCalls, byCallId(analysis.conversation.shape));
}

/** One digest per message of the conversation, in order, each as a prompt carries it. */
export const messageDigests = (conversation: Conversation): string[] => conversation.messages.map(messageDigest);

/**
 * The digest of message `index` as a chat knows it when it is the last message the chat
 * knows, that is cursor's reply: the reply's digest (`replyDigest`) when it is an assistant
 * message. Any other message gets its own digest, which no reply's equals.
 */
export function replyDigestAt(conversation: Conversation, index: number): string {
  const message = conversation.messages[index]!;
  if (message.role !== 'assistant') return messageDigest(message);
  const byId = byCallId(conversation.shape);
  const text = joinedTexts(message.parts, ' ');
  // The OpenCode plugin's bridge calls, the envelope they were made of shown beside them or not: one reply (bridge-calls.ts).
  const echo = byId && text !== '' && isBridgeEcho(text, [...callsOf(message.parts)]);
  return replyOf(echo ? '' : text, callsOf(message.parts), byId);
}

export function messageDigest(message: Message): string {
  const { parts } = message;
  if (message.role === 'assistant') return sentAssistantDigest(parts);
  // Most messages are one short text or tool result: the one string Digest would gather, written at once.
  if (parts.length === 1) {
    const p = parts[0]!;
    if (p.type === 'text' && inline(p.text)) return shortDigest(`${kindHead(message.role)}T${field(p.text)}`);
    if (p.type === 'tool-result' && typeof p.output === 'string' && inline(p.id) && inline(p.name) && inline(p.output)) {
      return shortDigest(`${kindHead(message.role)}O${field(p.id)}${field(p.name)}s${field(p.output)}`);
    }
  }
  const digest = new Digest(message.role);
  for (const part of parts) addPart(digest, part);
  return digest.hex();
}

/**
 * An assistant message as a prompt carries it (render.ts): its texts, one per line, exactly,
 * and its tool calls with their arguments. Reasoning and files are never in a prompt. Tagged
 * apart from a reply's digest, so that neither can stand for the other.
 */
function sentAssistantDigest(parts: ReadonlyArray<Part>): string {
  const digest = new Digest('assistant').tag('S').text(joinedTexts(parts, '\n'));
  for (const call of callsOf(parts)) digest.tag('C').text(call.id).text(call.name).value(call.input);
  return digest.hex();
}

/** A message's tool calls, in order, without building an array of them. */
function* callsOf(parts: ReadonlyArray<Part>): Generator<Extract<Part, { type: 'tool-call' }>> {
  for (const p of parts) if (p.type === 'tool-call') yield p;
}

/** The texts of a message's parts joined by `separator`; the one text itself when there is one (most messages). */
function joinedTexts(parts: ReadonlyArray<Part>, separator: string): string {
  let joined: string | undefined;
  for (const p of parts) {
    if (p.type === 'text') joined = joined === undefined ? p.text : `${joined}${separator}${p.text}`;
  }
  return joined ?? '';
}
