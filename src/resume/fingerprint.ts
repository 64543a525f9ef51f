import type { Tool } from '../transcript/types.js';
import { canonicalJsonChunks } from './canonical-json.js';
import { digest, digestOf } from './hash.js';

/** The digest of the tool's canonical JSON, the hash fed as the JSON is written: no copy of a huge schema is built. */
const toolDigest = (tool: Tool): string =>
  digestOf((update) => canonicalJsonChunks([tool.name, tool.description, tool.parameters], update));

/**
 * A hash of the complete tool definitions: names, descriptions and the whole nested
 * parameter schemas. Tool order does not matter; anything inside a tool does
 * (a Task tool whose description lists other subagents is a different tool).
 */
export function toolsFingerprint(tools: ReadonlyArray<Tool>): string {
  return digest(tools.map(toolDigest).sort().join(','));
}

/**
 * The tools of a prompt in the OpenCode plugin's layout: its tools block exactly as
 * written (null when it has none), which the plugin renders the same way every turn.
 */
export function toolsBlockFingerprint(block: string | null): string {
  return digest(JSON.stringify(['opencode-tools-block', block]));
}
