// The canonical conversation: every accepted transcript shape becomes this, and
// nothing after parsing knows which shape came in, but for two things: plain text
// is never resumed, and a prompt in the OpenCode plugin's layout keeps its frame
// blocks (and its caller's bytes) so it can be sent on as the plugin would send it.
import type { LayoutBlock } from './opencode-text.js';

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export type Part =
  | { type: 'text'; text: string }
  /** An image or a file: binary content that cannot be sent to cursor-agent as text. */
  | { type: 'file'; mediaType: string; data: string; filename?: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  | { type: 'tool-result'; id: string; name: string; output: unknown };

export interface Message {
  role: Role;
  parts: Part[];
}

export interface Tool {
  name: string;
  description: string;
  parameters: unknown;
}

/** 'opencode-text': plain text in the OpenCode plugin's layout, read back into messages. */
export type Shape = 'openai' | 'ai-sdk' | 'text' | 'opencode-text';

export interface Conversation {
  shape: Shape;
  /** From the transcript; the command line wins over it. */
  model?: string;
  workspace?: string;
  sessionId?: string;
  messages: Message[];
  tools: Tool[];
  /** Only for shapes 'text' and 'opencode-text': the caller's pre-flattened prompt (broken UTF-8 shown as U+FFFD). */
  text?: string;
  /** Only for shapes 'text' and 'opencode-text' read from bytes: exactly those bytes, which a fresh chat gets as they came. */
  raw?: Uint8Array;
  /** Only for shape 'opencode-text': the prompt's blocks in order, frames verbatim and messages by index. */
  layout?: LayoutBlock[];
}
