// A turn whose input needs no schema never initialises zod (scripts/build.mjs, lazyZod):
// the built binary, run with a preload that says at exit whether zod's core started (it
// sets globalThis.__zod_globalConfig as it does). Input a schema must read still starts
// it, and through it gets the schema's own message: the probe sees both.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { Conversation, STREAM_ARGS, resultOf } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';
import { exitProbe } from '../support/probe.js';
import type { RunResult } from '../support/processes.js';

const world = worlds();
const probe = exitProbe('zod', "'__zod_globalConfig' in globalThis");

/** The binary run under the probe: its result, and whether zod was initialised. */
async function probed(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<RunResult & { zod: boolean }> {
  const { said, ...r } = await probe.run(args, input, env);
  assert.match(said, /^(true|false)$/);
  return { ...r, zod: said === 'true' };
}

const DRY = ['--dry-run', '--model', 'gpt-5'];

describe('zod starts only for input a schema must read', () => {
  test('a plain OpenAI turn, fresh then resumed, never initialises zod', async () => {
    const c = new Conversation(world({ CURSOR_RESUME_ENABLED: '1' }));
    for (const text of ['remember: the port is 8080', 'Which port?']) {
      c.messages.push({ role: 'user', content: text });
      const r = await probed(STREAM_ARGS, c.body(), c.env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.zod, false, text);
      c.messages.push({ role: 'assistant', content: resultOf(r.stdout).result });
    }
    assert.equal(c.lastTrace().decision, 'resume-delta', JSON.stringify(c.lastTrace()));
  });

  test("a plain-text prompt, the OpenCode plugin's text and a plain OpenAI dry run never initialise zod", async () => {
    const env = world();
    const text = await probed(DRY, 'hello there', env);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(JSON.parse(text.stdout).reason, 'plain-text');
    assert.equal(text.zod, false);
    // The OpenCode plugin's own bytes: the caller every turn of which should be cheap (our own switch, as
    // the README asks for OpenCode: with the plugin's on, its prompts are passed on unproven).
    const plugin = readFileSync(new URL('../fixtures/opencode-plugin/turn2-off-chat.txt', import.meta.url), 'utf8');
    const layout = await probed(DRY, plugin, { ...env, CURSOR_ACP_SESSION_RESUME: '0', CURSOR_RESUME_ENABLED: '1' });
    assert.equal(layout.code, 0, layout.stderr);
    // Read as a conversation (it has an anchor), not passed on as plain text.
    const plan = JSON.parse(layout.stdout) as { reason: string; anchor: string | null };
    assert.deepEqual([plan.reason, typeof plan.anchor], ['no-entry', 'string']);
    assert.equal(layout.zod, false);
    const body = JSON.stringify({ model: 'gpt-5', messages: [{ role: 'user', content: 'hi' }], tools: null });
    const openai = await probed(DRY, body, env);
    assert.equal(openai.code, 0, openai.stderr);
    assert.equal(openai.zod, false);
  });

  test('input the hand checks do not take starts zod, and gets its message', async () => {
    const env = world();
    const cases: Array<[string, object, RegExp]> = [
      ['an AI SDK prompt', { prompt: [{ role: 'user', content: 'hi' }] }, /^$/],
      ['content in parts', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, /^$/],
      [
        'a model that is no string',
        { model: 5, messages: [{ role: 'user', content: 'hi' }] },
        /^cursor-resume: model: expected a string, got a number\n$/,
      ],
      [
        'a tool with no name',
        { messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: '' } }] },
        /^cursor-resume: tools\[0\]\.function\.name: must not be empty: a tool needs a name\n$/,
      ],
    ];
    for (const [name, body, stderr] of cases) {
      const r = await probed(DRY, JSON.stringify(body), env);
      assert.equal(r.zod, true, name);
      assert.match(r.stderr, stderr, name);
    }
  });
});
