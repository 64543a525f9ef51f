// Benchmark 3: streaming latency. A tiny agent (bench/agents/stamp-agent.ts) stamps
// each stream-json line with process.hrtime.bigint() just before writing it; this
// process reads the line from cursor-resume's stdout and subtracts the stamp from its
// own hrtime at arrival (CLOCK_MONOTONIC: one clock for all processes). The same
// agent read directly, with no cursor-resume in between, is the baseline: what a
// pipe and this reader cost by themselves.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Conversation, STREAM_ARGS, replyOf } from './lib/conversation.js';
import type { BenchOutcome } from './lib/report.js';
import { percentile, round, summarize } from './lib/stats.js';
import { Sandbox, expectOk, runCli, runProcess, type ProcessResult, type RunOptions, type Snapshot } from './lib/world.js';

const STAMP = Buffer.from('{"stamp_ns":"');

/** Delays (ms) of every stamped line of one run's stdout. */
async function delaysOf(
  run: (onStdout: NonNullable<RunOptions['onStdout']>) => Promise<ProcessResult>,
): Promise<{ delays: number[]; result: ProcessResult }> {
  const delays: number[] = [];
  let carry: Buffer = Buffer.alloc(0);
  const result = await run((chunk, at) => {
    let data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let start = 0;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
      // A line arrives when its last byte does: `at` is the arrival of the chunk that completes it.
      if (data.subarray(start, start + STAMP.length).equals(STAMP)) {
        const end = data.indexOf(34, start + STAMP.length);
        const stamp = BigInt(data.subarray(start + STAMP.length, end).toString('latin1'));
        delays.push(Number(at - stamp) / 1e6);
      }
      start = nl + 1;
    }
    carry = start < data.length ? Buffer.from(data.subarray(start)) : Buffer.alloc(0);
    data = Buffer.alloc(0);
  });
  return { delays, result };
}

export async function streamingBench(snapshot: Snapshot, options: { quick: boolean }): Promise<BenchOutcome> {
  const rounds = options.quick ? 1 : 4;
  const lines = 100;
  const sandbox = new Sandbox(snapshot, 'streaming', {
    CURSOR_ACP_SESSION_RESUME: '1',
    CURSOR_RESUME_AGENT: snapshot.stampAgent,
    STAMP_LINES: String(lines),
    STAMP_GAP_MS: '10',
    STAMP_BIG_EVERY: '10',
    STAMP_BIG_BYTES: '32768',
  });
  const trace = join(sandbox.dir, 'trace.jsonl');
  const env = { ...sandbox.env, CURSOR_RESUME_TRACE: trace };
  const conversation = new Conversation(sandbox.workspace);
  const direct: number[] = [];
  const fresh: number[] = [];
  const resumed: number[] = [];
  const notes: string[] = [];
  const viaCursorResume = async (into: number[]): Promise<void> => {
    conversation.add({ kind: 'user', text: `Stream me ${lines} lines, please.`, calls: [] });
    const { delays, result } = await delaysOf((onStdout) => runCli(snapshot, STREAM_ARGS, { input: conversation.body(), env, onStdout }));
    expectOk('cursor-resume', result);
    conversation.applyReply(replyOf(result.stdout));
    if (delays.length !== lines + 2) notes.push(`a run through cursor-resume delivered ${delays.length} of ${lines + 2} stamped lines`);
    into.push(...delays);
  };
  try {
    await viaCursorResume(fresh); // the first turn is a fresh chat; it records the chat for the next
    for (let r = 0; r < rounds; r++) {
      const { delays, result } = await delaysOf((onStdout) => runProcess(snapshot.stampAgent, STREAM_ARGS, { env, onStdout }));
      expectOk('stamp agent', result);
      direct.push(...delays);
      await viaCursorResume(resumed);
    }
  } finally {
    await sandbox.stopHelper();
  }
  // The resumed runs are the ones whose output is held until the first line proves the chat: check they resumed.
  const decisions = readFileSync(trace, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { decision: string }).decision);
  const resumedRuns = decisions.filter((d) => d === 'resume-delta').length;
  if (resumedRuns !== rounds) notes.push(`expected ${rounds} resumed runs, the trace shows: ${decisions.join(', ')}`);
  const through = [...fresh, ...resumed];
  const p50 = percentile(through, 50);
  const p99 = percentile(through, 99);
  const directP50 = percentile(direct, 50);
  return {
    id: 'streaming',
    title: '3. streaming latency',
    rows: [
      {
        metric: `agent read directly, p50 / p99 (${direct.length} lines)`,
        value: `${round(directP50, 2)} / ${round(percentile(direct, 99), 2)} ms`,
      },
      {
        metric: `through cursor-resume, p50 / p99 (${through.length} lines; 1 fresh run, ${resumedRuns} resumed)`,
        value: `${round(p50, 2)} / ${round(p99, 2)} ms`,
        goal: 'p99 < 5 ms',
        met: p99 < 5,
      },
      { metric: 'added by cursor-resume at p50', value: `${round(p50 - directP50, 2)} ms` },
      { metric: 'worst line through cursor-resume', value: `${round(Math.max(...through), 2)} ms` },
    ],
    data: {
      linesPerRun: lines,
      gapMs: 10,
      bigLineBytes: 32768,
      direct: summarize(direct),
      freshTurn: summarize(fresh),
      resumedTurns: summarize(resumed),
      throughCursorResume: summarize(through),
    },
    notes,
  };
}
