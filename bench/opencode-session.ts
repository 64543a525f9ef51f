// Benchmark 6, issue 11's "done when": an 11-turn OpenCode-like session with 5 tool calls (two
// in a row inside one user turn, one a write through the plugin's bridge), one caller process per turn as `opencode run` scripts do,
// driven by the stand-in OpenCode caller (test/fixtures/opencode-caller) against a given agent:
// cursor-resume in front of the stand-in cursor-agent, with the plugin's own resume off and on.
// The stand-in's logs are the ground truth of what the agent received and printed.
//
//   node --import tsx bench/opencode-session.ts [--bare | --agent PATH] [--plugin-resume] [--env KEY=VALUE]...
//
// Alone it runs one setup and prints every agent run: by default cursor-resume (as built in
// dist/) in front of the stand-in; --bare: the stand-in itself; --agent: any executable.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AgentRun } from '../test/fixtures/opencode-caller/agent.js';
import { printedBy, readJsonLines } from '../test/support/json-lines.js';
import { readRuns, runCallerPerTurn, stdoutOf } from '../test/support/opencode-caller.js';
import type { BenchOutcome, Row } from './lib/report.js';
import { formatBytes, round } from './lib/stats.js';
import { Sandbox, makeSnapshot, stopAllHelpers, type Snapshot } from './lib/world.js';

/**
 * Eleven user turns; turn 2's notes lead to a second call (two in a row), turns 4 and 7 make
 * one each, and turn 9 writes a file through the plugin's bridge (a JSON envelope it makes a call of).
 */
export const SESSION = [
  'remember: codeword ALPHA',
  'READ_NOTES: please read notes.txt and tell me its codeword.',
  'remember: codeword BRAVO',
  'RUN_SHELL: npm test',
  'remember: the build uses esbuild',
  'Which codewords do you know?',
  'RUN_SHELL: git status',
  'remember: ship on Friday',
  'BRIDGE_WRITE: PLAN.md',
  'What did the tests say?',
  'Summarise what you know.',
];
const NOTES = 'Notes of the project.\nremember: codeword CHARLIE\nRUN_SHELL: make check\n';
const FACTS = ['codeword ALPHA', 'codeword CHARLIE', 'codeword BRAVO', 'the build uses esbuild', 'ship on Friday'];
const TOOL_CALLS = 5;

export interface Setup {
  name: string;
  /** CURSOR_AGENT_EXECUTABLE: what the caller runs. */
  agent: string;
  /** Added to the sandbox's environment (which names the stand-in in CURSOR_RESUME_AGENT). */
  env: NodeJS.ProcessEnv;
  /** cursor-resume is the agent: its trace is read. */
  wrapped: boolean;
}

interface Invocation {
  event: string;
  pid: number;
  argv: string[];
  stdinBase64: string | null;
  promptBytes: number | null;
  resumed: boolean;
}

interface TraceLine {
  decision: string;
  reason: string;
}

/** One agent run the caller made, with what the stand-in saw of it. */
export interface RunFigure {
  turn: number;
  kind: string;
  callerPassedResume: boolean;
  callerBytes: number;
  /** Bytes the stand-in read on stdin (null: no stand-in run matched). */
  agentBytes: number | null;
  agentResumed: boolean | null;
  decision: string | null;
  reason: string | null;
  fullPromptBytes: number | null;
  pluginDeltaBytes: number | null;
  killedAfterToolCall: boolean;
  /** The caller got exactly the bytes the stand-in printed. */
  stdoutIdentical: boolean;
  argvUntouched: boolean;
  stdinUntouched: boolean;
}

export interface SessionResult {
  setup: string;
  runs: RunFigure[];
  lastReply: string;
  /** Stand-in runs no caller run matched (retries, or output that changed on the way). */
  unmatched: number;
  notes: string[];
}

