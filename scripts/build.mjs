// Bundles each entry point into one ES module under dist/: fewer files to resolve at start-up.
import { build } from 'esbuild';
import { chmod, rm } from 'node:fs/promises';

const entries = {
  cli: 'src/cli.ts',
  'helper-server': 'src/helper/server-main.ts',
  'stand-in/cursor-agent': 'test/fixtures/stand-in/main.ts',
};

await rm('dist', { recursive: true, force: true });
await build({
  entryPoints: entries,
  outdir: 'dist',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Some bundled CommonJS dependencies call require(); give the ES module bundle one.
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
await chmod('dist/stand-in/cursor-agent.js', 0o755);
