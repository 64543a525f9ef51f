import type { Message } from '../transcript/types.js';

type Role = 'system' | 'user';

/**
 * OpenCode's title agent, always detected: its system prompt, and the user message it
 * sends. Each phrase only in its own role: a user who opens with "You are a title
 * generator for my blog app: ..." is having a real conversation.
 */
const BUILT_IN: ReadonlyArray<{ role: Role; pattern: RegExp }> = [
  { role: 'system', pattern: /^You are a title generator\b/ },
  { role: 'user', pattern: /^Generate a title for this conversation:/ },
];

/** Compiled once per settings list: simulate analyses every turn with the same one. */
const compiled = new WeakMap<ReadonlyArray<string>, ReadonlyArray<RegExp>>();

/** The configured patterns (the sideCallPatterns setting), added to the built-in ones; each holds only at the start of a message. */
export function compileSideCallPatterns(patterns: ReadonlyArray<string>): ReadonlyArray<RegExp> {
  let regexps = compiled.get(patterns);
  if (regexps === undefined) {
    regexps = patterns.map((p) => new RegExp(`^(?:${p})`));
    compiled.set(patterns, regexps);
  }
  return regexps;
}

export interface SideCallMatch {
  pattern: string;
  role: Role;
}

const textOf = (m: Message | undefined): string =>
  m
    ? m.parts
        .flatMap((p) => (p.type === 'text' ? [p.text] : []))
        .join('\n')
        .trimStart()
    : '';

/**
 * A metadata prompt (a title, a summary) rides on the same session as the real chat
 * but must neither resume nor overwrite it. Patterns are tested against the start of
 * the first system message and of the first user message only, so a real message that
 * merely mentions "title generator" is not taken for one. `configured` come from
 * compileSideCallPatterns and apply to both messages.
 */
export function detectSideCall(messages: ReadonlyArray<Message>, configured: ReadonlyArray<RegExp>): SideCallMatch | null {
  const text: Record<Role, string> = {
    system: textOf(messages.find((m) => m.role === 'system')),
    user: textOf(messages.find((m) => m.role === 'user')),
  };
  for (const { role, pattern } of BUILT_IN) {
    if (pattern.test(text[role])) return { pattern: pattern.source, role };
  }
  for (const pattern of configured) {
    for (const role of ['system', 'user'] as const) {
      if (text[role] !== '' && pattern.test(text[role])) return { pattern: pattern.source, role };
    }
  }
  return null;
}
