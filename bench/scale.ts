// Benchmark 4: how the decision scales with the transcript: 10 to 10,000 messages
// (up to tens of MB). In-process through the real modules (a fresh process per
// measurement: cold code, its own peak RSS), plus one end-to-end --dry-run per size
// against a warm helper that knows all but the last message, so every size plans a
// real resume. The same conversations flattened as the OpenCode plugin sends them are
// measured in-process too: read back in its layout, proven, and a delta planned.
// Last, real resumed turns of a long conversation of short messages (the shape of
// issue 12's figure) through the built binary and the stand-in, against bare Node.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCallerArgs } from '../src/agent/argv.js';
import { resolveSettings } from '../src/config.js';
import { connectHelper } from '../src/helper/launcher.js';
import { analyzeTurn } from '../src/turn/plan.js';
import { messageDigests, replyDigestAt } from '../src/resume/digests.js';
import { parseTranscript } from '../src/transcript/parse.js';
import { bigLayoutPrompt, bigTranscript, shortHistory } from './lib/big-transcript.js';
import { Conversation, STREAM_ARGS, replyOf } from './lib/conversation.js';
import type { BenchOutcome, Row } from './lib/report.js';
import type { Conversation as Transcript } from '../src/transcript/types.js';
import { formatBytes, median, round } from './lib/stats.js';
import { ROOT, Sandbox, expectOk, runCli, runProcess, type Snapshot } from './lib/world.js';
import { monotonicMs } from '../src/monotonic.js';

interface WorkerResult {
  messages: number;
  bytes: number;
  readMs: number;
  parseMs: number;
  analyzeMs: number;
  decideMs: number;
  totalMs: number;
  hashWarmMs: number;
  decision: string;
  promptBytes: number;
  rssBeforeKb: number;
  peakRssKb: number;
}

interface SizeResult {
  messages: number;
  bytes: number;
  runs: WorkerResult[];
  /** Medians over the runs. */
  parseMs: number;
  analyzeMs: number;
  decideMs: number;
  totalMs: number;
  peakRssKb: number;
  rssGrowthKb: number;
  dryRun: { ms: number; peakRssKb: number; decision: string };
}

const SIZES = [10, 100, 1000, 10_000];

