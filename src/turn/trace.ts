// --trace FILE: one JSON line per run, appended (README: "Using it from CI").
import { closeSync, constants, openSync, writeSync } from 'node:fs';
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
    // Non-blocking: a FIFO nobody reads is refused (ENXIO) rather than holding the run's exit forever.
    const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK, 0o666);
    try {
      writeSync(fd, `${JSON.stringify(line)}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    process.stderr.write(`cursor-resume: cannot append to the trace file ${file}: ${(error as Error).message}\n`);
  }
}
