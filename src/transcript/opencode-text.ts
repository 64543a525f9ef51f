// The OpenCode Cursor plugin's flattened prompt, read back into a conversation.
// The plugin joins blocks with a blank line, and a message's own text may hold
// blank lines too, so a block starts wherever a blank line is followed by a head
// ("SYSTEM: ", "USER: ", "ASSISTANT: ", "TOOL_RESULT ("). That reading can split a
// message whose text holds a fake head; it is safe because the split is the same
// every turn (it depends only on the bytes) and every piece is digested on its
// own, so a split that differs from what the chat saw fails the prefix proof.
// Frame blocks (the plugin's instructions) are not messages: each is recognised
// only at the place the plugin puts it, so a look-alike elsewhere stays a message.
// Text is taken in this layout only when rendering the reading gives back the
// very same text; anything else is left as plain text.
import type { Message, Part } from './types.js';
import { MAX_JSON_VALUES } from './limits.js';

export type FrameKind = 'bridge' | 'tools' | 'tool-list' | 'closing' | 'task-bridge';

/** One block of the prompt, in order: a frame (kept verbatim) or the index of a message. */
export type LayoutBlock = { frame: FrameKind; text: string } | { message: number };

export interface OpencodeReading {
  blocks: LayoutBlock[];
  messages: Message[];
}

export const CLOSING_LINE = 'The above tool calls have been executed. Continue your response based on these results.';

/** How each frame's first line reads (every one but the closing line, which is a whole block). */
const FRAME_HEADS = {
  bridge: 'SYSTEM: opencode bridge mode is active.\n',
  tools:
    'SYSTEM: You have access to the following tools. When you need to use one, respond with a tool_call in the standard OpenAI format.\n',
  'tool-list': 'SYSTEM: Available OpenCode tools (use via tool calls): ',
  'task-bridge': 'SYSTEM: OpenCode Task bridge mode is active.\n',
} as const;

/** A frame of one paragraph: the plugin writes these without a blank line, so a block holding one is a message. */
const isFrame = (piece: string, kind: 'bridge' | 'tool-list' | 'task-bridge'): boolean =>
  piece.startsWith(FRAME_HEADS[kind]) && !piece.includes('\n\n');

const HEADS = ['SYSTEM: ', 'USER: ', 'ASSISTANT: ', 'TOOL_RESULT ('];
const headAt = (text: string, at: number): boolean => HEADS.some((h) => text.startsWith(h, at));

/** The text cut at every blank line followed by a head (a scan, which builds no string but the pieces); null past MAX_JSON_VALUES pieces. */
function splitBlocks(text: string): string[] | null {
  const pieces: string[] = [];
  let start = 0;
  for (let at = text.indexOf('\n\n'); at >= 0; at = text.indexOf('\n\n', at + 1)) {
    if (at < start || !headAt(text, at + 2)) continue;
    // Room for this piece and the last: at most MAX_JSON_VALUES in all.
    if (pieces.length === MAX_JSON_VALUES - 1) return null;
    pieces.push(text.slice(start, at));
    start = at + 2;
  }
  pieces.push(text.slice(start));
  return pieces;
}

// The heads of a call line and of a tool result, read by searching, not by a regular
// expression: with lazy groups one took time cubic (and one quadratic) in the length of a
// line that almost reads as one, and any text the caller sends can hold such a line.

/**
 * `tool_call(id: I, name: N, args: A)`: I up to the first ", name: ", N up to the first
 * ", args: " after it, A the rest but the closing parenthesis; null when the line is not one.
 */
export function readToolCallLine(line: string): { id: string; name: string; args: string } | null {
  const open = 'tool_call(id: ';
  if (!line.startsWith(open) || !line.endsWith(')')) return null;
  const name = line.indexOf(', name: ', open.length);
  if (name < 0) return null;
  const args = line.indexOf(', args: ', name + 8);
  if (args < 0) return null;
  return { id: line.slice(open.length, name), name: line.slice(name + 8, args), args: line.slice(args + 8, -1) };
}

/**
 * `TOOL_RESULT (name: N, call_id: X): ` (the name is optional): N up to the first
 * ", call_id: ", X up to the first "): " after it; `length` is the head's, up to the
 * output. null when the block does not begin with such a head.
 */
export function readToolResultHead(block: string): { name: string; id: string; length: number } | null {
  const open = 'TOOL_RESULT (';
  if (!block.startsWith(open)) return null;
  let at = open.length;
  let name = '';
  if (block.startsWith('name: ', at)) {
    const id = block.indexOf(', call_id: ', at + 6);
    if (id < 0) return null;
    name = block.slice(at + 6, id);
    at = id + 2;
  }
  if (!block.startsWith('call_id: ', at)) return null;
  const close = block.indexOf('): ', at + 9);
  if (close < 0) return null;
  return { name, id: block.slice(at + 9, close), length: close + 3 };
}

