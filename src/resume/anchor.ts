import type { Message } from '../transcript/types.js';
import { digest } from './hash.js';

/** The first user message with something in it: text that is not blank, or a file. */
export function firstRealUserIndex(messages: ReadonlyArray<Message>): number {
  return messages.findIndex(
    (m) => m.role === 'user' && m.parts.some((p) => (p.type === 'text' ? p.text.trim() !== '' : p.type === 'file')),
  );
}

export interface AnchorInputs {
  /** Absolute, real path. */
  workspace: string;
  /** Concrete model, or "" for cursor-agent's default. */
  model: string;
  sessionId: string | undefined;
  /** Digest of the first real user message. */
  opener: string;
}

/** A conversation's identity: same workspace, model, session and opener, same anchor. */
export function anchorOf(inputs: AnchorInputs): string {
  return digest(JSON.stringify(['anchor/v1', inputs.workspace, inputs.model, inputs.sessionId ?? null, inputs.opener]));
}
