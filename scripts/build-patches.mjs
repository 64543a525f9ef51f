// The two text patches the build makes to esbuild's output (scripts/build.mjs says why).
// Each relies on the exact shape of code esbuild emits, so esbuild's version is pinned in
// package.json, test/unit/build-patches.test.ts checks the shapes against that esbuild, and
// each patch throws when the shape it needs is missing: a newer esbuild fails the build
// rather than shipping a bundle that is slower (a missed builtin) or broken (a missed import).
import { isBuiltin } from 'node:module';

/**
 * Prepended to a CommonJS bundle that takes cheapBuiltinImports: a builtin's ES import
 * becomes an object that inherits the module's (live) properties, its default the module.
 */
export const BUILTIN_BANNER = 'const __builtin = (m) => Object.create(m, { default: { value: m, enumerable: true } });';

/**
 * In a CommonJS bundle esbuild turns `import fs from 'node:fs'` into
 * `__toESM(require("node:fs"), 1)`, which copies every property of the module onto a new
 * object: 1.5 ms a run for fs, os, path, net and process. `__builtin` (BUILTIN_BANNER)
 * costs nothing. `name` says which bundle, for the error.
 */
export function cheapBuiltinImports(text, name) {
  let patched = 0;
  const out = text.replace(/__toESM\(require\("([^"]+)"\), 1\)/g, (call, module) => {
    if (!isBuiltin(module)) return call;
    patched++;
    return `__builtin(require("${module}"))`;
  });
  if (patched === 0) throw new Error(`${name}: no builtin import of the form __toESM(require("node:..."), 1): esbuild's output changed`);
  const left = /__toESM\(require\("([^"]+)"\)/g;
  for (let m = left.exec(out); m; m = left.exec(out)) {
    if (isBuiltin(m[1]))
      throw new Error(`${name}: a builtin import the patch did not recognise, at offset ${m.index}: esbuild's output changed`);
  }
  return out;
}

/**
 * cli.cjs is compiled by boot.cjs (vm), where an import() needs an experimental hook and,
 * with a code cache, fails on Node 20: its imports of the files beside it become calls to
 * the __importBeside that boot.cjs hands it.
 */
export function importsThroughBoot(text, name) {
  let patched = 0;
  const out = text.replace(/\bimport\((?="\.\/)/g, () => {
    patched++;
    return '__importBeside(';
  });
  if (patched === 0) throw new Error(`${name}: no import("./...") of the files beside it: esbuild's output changed`);
  const left = /\bimport\(/.exec(out);
  if (left) throw new Error(`${name} still has an import() boot.cjs cannot serve, at offset ${left.index}`);
  return out;
}
