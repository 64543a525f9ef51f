import type { Tool } from '../transcript/types.js';
import { canonicalJson } from './canonical-json.js';
import { digest } from './hash.js';

/**
 * A hash of the complete tool definitions: names, descriptions and the whole nested
 * parameter schemas. Tool order does not matter; anything inside a tool does
 * (a Task tool whose description lists other subagents is a different tool).
 */
export function toolsFingerprint(tools: ReadonlyArray<Tool>): string {
  const each = tools.map((t) => digest(canonicalJson([t.name, t.description, t.parameters]))).sort();
  return digest(each.join(','));
}
