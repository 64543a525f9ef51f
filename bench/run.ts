// `npm run bench`: builds, then runs the benchmarks (0-5 of issue 6, 6 issue 11's OpenCode session, 7 the hand-over, 8 issue
// 12's first turn with no helper) against a
// snapshot of the built program, prints one table and writes
// bench/results/latest.json. Benchmarks, not tests: nothing here fails a build.
//
//   node --import tsx bench/run.ts [--only 1,3] [--quick] [--build DIR]
//
// --quick runs fewer repetitions (a smoke test of the harness, not figures to quote).
// --build measures the built program of another checkout (a baseline, built there with
// npm run build) with these benchmarks; in-process figures (benchmark 4's parse, hash,
// decide) are always this checkout's code. Its results go to bench/results/build.json.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { addedTimeBench } from './added-time.js';
import { bundleBench } from './bundle.js';
import { firstTurnBench } from './first-turn.js';
import { helperLoadBench } from './helper-load.js';
import { opencodeSessionBench } from './opencode-session.js';
import { passthroughBench } from './passthrough.js';
import { promptBytesBench } from './prompt-bytes.js';
import type { BenchOutcome } from './lib/report.js';
import { renderTable } from './lib/report.js';
import { ROOT, makeSnapshot, stopAllHelpers, type Snapshot } from './lib/world.js';
import { scaleBench } from './scale.js';
import { streamingBench } from './streaming.js';

export interface BenchOptions {
  quick: boolean;
}

const BENCHES: Array<[string, (snapshot: Snapshot, options: BenchOptions) => Promise<BenchOutcome>]> = [
  ['0', bundleBench],
  ['1', (s) => promptBytesBench(s)],
  ['2', addedTimeBench],
  ['3', streamingBench],
  ['4', scaleBench],
  ['5', helperLoadBench],
  ['6', (s) => opencodeSessionBench(s)],
  ['7', passthroughBench],
  ['8', firstTurnBench],
];

function parseArgs(argv: string[]): { only: Set<string> | null; quick: boolean; build: string | null } {
  let only: Set<string> | null = null;
  let quick = false;
  let build: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--only') only = new Set((argv[++i] ?? '').split(','));
    else if (arg.startsWith('--only=')) only = new Set(arg.slice('--only='.length).split(','));
    else if (arg === '--build') build = resolve(argv[++i] ?? '');
    else throw new Error(`unknown argument ${arg}; use --only 0,1,2,3,4,5,6,7,8, --quick and/or --build DIR`);
  }
  return { only, quick, build };
}

async function main(): Promise<number> {
  const { only, quick, build } = parseArgs(process.argv.slice(2));
  const started = performance.now();
  // Timing figures are only as good as the machine is quiet: say how busy it was.
  const loadBefore = loadavg()[0]!;
  if (loadBefore > 1.5) process.stderr.write(`bench: the machine is busy (load average ${loadBefore.toFixed(1)}); timings will be noisy\n`);
  const snapshot = await makeSnapshot(build ?? undefined);
  if (build) process.stderr.write(`bench: measuring the build of ${build}\n`);
  const outcomes: BenchOutcome[] = [];
  let failed = false;
  try {
    for (const [id, bench] of BENCHES) {
      if (only && !only.has(id)) continue;
      const t0 = performance.now();
      process.stderr.write(`bench ${id}: running...\n`);
      try {
        const outcome = await bench(snapshot, { quick });
        outcomes.push(outcome);
        process.stderr.write(`bench ${id}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
        for (const note of outcome.notes) process.stderr.write(`bench ${id}: note: ${note}\n`);
      } catch (error) {
        failed = true;
        process.stderr.write(`bench ${id}: FAILED: ${(error as Error).stack ?? String(error)}\n`);
      }
    }
  } finally {
    await stopAllHelpers();
    rmSync(snapshot.dir, { recursive: true, force: true });
  }

  // A smoke run's figures must not pass for real ones when pasted somewhere.
  const table = `${quick ? 'QUICK RUN (fewer repetitions): not figures to quote\n\n' : ''}${renderTable(outcomes)}`;
  const load = { before: loadBefore, after: loadavg()[0]! };
  process.stdout.write(`\n${table}\n\nload average (1 min) before / after: ${load.before.toFixed(2)} / ${load.after.toFixed(2)}\n`);
  const machine = {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? '',
    memoryBytes: totalmem(),
    load,
  };
  const results = join(ROOT, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const file = join(results, build ? 'build.json' : 'latest.json');
  const doc = {
    time: new Date().toISOString(),
    quick,
    build: build ?? ROOT,
    machine,
    durationS: Math.round((performance.now() - started) / 100) / 10,
    table,
    benchmarks: outcomes,
  };
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`\nwritten: ${file} (${doc.durationS} s)\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (error: unknown) => {
    await stopAllHelpers();
    process.stderr.write(`bench: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 1;
  },
);
