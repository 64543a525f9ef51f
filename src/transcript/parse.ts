import { parseAiSdk } from './ai-sdk.js';
import { checkDepth, parseJson } from './decode.js';
import { TranscriptError } from './errors.js';
import { parseOpenAI } from './openai.js';
import type { Conversation } from './types.js';

/**
 * Any accepted transcript text → the canonical Conversation. The shape is detected:
 * text whose first non-blank character is "{" or "[" is JSON and must parse;
 * anything else is a prompt the caller already flattened.
 */
export function parseTranscript(text: string): Conversation {
  const trimmed = text.trimStart();
  if (trimmed === '') {
    throw new TranscriptError('stdin is empty: pipe a transcript (a JSON body or a plain-text prompt) into cursor-resume');
  }
  if (trimmed[0] !== '{' && trimmed[0] !== '[') return { shape: 'text', text, messages: [], tools: [] };

  const value = parseJson(trimmed);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TranscriptError(
      'transcript: expected a JSON object with "messages" (OpenAI Chat Completions) or "prompt" (AI SDK)',
    );
  }
  checkDepth(value);
  const hasMessages = Object.hasOwn(value, 'messages');
  const hasPrompt = Object.hasOwn(value, 'prompt');
  if (hasMessages && hasPrompt) {
    throw new TranscriptError('transcript: has both "messages" and "prompt"; send one shape');
  }
  if (!hasMessages && !hasPrompt) {
    throw new TranscriptError('transcript: missing "messages" (OpenAI Chat Completions) or "prompt" (AI SDK)');
  }
  const conversation = hasMessages ? parseOpenAI(value) : parseAiSdk(value);
  nameToolResults(conversation);
  return conversation;
}

/** OpenAI tool messages may omit the tool's name: take it from the call they answer. */
function nameToolResults(conversation: Conversation): void {
  const names = new Map<string, string>();
  for (const message of conversation.messages) {
    for (const part of message.parts) {
      if (part.type === 'tool-call') names.set(part.id, part.name);
      else if (part.type === 'tool-result' && part.name === '') part.name = names.get(part.id) ?? '';
    }
  }
}
