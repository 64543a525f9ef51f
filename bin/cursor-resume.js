#!/usr/bin/env node
// Thin launcher. CommonJS (see bin/package.json), like the bundles it loads: a turn then
// never starts Node's ES module loader, which would cost several milliseconds.
let boot;
try {
  boot = require('../dist/boot.cjs');
} catch (error) {
  if (error.code !== 'MODULE_NOT_FOUND' || !String(error.message).includes('boot.cjs')) throw error;
  const fs = require('node:fs');
  const path = require('node:path');
  // Run through a symlink (npm's global bin) with --preserve-symlinks-main, __dirname is the
  // link's folder: look beside the file the link names.
  const real = path.dirname(fs.realpathSync(__filename));
  const root = path.resolve(real, '..');
  if (real !== __dirname && fs.existsSync(path.join(root, 'dist', 'boot.cjs'))) boot = require(path.join(root, 'dist', 'boot.cjs'));
  else {
    // A checkout that was never built (npm install -g . links it as it is): say so, not a stack trace.
    process.stderr.write(
      `cursor-resume: this copy is not built (no ${root}/dist/boot.cjs); run npm install in ${root}, or install a packed copy (README, Installing)\n`,
    );
    process.exit(1);
  }
}
boot.launch();
