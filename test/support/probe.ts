// The built binary run under a preload that says one thing at exit, on a line of stderr
// of its own: what a run did inside itself (a module it loaded, a library it started),
// seen without changing the run.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, tempDir } from './cli.js';
import { runProcess, type RunResult } from './processes.js';

/** A probe that writes `label: <expression's value>` to stderr at exit; `run` runs the binary under it. */
export function exitProbe(
  label: string,
  expression: string,
): { run: (args: string[], input: string, env: NodeJS.ProcessEnv) => Promise<RunResult & { said: string }> } {
  const file = join(tempDir('cr-probe-'), 'probe.cjs');
  writeFileSync(file, `process.on('exit', () => process.stderr.write(\`${label}: \${${expression}}\\n\`));\n`);
  const line = new RegExp(`^${label}: (.*)\\n`, 'm');
  return {
    async run(args, input, env) {
      const r = await runProcess(process.execPath, ['--require', file, BIN, ...args], { env, input });
      const said = line.exec(r.stderr);
      assert.ok(said, `the probe said nothing: ${r.stderr}`);
      return { ...r, stderr: r.stderr.replace(said[0], ''), said: said[1]! };
    },
  };
}
