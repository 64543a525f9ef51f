// Benchmark 1: prompt bytes over a 50-turn coding conversation, through the built
// cursor-resume and the stand-in cursor-agent. The stand-in's log is the ground
// truth: it records every prompt byte it read on stdin.
import { join } from 'node:path';
import { readJsonLines } from '../test/support/json-lines.js';
import { Conversation, FACTS, STREAM_ARGS, codingScript, replyOf } from './lib/conversation.js';
import type { BenchOutcome } from './lib/report.js';
import { formatBytes, round } from './lib/stats.js';
import { Sandbox, expectOk, runCli, type Snapshot } from './lib/world.js';

interface Invocation {
  promptBytes: number;
  resumed: boolean;
}

interface TraceLine {
  decision: string;
  reason: string;
  promptBytes: number;
  fullPromptBytes: number;
}

interface ConversationRun {
  /** Bytes cursor-agent read on stdin, per turn. */
  sent: number[];
  /** The caller's new messages' payload bytes, per turn (turn 1: the whole first prompt instead). */
  lowerBound: number[];
  decisions: Array<{ turn: number; decision: string; reason: string; resumedByAgent: boolean; verbose: string }>;
  lastReply: string;
}

async function converse(snapshot: Snapshot, resume: boolean, turns: number): Promise<ConversationRun> {
  const sandbox = new Sandbox(snapshot, `bytes-${resume ? 'on' : 'off'}`, { CURSOR_ACP_SESSION_RESUME: resume ? '1' : '0' });
  const log = join(sandbox.dir, 'agent.jsonl');
  const trace = join(sandbox.dir, 'trace.jsonl');
  const env = { ...sandbox.env, CURSOR_STAND_IN_LOG: log, CURSOR_RESUME_TRACE: trace };
  // The caller's own tool loop, as OpenCode's plugin runs it (benchmark 6 runs the plugin's prompts).
  const conversation = new Conversation(sandbox.workspace, 'gpt-5', true);
  const payload: number[] = [];
  const verbose: string[] = [];
  let lastReply = '';
  try {
    for (const step of codingScript(turns)) {
      payload.push(conversation.add(step));
      // A turn that asks for a tool ends at its call: the caller stops the run there and sends the result next.
      const atCall = step.kind === 'user' && step.calls.length > 0;
      const run = await runCli(snapshot, ['--verbose', ...STREAM_ARGS], {
        input: conversation.body(),
        env,
        ...(atCall ? { stopAt: /"type":"tool_call","subtype":"started"/ } : {}),
      });
      const result = atCall && (run.code === 143 || run.signal === 'SIGTERM') ? run : expectOk('cursor-resume', run);
      verbose.push(result.stderr.trim());
      const reply = replyOf(result.stdout, atCall);
      conversation.applyReply(reply);
      if (!atCall) lastReply = reply.text;
    }
  } finally {
    await sandbox.stopHelper();
  }
  const invocations = readJsonLines<Invocation & { event: string }>(log).filter((e) => e.event === 'invoke');
  const traces = readJsonLines<TraceLine>(trace);
  if (invocations.length !== turns || traces.length !== turns) {
    throw new Error(`expected ${turns} turns, the stand-in saw ${invocations.length} and the trace has ${traces.length} (a retried turn?)`);
  }
  const sent = invocations.map((i) => i.promptBytes);
  return {
    sent,
    // The lower bound: turn 1 exactly as sent (the whole conversation so far), then only what each turn adds.
    lowerBound: [sent[0]!, ...payload.slice(1)],
    decisions: traces.map((t, i) => ({
      turn: i + 1,
      decision: t.decision,
      reason: t.reason,
      resumedByAgent: invocations[i]!.resumed,
      verbose: verbose[i]!,
    })),
    lastReply,
  };
}

const sum = (values: ReadonlyArray<number>): number => values.reduce((a, b) => a + b, 0);

export async function promptBytesBench(snapshot: Snapshot, turns = 50): Promise<BenchOutcome> {
  const withResume = await converse(snapshot, true, turns);
  const without = await converse(snapshot, false, turns);
  const sentWith = sum(withResume.sent);
  const sentWithout = sum(without.sent);
  const lower = sum(withResume.lowerBound);
  const ratio = sentWith / lower;
  const notes: string[] = [];
  const notResumed = withResume.decisions.slice(1).filter((d) => d.decision !== 'resume-delta' || !d.resumedByAgent);
  for (const d of notResumed) notes.push(`turn ${d.turn} did not resume: ${d.decision} (${d.reason}); --verbose said: ${d.verbose}`);
  // The stand-in answers from the whole chat history: a resumed chat that lost turn 1 would not know its facts.
  const factsKept = FACTS.every((f) => withResume.lastReply.includes(f.replace(/^remember:\s*/, '')));
  if (!factsKept) notes.push(`the last reply does not know turn 1's facts: ${withResume.lastReply}`);
  const resumedTurns = turns - 1 - notResumed.length;
  return {
    id: 'prompt-bytes',
    title: '1. prompt bytes (50 turns)',
    rows: [
      { metric: 'sent with resume', value: `${sentWith} B (${formatBytes(sentWith)})` },
      { metric: 'sent without resume', value: `${sentWithout} B (${formatBytes(sentWithout)})` },
      { metric: 'lower bound', value: `${lower} B (${formatBytes(lower)})` },
      { metric: 'with resume / lower bound', value: `${round(ratio, 3)}x`, goal: '<= 1.10x', met: ratio <= 1.1 },
      {
        metric: 'saved against no resume',
        value: `${round((1 - sentWith / sentWithout) * 100, 1)}% (${round(sentWithout / sentWith, 1)}x fewer bytes)`,
      },
      {
        metric: 'turns resumed',
        value: `${resumedTurns} of ${turns - 1}; turn 1 knew ${factsKept ? 'all' : 'NOT all'} facts at turn ${turns}`,
        goal: `${turns - 1} of ${turns - 1}`,
        met: resumedTurns === turns - 1 && factsKept,
      },
    ],
    data: {
      turns,
      sentWithResume: sentWith,
      sentWithoutResume: sentWithout,
      lowerBound: lower,
      ratioToLowerBound: ratio,
      perTurn: withResume.sent.map((bytes, i) => ({
        turn: i + 1,
        withResume: bytes,
        withoutResume: without.sent[i],
        lowerBound: withResume.lowerBound[i],
        decision: withResume.decisions[i]!.decision,
        reason: withResume.decisions[i]!.reason,
      })),
    },
    notes,
  };
}
