// AI SDK language-model prompt: {prompt: [...], tools: [...]}, as OpenCode hands it to a provider.
import * as z from '../zod.js';
import {
  checkEnvelope,
  listSchemas,
  messageOf,
  partOf,
  sharedSchemas,
  str,
  toolName,
  toolSchema,
  type ListOf,
  type TextPart,
} from './common.js';
import { toTranscriptError } from './schema-errors.js';
import type { Conversation, Message, Part, Tool } from './types.js';

/**
 * The schemas, built the first time an AI SDK prompt comes: building them on every run
 * took, with openai.ts's, a young-generation collection (BENCHMARKS.md, benchmark 2).
 */
function schemas(list: ListOf) {
  const { envelope, textPart } = sharedSchemas();
  const filePart = z.object({
    type: z.literal('file'),
    data: z.unknown(),
    mediaType: z.optional(str()),
    mimeType: z.optional(str()),
    filename: z.optional(str()),
  });
  const imagePart = z.object({ type: z.literal('image'), image: z.unknown(), mimeType: z.optional(str()) });
  const reasoningPart = z.object({ type: z.literal('reasoning'), text: str() });
  const redactedReasoningPart = z.object({ type: z.literal('redacted-reasoning'), data: z.unknown() });
  const toolCallPart = z.object({
    type: z.literal('tool-call'),
    toolCallId: str(),
    toolName: str(),
    input: z.optional(z.unknown()),
    args: z.optional(z.unknown()),
  });
  const toolResultPart = z.object({
    type: z.literal('tool-result'),
    toolCallId: str(),
    toolName: str(),
    output: z.optional(z.unknown()),
    result: z.optional(z.unknown()),
  });

  const system = z.object({ role: z.literal('system'), content: str() });
  const user = z.object({
    role: z.literal('user'),
    content: z.union([str(), list(partOf([textPart, filePart, imagePart], 'text, file or image'))], {
      error: 'expected a string or an array of parts',
    }),
  });
  const assistant = z.object({
    role: z.literal('assistant'),
    content: z.union(
      [
        str(),
        list(
          partOf(
            [textPart, filePart, reasoningPart, redactedReasoningPart, toolCallPart, toolResultPart],
            'text, file, reasoning, tool-call or tool-result',
          ),
        ),
      ],
      { error: 'expected a string or an array of parts' },
    ),
  });
  const tool = z.object({
    role: z.literal('tool'),
    content: list(partOf([toolResultPart], 'tool-result'), 'expected an array of tool-result parts'),
  });

  const message = messageOf([system, user, assistant, tool]);

  const toolDef = z.discriminatedUnion(
    'type',
    [
      z.object({
        type: z.literal('function'),
        name: toolName(),
        description: z.optional(str()),
        inputSchema: toolSchema(),
        parameters: toolSchema(),
      }),
      z.object({ type: z.literal('provider-defined'), id: str(), name: toolName(), args: z.optional(z.unknown()) }),
    ],
    { error: 'expected a tool of type "function" or "provider-defined"' },
  );

  const body = z.object({
    ...envelope,
    prompt: list(message, 'expected an array of messages').check(z.minLength(1, 'expected at least one message')),
    tools: z.optional(z.nullable(list(toolDef, 'expected an array of tool definitions'))),
  });
  return { body, filePart, imagePart, reasoningPart, redactedReasoningPart, toolCallPart, toolResultPart };
}
const parseBody = listSchemas((list) => schemas(list).body);
type Schemas = ReturnType<typeof schemas>;

type AnyPart =
  | TextPart
  | z.infer<Schemas['filePart']>
  | z.infer<Schemas['imagePart']>
  | z.infer<Schemas['reasoningPart']>
  | z.infer<Schemas['redactedReasoningPart']>
  | z.infer<Schemas['toolCallPart']>
  | z.infer<Schemas['toolResultPart']>;

/** Binary or URL content as one string, so it can be hashed and described. */
function dataText(data: unknown): string {
  return typeof data === 'string' ? data : JSON.stringify(data ?? null);
}

function toPart(p: AnyPart): Part | undefined {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'file':
      return {
        type: 'file',
        mediaType: p.mediaType ?? p.mimeType ?? 'application/octet-stream',
        data: dataText(p.data),
        ...(p.filename !== undefined ? { filename: p.filename } : {}),
      };
    case 'image':
      return { type: 'file', mediaType: p.mimeType ?? 'image/*', data: dataText(p.image) };
    case 'reasoning':
      return { type: 'reasoning', text: p.text };
    case 'redacted-reasoning':
      return undefined;
    case 'tool-call':
      return { type: 'tool-call', id: p.toolCallId, name: p.toolName, input: p.input ?? p.args ?? {} };
    case 'tool-result':
      return { type: 'tool-result', id: p.toolCallId, name: p.toolName, output: p.output ?? p.result ?? null };
  }
}

function toParts(content: string | ReadonlyArray<AnyPart>): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.flatMap((p) => toPart(p) ?? []);
}

export function parseAiSdk(value: unknown): Conversation {
  const parsed = parseBody(value);
  if (!parsed.success) throw toTranscriptError(parsed.error.issues, []);
  const data = parsed.data;
  const messages: Message[] = data.prompt.map((m) => ({ role: m.role, parts: toParts(m.content) }));
  const tools: Tool[] = (data.tools ?? []).map((t) =>
    t.type === 'function'
      ? { name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? t.parameters ?? null }
      : { name: t.name, description: `provider-defined tool ${t.id}`, parameters: t.args ?? null },
  );
  return { shape: 'ai-sdk', ...checkEnvelope(data), messages, tools };
}