export async function runSession(snapshot: Snapshot, setup: Setup): Promise<SessionResult> {
  const sandbox = new Sandbox(snapshot, `opencode-${setup.name}`);
  const files = {
    log: join(sandbox.dir, 'agent.jsonl'),
    stdout: join(sandbox.dir, 'agent-stdout.jsonl'),
    trace: join(sandbox.dir, 'trace.jsonl'),
  };
  writeFileSync(join(sandbox.workspace, 'notes.txt'), NOTES);
  const env: NodeJS.ProcessEnv = {
    ...sandbox.env,
    CURSOR_AGENT_EXECUTABLE: setup.agent,
    CURSOR_STAND_IN_LOG: files.log,
    CURSOR_STAND_IN_STDOUT_LOG: files.stdout,
    CURSOR_RESUME_TRACE: files.trace,
    ...setup.env,
  };
  const caller = { state: join(sandbox.dir, 'session.json'), workspace: sandbox.workspace, record: join(sandbox.dir, 'runs.jsonl'), env };
  const notes: string[] = [];
  try {
    for (const [i, r] of (await runCallerPerTurn(caller, SESSION)).entries()) {
      if (r.code !== 0)
        throw new Error(`${setup.name}: the caller failed at turn ${i + 1} (exit ${r.code ?? r.signal}): ${r.stderr.trim()}`);
    }
  } finally {
    if (setup.wrapped) await sandbox.stopHelper();
  }

  const callerRuns = readRuns(caller.record).filter((r) => r.kind !== 'version');
  const invocations = readJsonLines<Invocation>(files.log).filter((e) => e.event === 'invoke' && e.stdinBase64 !== null);
  const printed = printedBy(files.stdout);
  const traces = setup.wrapped ? readJsonLines<TraceLine>(files.trace) : [];
  if (setup.wrapped && traces.length !== callerRuns.length)
    notes.push(`${setup.name}: ${traces.length} trace lines for ${callerRuns.length} runs: decisions not matched to runs`);
  const traceOf = (i: number): TraceLine | undefined => (traces.length === callerRuns.length ? traces[i] : undefined);

  // Stand-in runs in order; a caller run is the next one whose output is the caller's (earlier ones: retries).
  let next = 0;
  let unmatched = 0;
  const runs = callerRuns.map((run: AgentRun, i): RunFigure => {
    const got = Buffer.from(run.stdoutBase64, 'base64');
    let match: Invocation | undefined;
    for (let j = next; j < invocations.length; j++) {
      if (printed.get(invocations[j]!.pid)?.equals(got)) {
        match = invocations[j];
        unmatched += j - next;
        next = j + 1;
        break;
      }
    }
    if (!match) notes.push(`${setup.name}: turn ${run.turn} ${run.kind}: no stand-in run printed what the caller got (${got.length} B)`);
    const trace = traceOf(i);
    return {
      turn: run.turn,
      kind: run.kind,
      callerPassedResume: run.passedResume,
      callerBytes: run.stdinBytes,
      agentBytes: match?.promptBytes ?? null,
      agentResumed: match?.resumed ?? null,
      decision: trace?.decision ?? null,
      reason: trace?.reason ?? null,
      fullPromptBytes: run.fullPromptBytes,
      pluginDeltaBytes: run.pluginDeltaBytes,
      killedAfterToolCall: run.killedAfterToolCall,
      stdoutIdentical: match !== undefined,
      argvUntouched: match !== undefined && JSON.stringify(match.argv) === JSON.stringify(run.argv),
      stdinUntouched: match !== undefined && match.stdinBase64 === run.stdinBase64,
    };
  });
  unmatched += invocations.length - next;
  const last = callerRuns.at(-1);
  const lastLine = last ? stdoutOf(last).trim().split('\n').at(-1) : undefined;
  return {
    setup: setup.name,
    runs,
    lastReply: lastLine ? String((JSON.parse(lastLine) as { result?: unknown }).result) : '',
    unmatched,
    notes,
  };
}

const sum = (values: ReadonlyArray<number>): number => values.reduce((a, b) => a + b, 0);

