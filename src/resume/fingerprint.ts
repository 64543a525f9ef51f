import { createHash } from 'node:crypto';
import { MESSAGE_DIGEST_HEX } from '../cache/types.js';
import type { Tool } from '../transcript/types.js';
import { canonicalJsonChunks } from './canonical-json.js';
import { digest } from './hash.js';

/** digest() of the tool's canonical JSON, the hash fed as the JSON is written: no copy of a huge schema is built. */
function toolDigest(tool: Tool): string {
  const hash = createHash('sha256');
  canonicalJsonChunks([tool.name, tool.description, tool.parameters], (text) => hash.update(text));
  return hash.digest('hex').slice(0, MESSAGE_DIGEST_HEX);
}

/**
 * A hash of the complete tool definitions: names, descriptions and the whole nested
 * parameter schemas. Tool order does not matter; anything inside a tool does
 * (a Task tool whose description lists other subagents is a different tool).
 */
export function toolsFingerprint(tools: ReadonlyArray<Tool>): string {
  return digest(tools.map(toolDigest).sort().join(','));
}
