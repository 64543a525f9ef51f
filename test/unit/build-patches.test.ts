// The build's text patches (scripts/build-patches.mjs) against the esbuild the build uses:
// the shapes of code they rely on are there, the patched code still works, and a patch
// that finds nothing to patch fails the build instead of shipping a slower or broken bundle.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path, { join } from 'node:path';
import { describe, test } from 'node:test';
import { build } from 'esbuild';
import { BUILTIN_BANNER, cheapBuiltinImports, importsThroughBoot } from '../../scripts/build-patches.mjs';

/**
 * A module that imports builtins and a file beside it, bundled as scripts/build.mjs bundles
 * cli.cjs. It is an ES module (.mts), as src/ is one (package.json's "type").
 */
async function bundled(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cr-build-probe-'));
  try {
    const entry = join(dir, 'probe.mts');
    writeFileSync(
      entry,
      [
        "import fs from 'node:fs';",
        "import * as path from 'node:path';",
        "import { EventEmitter } from 'node:events';",
        'export const builtins = () => [fs, path, EventEmitter];',
        "export const lazy = () => import('./program.js');",
      ].join('\n'),
    );
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      banner: { js: BUILTIN_BANNER },
      external: ['./program.js'],
      write: false,
      logLevel: 'silent',
    });
    return result.outputFiles[0]!.text;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a CommonJS bundle as boot.cjs does, with `importBeside` as its __importBeside. */
function load(code: string, importBeside: (specifier: string) => unknown): Record<string, () => unknown> {
  const module = { exports: {} as Record<string, () => unknown> };
  new Function('exports', 'require', 'module', '__importBeside', code)(
    module.exports,
    createRequire(import.meta.url),
    module,
    importBeside,
  );
  return module.exports;
}

describe('the build patches, on what esbuild emits', () => {
  test('builtin imports: the shape relied on is there, and the patched imports read the modules themselves', async () => {
    const raw = await bundled();
    assert.match(raw, /__toESM\(require\("node:fs"\), 1\)/, 'esbuild still wraps a builtin in __toESM(require(...), 1)');
    const patched = cheapBuiltinImports(raw, 'probe');
    assert.doesNotMatch(patched, /__toESM\(require\("node:/);
    assert.match(patched, /__builtin\(require\("node:fs"\)\)/);
    const [fsSeen, pathSeen, Emitter] = load(importsThroughBoot(patched, 'probe'), () => undefined).builtins!() as [
      typeof fs,
      typeof path,
      unknown,
    ];
    assert.equal(fsSeen.readFileSync, fs.readFileSync);
    assert.equal(pathSeen.join, path.join);
    assert.equal(Emitter, EventEmitter);
  });

  test('imports of the files beside cli.cjs become calls of the __importBeside boot.cjs hands it', async () => {
    const patched = importsThroughBoot(cheapBuiltinImports(await bundled(), 'probe'), 'probe');
    assert.doesNotMatch(patched, /\bimport\(/);
    const asked: string[] = [];
    await load(patched, (specifier) => asked.push(specifier)).lazy!();
    assert.deepEqual(asked, ['./program.js']);
  });

  test('a patch that finds nothing of the shape it relies on fails the build, naming the file', () => {
    assert.throws(
      () => cheapBuiltinImports('var fs = require("node:fs");', 'dist/cli.cjs'),
      /^Error: dist\/cli\.cjs: no builtin import .*esbuild's output changed$/,
    );
    assert.throws(
      () => cheapBuiltinImports('a(__toESM(require("node:fs"), 1)); b(__toESM(require("node:os")));', 'dist/cli.cjs'),
      /^Error: dist\/cli\.cjs: a builtin import the patch did not recognise, at offset \d+/,
    );
    assert.throws(
      () => importsThroughBoot('require("./program.js")', 'dist/cli.cjs'),
      /^Error: dist\/cli\.cjs: no import\("\.\/\.\.\."\) of the files beside it/,
    );
    assert.throws(
      () => importsThroughBoot('import("./program.js"); import(name);', 'dist/cli.cjs'),
      /^Error: dist\/cli\.cjs still has an import\(\) boot\.cjs cannot serve, at offset \d+$/,
    );
  });
});
