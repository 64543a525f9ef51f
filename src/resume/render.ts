// How a conversation becomes the text cursor-agent reads on stdin. The full
// rendering follows the OpenCode plugin's flattening (README: "The full prompt"),
// so a fresh chat sees what it always saw; a delta is only the new messages.
import { quote } from '../transcript/common.js';
import type { Conversation, Message, Part, Tool } from '../transcript/types.js';

export const TOOLS_INTRO = 'SYSTEM: You have access to the following tools. Call one when it helps with the task.';
export const CONTINUE_LINE = 'The above tool calls have been executed. Continue your response based on these results.';

export function argsText(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input ?? {});
}

/** A tool's output as text: AI SDK output objects unwrapped, anything else as JSON. */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (output !== null && typeof output === 'object' && 'type' in output && 'value' in output) {
    const { type, value } = output as { type: unknown; value: unknown };
    if ((type === 'text' || type === 'error-text') && typeof value === 'string') return value;
    if (type === 'content' && Array.isArray(value)) {
      // Items are the caller's JSON: any of them may be null or not an object at all.
      return value
        .map((item: unknown) => {
          const text = item !== null && typeof item === 'object' ? (item as { text?: unknown }).text : undefined;
          return typeof text === 'string' ? text : JSON.stringify(item ?? null);
        })
        .join('\n');
    }
    return JSON.stringify(value);
  }
  return JSON.stringify(output ?? null);
}

const fileNote = (p: Extract<Part, { type: 'file' }>): string =>
  `[attached file${p.filename ? ` ${p.filename}` : ''}: ${p.mediaType}, not included in this text prompt]`;

/** The visible content of a user or system message. */
export function messageText(message: Message): string {
  const pieces: string[] = [];
  writeTexts(message.parts, true, (piece) => pieces.push(piece));
  return pieces.join('');
}

export const toolCallLine = (p: Extract<Part, { type: 'tool-call' }>): string =>
  `tool_call(id: ${p.id}, name: ${p.name}, args: ${argsText(p.input)})`;

const toolResultHead = (p: Extract<Part, { type: 'tool-result' }>): string => `TOOL_RESULT (name: ${p.name}, call_id: ${p.id}):\n`;

export const toolResultBlock = (p: Extract<Part, { type: 'tool-result' }>): string => `${toolResultHead(p)}${outputText(p.output)}`;

/** Where the full prompt goes, piece by piece: a string being built, or a byte count. */
type Write = (piece: string) => void;

function writeToolsBlock(tools: ReadonlyArray<Tool>, write: Write): void {
  write(`${TOOLS_INTRO}\nAvailable tools:`);
  for (const t of tools) write(`\n- ${t.name}: ${t.description}\n  Parameters: ${JSON.stringify(t.parameters ?? {})}`);
}

/** A message's texts (and, with `files`, its file notes), one per line. Plain loops: this runs for every message. */
function writeTexts(parts: ReadonlyArray<Part>, files: boolean, write: Write): void {
  let first = true;
  for (const p of parts) {
    const text = p.type === 'text' ? p.text : files && p.type === 'file' ? fileNote(p) : undefined;
    if (text === undefined) continue;
    if (!first) write('\n');
    write(text);
    first = false;
  }
}

/**
 * The whole conversation as one prompt (blocks separated by a blank line), written
 * in pieces: one writer for the prompt and for its size, so the two cannot disagree.
 */
function writeFull(conversation: Conversation, write: Write): void {
  // The caller's own prompt: plain text, or the OpenCode plugin's layout read back from it.
  if (conversation.text !== undefined) {
    write(conversation.text);
    return;
  }
  let blocks = 0;
  const block = (head: string): void => {
    if (blocks++ > 0) write('\n\n');
    write(head);
  };
  if (conversation.tools.length > 0) {
    block('');
    writeToolsBlock(conversation.tools, write);
  }
  for (const message of conversation.messages) {
    switch (message.role) {
      case 'system':
        block('SYSTEM: ');
        writeTexts(message.parts, true, write);
        break;
      case 'user':
        block('USER: ');
        writeTexts(message.parts, true, write);
        break;
      case 'assistant':
        block('ASSISTANT: ');
        writeTexts(message.parts, false, write);
        for (const p of message.parts) {
          if (p.type !== 'tool-call') continue;
          write('\n');
          write(toolCallLine(p));
        }
        break;
      case 'tool':
        for (const p of message.parts) {
          if (p.type !== 'tool-result') continue;
          block(toolResultHead(p));
          write(outputText(p.output));
        }
        break;
    }
  }
  if (conversation.messages.at(-1)?.role === 'tool') block(CONTINUE_LINE);
}

