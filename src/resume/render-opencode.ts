// The delta for a prompt in the OpenCode plugin's layout, written as the plugin
// writes its own when it resumes: the bridge instructions, then a follow-up user
// message's text (trimmed, without its head) or the answered tool call, its results
// and the closing line, then the Task bridge instructions. What follows a new block
// in the caller's text follows it here, as the caller wrote it. The other frames (the
// tools block, the tool list) stay out: the chat has them from its first prompt.
import { CLOSING_LINE, renderOpencodeMessage, toolCallLines } from '../transcript/opencode-text.js';
import type { Conversation } from '../transcript/types.js';
import { answerableCalls, notSendable, unanswerable, type DeltaResult } from './render.js';

export function renderOpencodeDelta(conversation: Conversation, knownCount: number): DeltaResult {
  const { messages } = conversation;
  const calls = answerableCalls(messages, knownCount);
  // The new blocks in the caller's order, each as the caller wrote it: a tool's output or a
  // pasted text that holds a blank line and a head reads as several messages, and its pieces
  // must reach the chat where and as they were, heads and all.
  const blocks: string[] = [];
  let answered = false;
  for (let i = knownCount; i < messages.length; i++) {
    const m = messages[i]!;
    const refused = notSendable(m, i);
    if (refused !== null) return { ok: false, why: refused };
    if (m.role === 'user') {
      // The follow-up goes without its own head; the blocks a pasted head cut it into keep theirs.
      blocks.push(i === knownCount ? renderOpencodeMessage(m).slice('USER: '.length) : renderOpencodeMessage(m));
      continue;
    }
    const id = m.parts[0]?.type === 'tool-result' ? m.parts[0].id : '';
    if (!calls.has(id)) return { ok: false, why: unanswerable(i, id) };
    // After the user's own text it is part of that text (the chat's calls are answered first, before anything else).
    if (!answered && i > knownCount) return { ok: false, why: `message ${i + 1} is a tool result after the user's new text` };
    answered = true;
    blocks.push(renderOpencodeMessage(m));
  }
  // A follow-up (only user blocks can follow one) is the user's text, which the plugin trims as a whole: its
  // first block's trailing blanks and blank lines stay, its last block's go.
  const body = answered ? blocks.join('\n\n') : blocks.join('\n\n').trim();
  if (body === '') return { ok: false, why: 'the new messages have no text to send' };
  // The call line alone, without the text cursor wrote before it: the chat holds that text already.
  const call = answered ? [`ASSISTANT: ${toolCallLines(messages[knownCount - 1]!).join('\n')}`] : [];
  const frames = conversation.layout ?? [];
  const frame = (kind: 'bridge' | 'task-bridge'): string[] => frames.flatMap((b) => ('frame' in b && b.frame === kind ? [b.text] : []));
  return {
    ok: true,
    prompt: [...frame('bridge'), ...call, body, ...(answered ? [CLOSING_LINE] : []), ...frame('task-bridge')].join('\n\n'),
  };
}
