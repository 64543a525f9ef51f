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
  /** The account cursor-agent runs as (accountOf), "" for its login at its own endpoint. */
  account?: string;
}

/**
 * A conversation's identity: same workspace, model, session, opener and account, same anchor.
 * A turn at the login's account keeps the anchor it had before accounts were told apart.
 */
export function anchorOf(inputs: AnchorInputs): string {
  const account = inputs.account ? [inputs.account] : [];
  return digest(JSON.stringify(['anchor/v1', inputs.workspace, inputs.model, inputs.sessionId ?? null, inputs.opener, ...account]));
}

/**
 * Who cursor-agent runs as, hashed: the API key it is given (--api-key, else CURSOR_API_KEY)
 * and the endpoint it talks to (-e/--endpoint). A chat made under one account is not another
 * account's to continue. "" when neither is given: the login, at cursor-agent's own endpoint.
 */
export function accountOf(apiKey: string | undefined, endpoint: string | undefined): string {
  if (apiKey === undefined && endpoint === undefined) return '';
  return digest(JSON.stringify(['account/v1', apiKey ?? null, endpoint ?? null]));
}
