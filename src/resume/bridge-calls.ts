// The OpenCode plugin's "bridge": when its prompt carries the bridge instructions, a reply
// that is nothing but a JSON envelope ({"name":"write","arguments":{...}}, a Task envelope,
// or an array of them) is turned by the plugin into tool calls of its own, with ids made
// from the envelope's text (`call_bridge_` and 12 hex digits of its SHA-256), and the run
// is ended there as at any tool call. The next request shows those calls, not the text:
// knowing the ids is what lets that request prove the chat's history and resume. A reply
// read wrongly here costs only that resume: the ids come from the very text cursor wrote,
// so no other transcript can match them.
import type { LayoutBlock } from '../transcript/opencode-text.js';
import type { ReplyToolCall } from './digests.js';
import { sha256Hex } from './hash.js';

/** Which envelopes the plugin turns into calls in this request: the bridge frames its prompt carries say so. */
export interface BridgeOffer {
  write: boolean;
  task: boolean;
}

export function bridgeOfferIn(layout: ReadonlyArray<LayoutBlock> | undefined): BridgeOffer | null {
  if (layout === undefined) return null;
  const frames = new Set(layout.flatMap((b) => ('frame' in b ? [b.frame] : [])));
  const offer = { write: frames.has('bridge'), task: frames.has('task-bridge') };
  return offer.write || offer.task ? offer : null;
}

/** Whether `text` could be an envelope once complete: it begins as one (a cheap test for every delta). */
export function mayBeEnvelope(text: string): boolean {
  const start = text.trimStart();
  return start.startsWith('{') || start.startsWith('[') || start.startsWith('```');
}

/** The calls the plugin makes of a reply that is `text` and nothing else; undefined when it leaves the text as text. */
export function bridgeCallsIn(text: string, offer: BridgeOffer): ReplyToolCall[] | undefined {
  const json = strictJsonText(text);
  if (json === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const id = `call_bridge_${sha256Hex(json).slice(0, 12)}`;
  if (!Array.isArray(value)) {
    const name = envelopeName(value, offer);
    return name === undefined ? undefined : [{ id, name }];
  }
  const calls: ReplyToolCall[] = [];
  for (const [i, entry] of value.entries()) {
    const name = envelopeName(entry, offer);
    if (name === undefined) return undefined;
    calls.push({ id: `${id}_${i}`, name });
  }
  return calls.length > 0 ? calls : undefined;
}

/** The text as a whole JSON object or array, or the body of one ```json fence around it. */
function strictJsonText(text: string): string | undefined {
  const trimmed = text.trim();
  if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) return trimmed;
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n```$/i.exec(trimmed);
  return fenced ? fenced[1]!.trim() : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isFilled = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

/** The tool an envelope calls, when the plugin accepts it: a write with a path and content, or a Task with its three fields. */
function envelopeName(value: unknown, offer: BridgeOffer): string | undefined {
  if (!isObject(value) || !isObject(value.arguments)) return undefined;
  const args = value.arguments;
  if (value.name === 'task') {
    const optional = (v: unknown) => v === undefined || typeof v === 'string';
    const valid =
      isFilled(args.description) &&
      isFilled(args.prompt) &&
      isFilled(args.subagent_type) &&
      optional(args.task_id) &&
      optional(args.command);
    return offer.task && valid ? 'task' : undefined;
  }
  if (value.name !== 'write' || !offer.write) return undefined;
  const content = typeof args.content === 'string' ? args.content : args.contents;
  return isFilled(args.path) && typeof content === 'string' ? 'write' : undefined;
}
