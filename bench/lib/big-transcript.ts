// Transcripts of any length for the scale benchmark: the coding session's shape
// (user, assistant with a tool call, tool result, assistant text) repeated, with
// contents drawn from a pool so 10,000 messages take seconds, not minutes, to build.
// The transcript ends with cursor's reply and a new user message, so a branch that
// knows every message but the last one makes the decision a real resume.
import { CLOSING_LINE, renderOpencodeMessage } from '../../src/transcript/opencode-text.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { grepOutput, sourceFile, systemPrompt, testOutput, toolDefinitions, userText } from './content.js';

const POOL = 24;

export function bigTranscript(messages: number, workspace: string): string {
  if (messages < 4) throw new Error('a scale transcript needs at least 4 messages');
  // About 2 KB a message on average (10,000 messages: about 20 MB), as in a long OpenCode session.
  const users = Array.from({ length: POOL }, (_, i) => userText(9000 + i, i % 4 === 0 ? 2500 : 500));
  const outputs = Array.from({ length: POOL }, (_, i) =>
    i % 3 === 0 ? sourceFile(9100 + i, 9000) : i % 3 === 1 ? testOutput(9200 + i, 5000, i % 2 === 0) : grepOutput(9300 + i, 3000),
  );
  const out: Array<Record<string, unknown>> = [{ role: 'system', content: systemPrompt() }];
  let call = 0;
  for (let i = 1; out.length < messages - 2; i++) {
    const k = i % POOL;
    switch (i % 4) {
      case 1:
        out.push({ role: 'user', content: `${users[k]}\n(step ${i})` });
        break;
      case 2:
        call++;
        out.push({
          role: 'assistant',
          content: `Calling tool read.\n\nLooking at step ${i}.`,
          tool_calls: [
            {
              id: `call_${call}`,
              type: 'function',
              function: { name: 'read', arguments: JSON.stringify({ filePath: `/repo/src/f${k}.ts` }) },
            },
          ],
        });
        break;
      case 3:
        out.push({ role: 'tool', tool_call_id: `call_${call}`, content: `${outputs[k]}\n// step ${i}` });
        break;
      default:
        out.push({
          role: 'assistant',
          content: `Turn ${i} of this chat. The change at step ${i} is done; the tests pass. ${users[(k + 7) % POOL]!.slice(0, 300)}`,
        });
    }
  }
  out.push({ role: 'assistant', content: 'Done: the branch is kept until its chat is gone.' });
  out.push({ role: 'user', content: 'Thanks. Now add a test for the expired case.' });
  return JSON.stringify({ model: 'gpt-5', workspace, messages: out, tools: toolDefinitions() });
}

/**
 * The same transcript as the OpenCode plugin flattens it: its bridge and tools blocks,
 * one block per message, the closing line (there are tool results), its Task bridge.
 */
export function bigLayoutPrompt(messages: number, workspace: string): string {
  const conversation = parseTranscript(bigTranscript(messages, workspace));
  const tools = toolDefinitions()
    .map(({ function: t }) => `- ${t.name}: ${t.description}\n  Parameters: ${JSON.stringify(t.parameters)}`)
    .join('\n');
  return [
    'SYSTEM: opencode bridge mode is active.\nFor file changes, respond with exactly one JSON object and no prose.',
    `SYSTEM: You have access to the following tools. When you need to use one, respond with a tool_call in the standard OpenAI format.\nTool guidance: prefer write/edit for file changes; use bash mainly to run commands/tests.\n\nAvailable tools:\n${tools}`,
    ...conversation.messages.map(renderOpencodeMessage),
    CLOSING_LINE,
    'SYSTEM: OpenCode Task bridge mode is active.\nOpenCode owns the task tool.',
  ].join('\n\n');
}

/**
 * A long history of short messages (about `bytes` bytes of content each), as the
 * tests' conversations are: user, assistant with a tool call, tool result, assistant
 * text, repeated; `messages` of them after the system message, ending with cursor's text.
 */
export function shortHistory(messages: number, bytes: number): Array<Record<string, unknown>> {
  const filler = (i: number, n: number): string => {
    let text = `step ${i}:`;
    for (let w = 0; text.length < n; w++) text += ` ${WORDS[(i * 7 + w) % WORDS.length]}`;
    return text;
  };
  const out: Array<Record<string, unknown>> = [];
  let call = 0;
  for (let i = 1; out.length < messages; i++) {
    switch (i % 4) {
      case 1:
        out.push({ role: 'user', content: filler(i, bytes) });
        break;
      case 2:
        call++;
        out.push({
          role: 'assistant',
          content: filler(i, bytes / 2),
          tool_calls: [
            {
              id: `call_${call}`,
              type: 'function',
              function: { name: 'read', arguments: JSON.stringify({ filePath: `/repo/src/f${i % 97}.ts` }) },
            },
          ],
        });
        break;
      case 3:
        out.push({ role: 'tool', tool_call_id: `call_${call}`, content: filler(i, bytes) });
        break;
      default:
        out.push({ role: 'assistant', content: filler(i, bytes) });
    }
  }
  return out;
}

const WORDS = [
  'the',
  'cache',
  'keeps',
  'a',
  'branch',
  'until',
  'its',
  'chat',
  'is',
  'gone;',
  'tests',
  'pass',
  'after',
  'the',
  'lease',
  'ends.',
];