/** The reading of `text` in the plugin's layout, or why the text is not in it exactly. */
export function readOpencodeText(text: string): OpencodeReading | { why: string } {
  if (!headAt(text, 0)) {
    // A BOM is invisible where the text is shown: said, or the reason would read as untrue.
    if (text.charCodeAt(0) === 0xfeff && headAt(text, 1))
      return { why: 'it begins with a byte-order mark (U+FEFF), which the plugin never writes, before its first block head' };
    return { why: 'it does not begin with a block head (SYSTEM:, USER:, ASSISTANT: or TOOL_RESULT)' };
  }
  const pieces = splitBlocks(text);
  // As many blocks as a JSON transcript may hold values: 64 MiB of tiny blocks read as 5.8 million messages took 2.5 GB.
  if (pieces === null) return { why: `it has over ${MAX_JSON_VALUES.toLocaleString('en-US')} blocks, more than a transcript may hold` };
  const blocks: LayoutBlock[] = [];
  const messages: Message[] = [];
  let first = 0;
  let last = pieces.length;
  // The frames before the messages: the bridge, then the tools block, in that order.
  if (isFrame(pieces[first]!, 'bridge')) blocks.push({ frame: 'bridge', text: pieces[first++]! });
  if (first < last && pieces[first]!.startsWith(FRAME_HEADS.tools)) blocks.push({ frame: 'tools', text: pieces[first++]! });
  // The Task bridge is the very last block.
  const tail: LayoutBlock[] = [];
  if (last - 1 >= first && isFrame(pieces[last - 1]!, 'task-bridge')) tail.unshift({ frame: 'task-bridge', text: pieces[--last]! });
  // The closing line ends the block before the Task bridge: the plugin writes it exactly when a tool result is in the history.
  const closing = `\n\n${CLOSING_LINE}`;
  if (pieces.slice(first, last).some((p) => p.startsWith('TOOL_RESULT ('))) {
    if (last - 1 < first || !pieces[last - 1]!.endsWith(closing))
      return { why: 'it holds a tool result, and the closing line the plugin then writes does not end it' };
    pieces[last - 1] = pieces[last - 1]!.slice(0, -closing.length);
    tail.unshift({ frame: 'closing', text: CLOSING_LINE });
  }
  let seenConversation = false;
  for (let i = first; i < last; i++) {
    const piece = pieces[i]!;
    // The tool list is a system message the plugin adds among the leading system messages only, after
    // OpenCode's own, as one line: a look-alike elsewhere (a tool's description may hold one, and the
    // tools that follow it would then go unseen by the fingerprint) is a message, proven as any.
    if (!seenConversation && messages.length > 0 && isFrame(piece, 'tool-list') && !piece.includes('\n')) {
      blocks.push({ frame: 'tool-list', text: piece });
      continue;
    }
    const message = readMessage(piece);
    if (message === null) return { why: `block ${blocks.length + 1} has a TOOL_RESULT head that does not read as (name: N, call_id: X): ` };
    if (message.role !== 'system') seenConversation = true;
    blocks.push({ message: messages.length });
    messages.push(message);
  }
  blocks.push(...tail);
  const reading = { blocks, messages };
  const differs = firstDifference(reading, text);
  return differs < 0 ? reading : { why: `read in the layout and written out again, it differs at character ${differs}` };
}

function readMessage(block: string): Message | null {
  if (block.startsWith('SYSTEM: ')) return { role: 'system', parts: [{ type: 'text', text: block.slice(8) }] };
  if (block.startsWith('USER: ')) return { role: 'user', parts: [{ type: 'text', text: block.slice(6) }] };
  if (block.startsWith('ASSISTANT: ')) return readAssistant(block.slice(11));
  const head = readToolResultHead(block);
  if (head === null) return null;
  return { role: 'tool', parts: [{ type: 'tool-result', id: head.id, name: head.name, output: block.slice(head.length) }] };
}

/** Its text, then one `tool_call(...)` line per call: the trailing lines that read as calls. */
function readAssistant(body: string): Message {
  const lines = body.split('\n');
  const calls: Array<Extract<Part, { type: 'tool-call' }>> = [];
  let start = lines.length;
  for (let call; start > 0 && (call = readToolCallLine(lines[start - 1]!)) !== null; start--) {
    calls.push({ type: 'tool-call', id: call.id, name: call.name, input: call.args });
  }
  calls.reverse();
  const text = lines.slice(0, start).join('\n');
  return { role: 'assistant', parts: [...(text !== '' || calls.length === 0 ? [{ type: 'text' as const, text }] : []), ...calls] };
}

const textOf = (m: Message): string => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');

/** The `tool_call(...)` lines of an assistant message, as the prompt has them. */
export function toolCallLines(message: Message): string[] {
  return message.parts.flatMap((p) =>
    p.type === 'tool-call' ? [`tool_call(id: ${p.id}, name: ${p.name}, args: ${String(p.input)})`] : [],
  );
}

/** A message as its block of the prompt. */
export function renderOpencodeMessage(message: Message): string {
  switch (message.role) {
    case 'system':
      return `SYSTEM: ${textOf(message)}`;
    case 'user':
      return `USER: ${textOf(message)}`;
    case 'assistant': {
      const text = textOf(message);
      return `ASSISTANT: ${[...(text !== '' ? [text] : []), ...toolCallLines(message)].join('\n')}`;
    }
    case 'tool': {
      const part = message.parts[0];
      if (part?.type !== 'tool-result') return '';
      return `TOOL_RESULT (${part.name !== '' ? `name: ${part.name}, ` : ''}call_id: ${part.id}): ${String(part.output)}`;
    }
  }
}

/**
 * Where the reading, written out again, first differs from `text` (-1: nowhere).
 * Block by block against the text in place: no second copy of a long prompt is built.
 */
function firstDifference(reading: OpencodeReading, text: string): number {
  let at = 0;
  for (const [i, b] of reading.blocks.entries()) {
    const written = `${i > 0 ? '\n\n' : ''}${'frame' in b ? b.text : renderOpencodeMessage(reading.messages[b.message]!)}`;
    if (!text.startsWith(written, at)) {
      let k = 0;
      while (written[k] === text[at + k]) k++;
      return at + k;
    }
    at += written.length;
  }
  return at === text.length ? -1 : at;
}
