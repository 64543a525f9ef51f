import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildAgentArgv, parseCallerArgs } from '../../src/agent/argv.js';

describe('the caller command line', () => {
  test("ours are removed, cursor-agent's kept in order", () => {
    const c = parseCallerArgs([
      '--print',
      '--dry-run',
      '--output-format',
      'stream-json',
      '--verbose',
      '--trace',
      '/tmp/t',
      '--model=gpt-5',
      '-f',
    ]);
    assert.deepEqual(c.agentArgs, ['--print', '--output-format', 'stream-json', '--model', 'gpt-5', '-f']);
    assert.deepEqual(
      [c.dryRun, c.verbose, c.trace, c.model, c.outputFormat, c.print],
      [true, true, '/tmp/t', 'gpt-5', 'stream-json', true],
    );
  });
  test('a flag value that looks like ours is a value', () => {
    const c = parseCallerArgs(['--model', '--dry-run']);
    assert.equal(c.dryRun, false);
    assert.equal(c.model, '--dry-run');
  });
  test('subcommands and prompts are positionals', () => {
    assert.deepEqual(parseCallerArgs(['--api-key', 'k', 'status']).positionals, ['status']);
    assert.deepEqual(parseCallerArgs(['-p', 'fix', 'it']).positionals, ['fix', 'it']);
  });
  test('--resume with and without an ID', () => {
    assert.deepEqual(parseCallerArgs(['--resume', 'abc', '-p']).agentArgs, ['--resume', 'abc', '-p']);
    const bare = parseCallerArgs(['--resume', '--print']);
    assert.equal(bare.callerResume, true);
    assert.deepEqual(bare.positionals, []);
    assert.equal(parseCallerArgs(['--continue']).callerResume, true);
  });
  test('a value flag without its value is a usage error', () => {
    assert.throws(() => parseCallerArgs(['--model']), /--model needs a value/);
    assert.throws(() => parseCallerArgs(['--trace']), /--trace needs a file/);
    assert.throws(() => parseCallerArgs(['--dry-run=yes']), /takes no value/);
  });
});

describe('the argv cursor-agent gets', () => {
  const none = { model: undefined, workspace: undefined, resumeChatId: null, streamJson: false };
  test('transcript model and workspace only when the caller gave none', () => {
    const c = parseCallerArgs(['--print']);
    assert.deepEqual(buildAgentArgv(c, { ...none, model: 'gpt-5', workspace: '/w' }), ['--print', '--model', 'gpt-5', '--workspace', '/w']);
    const own = parseCallerArgs(['--model', 'sonnet', '--workspace', '/x']);
    assert.deepEqual(buildAgentArgv(own, { ...none, model: 'gpt-5', workspace: '/w' }), ['--model', 'sonnet', '--workspace', '/x']);
  });
  test('--resume only for a resumed plan, last', () => {
    assert.deepEqual(buildAgentArgv(parseCallerArgs(['-p']), { ...none, resumeChatId: 'abc' }), ['-p', '--resume', 'abc']);
  });
  test('text or json output is run as stream-json so the chat ID can be read', () => {
    const c = parseCallerArgs(['--output-format=json', '-f']);
    assert.deepEqual(buildAgentArgv(c, { ...none, streamJson: true }), ['-f', '--print', '--output-format', 'stream-json']);
    const s = parseCallerArgs(['-p', '--output-format', 'stream-json']);
    assert.deepEqual(buildAgentArgv(s, { ...none, streamJson: true }), ['-p', '--output-format', 'stream-json']);
  });
});
