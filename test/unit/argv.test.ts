import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildAgentArgv, callerChat, parseCallerArgs } from '../../src/agent/argv.js';
import { resolveSettings } from '../../src/config.js';
import { parseTranscript } from '../../src/transcript/parse.js';
import { analyzeTurn } from '../../src/turn/plan.js';

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
  test('the chat a line continues itself: named by --resume, unnamed, or none', () => {
    const chat = (argv: string[], tty = false) => callerChat(parseCallerArgs(argv), () => tty);
    assert.deepEqual(chat(['-p', '--resume', 'abc']), { chatId: 'abc' });
    assert.deepEqual(chat(['--resume=abc', 'a prompt']), { chatId: 'abc' });
    for (const unnamed of [
      ['--continue'],
      ['--resume', '-p'],
      ['--resume='],
      ['resume', 'go on'],
      ['-p', '--', 'resume', 'go on'],
      ['acp'],
      ['--resume', 'ls'],
      // Several at once: which one a parser keeps is its own affair.
      ['--resume', 'abc', '--continue'],
      ['--resume=abc', '--resume'],
      ['--resume', 'abc', '--resume', 'def'],
    ])
      assert.deepEqual(chat(unnamed), { chatId: null }, unnamed.join(' '));
    // `ls` picks a chat only on a terminal; elsewhere it lists them.
    assert.deepEqual(chat(['ls'], true), { chatId: null });
    for (const none of [
      ['-p'],
      ['-p', 'a prompt'],
      ['status'],
      ['ls'],
      ['--model', 'ls', '-p'],
      ['resume', '--help'],
      ['--resume', 'abc', '-v'],
    ])
      assert.equal(chat(none), null, none.join(' '));
  });
  test('grouped short flags: letters are flags until one that takes a value, which takes the rest or the next word', () => {
    const grouped = parseCallerArgs(['-fH', 'x-foo: 1', '--print']);
    assert.deepEqual([grouped.agentArgs, grouped.positionals], [['-fH', 'x-foo: 1', '--print'], []]);
    const attached = parseCallerArgs(['-pHx-foo:1', 'fix']);
    assert.deepEqual([attached.agentArgs, attached.positionals, attached.print], [['-pHx-foo:1', 'fix'], ['fix'], true]);
    assert.equal(parseCallerArgs(['-pf']).print, true);
    assert.equal(parseCallerArgs(['-fv']).version, true);
    assert.equal(parseCallerArgs(['-fh']).help, true);
    assert.throws(() => parseCallerArgs(['-fe']), /-e needs a value/);
  });
  test('a `--` ends the options: the words after it are positionals', () => {
    const c = parseCallerArgs(['-p', '--', '--model', 'x']);
    assert.deepEqual([c.positionals, c.model, c.separatorAt], [['--model', 'x'], undefined, 1]);
    assert.equal(parseCallerArgs(['--model', '--']).separatorAt, undefined, 'a value, not a separator');
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
  test("what we add goes before a caller's trailing `--`, where cursor-agent still reads it as flags", () => {
    const c = parseCallerArgs(['--print', '--output-format', 'text', '--']);
    assert.deepEqual(buildAgentArgv(c, { model: 'gpt-5', workspace: '/w', resumeChatId: 'abc', streamJson: true }), [
      '--print',
      '--output-format',
      'stream-json',
      '--model',
      'gpt-5',
      '--workspace',
      '/w',
      '--resume',
      'abc',
      '--',
    ]);
  });
  test('grouped -p counts as --print: no second one is added', () => {
    assert.deepEqual(buildAgentArgv(parseCallerArgs(['-pf']), { ...none, streamJson: true }), ['-pf', '--output-format', 'stream-json']);
  });
  test('text or json output is run as stream-json so the chat ID can be read', () => {
    const c = parseCallerArgs(['--output-format=json', '-f']);
    assert.deepEqual(buildAgentArgv(c, { ...none, streamJson: true }), ['-f', '--print', '--output-format', 'stream-json']);
    const s = parseCallerArgs(['-p', '--output-format', 'stream-json']);
    assert.deepEqual(buildAgentArgv(s, { ...none, streamJson: true }), ['-p', '--output-format', 'stream-json']);
  });
});

describe('the account a run line runs as is part of the anchor', () => {
  const conversation = parseTranscript(JSON.stringify({ model: 'gpt-5', messages: [{ role: 'user', content: 'remember: a' }] }));
  const settings = resolveSettings({}, {}, {}).settings;
  const anchor = (argv: string[], env: NodeJS.ProcessEnv = {}): string | null =>
    analyzeTurn(conversation, { caller: parseCallerArgs(argv), settings, env, workspace: '/w' }).anchor;

  test('another API key (a non-empty --api-key, else CURSOR_API_KEY) or endpoint (-e, --endpoint) is another conversation', () => {
    const login = anchor(['-p']);
    const keyA = anchor(['-p', '--api-key', 'key-A']);
    const keyB = anchor(['-p', '--api-key=key-B']);
    const endpoint = anchor(['-p', '--api-key', 'key-A', '-e', 'https://b.example']);
    assert.equal(new Set([login, keyA, keyB, endpoint]).size, 4);
    // The same key or endpoint however it is given.
    assert.equal(anchor(['-p'], { CURSOR_API_KEY: 'key-A' }), keyA);
    assert.equal(anchor(['-p', '--api-key', 'key-A'], { CURSOR_API_KEY: 'key-B' }), keyA, '--api-key wins over CURSOR_API_KEY');
    assert.equal(anchor(['-p', '--api-key', 'key-A', '--endpoint=https://b.example']), endpoint);
    assert.equal(anchor(['-pf', '--api-key', 'key-A', '-e', 'https://b.example']), endpoint);
    assert.equal(anchor(['--api-key', 'key-A', '-fe', 'https://b.example', '-p']), endpoint);
    assert.equal(anchor(['--api-key', 'key-A', '-ehttps://b.example', '-p']), endpoint);
    // An empty CURSOR_API_KEY is none; flags that do not change who runs change nothing.
    assert.equal(anchor(['-p'], { CURSOR_API_KEY: '' }), login);
    // An empty --api-key is none either: the environment's key is the one cursor-agent uses.
    assert.equal(anchor(['-p', '--api-key='], { CURSOR_API_KEY: 'key-A' }), keyA);
    assert.equal(anchor(['-p', '--api-key', ''], { CURSOR_API_KEY: 'key-B' }), keyB);
    assert.equal(anchor(['-p', '--api-key=']), login);
    assert.equal(anchor(['-p', '--mode', 'plan', '--sandbox', 'enabled', '--force', '-H', 'x-trace: 1', '--add-dir', '/x']), login);
  });
});
