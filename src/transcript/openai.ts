// OpenAI Chat Completions body: {model, messages, tools}.
import * as z from '../zod.js';
import {
  checkEnvelope,
  isSchema,
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
import { isJsonObject } from '../json-object.js';

const toolsSchema = (list: ListOf) =>
  z.optional(
    z.nullable(
      list(
        z.object({
          type: z.literal('function', { error: 'expected "function"' }),
          function: z.object({ name: toolName(), description: z.optional(str()), parameters: toolSchema() }),
        }),
        'expected an array of tool definitions',
      ),
    ),
  );

/** The schema of the body but its messages, for a transcript whose messages were all read by plainMessage. */
const besideSchema = (list: ListOf) => z.object({ ...sharedSchemas().envelope, tools: toolsSchema(list) });
const parseBeside = listSchemas(besideSchema);
type Beside = z.infer<ReturnType<typeof besideSchema>>;

const LEGACY_CALL = 'the legacy "function_call" is not read; send the call in "tool_calls"';

/** The media type a data: URL names, or the fallback for any other reference. */
const mediaTypeOf = (url: string, fallback: string): string => /^data:([^;,]+)/.exec(url)?.[1] ?? fallback;

/**
 * The schema of a whole body, built the first time a transcript needs it: one whose
 * messages all read plainly (plainMessage, below) never does, and building it on every
 * run took, with ai-sdk.ts's, a young-generation collection (BENCHMARKS.md, benchmark 2).
 */
function fullSchemas(list: ListOf) {
  const { envelope, noToolCalls, textPart } = sharedSchemas();
  const imagePart = z.object({
    type: z.literal('image_url'),
    image_url: z.union([str(), z.object({ url: str() })], { error: 'expected an object with a "url" string' }),
  });
  const audioPart = z.object({
    type: z.literal('input_audio'),
    input_audio: z.object({ data: str(), format: str() }),
  });
  const filePart = z.object({
    type: z.literal('file'),
    file: z.object({ file_data: z.optional(str()), file_id: z.optional(str()), filename: z.optional(str()) }),
  });
  const refusalPart = z.object({ type: z.literal('refusal'), refusal: str() });

  const contentOf = <T extends z.core.$ZodType>(part: T) =>
    z.union([str(), list(part)], { error: 'expected a string or an array of parts' });

  const toolCall = z.object({
    id: str(),
    type: z.optional(z.literal('function', { error: 'expected "function"' })),
    function: z.object({ name: str(), arguments: str('a string of JSON arguments') }),
  });

  const system = z.object({
    role: z.enum(['system', 'developer']),
    content: contentOf(partOf([textPart], 'text')),
    tool_calls: noToolCalls,
  });
  const user = z.object({
    role: z.literal('user'),
    content: contentOf(partOf([textPart, imagePart, audioPart, filePart], 'text, image_url, input_audio or file')),
    tool_calls: noToolCalls,
  });
  const assistant = z.object({
    role: z.literal('assistant'),
    content: z.optional(z.nullable(contentOf(partOf([textPart, refusalPart], 'text or refusal')))),
    refusal: z.optional(z.nullable(str())),
    tool_calls: z.optional(z.nullable(list(toolCall, 'expected an array of tool calls'))),
    // Dropped unread, the call would vanish from the prompt: said instead.
    function_call: z.optional(z.nullable(z.never({ error: LEGACY_CALL }))),
  });
  const tool = z.object({
    role: z.literal('tool'),
    content: contentOf(partOf([textPart], 'text')),
    tool_call_id: str(),
    name: z.optional(str()),
    tool_calls: noToolCalls,
  });

  const message = messageOf([system, user, assistant, tool]);

  const body = z.object({
    ...envelope,
    messages: list(message, 'expected an array of messages').check(z.minLength(1, 'expected at least one message')),
    tools: toolsSchema(list),
  });
  return { body, user, refusalPart };
}
const parseFull = listSchemas((list) => fullSchemas(list).body);

type UserPart = z.infer<ReturnType<typeof fullSchemas>['user']>['content'];

function fromContent(content: string | ReadonlyArray<TextPart | { type: string }>): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part): Part => {
    const p = part as Exclude<UserPart, string>[number] | z.infer<ReturnType<typeof fullSchemas>['refusalPart']>;
    switch (p.type) {
      case 'text':
        return { type: 'text', text: p.text };
      case 'refusal':
        return { type: 'text', text: p.refusal };
      case 'image_url': {
        const url = typeof p.image_url === 'string' ? p.image_url : p.image_url.url;
        return { type: 'file', mediaType: mediaTypeOf(url, 'image/*'), data: url };
      }
      case 'input_audio':
        return { type: 'file', mediaType: `audio/${p.input_audio.format}`, data: p.input_audio.data };
      case 'file': {
        const data = p.file.file_data ?? `file_id:${p.file.file_id ?? ''}`;
        return {
          type: 'file',
          mediaType: mediaTypeOf(data, 'application/octet-stream'),
          data,
          ...(p.file.filename !== undefined ? { filename: p.file.filename } : {}),
        };
      }
    }
  });
}

const isAbsent = (value: unknown): boolean => value === undefined || value === null;

