// A coding conversation driven turn by turn the way OpenCode drives cursor-agent:
// the whole transcript on stdin every turn, cursor's reply (text and tool calls,
// with the call IDs the stream reported) appended before the next user message or
// tool results. The script is deterministic; only the stand-in's reply text varies.
import { grepOutput, sourceFile, systemPrompt, testOutput, toolDefinitions, userText } from './content.js';

export const STREAM_ARGS = ['--print', '--output-format', 'stream-json', '--stream-partial-output', '--force'];

export interface ToolCall {
  name: string;
  args: Record<string, unknown>;
}

/** One turn's new messages, as the caller adds them. */
export type Step =
  /** A user message; each call becomes a `CALL_TOOL` line, the stand-in's directive to call that tool. */
  | { kind: 'user'; text: string; calls: ToolCall[] }
  /** One tool result per call of cursor's last reply, in order. */
  | { kind: 'results'; outputs: string[] };

/** The facts of turn 1: the stand-in repeats them in every reply, so a reply shows whether the chat kept its history. */
export const FACTS = ['remember: the project uses pnpm and vitest', 'remember: never touch the lockfile'];

/**
 * A 50-turn coding session: searching, reading files, editing, running tests,
 * questions. Tool episodes take two turns (the call, then its results).
 */
export function codingScript(turns = 50): Step[] {
  const steps: Step[] = [];
  let seed = 100;
  const user = (bytes: number, calls: ToolCall[] = []): Step => ({ kind: 'user', text: userText(seed++, bytes), calls });
  const episodes: Array<() => Step[]> = [
    () => [user(350, [{ name: 'glob', args: { pattern: 'src/**/*.ts' } }]), { kind: 'results', outputs: [grepOutput(seed++, 1200)] }],
    () => [
      user(300, [
        { name: 'read', args: { filePath: '/repo/src/cache/store.ts' } },
        { name: 'read', args: { filePath: '/repo/src/helper/server.ts' } },
      ]),
      { kind: 'results', outputs: [sourceFile(seed++, 3500), sourceFile(seed++, 4500)] },
    ],
    () => [
      user(2200, [{ name: 'grep', args: { pattern: 'lookup\\(', include: '*.ts' } }]),
      { kind: 'results', outputs: [grepOutput(seed++, 1800)] },
    ],
    () => [
      user(400, [
        { name: 'edit', args: { filePath: '/repo/src/cache/store.ts', oldString: 'return [];', newString: 'return [...found];' } },
      ]),
      { kind: 'results', outputs: [`Edit applied successfully.\n\n${sourceFile(seed++, 700)}`] },
    ],
    () => [
      user(250, [{ name: 'bash', args: { command: 'pnpm vitest run', description: 'Run the test suite' } }]),
      { kind: 'results', outputs: [testOutput(seed++, 3000, true)] },
    ],
    () => [user(600)],
  ];
  const first = user(900, [{ name: 'list', args: { path: '/repo' } }]);
  if (first.kind === 'user') first.text = `${FACTS.join('\n')}\n${first.text}`;
  steps.push(first, { kind: 'results', outputs: [grepOutput(seed++, 900)] });
  for (let i = 0; steps.length < turns; i++) {
    const episode = episodes[i % episodes.length]!();
    steps.push(...(steps.length + episode.length <= turns ? episode : [user(600)]));
  }
  return steps.slice(0, turns);
}

/** What the stream said about cursor's reply: its text and the tool calls it made. */
export interface Reply {
  text: string;
  sessionId: string;
  calls: Array<{ id: string; name: string; arguments: string }>;
}

/** The fields of cursor-agent's stream-json events that a reply is made of. */
interface StreamEvent {
  type?: string;
  subtype?: string;
  call_id?: string;
  tool_call?: Record<string, { name?: string; arguments?: string; args?: unknown }>;
  message?: { content?: Array<{ type?: string; text?: string }> };
  timestamp_ms?: number;
  model_call_id?: string;
  result?: string;
  session_id?: string;
}

/**
 * Cursor's reply as its stream shows it: the result's text, or for a run its caller ended at
 * its first call (`endedAtCall`), the deltas streamed until then (partial output: an event with
 * `timestamp_ms` and no `model_call_id`); the calls under the stream's IDs, a `function` call by
 * its name, one of Cursor's own tools by its kind (`readToolCall` → `read`).
 */
