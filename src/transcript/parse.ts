import { parseAiSdk } from './ai-sdk.js';
import { parseAsciiJson } from './ascii-json.js';
import { checkJsonSize, decodeLossy, decodeUtf8, notUtf8, parseJson } from './decode.js';
import { describe } from './common.js';
import { TranscriptError } from './errors.js';
import { readOpencodeText } from './opencode-text.js';
import { parseOpenAI } from './openai.js';
import type { Conversation } from './types.js';

const EMPTY = 'stdin is empty: pipe a transcript (a JSON body or a plain-text prompt) into cursor-resume';

/** What a JSON scalar begins with. */
const JSON_SCALAR = /^["\-0-9tfn]/;

/**
 * Stdin's bytes (or text already decoded) → the canonical Conversation. `ownsRoomAfter`: the
 * bytes' ArrayBuffer after them is the caller's to write to (a large JSON body is then parsed
 * as one-byte text, ascii-json.ts; the bytes stay as they came). The rule:
 * - text whose first non-blank character is "{" is a JSON transcript and must parse,
 *   as UTF-8 (a byte-order mark before it is allowed);
 * - JSON of any other type (an array, a string, a number, true, false, null) is refused:
 *   it is no transcript, and taking it for a prompt would hide the caller's mistake;
 * - anything else is a prompt the caller already flattened, passed on as the bytes
 *   that came: a BOM, invalid UTF-8 and text beginning with "[" that is not JSON included;
 *   such text that reads exactly in the OpenCode plugin's layout is also read into messages.
 */
export function parseTranscript(input: string | Uint8Array, options: { ownsRoomAfter?: boolean } = {}): Conversation {
  if (typeof input === 'string') return parseText(input, undefined);
  // Only the caller knows that the room after its bytes is its own (readStdin's buffer is).
  const ascii = options.ownsRoomAfter ? parseAsciiJson(input) : undefined;
  if (ascii !== undefined) return parseObject(ascii);
  const text = decodeUtf8(input);
  if (text !== null) return parseText(text, input);
  const shown = decodeLossy(input);
  if (shown.trimStart()[0] === '{' || isUtf16Object(input)) throw notUtf8();
  return plainText(shown, input);
}

function parseText(text: string, raw: Uint8Array | undefined): Conversation {
  // trimStart also drops a byte-order mark (U+FEFF).
  const trimmed = text.trimStart();
  if (trimmed === '') throw new TranscriptError(EMPTY);
  if (trimmed[0] === '{') {
    checkJsonSize(trimmed);
    return parseObject(parseJson(trimmed) as object);
  }
  // An array that does not end in "]" is no JSON, and is never parsed: that could cost more than its text.
  // Text too big or too deep to parse cheaply is no transcript either way: it goes on as the prompt it may be.
  const json =
    trimmed[0] === '['
      ? trimmed.trimEnd().endsWith(']')
        ? cheapJson(trimmed)
        : undefined
      : JSON_SCALAR.test(trimmed)
        ? cheapJson(trimmed, false)
        : undefined;
  if (json) {
    throw new TranscriptError(
      `transcript: expected a JSON object (an OpenAI Chat Completions body or an AI SDK prompt), got ${describeJson(json.value)}`,
    );
  }
  const reading = readOpencodeText(text);
  if ('blocks' in reading)
    return {
      shape: 'opencode-text',
      text,
      ...(raw !== undefined ? { raw } : {}),
      messages: reading.messages,
      tools: [],
      layout: reading.blocks,
    };
  return plainText(text, raw);
}

function plainText(text: string, raw: Uint8Array | undefined): Conversation {
  return { shape: 'text', text, ...(raw !== undefined ? { raw } : {}), messages: [], tools: [] };
}

/**
 * The JSON value of `text`, or undefined when it is no JSON or (when `sized`) holds more
 * values or nesting than a transcript may: counted first, so parsing stays cheap.
 */
export function cheapJson(text: string, sized = true): { value: unknown } | undefined {
  if (sized) {
    try {
      checkJsonSize(text);
    } catch (error) {
      if (error instanceof TranscriptError) return undefined;
      throw error;
    }
  }
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/** As the schemas describe a value, but a JSON true or false by name. */
const describeJson = (value: unknown): string => (typeof value === 'boolean' ? String(value) : describe(value));

/** A UTF-16 transcript (with its byte-order mark) is a JSON body in the wrong encoding, not a prompt. */
function isUtf16Object(bytes: Uint8Array): boolean {
  const bom = bytes[0]! * 256 + bytes[1]!;
  if (bom !== 0xfffe && bom !== 0xfeff) return false;
  const text = new TextDecoder(bom === 0xfffe ? 'utf-16le' : 'utf-16be').decode(bytes.subarray(0, 4096));
  return text.trimStart()[0] === '{';
}

/** `value` is what JSON text beginning with "{" parses to: an object. */
function parseObject(value: object): Conversation {
  const hasMessages = Object.hasOwn(value, 'messages');
  const hasPrompt = Object.hasOwn(value, 'prompt');
  if (hasMessages && hasPrompt) {
    throw new TranscriptError('transcript: has both "messages" and "prompt"; send one shape');
  }
  if (!hasMessages && !hasPrompt) {
    throw new TranscriptError('transcript: missing "messages" (OpenAI Chat Completions) or "prompt" (AI SDK)');
  }
  const conversation = hasMessages ? parseOpenAI(value) : parseAiSdk(value);
  nameToolResults(conversation);
  return conversation;
}

/** OpenAI tool messages may omit the tool's name: take it from the call they answer. */
function nameToolResults(conversation: Conversation): void {
  const names = new Map<string, string>();
  for (const message of conversation.messages) {
    for (const part of message.parts) {
      if (part.type === 'tool-call') names.set(part.id, part.name);
      else if (part.type === 'tool-result' && part.name === '') part.name = names.get(part.id) ?? '';
    }
  }
}
