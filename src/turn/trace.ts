// --trace FILE: one JSON line per run, appended (README: "Using it from CI").
import { appendFileSync } from 'node:fs';
import { isSafeChatId } from '../resume/chat-id.js';
import type { Plan } from './plan.js';
import { monotonicMs } from '../monotonic.js';

export interface TraceEnd {
  exit: number;
  failure: string | null;
  retried: boolean;
  started: number;
  chatId?: unknown;
}

export function writeTrace(file: string, plan: Plan, end: TraceEnd): void {
  if (file === '') return;
  const line = {
    time: new Date().toISOString(),
    anchor: plan.anchor,
    decision: plan.decision,
    reason: plan.reason,
    chatId: isSafeChatId(end.chatId) ? end.chatId : plan.chatId,
    promptBytes: plan.promptBytes,
    fullPromptBytes: plan.fullPromptBytes(),
    exit: end.exit,
    failure: end.failure,
    retried: end.retried,
    durationMs: Math.round(monotonicMs() - end.started),
  };
  try {
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  } catch (error) {
    process.stderr.write(`cursor-resume: cannot append to the trace file ${file}: ${(error as Error).message}\n`);
  }
}
