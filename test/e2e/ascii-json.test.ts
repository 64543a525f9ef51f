// A large JSON body with a few non-ASCII characters, read by the built binary as one-byte
// text with those characters as \u escapes (src/transcript/ascii-json.ts): the plan is the
// plan of the same body written with escapes (pure ASCII, the ordinary path), and a body it
// cannot read alike gets the ordinary error.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { runCli, sandboxEnv } from '../support/cli.js';

const body = {
  model: 'gpt-5',
  messages: [
    { role: 'system', content: 'You’re a careful assistant ✓ — short answers.' },
    ...Array.from({ length: 5000 }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: `step ${k}: ${'word '.repeat(50)}` })),
    { role: 'user', content: 'Und jetzt: Grüße 😀' },
  ],
};
const raw = JSON.stringify(body);
/** The same JSON with every non-ASCII UTF-16 unit as a \u escape: pure ASCII. */
const escaped = raw.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

describe('a large JSON body with a few non-ASCII characters', () => {
  test('plans as the same body written in escapes', async () => {
    assert.ok(Buffer.byteLength(raw) > 1024 * 1024 && escaped !== raw);
    const env = sandboxEnv({ CURSOR_RESUME_ENABLED: '1' });
    const [a, b] = [await runCli(['--dry-run'], { input: raw, env }), await runCli(['--dry-run'], { input: escaped, env })];
    assert.equal(a.code, 0, a.stderr);
    assert.equal(a.stdout, b.stdout);
    assert.match(JSON.parse(a.stdout).prompt as string, /Grüße 😀/);
  });

  test('a character after a backslash, no JSON escape, gets the ordinary error', async () => {
    const broken = raw.replace('Grüße', '\\ü');
    let parseError = '';
    try {
      JSON.parse(broken);
    } catch (error) {
      parseError = (error as Error).message;
    }
    const r = await runCli(['--dry-run'], { input: broken, env: sandboxEnv() });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      `cursor-resume: stdin: not valid JSON (${parseError}); send one complete JSON object, or plain text that does not start with "{"\n`,
    );
  });
});
