// Bundles each program under dist/, shaped for start-up time (bench/, BENCHMARKS.md):
//   dist/cli.cjs                  the CLI and the whole run path in ONE CommonJS file (zod aside,
//                                 in dist/zod.cjs below, for the turns that need it), written
//                                 as the function boot.cjs calls. A turn then resolves and
//                                 compiles one file, and Node never starts its ES module
//                                 loader: about 10 ms less per turn than ES modules in six chunks.
//   dist/cli.cjs.cache            V8's code cache of cli.cjs, taken from a real turn
//                                 (scripts/code-cache.mjs): about 10 ms less again
//   dist/zod.cjs                  zod/mini (through src/zod.ts), which cli.cjs requires only
//                                 when a transcript or a setting needs a schema (lazyZod)
//   dist/boot.cjs                 refuses a cursor-resume that runs itself, hands a line that
//                                 is cursor-agent's whole straight to it, else loads cli.cjs
//                                 with that cache; bin/ (CommonJS, see bin/package.json)
//                                 requires it
//   dist/settings.cjs             the settings table (src/config.ts, zod), which boot.cjs
//                                 requires only to hand over a line with settings to resolve:
//                                 boot.cjs, compiled on every run, stays small
//   dist/program.js (+ chunks)    our subcommands and --help (commander, chalk, conf), ES modules,
//                                 imported by cli.cjs only when one of them runs
//   dist/helper/helper-server.js  the helper daemon: one self-contained CommonJS file (its own
//                                 package.json says so), which starts about 15 ms sooner than
//                                 an ES module, and a run that starts the helper waits for it
//   dist/stand-in/cursor-agent.js the test stand-in, self-contained
// program.js is a separate bundle with its own copies of the modules it shares with cli.cjs,
// so nothing may depend on the two sharing a class or a module's state (cli.ts tells our
// errors apart by name for this reason).
// `npm install -g .` in a fresh clone runs this (prepare) without the devDependencies: say what to do.
const { build } = await import('esbuild').catch(() => {
  process.stderr.write('cursor-resume: building needs the devDependencies: run npm ci in this checkout first (README, Installing)\n');
  process.exit(1);
});
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_BANNER, cheapBuiltinImports, importsThroughBoot } from './build-patches.mjs';

/**
 * env-paths (the config file's location, read on every run) imports `node:process`;
 * in an ES module bundle the facade of that builtin costs about 2 ms to create (it
 * reads every property of `process`). Hand it the global instead: the same object.
 */
const processGlobal = {
  name: 'process-global',
  setup(b) {
    b.onResolve({ filter: /^(node:)?process$/ }, (args) =>
      args.importer.includes('/node_modules/env-paths/') ? { path: 'process', namespace: 'process-global' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'process-global' }, () => ({ contents: 'export default globalThis.process;', loader: 'js' }));
  },
};

/**
 * jsonc-parser (a broken config file's syntax error, config.ts) declares no sideEffects, so
 * esbuild keeps all of it and every run would build its formatter's tables of indentation
 * strings (about 300 KB, most of it garbage for the young generation to copy) for a parse
 * that runs only on a broken file. Its modules have no side effects but those tables: say
 * so, and what is not used is left out. src/ imports the package by its name, whose "main" is a
 * UMD build esbuild cannot bundle: it gets the ES module build (lib/esm/, a CommonJS file to
 * Node before 20.19, which is why src/ does not name it: the tests run src/ through tsx).
 */
const JSONC_ESM = 'jsonc-parser/lib/esm/main.js';
const jsoncPure = {
  name: 'jsonc-pure',
  setup(b) {
    b.onResolve({ filter: /^(jsonc-parser(\/|$)|\.\/)/ }, async (args) => {
      if (
        args.pluginData === 'jsonc-pure' ||
        !(args.path.startsWith('jsonc-parser') || args.importer.includes('/node_modules/jsonc-parser/'))
      )
        return undefined;
      const found = await b.resolve(args.path === 'jsonc-parser' ? JSONC_ESM : args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'jsonc-pure',
      });
      return found.errors.length > 0 ? { errors: found.errors } : { path: found.path, sideEffects: false };
    });
  },
};

/**
 * In boot.cjs, cli.cjs and settings.cjs, `node:module` is the class of the bundle's own
 * `module` (MODULE_BANNER), which carries createRequire: requiring node:module itself also
 * loads Node's ES module loader and source maps, four modules a run never uses (0.6 ms).
 */
const MODULE_BANNER = 'const __Module = module.constructor;';
const moduleClass = {
  name: 'module-class',
  setup(b) {
    // A dependency's require('module') would get this ES module's namespace, not the class: refuse it.
    b.onResolve({ filter: /^(node:)?module$/ }, (args) =>
      args.importer.includes('/node_modules/')
        ? { errors: [{ text: `${args.importer}: imports node:module, which this bundle maps for src/ only (moduleClass)` }] }
        : { path: 'module', namespace: 'module-class' },
    );
    b.onLoad({ filter: /.*/, namespace: 'module-class' }, () => ({
      contents: 'export default __Module; export const createRequire = __Module.createRequire;',
      loader: 'js',
    }));
  },
};

