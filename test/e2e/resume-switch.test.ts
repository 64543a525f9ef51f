// cursor-resume's own resume switch (CURSOR_RESUME_ENABLED, config set resume), which
// callers such as OpenCode's Cursor plugin do not read, and the shared
// CURSOR_ACP_SESSION_RESUME, which decides only when ours is unset.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli } from '../support/cli.js';
import { Conversation } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';

const world = worlds();
// A world with no CURSOR_ACP_SESSION_RESUME at all: only what the test sets.
const bare = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env = world(extra);
  if (!('CURSOR_ACP_SESSION_RESUME' in extra)) delete env.CURSOR_ACP_SESSION_RESUME;
  return env;
};

async function twoTurns(env: NodeJS.ProcessEnv): Promise<{ c: Conversation; stderr: string[] }> {
  const c = new Conversation(env);
  const first = await c.turn('remember: the port is 8080');
  assert.equal(first.code, 0, first.stderr);
  const second = await c.turn('What is the port?');
  assert.equal(second.code, 0, second.stderr);
  return { c, stderr: [first.stderr, second.stderr] };
}

describe('the resume switch', () => {
  test('CURSOR_RESUME_ENABLED=1 alone resumes, and the caller sees no --resume of its own', async () => {
    const { c, stderr } = await twoTurns(bare({ CURSOR_RESUME_ENABLED: '1' }));
    assert.deepEqual(
      c.traces().map((t) => [t.decision, t.reason]),
      [
        ['fresh', 'no-entry'],
        ['resume-delta', 'delta'],
      ],
    );
    assert.deepEqual(stderr, ['', '']);
  });

  test('config set resume true resumes; CURSOR_RESUME_ENABLED=0 wins over it and over CURSOR_ACP_SESSION_RESUME=1', async () => {
    const env = bare();
    const set = await runCli(['config', 'set', 'resume', 'true'], { env });
    assert.equal(set.code, 0, set.stderr);
    const on = await twoTurns(env);
    assert.equal(on.c.lastTrace().decision, 'resume-delta');
    const off = await twoTurns({ ...env, CURSOR_RESUME_ENABLED: '0', CURSOR_ACP_SESSION_RESUME: '1' });
    assert.deepEqual(
      off.c.traces().map((t) => t.reason),
      ['disabled', 'disabled'],
    );
  });

  test('the config file says off: CURSOR_ACP_SESSION_RESUME=1 does not turn it on', async () => {
    const env = bare({ CURSOR_ACP_SESSION_RESUME: '1' });
    assert.equal((await runCli(['config', 'set', 'resume', 'false'], { env })).code, 0);
    const { c } = await twoTurns(env);
    assert.deepEqual(
      c.traces().map((t) => t.reason),
      ['disabled', 'disabled'],
    );
  });

  test('--verbose names the setting that turned it off, as inspect --transcript does', async () => {
    for (const [env, why] of [
      [bare({ CURSOR_RESUME_ENABLED: '0' }), 'CURSOR_RESUME_ENABLED is "0"'],
      [bare(), 'resume is opt-in: set CURSOR_RESUME_ENABLED=1 (or cursor-resume config set resume true)'],
    ] as const) {
      const c = new Conversation(env);
      const r = await c.turn('remember: alpha', { args: ['--print', '--output-format', 'stream-json', '--verbose'] });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stderr.startsWith(`cursor-resume: resume is off: ${why}\n`), r.stderr);
    }
  });

  for (const value of ['enabled', '2', 'y']) {
    test(`CURSOR_ACP_SESSION_RESUME=${value}: off, as the plugin reads it, and nothing said`, async () => {
      const { c, stderr } = await twoTurns(bare({ CURSOR_ACP_SESSION_RESUME: value }));
      assert.deepEqual(
        c.traces().map((t) => t.reason),
        ['disabled', 'disabled'],
      );
      assert.deepEqual(stderr, ['', '']);
    });
  }

  test('CURSOR_RESUME_ENABLED=maybe: said once, and CURSOR_ACP_SESSION_RESUME decides', async () => {
    const { c, stderr } = await twoTurns(bare({ CURSOR_RESUME_ENABLED: 'maybe', CURSOR_ACP_SESSION_RESUME: '1' }));
    assert.equal(c.lastTrace().decision, 'resume-delta');
    for (const line of stderr)
      assert.match(
        line,
        /^cursor-resume: ignoring resume \(from CURSOR_RESUME_ENABLED\): "maybe" is not a boolean[^\n]*; unset CURSOR_RESUME_ENABLED or fix its value\n$/,
      );
  });

  test('config set resume takes only a boolean, and nothing is written', async () => {
    const env = bare();
    const r = await runCli(['config', 'set', 'resume', 'perhaps'], { env });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^cursor-resume: resume \(config set\): "perhaps" is not a boolean[^\n]*\n$/);
    assert.equal(
      (await runCli(['config', 'get', 'resume', '--json'], { env })).stdout,
      '{"name":"resume","value":false,"source":"default"}\n',
    );
  });
});