export async function scaleBench(snapshot: Snapshot, options: { quick: boolean }): Promise<BenchOutcome> {
  const reps = options.quick ? 1 : 3;
  const sandbox = new Sandbox(snapshot, 'scale', { CURSOR_ACP_SESSION_RESUME: '1' });
  const notes: string[] = [];
  const sizes: SizeResult[] = [];
  const connected = await connectHelper({ start: true, env: sandbox.env, serverScript: snapshot.helperServer });
  if (!connected.ok) throw new Error(`cannot start a helper: ${connected.reason}`);
  const client = connected.client;
  try {
    for (const messages of SIZES) {
      const file = join(sandbox.dir, `transcript-${messages}.json`);
      const text = bigTranscript(messages, sandbox.workspace);
      writeFileSync(file, text);
      // What the cache would know after the previous turn: every message but the new user message.
      const env = { CURSOR_ACP_SESSION_RESUME: '1' };
      const analysis = analyzeTurn(parseTranscript(text), {
        caller: parseCallerArgs(STREAM_ARGS),
        settings: resolveSettings(env, {}, {}).settings,
        env,
        workspace: sandbox.workspace,
      });
      const known = knownBefore(analysis.conversation).join('');
      const knownFile = join(sandbox.dir, `known-${messages}.txt`);
      writeFileSync(knownFile, known);
      const recorded = await client.recordTurn({
        anchor: analysis.anchor!,
        chatId: `bench-${messages}`,
        toolsFingerprint: analysis.toolsFingerprint,
        workspace: analysis.workspace,
        model: analysis.model,
        digests: analysis.digests.slice(0, -2),
        reply: analysis.replyDigestAt(analysis.digests.length - 2),
        base: null,
        savedBytes: 0,
        outcome: 'success',
        startedAt: monotonicMs(),
      });
      if (!recorded.recorded) throw new Error(`the helper did not record the ${messages}-message branch: ${recorded.message}`);

      const runs = await workerRuns(file, knownFile, reps);
      if (runs.some((r) => r.decision !== 'resume-delta')) notes.push(`${messages} messages: in-process decision was ${runs[0]!.decision}`);

      const rssFile = join(sandbox.dir, `rss-${messages}.txt`);
      const dry = expectOk(
        'cursor-resume --dry-run',
        await runProcess(process.execPath, ['--require', snapshot.rssHook, snapshot.bin, '--dry-run', ...STREAM_ARGS], {
          input: readFileSync(file),
          env: { ...sandbox.env, BENCH_RSS_FILE: rssFile },
        }),
      );
      const dryDecision = (JSON.parse(dry.stdout) as { decision: string }).decision;
      if (dryDecision !== 'resume-delta') notes.push(`${messages} messages: --dry-run decided ${dryDecision}`);
      sizes.push({
        messages,
        bytes: runs[0]!.bytes,
        runs,
        parseMs: median(runs.map((r) => r.parseMs)),
        analyzeMs: median(runs.map((r) => r.analyzeMs)),
        decideMs: median(runs.map((r) => r.decideMs)),
        totalMs: median(runs.map((r) => r.totalMs)),
        peakRssKb: median(runs.map((r) => r.peakRssKb)),
        rssGrowthKb: median(runs.map((r) => r.peakRssKb - r.rssBeforeKb)),
        dryRun: { ms: dry.ms, peakRssKb: usageOf(rssFile).peakRssKb, decision: dryDecision },
      });
    }
  } finally {
    client.close();
    await sandbox.stopHelper();
  }

  const layouts = await layoutSizes(sandbox, reps, notes);
  const resumed = await resumedTurns(snapshot, options.quick, notes);
  const at = (n: number): SizeResult => sizes.find((s) => s.messages === n)!;
  const largest = at(10_000);
  // Linear: the cost per message at 10,000 is no worse than 1.5 times the cost per message at 1,000.
  const perMessage1k = at(1000).totalMs / 1000;
  const perMessage10k = largest.totalMs / 10_000;
  const growth = perMessage10k / perMessage1k;
  const rows: Row[] = sizes.map((s) => ({
    metric: `${s.messages} msgs (${formatBytes(s.bytes)})`,
    value:
      `${round(s.totalMs)} ms (parse ${round(s.parseMs)}, hash+render ${round(s.analyzeMs)}, decide ${round(s.decideMs)}); ` +
      `+${round(s.rssGrowthKb / 1024)} MiB; e2e --dry-run ${round(s.dryRun.ms)} ms (${s.dryRun.decision}), peak RSS ${round(s.dryRun.peakRssKb / 1024)} MiB`,
    ...(s.messages === 10_000 ? { goal: '< 300 ms', met: s.totalMs < 300 } : {}),
  }));
  for (const l of layouts) {
    rows.push({
      metric: `${l.messages} msgs, plugin layout (${formatBytes(l.bytes)})`,
      value: `${round(l.totalMs)} ms (parse ${round(l.parseMs)}, hash+render ${round(l.analyzeMs)}, decide ${round(l.decideMs)})`,
      ...(l.messages === 10_000 ? { goal: '< 300 ms', met: l.totalMs < 300 } : {}),
    });
  }
  const overBare = resumed.addedMs - resumed.bareMs;
  rows.push(
    {
      metric: `resumed turn, ${RESUMED_MESSAGES.toLocaleString('en-US')} msgs of ~${RESUMED_MESSAGE_BYTES} B (${formatBytes(resumed.bytes)}): added time (median of ${resumed.turns})`,
      value:
        `${round(resumed.addedMs)} ms = bare node + ${round(overBare)} ms (bare ${round(resumed.bareMs)}, stand-in direct ${round(resumed.directMs)}, ` +
        `through cursor-resume ${round(resumed.wrappedMs)})`,
      goal: `<= bare node + 60 ms (${round(resumed.bareMs + 60)} ms)`,
      met: overBare <= 60,
    },
    {
      metric: `  its peak RSS and CPU (median of ${resumed.usage.length} more turns)`,
      value: `${round(resumed.peakRssKb / 1024)} MiB; ${round(resumed.cpuMs)} ms CPU (bare node ${round(resumed.bareCpuMs)} ms)`,
      goal: '<= 64 MiB',
      met: resumed.peakRssKb <= 64 * 1024,
    },
  );
  rows.push({
    metric: 'cost per message, 10,000 vs 1,000',
    value: `${round(perMessage10k * 1000, 1)} vs ${round(perMessage1k * 1000, 1)} µs (${round(growth, 2)}x)`,
    goal: 'linear (<= 1.5x)',
    met: growth <= 1.5,
  });
  return { id: 'scale', title: '4. scale of the decision', rows, data: { sizes, layouts, resumed }, notes };
}