/**
 * A prompt as cursor-agent reads it: UTF-8 cannot carry half a surrogate pair (a JSON string
 * may escape one), so stdin gets U+FFFD in its place, and so does the prompt --dry-run,
 * inspect and simulate show (the same bytes, the same size). Digests still tell them apart.
 */
function asSent(prompt: string): string {
  const text = prompt as string & { isWellFormed(): boolean; toWellFormed(): string };
  return text.isWellFormed() ? prompt : text.toWellFormed();
}

/** The whole conversation as one prompt, for a fresh chat. */
export function renderFull(conversation: Conversation): string {
  const pieces: string[] = [];
  writeFull(conversation, (piece) => pieces.push(piece));
  return asSent(pieces.join(''));
}

/**
 * Buffer.byteLength(renderFull(conversation)) without building the prompt: a resumed
 * turn sends only its delta, yet the trace, --dry-run and inspect show the full size.
 * The caller's texts are always separated by our ASCII framing, so no surrogate pair
 * is split between two pieces: their sizes add up to the size of the whole.
 */
export function fullPromptBytes(conversation: Conversation): number {
  let bytes = 0;
  writeFull(conversation, (piece) => {
    bytes += Buffer.byteLength(piece);
  });
  return bytes;
}

/** Why a new message can never go in a delta: cursor did not write it, or a chat cannot take a new system prompt. */
export function notSendable(m: Message, index: number): string | null {
  if (m.role === 'system') return `message ${index + 1} is a new system message`;
  if (m.role === 'assistant') return `message ${index + 1} is an assistant message cursor did not write`;
  return null;
}

/** The tool calls of the last message the chat knows, by id: the only calls a new tool result may answer. */
export function answerableCalls(messages: ReadonlyArray<Message>, knownCount: number): Map<string, Extract<Part, { type: 'tool-call' }>> {
  const lastKnown = messages[knownCount - 1];
  return new Map(
    (lastKnown?.role === 'assistant' ? lastKnown.parts : []).flatMap((p) => (p.type === 'tool-call' ? [[p.id, p] as const] : [])),
  );
}

/**
 * Why a tool result cannot go in a delta: cursor's last reply made no such call. The ID is the
 * caller's, of any length and any characters, and this line is said on stderr (--verbose) and by
 * inspect and simulate: quoted as an error quotes a value, short and with its controls escaped.
 */
export const unanswerable = (index: number, id: string): string =>
  `message ${index + 1} answers tool call ${quote(id)}, which cursor's last reply did not make`;

export type DeltaResult = { ok: true; prompt: string } | { ok: false; why: string };

/**
 * Only the messages after the known prefix, for a chat that already holds the rest:
 * a user turn as its own text; tool results with the call each answers, then the
 * instruction to continue. Anything that cannot be sent faithfully as text is refused.
 */
export function renderDelta(messages: ReadonlyArray<Message>, knownCount: number): DeltaResult {
  const calls = answerableCalls(messages, knownCount);
  const results: string[] = [];
  const userTexts: string[] = [];
  for (let i = knownCount; i < messages.length; i++) {
    const m = messages[i]!;
    const refused = notSendable(m, i);
    if (refused !== null) return { ok: false, why: refused };
    if (m.parts.some((p) => p.type === 'file')) {
      return { ok: false, why: `message ${i + 1} carries a file or image, which a text prompt cannot carry` };
    }
    if (m.role === 'user') {
      userTexts.push(messageText(m));
      continue;
    }
    for (const p of m.parts) {
      if (p.type !== 'tool-result') continue;
      // The results go first, with the instruction to continue: one after the user's text would change places with it.
      if (userTexts.length > 0) return { ok: false, why: `message ${i + 1} is a tool result after the user's new text` };
      const call = calls.get(p.id);
      if (!call) return { ok: false, why: unanswerable(i, p.id) };
      results.push(`${toolCallLine(call)}\n${toolResultBlock(p)}`);
    }
  }
  const blocks = results.length > 0 ? [...results, CONTINUE_LINE, ...userTexts] : userTexts;
  const prompt = asSent(blocks.join('\n\n'));
  if (prompt.trim() === '') return { ok: false, why: 'the new messages have no text to send' };
  return { ok: true, prompt };
}
