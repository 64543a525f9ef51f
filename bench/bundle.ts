// Benchmark 0: what a run line loads: the file bin/cursor-resume.js loads, and
// whatever that loads as it starts (and, in a chunked ES module build, the run chunk
// it imports for a run line): the files a turn must read and compile before it can
// start. Which packages they hold comes from their source maps.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchOutcome } from './lib/report.js';
import type { Snapshot } from './lib/world.js';

/** Must never load on a run line: the faces' dependencies, and zod's full (classic) API. */
const FORBIDDEN = ['chalk', 'conf', 'execa', 'commander', 'zod (classic)'];

/**
 * Files a module loads as it starts: ES module imports and CommonJS requires of files beside
 * it. A require assigned with `??=` is the build's load on first use (dist/zod.cjs): LAZY_DEPS.
 */
const STATIC_DEPS = /(?:^|\n)import\s+(?:[^;"]*?\sfrom\s+)?"(\.\/[^"]+)"|(?<!\?\?=\s*)\brequire\("(\.\/[^"]+)"\)/g;
const LAZY_DEPS = /\?\?=\s*require\("(\.\/[^"]+)"\)/g;

function staticDeps(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(STATIC_DEPS)].map((m) => (m[1] ?? m[2])!);
}

/** Files the given ones load only on first use, by their names in dist/. */
function lazyDeps(dist: string, files: string[]): string[] {
  const found = files.flatMap((f) => [...readFileSync(join(dist, f), 'utf8').matchAll(LAZY_DEPS)].map((m) => m[1]!.replace(/^\.\//, '')));
  return [...new Set(found)].filter((f) => !files.includes(f));
}

function packagesOf(file: string): string[] {
  const map = `${file}.map`;
  if (!existsSync(map)) return [];
  const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
  const found = new Set<string>();
  for (const source of sources) {
    if (source.includes('node_modules/zod/')) found.add(source.includes('/v4/classic/') ? 'zod (classic)' : 'zod/mini');
    else {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
      if (m) found.add(m[1]!);
    }
  }
  return [...found];
}

/**
 * The files a run line loads: the one bin/cursor-resume.js loads, what that loads as
 * it starts and, in a chunked ES module build, the run chunk it imports for a run line.
 */
export function runPathFiles(root: string): string[] {
  const dist = join(root, 'dist');
  const bin = readFileSync(join(root, 'bin/cursor-resume.js'), 'utf8');
  const entry = /(?:require\(|import\s*\(?)\s*['"]\.\.\/dist\/([^'"]+)['"]/.exec(bin)?.[1];
  if (!entry) throw new Error('bin/cursor-resume.js loads nothing from dist/: has the build changed?');
  const seen = new Set<string>();
  const visit = (name: string): void => {
    const file = name.replace(/^\.\//, '');
    if (seen.has(file)) return;
    seen.add(file);
    for (const next of staticDeps(join(dist, file))) visit(next);
  };
  visit(entry);
  // boot.cjs reads the CLI bundle (with its code cache) rather than requiring it.
  if (seen.has('boot.cjs')) visit('cli.cjs');
  const run = /import\("(\.\/run-[^"]+\.js)"\)/.exec(readFileSync(join(dist, entry), 'utf8'))?.[1];
  if (run) visit(run);
  return [...seen];
}

export async function bundleBench(snapshot: Snapshot): Promise<BenchOutcome> {
  const dist = join(snapshot.dir, 'dist');
  const files = runPathFiles(snapshot.dir);
  const bytes = files.reduce((sum, f) => sum + statSync(join(dist, f)).size, 0);
  const packages = [...new Set(files.flatMap((f) => packagesOf(join(dist, f))))].sort();
  const lazy = lazyDeps(dist, files);
  const lazyBytes = lazy.reduce((sum, f) => sum + statSync(join(dist, f)).size, 0);
  const lazyPackages = [...new Set(lazy.flatMap((f) => packagesOf(join(dist, f))))].sort();
  const forbidden = [...new Set([...packages, ...lazyPackages])].filter((p) => FORBIDDEN.includes(p));
  const cache = join(dist, 'cli.cjs.cache');
  const cacheBytes = existsSync(cache) ? statSync(cache).size : 0;
  return {
    id: 'bundle',
    title: '0. what a run line loads',
    rows: [
      { metric: 'files a run line loads', value: `${files.length} (${files.join(', ')}), ${(bytes / 1024).toFixed(1)} KiB` },
      { metric: 'V8 code cache read with them', value: cacheBytes > 0 ? `cli.cjs.cache, ${(cacheBytes / 1024).toFixed(1)} KiB` : 'none' },
      { metric: 'packages in them', value: packages.join(', ') || 'none' },
      {
        metric: 'loaded on first use only (a turn whose input needs a schema)',
        value:
          lazy.length === 0
            ? 'none'
            : `${lazy.join(', ')}, ${(lazyBytes / 1024).toFixed(1)} KiB: ${lazyPackages.join(', ') || 'no package'}`,
      },
      {
        metric: 'chalk, conf, execa, commander, full zod',
        value: forbidden.length === 0 ? 'none loaded' : forbidden.join(', '),
        goal: 'none',
        met: forbidden.length === 0,
      },
    ],
    data: { files, bytes, packages, cacheBytes, lazy, lazyBytes },
    notes: [],
  };
}
