// The delta for a prompt in the OpenCode plugin's layout, written as the plugin
// writes its own when it resumes: the bridge instructions, then a follow-up user
// message's text (trimmed, without its head) or the answered tool call, its results
// and the closing line, then the Task bridge instructions. The other frames (the
// tools block, the tool list) stay out: the chat has them from its first prompt.
import { CLOSING_LINE, renderOpencodeMessage, toolCallLines } from '../transcript/opencode-text.js';
import type { Conversation } from '../transcript/types.js';
import { answerableCalls, notSendable, unanswerable, type DeltaResult } from './render.js';

export function renderOpencodeDelta(conversation: Conversation, knownCount: number): DeltaResult {
  const { messages } = conversation;
  const calls = answerableCalls(messages, knownCount);
  const results: string[] = [];
  const userTexts: string[] = [];
  for (let i = knownCount; i < messages.length; i++) {
    const m = messages[i]!;
    const refused = notSendable(m, i);
    if (refused !== null) return { ok: false, why: refused };
    if (m.role === 'user') {
      const text = renderOpencodeMessage(m).slice('USER: '.length).trim();
      if (text !== '') userTexts.push(text);
      continue;
    }
    const id = m.parts[0]?.type === 'tool-result' ? m.parts[0].id : '';
    if (!calls.has(id)) return { ok: false, why: unanswerable(i, id) };
    results.push(renderOpencodeMessage(m));
  }
  if (results.length === 0 && userTexts.length === 0) return { ok: false, why: 'the new messages have no text to send' };
  // The call line alone, without the text cursor wrote before it: the chat holds that text already.
  const answered =
    results.length > 0 ? [`ASSISTANT: ${toolCallLines(messages[knownCount - 1]!).join('\n')}`, ...results, CLOSING_LINE] : [];
  const frames = conversation.layout ?? [];
  const frame = (kind: 'bridge' | 'task-bridge'): string[] => frames.flatMap((b) => ('frame' in b && b.frame === kind ? [b.text] : []));
  return { ok: true, prompt: [...frame('bridge'), ...answered, ...userTexts, ...frame('task-bridge')].join('\n\n') };
}
