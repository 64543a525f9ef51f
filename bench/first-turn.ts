// Benchmark 8: the first turn of a new conversation (fresh: the cache has no entry
// for it) through cursor-resume with no helper running (the run starts one) against
// the same turn with a warm helper, alternating, as wall time to exit, to the first
// stdout byte, and from the last one to exit (the end of the turn, where a cold one
// hands its record over); then the helper's own start, from spawn to its socket accepting.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { connectHelper, helperCommand, stopHelper } from '../src/helper/launcher.js';
import { ensureRuntimeDir, runtimePaths } from '../src/helper/paths.js';
import { Conversation, STREAM_ARGS, replyOf } from './lib/conversation.js';
import { userText } from './lib/content.js';
import type { BenchOutcome } from './lib/report.js';
import { median, msSince, round, summarize } from './lib/stats.js';
import { Sandbox, expectOk, runCli, runProcess, type Snapshot } from './lib/world.js';

interface Turn {
  /** Spawn to exit, as the caller sees it. */
  ms: number;
  /** Spawn to the first byte on stdout. */
  firstByteMs: number;
  /** The last byte on stdout to exit: the end of the turn, where a cold one hands its record over. */
  tailMs: number;
}

interface Pair {
  cold: Turn;
  warm: Turn;
}

interface HelperStart {
  /** Spawn to the first connection its socket accepts. */
  ms: number;
  /** CPU time of all its threads by then. */
  cpuMs: number;
}

/** Lets what the last run left (a helper exiting, a record landing) finish before the next timing. */
const SETTLE_MS = 30;

export async function firstTurnBench(snapshot: Snapshot, options: { quick: boolean }): Promise<BenchOutcome> {
  const pairs = options.quick ? 4 : 30;
  const starts = options.quick ? 4 : 20;
  const sandbox = new Sandbox(snapshot, 'first-turn', { CURSOR_ACP_SESSION_RESUME: '1' });
  const { env } = sandbox;
  const notes: string[] = [];
  let seed = 9000;

  /** A new conversation's first turn; for a cold one, also checks that its record landed (the next turn resumes). */
  async function firstTurn(kind: 'cold' | 'warm'): Promise<Turn> {
    const conversation = new Conversation(sandbox.workspace);
    conversation.add({ kind: 'user', text: userText(seed++, 600), calls: [] });
    let firstByte: bigint | undefined;
    let lastByte: bigint | undefined;
    const started = process.hrtime.bigint();
    const result = expectOk(
      `first turn (${kind})`,
      await runCli(snapshot, STREAM_ARGS, {
        input: conversation.body(),
        env,
        onStdout: (_, at) => {
          firstByte ??= at;
          lastByte = at;
        },
      }),
    );
    const sinceStart = (at: bigint | undefined): number => (at === undefined ? Number.NaN : Number(at - started) / 1e6);
    const turn = { ms: result.ms, firstByteMs: sinceStart(firstByte), tailMs: result.ms - sinceStart(lastByte) };
    conversation.applyReply(replyOf(result.stdout));
    conversation.add({ kind: 'user', text: userText(seed++, 100), calls: [] });
    const dry = expectOk(
      'cursor-resume --dry-run',
      await runCli(snapshot, ['--dry-run', ...STREAM_ARGS], { input: conversation.body(), env }),
    );
    const decision = (JSON.parse(dry.stdout) as { decision: string }).decision;
    if (decision !== 'resume-delta') notes.push(`the turn after a ${kind} first turn was planned as ${decision}, not resume-delta`);
    return turn;
  }

  async function cold(): Promise<Turn> {
    await stopAndReap(env);
    await sleep(SETTLE_MS);
    return firstTurn('cold');
  }

  async function warm(): Promise<Turn> {
    const up = await connectHelper({ start: true, env });
    if (!up.ok) throw new Error(`no warm helper: ${up.reason}`);
    up.client.close();
    await sleep(SETTLE_MS);
    return firstTurn('warm');
  }

  const measured: Pair[] = [];
  const helperStarts: HelperStart[] = [];
  const bare: number[] = [];
  try {
    await warm(); // warm-up: the page cache, the helper's first start
    for (let i = 0; i < pairs; i++) {
      bare.push(expectOk('node -e', await runProcess(process.execPath, ['-e', ''], { env })).ms);
      // Alternating which goes first, so a drift in the machine's speed falls on both.
      if (i % 2 === 0) {
        const c = await cold();
        measured.push({ cold: c, warm: await warm() });
      } else {
        const w = await warm();
        measured.push({ warm: w, cold: await cold() });
      }
    }
    for (let i = 0; i < starts; i++) {
      await stopAndReap(env);
      await sleep(SETTLE_MS);
      helperStarts.push(await startHelper(snapshot, env));
    }
  } finally {
    await sandbox.stopHelper();
  }

  const coldMs = measured.map((p) => p.cold.ms);
  const warmMs = measured.map((p) => p.warm.ms);
  const extra = measured.map((p) => p.cold.ms - p.warm.ms);
  const extraFirstByte = measured.map((p) => p.cold.firstByteMs - p.warm.firstByteMs);
  const extraTail = measured.map((p) => p.cold.tailMs - p.warm.tailMs);
  const extraMedian = median(extra);
  return {
    id: 'first-turn',
    title: '8. first turn, no helper',
    rows: [
      { metric: `bare node -e '' (median of ${bare.length})`, value: `${round(median(bare))} ms` },
      {
        metric: `new conversation, warm helper: exit / first byte (median of ${warmMs.length})`,
        value: `${round(median(warmMs))} / ${round(median(measured.map((p) => p.warm.firstByteMs)))} ms`,
      },
      {
        metric: `new conversation, no helper running: exit / first byte (median of ${coldMs.length})`,
        value: `${round(median(coldMs))} / ${round(median(measured.map((p) => p.cold.firstByteMs)))} ms`,
      },
      {
        metric: 'no helper − warm helper, exit (median of pairs)',
        value: `${round(extraMedian)} ms`,
        goal: '<= 5 ms',
        met: extraMedian <= 5,
      },
      { metric: 'no helper − warm helper, first byte (median of pairs)', value: `${round(median(extraFirstByte))} ms` },
      {
        metric: 'last stdout byte to exit: no helper / warm helper (medians), and their difference (median of pairs)',
        value: `${round(median(measured.map((p) => p.cold.tailMs)))} / ${round(median(measured.map((p) => p.warm.tailMs)))} ms; ${round(median(extraTail))} ms`,
      },
      {
        metric: `helper start, spawn to socket accepting (median of ${helperStarts.length})`,
        value: `${round(median(helperStarts.map((s) => s.ms)))} ms, ${round(median(helperStarts.map((s) => s.cpuMs)))} ms of CPU`,
      },
    ],
    data: {
      pairs: measured,
      extra: summarize(extra),
      extraFirstByte: summarize(extraFirstByte),
      extraTail: summarize(extraTail),
      helperStarts,
      bare: summarize(bare),
    },
    notes,
  };
}

