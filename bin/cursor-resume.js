#!/usr/bin/env node
// Thin launcher: the CLI is bundled into one file so a turn loads as little as possible.
import '../dist/cli.js';
