// A conversation driven turn by turn through the built cursor-resume and the stand-in,
// the way OpenCode drives cursor-agent: the whole transcript on stdin every turn,
// cursor's reply appended to it before the next user message.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, sandboxEnv, tempDir, type RunResult } from './cli.js';
import { readJsonLines } from './json-lines.js';

export interface LogEntry {
  event: 'invoke' | 'signal';
  pid: number;
  argv: string[];
  stdin: string;
  /** The bytes cursor-agent read, exactly, base64. */
  stdinBase64: string | null;
  prompt: string;
  chatId: string | null;
  resumed: boolean;
  signal?: string;
}

export const STREAM_ARGS = ['--print', '--output-format', 'stream-json', '--stream-partial-output', '--force'];

export const readLog = (file: string): LogEntry[] => readJsonLines<LogEntry>(file);

export function resultOf(stdout: string): { result: string; session_id: string } {
  const events = stdout.split('\n').flatMap((l) => {
    try {
      return [JSON.parse(l) as { type?: unknown; result: string; session_id: string }];
    } catch {
      return []; // the stand-in can be told to print malformed lines
    }
  });
  const line = events.findLast((e) => e.type === 'result');
  if (!line) throw new Error(`no result event in:\n${stdout}`);
  return line;
}

/** The stand-in's mode for this run, the arguments (STREAM_ARGS by default), the working directory (the repository's by default). */
export interface SendOptions {
  mode?: string;
  args?: string[];
  cwd?: string;
}

export class Conversation {
  readonly workspace = tempDir('cr-ws-');
  readonly log = join(tempDir('cr-log-'), 'agent.jsonl');
  readonly trace = join(tempDir('cr-trace-'), 'trace.jsonl');
  messages: Array<Record<string, unknown>> = [{ role: 'system', content: 'You are a careful coding agent.' }];
  tools: unknown[] = [
    {
      type: 'function',
      function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
    },
  ];
  readonly env: NodeJS.ProcessEnv;

  constructor(
    env: NodeJS.ProcessEnv = sandboxEnv({ CURSOR_ACP_SESSION_RESUME: '1' }),
    readonly extra: Record<string, unknown> = {},
  ) {
    this.env = { ...env, CURSOR_STAND_IN_LOG: this.log, CURSOR_RESUME_TRACE: this.trace };
  }

  body(): string {
    return JSON.stringify({ model: 'gpt-5', workspace: this.workspace, messages: this.messages, tools: this.tools, ...this.extra });
  }

  /** Sends the transcript with a new user message; on success cursor's reply joins the transcript. */
  async turn(text: string, options: SendOptions = {}): Promise<RunResult & { reply?: string }> {
    this.messages.push({ role: 'user', content: text });
    return this.send(options);
  }

  async send(options: SendOptions = {}): Promise<RunResult & { reply?: string }> {
    const env = { ...this.env, ...(options.mode ? { CURSOR_STAND_IN_MODE: options.mode } : {}) };
    const r = await runCli(options.args ?? STREAM_ARGS, { input: this.body(), env, cwd: options.cwd });
    if (r.code !== 0) return r;
    const reply = resultOf(r.stdout).result;
    this.messages.push({ role: 'assistant', content: reply });
    return { ...r, reply };
  }

  invocations(): LogEntry[] {
    return readLog(this.log).filter((e) => e.event === 'invoke');
  }

  lastInvocation(): LogEntry {
    const all = this.invocations();
    return all[all.length - 1]!;
  }

  traces(): Array<Record<string, unknown>> {
    return existsSync(this.trace)
      ? readFileSync(this.trace, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
      : [];
  }

  lastTrace(): Record<string, unknown> {
    return this.traces().at(-1)!;
  }
}
