// Runs the stand-in OpenCode caller (test/fixtures/opencode-caller) as `opencode run` would be
// run: one real process per call, its agent named by CURSOR_AGENT_EXECUTABLE; reads back what
// it recorded of every agent run.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { AgentRun } from '../fixtures/opencode-caller/agent.js';
import { ROOT, type RunResult } from './cli.js';
import { readJsonLines } from './json-lines.js';

export const CALLER = join(ROOT, 'test', 'fixtures', 'opencode-caller', 'main.ts');
// The caller is TypeScript run by tsx, found from here whatever the cwd.
const TSX = import.meta.resolve('tsx');

export interface CallerSetup {
  state: string;
  workspace: string;
  record: string;
  env: NodeJS.ProcessEnv;
}

/** One caller process running `messages` as successive user turns. */
export function runCaller(setup: CallerSetup, messages: string[], extra: string[] = []): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const args = [
      '--import',
      TSX,
      CALLER,
      '--state',
      setup.state,
      '--workspace',
      setup.workspace,
      '--record',
      setup.record,
      ...extra,
      '--',
      ...messages,
    ];
    const child = spawn(process.execPath, args, { env: setup.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** One caller process per message, as a script of `opencode run` calls: the plugin's cache is lost in between. */
export async function runCallerPerTurn(setup: CallerSetup, messages: string[], extra: string[] = []): Promise<RunResult[]> {
  const results: RunResult[] = [];
  for (const message of messages) results.push(await runCaller(setup, [message], extra));
  return results;
}

export const readRuns = (file: string): AgentRun[] => readJsonLines<AgentRun>(file);

export const stdinOf = (run: AgentRun): string => Buffer.from(run.stdinBase64, 'base64').toString('utf8');
export const stdoutOf = (run: AgentRun): string => Buffer.from(run.stdoutBase64, 'base64').toString('utf8');
export const chatRuns = (runs: readonly AgentRun[]): AgentRun[] => runs.filter((r) => r.kind === 'chat');