type LayoutResult = Pick<SizeResult, 'messages' | 'bytes' | 'parseMs' | 'analyzeMs' | 'decideMs' | 'totalMs'>;

/** The in-process measurement of one transcript against its branch's digests, `reps` times, each in a fresh process. */
async function workerRuns(file: string, knownFile: string, reps: number): Promise<WorkerResult[]> {
  const runs: WorkerResult[] = [];
  for (let r = 0; r < reps; r++) {
    const result = expectOk(
      'scale worker',
      await runProcess(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/scale-worker.ts'), file, knownFile], { cwd: ROOT }),
    );
    runs.push(JSON.parse(result.stdout) as WorkerResult);
  }
  return runs;
}

/** What a chat knows after the turn before a transcript's last message: every message but that one, the last of them cursor's reply. */
function knownBefore(conversation: Transcript): string[] {
  const digests = messageDigests(conversation);
  return [...digests.slice(0, -2), replyDigestAt(conversation, digests.length - 2)];
}

/** Each size as the OpenCode plugin's flattened prompt, in the same worker (its branch knows all but the last message). */
async function layoutSizes(sandbox: Sandbox, reps: number, notes: string[]): Promise<LayoutResult[]> {
  const results: LayoutResult[] = [];
  for (const messages of SIZES) {
    const file = join(sandbox.dir, `layout-${messages}.txt`);
    const text = bigLayoutPrompt(messages, sandbox.workspace);
    writeFileSync(file, text);
    const knownFile = join(sandbox.dir, `layout-known-${messages}.txt`);
    writeFileSync(knownFile, knownBefore(parseTranscript(text)).join(''));
    const runs = await workerRuns(file, knownFile, reps);
    if (runs.some((r) => r.decision !== 'resume-delta'))
      notes.push(`${messages} messages in the plugin layout: in-process decision was ${runs[0]!.decision}`);
    results.push({
      messages,
      bytes: runs[0]!.bytes,
      parseMs: median(runs.map((r) => r.parseMs)),
      analyzeMs: median(runs.map((r) => r.analyzeMs)),
      decideMs: median(runs.map((r) => r.decideMs)),
      totalMs: median(runs.map((r) => r.totalMs)),
    });
  }
  return results;
}

/** Peak RSS (KiB) and CPU time (ms) a process wrote through the snapshot's rssHook. */
function usageOf(file: string): { peakRssKb: number; cpuMs: number } {
  const [rss, cpu] = readFileSync(file, 'utf8').split(' ').map(Number);
  return { peakRssKb: rss!, cpuMs: cpu! / 1000 };
}

/** Issue 12's shape: a long conversation of short messages, as the tests' conversations are. */
const RESUMED_MESSAGES = 10_000;
const RESUMED_MESSAGE_BYTES = 200;

interface ResumedTurns {
  bytes: number;
  turns: number;
  bareMs: number;
  directMs: number;
  wrappedMs: number;
  /** Median of (through cursor-resume − stand-in direct), turn by turn. */
  addedMs: number;
  usage: Array<{ peakRssKb: number; cpuMs: number }>;
  peakRssKb: number;
  cpuMs: number;
  bareCpuMs: number;
  times: Array<{ bare: number; direct: number; wrapped: number }>;
}

/**
 * Real turns of a conversation of RESUMED_MESSAGES messages, each adding a user
 * message to cursor's last reply, so that each resumes the chat with a delta: a bare
 * `node -e ''`, the stand-in given exactly what cursor-resume would give it (from
 * --dry-run) and the turn through cursor-resume, in a rotating order, as benchmark 2
 * does. Peak RSS and CPU time come from further turns run with the rssHook, whose
 * module load would otherwise count in the timed ones.
 */
async function resumedTurns(snapshot: Snapshot, quick: boolean, notes: string[]): Promise<ResumedTurns> {
  const sandbox = new Sandbox(snapshot, 'scale-resumed', { CURSOR_ACP_SESSION_RESUME: '1' });
  const { env } = sandbox;
  const conversation = new Conversation(sandbox.workspace);
  conversation.messages.push(...shortHistory(RESUMED_MESSAGES - 3, RESUMED_MESSAGE_BYTES));
  let bytes = 0;
  let turn = 0;
  let chat: string | null = null;
  /** One more user message; after the first turn, each must continue the same chat. */
  const next = async (run: (body: string) => Promise<{ stdout: string }>): Promise<void> => {
    conversation.messages.push({ role: 'user', content: `Now the next step (${++turn}).` });
    const body = conversation.body();
    bytes = Buffer.byteLength(body);
    const reply = replyOf((await run(body)).stdout);
    if (chat !== null && reply.sessionId !== chat) notes.push(`resumed turn ${turn}: answered in chat ${reply.sessionId}, not ${chat}`);
    chat = reply.sessionId;
    conversation.applyReply(reply);
  };
  const rssFile = join(sandbox.dir, 'usage.txt');
  const measured = (body: string) =>
    runProcess(process.execPath, ['--require', snapshot.rssHook, snapshot.bin, ...STREAM_ARGS], {
      input: body,
      env: { ...env, BENCH_RSS_FILE: rssFile },
    });
  const times: ResumedTurns['times'] = [];
  const usage: ResumedTurns['usage'] = [];
  const bareUsage: number[] = [];
  try {
    // The first turn starts the chat (fresh, the whole conversation); the helper then knows all of it.
    await next(async (body) => expectOk('cursor-resume', await runCli(snapshot, STREAM_ARGS, { input: body, env })));
    const count = quick ? 4 : 20;
    for (let i = 0; i < count; i++) {
      await next(async (body) => {
        const plan = JSON.parse(
          expectOk('cursor-resume --dry-run', await runCli(snapshot, ['--dry-run', ...STREAM_ARGS], { input: body, env })).stdout,
        ) as {
          decision: string;
          argv: string[];
          prompt: string;
        };
        if (plan.decision !== 'resume-delta') notes.push(`resumed turn ${i}: planned as ${plan.decision}, not resume-delta`);
        let wrapped: { stdout: string; ms: number } | undefined;
        const runs = {
          bare: async () => expectOk('node -e', await runProcess(process.execPath, ['-e', ''], { env })).ms,
          direct: async () => expectOk('stand-in', await runProcess(snapshot.standIn, plan.argv, { input: plan.prompt, env })).ms,
          wrapped: async () => (wrapped = expectOk('cursor-resume', await runCli(snapshot, STREAM_ARGS, { input: body, env }))).ms,
        };
        const order = (['bare', 'direct', 'wrapped'] as const).map((_, k, all) => all[(k + i) % 3]!);
        const t: Partial<Record<keyof typeof runs, number>> = {};
        for (const name of order) t[name] = await runs[name]();
        times.push({ bare: t.bare!, direct: t.direct!, wrapped: t.wrapped! });
        return wrapped!;
      });
    }
    for (let i = 0; i < (quick ? 2 : 5); i++) {
      await next(async (body) => {
        const result = expectOk('cursor-resume', await measured(body));
        usage.push(usageOf(rssFile));
        return result;
      });
      expectOk(
        'node -e',
        await runProcess(process.execPath, ['--require', snapshot.rssHook, '-e', ''], { env: { ...env, BENCH_RSS_FILE: rssFile } }),
      );
      bareUsage.push(usageOf(rssFile).cpuMs);
    }
  } finally {
    await sandbox.stopHelper();
  }
  return {
    bytes,
    turns: times.length,
    bareMs: median(times.map((t) => t.bare)),
    directMs: median(times.map((t) => t.direct)),
    wrappedMs: median(times.map((t) => t.wrapped)),
    addedMs: median(times.map((t) => t.wrapped - t.direct)),
    usage,
    peakRssKb: median(usage.map((u) => u.peakRssKb)),
    cpuMs: median(usage.map((u) => u.cpuMs)),
    bareCpuMs: median(bareUsage),
    times,
  };
}
