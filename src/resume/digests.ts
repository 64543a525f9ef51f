// One digest per message: what the prefix proof compares. Messages the caller
// wrote are compared exactly; an assistant message is compared as what cursor
// itself produced: its text with whitespace normalised, and its tool calls by id and name.
import type { Message, Part } from '../transcript/types.js';
import { canonicalJson } from './canonical-json.js';
import { digest } from './hash.js';

export interface ReplyToolCall {
  id: string;
  name: string;
}

function canonicalPart(part: Part): string {
  switch (part.type) {
    case 'text':
      return canonicalJson(['text', part.text]);
    case 'file':
      return canonicalJson(['file', part.mediaType, part.filename ?? null, part.data]);
    case 'reasoning':
      return canonicalJson(['reasoning', part.text]);
    case 'tool-call':
      return canonicalJson(['tool-call', part.id, part.name, part.input]);
    case 'tool-result':
      return canonicalJson(['tool-result', part.id, part.name, part.output]);
  }
}

const normalizeWhitespace = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The digest of a reply as cursor produced it; equal to messageDigest of the transcript's copy of it. */
export function assistantDigest(text: string, toolCalls: ReadonlyArray<ReplyToolCall>): string {
  return digest(canonicalJson(['assistant', normalizeWhitespace(text), toolCalls.map((c) => [c.id, c.name])]));
}

export function messageDigest(message: Message): string {
  if (message.role === 'assistant') {
    const text = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ');
    const calls = message.parts.flatMap((p) => (p.type === 'tool-call' ? [{ id: p.id, name: p.name }] : []));
    return assistantDigest(text, calls);
  }
  return digest(`${message.role}\n${message.parts.map(canonicalPart).join('\n')}`);
}
