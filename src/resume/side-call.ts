import type { Message } from '../transcript/types.js';

/** OpenCode's title agent: its system prompt, and the user message it sends. */
export const DEFAULT_SIDE_CALL_PATTERNS: readonly string[] = [
  '^You are a title generator\\b',
  '^Generate a title for this conversation:',
];

export interface SideCallMatch {
  pattern: string;
  role: 'system' | 'user';
}

const textOf = (m: Message | undefined): string =>
  m ? m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n').trimStart() : '';

/**
 * A metadata prompt (a title, a summary) rides on the same session as the real chat
 * but must neither resume nor overwrite it. Patterns are tested against the start of
 * the first system message and of the first user message only, so a real message that
 * merely mentions "title generator" is not taken for one.
 */
export function detectSideCall(messages: ReadonlyArray<Message>, patterns: ReadonlyArray<RegExp>): SideCallMatch | null {
  const system = textOf(messages.find((m) => m.role === 'system'));
  const user = textOf(messages.find((m) => m.role === 'user'));
  for (const pattern of patterns) {
    if (system !== '' && pattern.test(system)) return { pattern: pattern.source, role: 'system' };
    if (user !== '' && pattern.test(user)) return { pattern: pattern.source, role: 'user' };
  }
  return null;
}