/** Stops the helper and waits for its process to be gone: its exit must not take CPU from the turn timed next. */
async function stopAndReap(env: NodeJS.ProcessEnv): Promise<void> {
  const stopped = await stopHelper({ env });
  if (!stopped.ok) throw new Error(`could not stop the helper: ${stopped.reason}`);
  if (!stopped.stopped) return;
  const deadline = performance.now() + 5000;
  while (existsSync(`/proc/${stopped.pid}`)) {
    if (performance.now() > deadline) throw new Error(`the helper (pid ${stopped.pid}) did not exit within 5 s of stopping`);
    await sleep(1);
  }
}

/** Starts a helper as the launcher does and times it until its socket accepts a connection. */
async function startHelper(snapshot: Snapshot, env: NodeJS.ProcessEnv): Promise<HelperStart> {
  const paths = runtimePaths(env);
  ensureRuntimeDir(paths);
  const command = helperCommand(snapshot.helperServer, env, paths);
  const started = process.hrtime.bigint();
  const child = spawn(command.file, command.args, command.options);
  child.unref();
  const deadline = performance.now() + 5000;
  while (!(await accepts(paths.socket))) {
    if (performance.now() > deadline) throw new Error(`the helper did not accept a connection within 5 s at ${paths.socket}`);
    await sleep(1);
  }
  const ms = msSince(started);
  return { ms, cpuMs: cpuMsOf(child.pid!) };
}

function accepts(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(socket);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** A process's CPU time so far, all threads, in ms (Linux's schedstat counts nanoseconds, not clock ticks). */
function cpuMsOf(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`))
    ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
  return ns / 1e6;
}
