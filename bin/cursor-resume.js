#!/usr/bin/env node
// Thin launcher. CommonJS (see bin/package.json), like the bundles it loads: a turn then
// never starts Node's ES module loader, which would cost several milliseconds.
require('../dist/boot.cjs').startCli();
