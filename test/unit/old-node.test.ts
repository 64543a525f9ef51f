// package.json admits Node 20.10, and the tests run src/ as it is (through tsx). Before
// Node 20.19 a .js file is read as its package's "type" says, never by its syntax: an ES
// module file in a package with no "type" (jsonc-parser's lib/esm/) is read as CommonJS
// there, and its importers fail. --no-experimental-detect-module makes this Node read
// files as those do.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../support/cli.js';

// The bundles' entry points start programs when imported: the modules they import are loaded all the same.
const ENTRY_POINTS = new Set(['src/cli.ts', 'src/boot.ts', 'src/program.ts', 'src/helper/server-main.ts']);

test("every module of src/ loads where Node reads a .js file by its package's type alone (Node 20.10 to 20.18)", () => {
  const files = (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[])
    .map((f) => relative(ROOT, join(ROOT, 'src', f)))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !ENTRY_POINTS.has(f))
    .sort();
  assert.ok(files.length > 50, `found ${files.length} modules`);
  const script = [
    `const files = ${JSON.stringify(files.map((f) => pathToFileURL(join(ROOT, f)).href))};`,
    'const failed = [];',
    'for (const f of files) { try { await import(f); } catch (e) { failed.push(`${f}: ${String(e.message).split("\\n")[0]}`); } }',
    'process.stdout.write(failed.join("\\n"));',
  ].join('\n');
  const run = spawnSync(process.execPath, ['--no-experimental-detect-module', '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, '', 'modules that failed to load');
});