/** One line per agent run, for a reader. */
export function runTable(result: SessionResult): string {
  const head = 'turn kind  caller-B  agent-B  --resume(caller/agent)  decision (reason)  full-B  plugin-delta-B  killed  stdout';
  const lines = result.runs.map((r) =>
    [
      String(r.turn).padStart(4),
      r.kind.padEnd(5),
      String(r.callerBytes).padStart(8),
      String(r.agentBytes ?? '-').padStart(8),
      `${r.callerPassedResume ? 'yes' : 'no'}/${r.agentResumed === null ? '-' : r.agentResumed ? 'yes' : 'no'}`.padEnd(22),
      `${r.decision ?? '-'} (${r.reason ?? '-'})`.padEnd(18),
      String(r.fullPromptBytes ?? '-').padStart(7),
      String(r.pluginDeltaBytes ?? '-').padStart(15),
      (r.killedAfterToolCall ? 'SIGTERM' : '').padEnd(7),
      r.stdoutIdentical ? 'identical' : 'DIFFERENT',
    ].join(' '),
  );
  return [`${result.setup}:`, head, ...lines].join('\n');
}

/** The rows of issue 11's figures for cursor-resume with the plugin's resume off. */
function ownResumeRows(result: SessionResult): Row[] {
  const chats = result.runs.filter((r) => r.kind === 'chat');
  // Every chat request after the conversation's first (every later turn and every tool result) should resume.
  const later = chats.slice(1);
  const resumed = later.filter((r) => r.decision === 'resume-delta' && r.agentResumed === true).length;
  const sent = sum(later.map((r) => r.agentBytes ?? r.callerBytes));
  const full = sum(later.map((r) => r.fullPromptBytes ?? 0));
  const pluginDelta = sum(later.map((r) => r.pluginDeltaBytes ?? 0));
  const identical = result.runs.filter((r) => r.stdoutIdentical).length;
  const killed = result.runs.filter((r) => r.killedAfterToolCall);
  const factsKept = FACTS.every((f) => result.lastReply.includes(f));
  // The whole session, title and first turn included: what the plugin itself would send is its full prompts until a chat exists, then its deltas.
  const wholeSent = sum(result.runs.map((r) => r.agentBytes ?? r.callerBytes));
  const wholeFull = sum(result.runs.map((r) => r.fullPromptBytes ?? 0));
  const wholePlugin = sum(result.runs.map((r) => r.pluginDeltaBytes ?? r.fullPromptBytes ?? 0));
  return [
    { metric: 'agent runs (title + chat; killed after a tool call)', value: `${result.runs.length} (${killed.length} killed)` },
    {
      metric: "whole session: sent / full prompts / the plugin's own",
      value: `${formatBytes(wholeSent)} / ${formatBytes(wholeFull)} / ${formatBytes(wholePlugin)}`,
    },
    {
      metric: 'requests after the first that resumed (resume-delta)',
      value: `${resumed} of ${later.length}`,
      goal: `${later.length} of ${later.length}`,
      met: resumed === later.length,
    },
    {
      metric: 'bytes sent for them / full prompts',
      value: `${formatBytes(sent)} / ${formatBytes(full)} = ${round((sent / full) * 100, 1)}%`,
      goal: '< 5%',
      met: sent / full < 0.05,
    },
    {
      metric: "bytes sent / the plugin's own delta",
      value: `${formatBytes(sent)} / ${formatBytes(pluginDelta)} = ${round(sent / pluginDelta, 2)}x`,
      goal: '<= 1.10x',
      met: sent / pluginDelta <= 1.1,
    },
    {
      metric: 'stdout byte for byte (killed runs included)',
      value: `${identical} of ${result.runs.length} (${killed.filter((r) => r.stdoutIdentical).length} of ${killed.length} killed)`,
      goal: 'all',
      met: identical === result.runs.length,
    },
    { metric: 'last reply knows every fact', value: factsKept ? 'yes' : `no: ${result.lastReply}`, goal: 'yes', met: factsKept },
  ];
}

