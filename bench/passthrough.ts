// Benchmark 6: a hand-over (`--version`, which OpenCode's Cursor plugin runs as a
// probe that blocks its start, and cursor-agent's subcommands). Each iteration runs,
// in a rotating order, a bare `node -e ''`, the stand-in's --version directly, and
// the same through cursor-resume. Added time = cursor-resume − direct; the goal is
// at most one bare Node start.
import type { BenchOutcome } from './lib/report.js';
import { median, round, summarize } from './lib/stats.js';
import { Sandbox, expectOk, runCli, runProcess, type Snapshot } from './lib/world.js';

const WARMUP = 2;

export async function passthroughBench(snapshot: Snapshot, options: { quick: boolean }): Promise<BenchOutcome> {
  const count = options.quick ? 6 : 40;
  const sandbox = new Sandbox(snapshot, 'passthrough', { CURSOR_RESUME_ENABLED: '1' });
  // As OpenCode's plugin runs it: the agent and the resume switch set, no config file. (A
  // config file or another of our variables costs about 10 ms more: the settings are then
  // checked in full, as a run checks them.) A hand-over never looks for the helper.
  const { CURSOR_RESUME_RUNTIME_DIR: _unused, ...env } = sandbox.env;
  const runs = {
    // The same environment for all three: a variable such as NODE_EXTRA_CA_CERTS costs every Node start tens of ms.
    bare: async () => expectOk('node -e', await runProcess(process.execPath, ['-e', ''], { env })).ms,
    direct: async () => expectOk('stand-in --version', await runProcess(snapshot.standIn, ['--version'], { env })).ms,
    wrapped: async () => expectOk('cursor-resume --version', await runCli(snapshot, ['--version'], { env })).ms,
  };
  const samples: Array<Record<keyof typeof runs, number>> = [];
  for (let i = 0; i < count + WARMUP; i++) {
    const order = (['bare', 'direct', 'wrapped'] as const).map((_, k, all) => all[(k + i) % 3]!);
    const times: Partial<Record<keyof typeof runs, number>> = {};
    for (const name of order) times[name] = await runs[name]();
    if (i >= WARMUP) samples.push(times as Record<keyof typeof runs, number>);
  }
  const added = samples.map((s) => s.wrapped - s.direct);
  const bare = median(samples.map((s) => s.bare));
  const addedMedian = median(added);
  return {
    id: 'passthrough',
    title: '7. hand-over (--version)',
    rows: [
      { metric: `bare node -e '' (median of ${samples.length})`, value: `${round(bare)} ms` },
      { metric: 'stand-in --version, direct', value: `${round(median(samples.map((s) => s.direct)))} ms` },
      { metric: 'stand-in --version, through cursor-resume', value: `${round(median(samples.map((s) => s.wrapped)))} ms` },
      {
        metric: 'added time (median)',
        value: `${round(addedMedian)} ms`,
        goal: `<= one bare node start (${round(bare)} ms)`,
        met: addedMedian <= bare,
      },
    ],
    data: { samples, added: summarize(added), bare: summarize(samples.map((s) => s.bare)), warmup: WARMUP },
    notes: [],
  };
}
