// The canonical conversation: every accepted transcript shape becomes this, and
// nothing after parsing knows which shape came in.

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

export type Shape = 'openai' | 'ai-sdk' | 'text';

export interface Conversation {
  shape: Shape;
  /** From the transcript; the command line wins over it. */
  model?: string;
  workspace?: string;
  sessionId?: string;
  messages: Message[];
  tools: Tool[];
  /** Only for shape 'text': the caller's pre-flattened prompt (broken UTF-8 shown as U+FFFD). */
  text?: string;
  /** Only for shape 'text' read from bytes: exactly those bytes, which cursor-agent gets as they came. */
  raw?: Uint8Array;
}