/** The rows for cursor-resume with the plugin's own resume on: hands off. */
function callerResumeRows(result: SessionResult): Row[] {
  const resumedByCaller = result.runs.filter((r) => r.callerPassedResume);
  const untouched = resumedByCaller.filter((r) => r.argvUntouched && r.stdinUntouched).length;
  const callerReason = resumedByCaller.filter((r) => r.reason === 'caller-resume').length;
  const identical = result.runs.filter((r) => r.stdoutIdentical).length;
  return [
    {
      metric: 'runs the plugin resumed itself',
      value: `${resumedByCaller.length} of ${result.runs.filter((r) => r.kind === 'chat').length} chat runs`,
    },
    {
      metric: '  their argv and stdin reached the agent untouched',
      value: `${untouched} of ${resumedByCaller.length}`,
      goal: 'all',
      met: untouched === resumedByCaller.length,
    },
    {
      metric: '  reason caller-resume',
      value: `${callerReason} of ${resumedByCaller.length}`,
      goal: 'all',
      met: callerReason === resumedByCaller.length,
    },
    {
      metric: '  stdout byte for byte',
      value: `${identical} of ${result.runs.length}`,
      goal: 'all',
      met: identical === result.runs.length,
    },
  ];
}

/** cursor-resume in front of the stand-in, as the issue asks (CURSOR_RESUME_ENABLED: its own switch). */
function wrappedSetup(snapshot: Snapshot, name: string, pluginResume: boolean): Setup {
  return {
    name,
    agent: snapshot.bin,
    wrapped: true,
    env: { CURSOR_RESUME_ENABLED: '1', CURSOR_ACP_SESSION_RESUME: pluginResume ? '1' : '0' },
  };
}

export async function opencodeSessionBench(snapshot: Snapshot): Promise<BenchOutcome> {
  const own = await runSession(snapshot, wrappedSetup(snapshot, 'plugin-resume-off', false));
  const caller = await runSession(snapshot, wrappedSetup(snapshot, 'plugin-resume-on', true));
  const callCount = own.runs.filter((r) => r.killedAfterToolCall).length;
  const notes = [...own.notes, ...caller.notes];
  if (callCount !== TOOL_CALLS) notes.push(`expected ${TOOL_CALLS} tool calls, the session made ${callCount}`);
  for (const r of [own, caller]) {
    if (r.unmatched > 0) notes.push(`${r.setup}: ${r.unmatched} stand-in run(s) the caller never saw the output of (retries?)`);
  }
  process.stderr.write(`${runTable(own)}\n\n${runTable(caller)}\n`);
  return {
    id: 'opencode-session',
    title: '6. OpenCode session (11 turns, 5 tool calls)',
    rows: [...ownResumeRows(own), ...callerResumeRows(caller)],
    data: { session: SESSION, pluginResumeOff: own, pluginResumeOn: caller },
    notes,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      agent: { type: 'string' },
      bare: { type: 'boolean', default: false },
      'plugin-resume': { type: 'boolean', default: false },
      env: { type: 'string', multiple: true, default: [] },
    },
  });
  const extra: NodeJS.ProcessEnv = {};
  for (const pair of values.env) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new Error(`--env takes KEY=VALUE, not ${pair}`);
    extra[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const snapshot = await makeSnapshot();
  try {
    const base = wrappedSetup(snapshot, values['plugin-resume'] ? 'plugin-resume-on' : 'plugin-resume-off', values['plugin-resume']);
    const agent = values.bare ? snapshot.standIn : (values.agent ?? snapshot.bin);
    const result = await runSession(snapshot, { ...base, agent, wrapped: agent === snapshot.bin, env: { ...base.env, ...extra } });
    process.stdout.write(`${runTable(result)}\n`);
    for (const note of result.notes) process.stdout.write(`note: ${note}\n`);
  } finally {
    await stopAllHelpers();
    rmSync(snapshot.dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
