#!/usr/bin/env node
// Thin launcher. CommonJS (see bin/package.json), like the bundles it loads: a turn then
// never starts Node's ES module loader, which would cost several milliseconds.
let boot;
try {
  boot = require('../dist/boot.cjs');
} catch (error) {
  // A checkout that was never built (npm install -g . links it as it is): say so, not a stack trace.
  if (error.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('boot.cjs')) throw error;
  const root = require('node:path').resolve(__dirname, '..');
  process.stderr.write(
    `cursor-resume: this copy is not built (no ${root}/dist/boot.cjs); run npm install in ${root}, or install a packed copy (README, Installing)\n`,
  );
  process.exit(1);
}
boot.launch();
