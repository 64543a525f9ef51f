#!/usr/bin/env node
// Thin launcher. CommonJS (see bin/package.json), like the bundle it loads: a turn then
// never starts Node's ES module loader, which would cost several milliseconds.
require('../dist/cli.cjs');