/** A tool call the schema accepts, as it reads it; undefined for anything else. */
function plainToolCall(call: unknown): Part | undefined {
  if (!isJsonObject(call) || typeof call.id !== 'string' || (call.type !== undefined && call.type !== 'function')) return undefined;
  const fn = call.function;
  if (!isJsonObject(fn) || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') return undefined;
  return { type: 'tool-call', id: call.id, name: fn.name, input: fn.arguments };
}

/**
 * The message as the schema would read it, when its content is a plain string (or, for
 * an assistant, absent) and everything else in it is plainly valid; undefined for
 * anything else, which the schema then reads and, if need be, names the error of.
 * Most messages of a long conversation are of this form, and reading them here is
 * several times cheaper than through the schema, which also copies every message.
 */
function plainMessage(m: unknown): Message | undefined {
  if (!isJsonObject(m)) return undefined;
  const { role, content } = m;
  if (role === 'assistant') {
    const { refusal } = m;
    if (!isAbsent(content) && typeof content !== 'string') return undefined;
    if ((!isAbsent(refusal) && typeof refusal !== 'string') || !isAbsent(m.function_call)) return undefined;
    const parts: Part[] = typeof content === 'string' ? [{ type: 'text', text: content }] : [];
    if (typeof refusal === 'string') parts.push({ type: 'text', text: refusal });
    const calls = m.tool_calls;
    if (Array.isArray(calls)) {
      for (const call of calls) {
        const part = plainToolCall(call);
        if (!part) return undefined;
        parts.push(part);
      }
    } else if (!isAbsent(calls)) return undefined;
    return { role, parts };
  }
  if (typeof content !== 'string' || !isAbsent(m.tool_calls)) return undefined;
  switch (role) {
    case 'system':
    case 'developer':
      return { role: 'system', parts: [{ type: 'text', text: content }] };
    case 'user':
      return { role, parts: [{ type: 'text', text: content }] };
    case 'tool': {
      const { tool_call_id: id, name } = m;
      if (typeof id !== 'string' || (name !== undefined && typeof name !== 'string')) return undefined;
      return { role, parts: [{ type: 'tool-result', id, name: name ?? '', output: content }] };
    }
    default:
      return undefined;
  }
}

/** Every message read by plainMessage, or undefined when any one needs the schema. */
function plainMessages(messages: unknown): Message[] | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const out: Message[] = [];
  for (const m of messages) {
    const message = plainMessage(m);
    if (!message) return undefined;
    out.push(message);
  }
  return out;
}

/**
 * The fields beside the messages (the envelope and the tools) as the schema gives them
 * back, when they are plainly valid, as nearly every body's are; undefined for anything
 * else, which the schema then reads (besideBySchema), naming the error if there is one.
 * Reading them here spares a turn initialising zod at all.
 */
export function plainBeside(body: Record<string, unknown>): Beside | undefined {
  const out: Beside = {};
  for (const key of ['model', 'workspace', 'sessionId'] as const) {
    const value = body[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') return undefined;
    out[key] = value;
  }
  const { tools } = body;
  if (tools === null) out.tools = null;
  else if (tools !== undefined) {
    if (!Array.isArray(tools)) return undefined;
    const read: NonNullable<Beside['tools']> = [];
    for (const tool of tools) {
      if (!isJsonObject(tool) || tool.type !== 'function' || !isJsonObject(tool.function)) return undefined;
      const { name, description, parameters } = tool.function;
      if (typeof name !== 'string' || name.length === 0) return undefined;
      if ((description !== undefined && typeof description !== 'string') || (parameters !== undefined && !isSchema(parameters))) {
        return undefined;
      }
      const fn: (typeof read)[number]['function'] = { name };
      if (description !== undefined) fn.description = description;
      if (parameters !== undefined) fn.parameters = parameters;
      read.push({ type: 'function', function: fn });
    }
    out.tools = read;
  }
  return out;
}

/** The schema's reading of the fields beside the messages, or its error. */
export function besideBySchema(body: unknown): Beside {
  const parsed = parseBeside(body);
  if (!parsed.success) throw toTranscriptError(parsed.error.issues, []);
  return parsed.data;
}

export function parseOpenAI(value: unknown): Conversation {
  const plain = plainMessages((value as { messages?: unknown }).messages);
  if (plain) return conversationOf(plainBeside(value as Record<string, unknown>) ?? besideBySchema(value), plain);
  const parsed = parseFull(value);
  if (!parsed.success) throw toTranscriptError(parsed.error.issues, []);
  const data = parsed.data;
  const messages: Message[] = data.messages.map((m): Message => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', parts: fromContent(m.content) };
      case 'user':
        return { role: 'user', parts: fromContent(m.content) };
      case 'assistant':
        return {
          role: 'assistant',
          parts: [
            ...(m.content == null ? [] : fromContent(m.content)),
            ...(m.refusal == null ? [] : [{ type: 'text', text: m.refusal } as const]),
            ...(m.tool_calls ?? []).map((c): Part => ({ type: 'tool-call', id: c.id, name: c.function.name, input: c.function.arguments })),
          ],
        };
      case 'tool': {
        const output = fromContent(m.content)
          .map((p) => (p.type === 'text' ? p.text : ''))
          .join('');
        return { role: 'tool', parts: [{ type: 'tool-result', id: m.tool_call_id, name: m.name ?? '', output }] };
      }
    }
  });
  return conversationOf(data, messages);
}

function conversationOf(data: Beside, messages: Message[]): Conversation {
  const tools: Tool[] = (data.tools ?? []).map((t) => ({
    name: t.function.name,
    description: t.function.description ?? '',
    parameters: t.function.parameters ?? null,
  }));
  return { shape: 'openai', ...checkEnvelope(data), messages, tools };
}
