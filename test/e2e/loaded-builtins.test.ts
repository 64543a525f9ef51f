// A turn loads only the Node modules it uses (scripts/build.mjs, moduleClass; src/sleep.ts):
// the built binary, run with a preload that lists at exit every module Node loaded.
// node:module would start Node's ES module loader and source maps, node:timers/promises
// one module more; a run line uses neither, whether it resumes, starts fresh or hands over.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { STAND_IN, tempDir } from '../support/cli.js';
import { Conversation, STREAM_ARGS, resultOf } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';
import { exitProbe } from '../support/probe.js';
import { runProcess } from '../support/processes.js';

const world = worlds();
const probe = exitProbe('modules', 'JSON.stringify(process.moduleLoadList)');

/** What this Node loads for any CommonJS script, at its exit: not a run's doing (Node 20.10 starts its ES module loader for every one). */
function nodeLoads(): string[] {
  const script = join(tempDir('cr-empty-'), 'empty.cjs');
  writeFileSync(script, "process.on('exit', () => process.stdout.write(JSON.stringify(process.moduleLoadList)));\n");
  return JSON.parse(execFileSync(process.execPath, [script], { encoding: 'utf8' })) as string[];
}

const loadedByNode = nodeLoads();

/** What a run line never needs (each is what loading it brings in first), less what Node loads for any script. */
const UNUSED = [
  'NativeModule module',
  'NativeModule internal/modules/esm/loader',
  'NativeModule internal/source_map/source_map',
  'NativeModule timers/promises',
].filter((m) => !loadedByNode.includes(m));

/** The binary run under the probe: its exit status, stdout, and the modules Node loaded. */
async function probed(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; modules: string[] }> {
  const r = await probe.run(args, input, env);
  assert.equal(r.code, 0, r.stderr);
  return { stdout: r.stdout, modules: JSON.parse(r.said) as string[] };
}

describe('a run line loads no Node module it does not use', () => {
  test('a fresh turn, a resumed one, a dry run and a hand-over', async () => {
    const c = new Conversation(world({ CURSOR_RESUME_ENABLED: '1' }));
    for (const text of ['remember: the port is 8080', 'Which port?']) {
      c.messages.push({ role: 'user', content: text });
      const r = await probed(STREAM_ARGS, c.body(), c.env);
      // The probe sees the run's modules: the stream and its child were loaded.
      assert.ok(r.modules.includes('NativeModule child_process'), text);
      assert.deepEqual(
        UNUSED.filter((m) => r.modules.includes(m)),
        [],
        text,
      );
      c.messages.push({ role: 'assistant', content: resultOf(r.stdout).result });
    }
    assert.equal(c.lastTrace().decision, 'resume-delta', JSON.stringify(c.lastTrace()));
    c.messages.push({ role: 'user', content: 'And the config file?' });
    const dry = await probed(['--dry-run', '--model', 'gpt-5'], c.body(), c.env);
    assert.equal(JSON.parse(dry.stdout).decision, 'resume-delta');
    assert.deepEqual(
      UNUSED.filter((m) => dry.modules.includes(m)),
      [],
    );
    // cursor-agent's own line (--version), handed over by boot.cjs before the CLI loads.
    const handed = await probed(['--version'], '', c.env);
    const direct = await runProcess(process.execPath, [STAND_IN, '--version'], { env: c.env });
    assert.equal(handed.stdout, direct.stdout, 'the line was handed to cursor-agent');
    assert.deepEqual(
      UNUSED.filter((m) => handed.modules.includes(m)),
      [],
    );
  });
});
