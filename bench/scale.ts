// Benchmark 4: how the decision scales with the transcript: 10 to 10,000 messages
// (up to tens of MB). In-process through the real modules (a fresh process per
// measurement: cold code, its own peak RSS), plus one end-to-end --dry-run per size
// against a warm helper that knows all but the last message, so every size plans a
// real resume. The same conversations flattened as the OpenCode plugin sends them are
// measured in-process too: read back in its layout, proven, and a delta planned.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCallerArgs } from '../src/agent/argv.js';
import { resolveSettings } from '../src/config.js';
import { connectHelper } from '../src/helper/launcher.js';
import { analyzeTurn } from '../src/turn/plan.js';
import { messageDigests } from '../src/resume/digests.js';
import { parseTranscript } from '../src/transcript/parse.js';
import { bigLayoutPrompt, bigTranscript } from './lib/big-transcript.js';
import { STREAM_ARGS } from './lib/conversation.js';
import type { BenchOutcome, Row } from './lib/report.js';
import { formatBytes, median, round } from './lib/stats.js';
import { ROOT, Sandbox, expectOk, runProcess, type Snapshot } from './lib/world.js';

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
      const known = analysis.digests.slice(0, -1).join('');
      const knownFile = join(sandbox.dir, `known-${messages}.txt`);
      writeFileSync(knownFile, known);
      const recorded = await client.recordTurn({
        anchor: analysis.anchor!,
        chatId: `bench-${messages}`,
        toolsFingerprint: analysis.toolsFingerprint,
        workspace: analysis.workspace,
        model: analysis.model,
        digests: analysis.digests.slice(0, -2),
        reply: analysis.digests.at(-2)!,
        base: null,
        savedBytes: 0,
        outcome: 'success',
      });
      if (!recorded.recorded) throw new Error(`the helper did not record the ${messages}-message branch: ${recorded.message}`);

      const runs: WorkerResult[] = [];
      for (let r = 0; r < reps; r++) {
        const result = expectOk(
          'scale worker',
          await runProcess(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/scale-worker.ts'), file, knownFile], { cwd: ROOT }),
        );
        runs.push(JSON.parse(result.stdout) as WorkerResult);
      }
      if (runs.some((r) => r.decision !== 'resume-delta')) notes.push(`${messages} messages: in-process decision was ${runs[0]!.decision}`);

      const rssFile = join(sandbox.dir, `rss-${messages}.txt`);
      const dry = expectOk(
        'cursor-resume --dry-run',
        await runProcess(process.execPath, ['--import', snapshot.rssHook, snapshot.bin, '--dry-run', ...STREAM_ARGS], {
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
        dryRun: { ms: dry.ms, peakRssKb: Number(readFileSync(rssFile, 'utf8')), decision: dryDecision },
      });
    }
  } finally {
    client.close();
    await sandbox.stopHelper();
  }

  const layouts = await layoutSizes(sandbox, reps, notes);
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
  rows.push({
    metric: 'cost per message, 10,000 vs 1,000',
    value: `${round(perMessage10k * 1000, 1)} vs ${round(perMessage1k * 1000, 1)} µs (${round(growth, 2)}x)`,
    goal: 'linear (<= 1.5x)',
    met: growth <= 1.5,
  });
  return { id: 'scale', title: '4. scale of the decision', rows, data: { sizes, layouts }, notes };
}

type LayoutResult = Pick<SizeResult, 'messages' | 'bytes' | 'parseMs' | 'analyzeMs' | 'decideMs' | 'totalMs'>;

/** Each size as the OpenCode plugin's flattened prompt, in the same worker (its branch knows all but the last message). */
async function layoutSizes(sandbox: Sandbox, reps: number, notes: string[]): Promise<LayoutResult[]> {
  const results: LayoutResult[] = [];
  for (const messages of SIZES) {
    const file = join(sandbox.dir, `layout-${messages}.txt`);
    const text = bigLayoutPrompt(messages, sandbox.workspace);
    writeFileSync(file, text);
    const knownFile = join(sandbox.dir, `layout-known-${messages}.txt`);
    writeFileSync(knownFile, messageDigests(parseTranscript(text)).slice(0, -1).join(''));
    const runs: WorkerResult[] = [];
    for (let r = 0; r < reps; r++) {
      const result = expectOk(
        'scale worker',
        await runProcess(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/scale-worker.ts'), file, knownFile], { cwd: ROOT }),
      );
      runs.push(JSON.parse(result.stdout) as WorkerResult);
    }
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