export function replyOf(stdout: string, endedAtCall = false): Reply {
  let text: string | undefined;
  let deltas = '';
  let sessionId = '';
  const calls: Reply['calls'] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    const event = JSON.parse(line) as StreamEvent;
    if (event.type === 'tool_call' && event.subtype === 'started' && event.call_id !== undefined) {
      const [kind, call] = Object.entries(event.tool_call ?? {})[0] ?? ['', {}];
      calls.push({
        id: event.call_id,
        name: kind === 'function' ? (call.name ?? '') : kind.replace(/ToolCall$/, ''),
        arguments: kind === 'function' ? (call.arguments ?? '{}') : JSON.stringify(call.args ?? {}),
      });
      sessionId ||= event.session_id ?? '';
    } else if (event.type === 'assistant' && event.timestamp_ms !== undefined && event.model_call_id === undefined) {
      deltas += (event.message?.content ?? []).map((p) => (p.type === 'text' ? (p.text ?? '') : '')).join('');
    } else if (event.type === 'result') {
      text = event.result;
      sessionId = event.session_id ?? '';
    }
  }
  if (endedAtCall) {
    if (calls.length === 0) throw new Error(`no tool call in the agent's output:\n${stdout.slice(0, 2000)}`);
    return { text: deltas, sessionId, calls };
  }
  if (text === undefined) throw new Error(`no result event in the agent's output:\n${stdout.slice(0, 2000)}`);
  return { text, sessionId, calls };
}

/**
 * The stand-in's caller's tool for a scripted call (its README, "Caller's tool calls"): a read is
 * `READ_NOTES:`, anything else `RUN_SHELL:` with a command that names it.
 */
function callerTrigger(call: ToolCall): string {
  if (call.name === 'read') return `READ_NOTES: ${String(call.args.filePath ?? '')}`;
  const command = typeof call.args.command === 'string' ? call.args.command : `${call.name} ${JSON.stringify(call.args)}`;
  return `RUN_SHELL: ${command}`;
}

export class Conversation {
  readonly messages: Array<Record<string, unknown>>;
  readonly tools = toolDefinitions();
  #pending: Reply['calls'] = [];

  /**
   * `callerLoop`: tool episodes as the caller's own tool loop, as OpenCode's plugin runs them: the
   * user turn asks for one call of the caller's tools, the run is ended at that call, and the
   * results come as the next request. Otherwise cursor runs the `CALL_TOOL` calls itself, and the
   * results the script then sends for them are ones the chat already holds.
   */
  constructor(
    readonly workspace: string,
    readonly model = 'gpt-5',
    readonly callerLoop = false,
  ) {
    this.messages = [{ role: 'system', content: systemPrompt() }];
  }

  body(): string {
    return JSON.stringify({ model: this.model, workspace: this.workspace, messages: this.messages, tools: this.tools });
  }

  /** Adds a turn's new messages; returns their payload bytes (what a perfect delta must carry at least). */
  add(step: Step): number {
    if (step.kind === 'user') {
      const lines = this.callerLoop
        ? step.calls.slice(0, 1).map(callerTrigger)
        : step.calls.map((c) => `CALL_TOOL ${c.name} ${JSON.stringify(c.args)}`);
      const text = [step.text, ...lines].join('\n');
      this.messages.push({ role: 'user', content: text });
      return Buffer.byteLength(text);
    }
    // The caller's loop makes one call a turn: its one result holds what the script's calls return.
    if (this.callerLoop) step = { kind: 'results', outputs: [step.outputs.join('\n\n')] };
    if (step.outputs.length !== this.#pending.length) {
      throw new Error(`the script has ${step.outputs.length} tool results, cursor's last reply made ${this.#pending.length} calls`);
    }
    let bytes = 0;
    step.outputs.forEach((output, i) => {
      this.messages.push({ role: 'tool', tool_call_id: this.#pending[i]!.id, content: output });
      bytes += Buffer.byteLength(output);
    });
    this.#pending = [];
    return bytes;
  }

  /** Appends cursor's reply as OpenCode would: its text, and its tool calls under the stream's call IDs. */
  applyReply(reply: Reply): void {
    const message: Record<string, unknown> = { role: 'assistant', content: reply.text };
    if (reply.calls.length > 0) {
      message.tool_calls = reply.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    }
    this.messages.push(message);
    this.#pending = reply.calls;
  }
}