/** In cli.cjs, the lazily loaded parts stay separate files, imported at run time from beside it. */
const lazyFromCli = {
  name: 'lazy-from-cli',
  setup(b) {
    b.onResolve({ filter: /^\.\/program\.js$/ }, (args) =>
      args.importer.endsWith('src/cli.ts') ? { path: './program.js', external: true } : undefined,
    );
  },
};

/**
 * In cli.cjs, src/zod.ts (the one import of zod/mini) is loaded on first use from its own
 * bundle beside it, dist/zod.cjs: its importers get an object whose getters require it
 * then, so a turn whose input needs no schema (a plain OpenAI body, a plain-text prompt,
 * settings plainly valid) neither reads, compiles nor runs zod, a quarter of the run
 * path's code. The getters are src/zod.ts's exports as esbuild reads them. Importing
 * zod anywhere else would put it back in cli.cjs, so the build refuses it.
 */
const lazyZod = {
  name: 'lazy-zod',
  setup(b) {
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const real = join(src, 'zod.ts');
    // zod by any name ('zod', 'zod/mini', 'zod/v4/mini', ...): each would put an eager copy in cli.cjs.
    b.onResolve({ filter: /^zod(\/|$)/ }, (args) =>
      args.importer === real
        ? undefined
        : { errors: [{ text: `${args.importer}: import zod through src/zod.ts, which cli.cjs loads on first use` }] },
    );
    b.onResolve({ filter: /\/zod\.js$/ }, (args) =>
      args.namespace === 'file' && join(args.resolveDir, args.path) === join(src, 'zod.js')
        ? { path: 'src/zod.ts', namespace: 'lazy-zod' }
        : undefined,
    );
    b.onResolve({ filter: /^\.\/zod\.cjs$/, namespace: 'lazy-zod' }, () => ({ path: './zod.cjs', external: true }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-zod' }, async () => {
      const { metafile } = await build({
        entryPoints: [real],
        write: false,
        metafile: true,
        format: 'esm',
        outdir: 'unused',
        logLevel: 'silent',
      });
      const names = Object.values(metafile.outputs).flatMap((o) => o.exports);
      if (names.length === 0) return { errors: [{ text: 'src/zod.ts exports nothing' }] };
      const getters = names.map((n) => `get ${n}() { return load().${n}; }`).join(',\n');
      return {
        contents: `let zod;\nconst load = () => (zod ??= require('./zod.cjs'));\nmodule.exports = {\n${getters}\n};\n`,
        loader: 'js',
        resolveDir: src,
      };
    });
  },
};

/** Rewrites a file of dist/ with the patches of build-patches.mjs, in order. */
async function patch(file, ...patches) {
  let text = await readFile(file, 'utf8');
  for (const p of patches) text = p(text, file);
  await writeFile(file, text);
}

const common = {
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
};
const cjs = {
  ...common,
  format: 'cjs',
  banner: { js: BUILTIN_BANNER },
};
// Some bundled CommonJS dependencies call require(); give an ES module bundle one.
const esm = {
  ...common,
  format: 'esm',
  plugins: [processGlobal],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};

// cli.cjs and boot.cjs find the files beside them through import.meta.url.
const cjsWithUrl = {
  ...cjs,
  outExtension: { '.js': '.cjs' },
  define: { 'import.meta.url': '__import_meta_url' },
  banner: { js: `${cjs.banner.js}\n${MODULE_BANNER}\nconst __import_meta_url = require('node:url').pathToFileURL(__filename).href;` },
  plugins: [moduleClass],
};

await rm('dist', { recursive: true, force: true });
await Promise.all([
  build({ ...cjsWithUrl, entryPoints: { cli: 'src/cli.ts' }, plugins: [...cjsWithUrl.plugins, lazyFromCli, jsoncPure, lazyZod] }),
  build({ ...cjsWithUrl, entryPoints: { boot: 'src/boot.ts' } }),
  build({ ...cjs, outExtension: { '.js': '.cjs' }, entryPoints: { zod: 'src/zod.ts' } }),
  build({ ...cjsWithUrl, entryPoints: { settings: 'src/config.ts' }, plugins: [...cjsWithUrl.plugins, jsoncPure] }),
  build({ ...esm, entryPoints: { program: 'src/program.ts' }, splitting: true, plugins: [...esm.plugins, jsoncPure] }),
  build({ ...cjs, entryPoints: { 'helper/helper-server': 'src/helper/server-main.ts' } }),
  build({ ...esm, entryPoints: { 'stand-in/cursor-agent': 'test/fixtures/stand-in/main.ts' } }),
]);
await Promise.all([
  patch('dist/boot.cjs', cheapBuiltinImports),
  patch('dist/settings.cjs', cheapBuiltinImports),
  patch('dist/cli.cjs', cheapBuiltinImports, importsThroughBoot),
  patch('dist/helper/helper-server.js', cheapBuiltinImports),
]);
// cli.cjs ships as the function boot.cjs compiles and calls (src/boot.ts, CLI_PARAMETERS says why).
const { CLI_PARAMETERS } = createRequire(import.meta.url)('../dist/boot.cjs');
await patch('dist/cli.cjs', (text) => `(function (${CLI_PARAMETERS.join(', ')}) {${text}\n})`);
await writeFile('dist/helper/package.json', '{ "type": "commonjs" }\n');
await chmod('dist/stand-in/cursor-agent.js', 0o755);
// Last: the cache must be made of cli.cjs exactly as it ships.
await import('./code-cache.mjs');
