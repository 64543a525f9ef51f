// The shell and CI faces through the built binary: inspect (the table and the
// step-by-step explanation), evict, config, simulate, the trace file, colour
// rules, help and the manual page. The cache is filled with real turns through
// the stand-in cursor-agent; every helper a test starts is stopped at the end.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import stringWidth from 'string-width';
import { BIN, ROOT, runCli, sandboxEnv, scriptAgent, startGate, tempDir, type RunResult } from '../support/cli.js';
import { Conversation, STREAM_ARGS } from '../support/conversation.js';
import { worlds } from '../support/hardening.js';
import { runProcess, waitFor } from '../support/processes.js';

const world = worlds();
/** What root is told of another user's config file: the tests run as root, the only user who can give a file away. */
const ROOT_ADVICE = 'run cursor-resume as that user: root runs no program another user names (with sudo, -H gives root a HOME of its own)';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[/;
/** The README as it is, and with every run of white space one blank (its sentences wrap anywhere). */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const README_FLAT = README.replace(/\s+/g, ' ');
const cli = (args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<RunResult> =>
  runCli(args, { env, ...(input !== undefined ? { input } : {}) });
const json = (r: RunResult): any => {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
};
const write = (dir: string, name: string, text: string): string => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};

/** A conversation of two recorded turns, plus a diverging one: two branches under one anchor. */
async function filledCache(): Promise<{ c: Conversation; env: NodeJS.ProcessEnv; anchor: string; dir: string }> {
  const env = world();
  const c = new Conversation(env);
  assert.equal((await c.turn('remember: the port is 8080')).code, 0);
  assert.equal((await c.turn('remember: the host is db.internal')).code, 0);
  const anchor = c.lastTrace().anchor as string;
  // Same opener, an edited second message: a sibling branch with its own chat.
  const sibling = new Conversation(env);
  Object.assign(sibling, { workspace: c.workspace });
  sibling.messages = structuredClone(c.messages.slice(0, 3));
  const r = await sibling.turn('remember: the user is alice');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(sibling.lastTrace().anchor, anchor);
  return { c, env, anchor, dir: tempDir() };
}

describe('inspect: the table', { concurrency: true }, () => {
  test('no helper running: said plainly, exit 0, nothing started', async () => {
    const env = world();
    const human = await cli(['inspect'], env);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /^no helper running \(socket .*helper\.sock\): nothing is cached\./);
    assert.equal(human.stderr, '');
    assert.deepEqual(json(await cli(['inspect', '--json'], env)), {
      running: false,
      socketPath: join(env.CURSOR_RESUME_RUNTIME_DIR!, 'helper.sock'),
      entries: [],
    });
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no helper was started, no folder created');
  });

  test('a running helper with nothing cached', async () => {
    const env = world();
    assert.equal((await cli(['helper', 'start'], env)).code, 0);
    const r = await cli(['inspect'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^no cached entries \(helper pid \d+, version \d+\.\d+\.\d+\)\.\n$/);
    const data = json(await cli(['inspect', '--json'], env));
    assert.equal(data.running, true);
    assert.deepEqual(data.entries, []);
  });

  test('one conversation of one branch, a short workspace: the table fits 80 columns, and says nothing of branches', async () => {
    const env = world();
    const c = new Conversation(env);
    // ~/src/app, as a person's project would be.
    const workspace = join(env.HOME!, 'src', 'app');
    mkdirSync(workspace, { recursive: true });
    Object.assign(c, { workspace });
    assert.equal((await c.turn('remember: the port is 8080')).code, 0);
    const r = await cli(['inspect'], env);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[1]!, / ~\/src\/app /);
    assert.match(lines[0]!, /^ANCHOR\s+WORKSPACE\s+MODEL\s+CHAT\s+TURNS\s+KNOWN\s+IDLE\s+LEFT\s+OUTCOME\s+SAVED$/);
    for (const line of lines) assert.ok(line.length <= 80, `within 80 columns: ${JSON.stringify(line)} (${line.length})`);
  });

  test('entries: one row per branch, aligned, short IDs, no message text', async () => {
    const { c, env, anchor } = await filledCache();
    const r = await cli(['inspect'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, ANSI, 'not a terminal: no colour');
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ANCHOR\s+WORKSPACE\s+MODEL\s+CHAT\s+BRANCH\s+TURNS\s+KNOWN\s+IDLE\s+LEFT\s+OUTCOME\s+SAVED$/);
    assert.equal(lines.length, 5, r.stdout);
    const rows = lines.slice(1, 3);
    for (const row of rows) {
      assert.ok(row.startsWith(`${anchor.slice(0, 7)}  `), row);
      assert.match(row, /gpt-5/);
      assert.match(row, / (\d+m|1h) /);
      assert.match(row, /success/);
    }
    assert.deepEqual(rows.map((row) => / ([12])\/2 /.exec(row)?.[1]).sort(), ['1', '2']);
    // Columns line up: every row has its MODEL cell where the header has it.
    const at = lines[0]!.indexOf('MODEL');
    for (const row of rows) assert.equal(row.slice(at, at + 5), 'gpt-5');
    assert.match(lines[3]!, /^2 branches of 1 conversation \(2 of 64 entries\), \d+ B of prompt saved;$/);
    assert.match(lines[4]!, /^helper pid \d+, version /);
    assert.doesNotMatch(r.stdout, /remember|8080|alice/, 'the cache holds no text');
    // The workspace (short enough to be shown whole) in its column, on every row.
    const ws = lines[0]!.indexOf('WORKSPACE');
    for (const row of rows) assert.equal(row.slice(ws, ws + c.workspace.length + 2), `${c.workspace}  `, row);
  });

  test('a workspace with wide characters keeps the row aligned on a terminal', async () => {
    const env = world();
    const c = new Conversation(env);
    const workspace = join(tempDir(), '项目');
    mkdirSync(workspace);
    Object.assign(c, { workspace });
    assert.equal((await c.turn('remember: the port is 8080')).code, 0);
    const r = await cli(['inspect'], env);
    assert.equal(r.code, 0, r.stderr);
    const [header, row] = r.stdout.split('\n');
    assert.ok(row!.includes(`  ${workspace}  `), row);
    // Each of 项 and 目 takes two columns: what stands before MODEL must be as wide as in the header.
    for (const [name, cell] of [
      ['MODEL', 'gpt-5'],
      ['CHAT', c.lastTrace().chatId as string],
    ] as const) {
      assert.equal(stringWidth(row!.slice(0, row!.indexOf(` ${cell.slice(0, 7)}`) + 1)), header!.indexOf(name), `${name} column`);
    }
  });

  test('--json: every field, full IDs', async () => {
    const { c, env, anchor } = await filledCache();
    const data = json(await cli(['inspect', '--json'], env));
    assert.equal(data.running, true);
    assert.equal(data.current, true);
    assert.deepEqual(data.limits, { ttlMs: 3_600_000, maxEntries: 64 });
    assert.equal(data.entries.length, 2);
    const [newest, older] = data.entries;
    assert.deepEqual(Object.keys(newest), [
      'anchor',
      'chatId',
      'workspace',
      'model',
      'branches',
      'turns',
      'knownCount',
      'createdAt',
      'updatedAt',
      'ageMs',
      'ttlLeftMs',
      'lastOutcome',
      'state',
      'leased',
      'version',
      'bytesSaved',
      'toolsFingerprint',
    ]);
    // The README lists the same fields, and says ageMs counts from the last turn.
    const documented = /`entries`, one per branch: (.*?`toolsFingerprint`)\./.exec(README_FLAT)?.[1] ?? '';
    const names = [...documented.replace(/ \([^)]*\)/g, '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    assert.deepEqual(names, Object.keys(newest), 'the README documents every entry field');
    assert.match(documented, /`ageMs` \(milliseconds since its \*last\* turn, that is since `updatedAt`, not since `createdAt`\)/);
    const sinceLastTurn = Date.now() - Date.parse(newest.updatedAt);
    assert.ok(newest.ageMs >= 0 && newest.ageMs <= sinceLastTurn, 'ageMs counts from updatedAt');
    assert.ok(Date.parse(older.createdAt) < Date.parse(older.updatedAt), 'two turns: created before its last turn');
    assert.ok(older.ageMs < Date.now() - Date.parse(older.createdAt), 'ageMs does not count from createdAt');
    assert.equal(newest.anchor, anchor);
    assert.equal(newest.workspace, c.workspace);
    assert.equal(newest.model, 'gpt-5');
    assert.equal(newest.branches, 2);
    assert.equal(newest.turns, 1, 'the sibling: one fresh turn');
    assert.equal(newest.knownCount, 5);
    assert.equal(older.turns, 2);
    assert.equal(older.knownCount, 5);
    assert.ok(older.bytesSaved > 0, 'the resumed turn saved bytes');
    assert.match(newest.chatId, /^[0-9a-f-]{36}$/);
    assert.ok(newest.ttlLeftMs > 3_500_000 && newest.ttlLeftMs <= 3_600_000);
    assert.equal(newest.lastOutcome, 'success');
    assert.ok(!Number.isNaN(Date.parse(newest.createdAt)));
    const colored = await cli(['inspect', '--json'], { ...env, FORCE_COLOR: '1' });
    assert.doesNotMatch(colored.stdout, ANSI, '--json is never coloured');
  });
});

describe('inspect --transcript: the decision step by step', { concurrency: true }, () => {
  test('a next turn resumes: the same plan as --dry-run, and as the real run', async () => {
    const { c, env, anchor, dir } = await filledCache();
    // The transcript of the next turn of the first conversation.
    c.messages.push({ role: 'user', content: 'What do you remember?' });
    const file = write(dir, 'next.json', c.body());
    const human = await cli(['inspect', '--transcript', file], env);
    assert.equal(human.code, 0, human.stderr);
    const out = human.stdout;
    for (const line of [
      /^transcript +.*next\.json: openai, 6 messages, 1 tool$/m,
      /^resume +on: CURSOR_ACP_SESSION_RESUME is "1" and CURSOR_RESUME_ENABLED is not set$/m,
      /^side call +no$/m,
      new RegExp(`^anchor +${anchor}$`, 'm'),
      new RegExp(`^  workspace +${c.workspace} \\(from the transcript\\)$`, 'm'),
      /^  model +gpt-5 \(from the transcript\)$/m,
      /^  opener +message 2 \(user\): "remember: the port is 8080"$/m,
      /^cache +helper pid \d+: 2 branches for this anchor$/m,
      /^  prefix +all 5 known messages match; the rest is new$/m,
      /^  prefix +3 of 5 known messages match; message 4 \(user\) differs: "remember: the host is db\.internal"$/m,
      /^  tools +same fingerprint$/m,
      /^  expiry +59m left$/m,
      /^decision +resume-delta \(delta\): all 5 known messages match; 1 new$/m,
      /^  argv +--print --output-format stream-json --model gpt-5 --workspace \S+ --resume [0-9a-f-]{36}$/m,
    ]) {
      assert.match(out, line);
    }
    const view = json(await cli(['inspect', '--transcript', file, '--json'], env));
    const dry = json(await runCli(['--dry-run'], { env, input: c.body() }));
    assert.deepEqual(view.plan, dry, 'inspect and --dry-run make the same plan');
    assert.equal(view.decision.decision, 'resume-delta');
    assert.equal(view.branches.length, 2);
    assert.deepEqual(view.branches.map((b: any) => b.verdict).sort(), ['delta', 'diverged']);
    const diverged = view.branches.find((b: any) => b.verdict === 'diverged');
    assert.deepEqual(diverged.prefix.divergedAt, { index: 3, role: 'user', preview: 'remember: the host is db.internal' });
    assert.equal(view.prompt.bytes, Buffer.byteLength('What do you remember?'));
    // And the run itself decides the same.
    const run = await c.send();
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason, c.lastTrace().chatId], ['resume-delta', 'delta', view.decision.chatId]);
    assert.equal(c.lastTrace().promptBytes, view.prompt.bytes);
    assert.equal(c.lastTrace().fullPromptBytes, view.prompt.fullBytes);
  });

  test('a line that names its chat: one reason, whatever the transcript and the switch', async () => {
    const { env, dir } = await filledCache();
    const text = write(dir, 'prompt.txt', 'remember: x');
    for (const [what, off] of [
      ['plain text, resume on', env],
      ['plain text, resume off', { ...env, CURSOR_RESUME_ENABLED: 'off' }],
    ] as const) {
      const r = await cli(['inspect', '--transcript', text, '--', '--resume', 'abc'], off);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^cache +not consulted: the caller chose the chat$/m, what);
      assert.match(r.stdout, /^decision +fresh \(caller-resume\)/m, what);
      assert.match(r.stdout, /^ +chat +the caller's, as its --resume or --continue names it; not recorded$/m, what);
    }
  });

  test('plain text: its anchor line says why there is none, not that it lacks a user message', async () => {
    const { env, dir } = await filledCache();
    // Blocks in the plugin's layout, but not exactly (a tool result without the closing line): plain text.
    const text = write(dir, 'almost.txt', 'USER: hi\n\nASSISTANT: there\n\nTOOL_RESULT (name: read, call_id: x): out');
    const r = await cli(['inspect', '--transcript', text], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^anchor +none: plain text is never anchored$/m);
    assert.match(r.stdout, /^decision +fresh \(plain-text\)/m);
  });

  test('resume off: disabled, and the cache is not consulted', async () => {
    const { c, env, dir } = await filledCache();
    c.messages.push({ role: 'user', content: 'next' });
    const file = write(dir, 'next.json', c.body());
    // Our own switch wins over the one callers share.
    const off = { ...env, CURSOR_RESUME_ENABLED: 'off' };
    const human = await cli(['inspect', '--transcript', file], off);
    assert.match(human.stdout, /^resume +off: CURSOR_RESUME_ENABLED is "off"$/m);
    assert.match(human.stdout, /^cache +not consulted: resume is off$/m);
    assert.match(human.stdout, /^decision +fresh \(disabled\)/m);
    const view = json(await cli(['inspect', '--transcript', file, '--json'], off));
    assert.equal(view.resume.enabled, false);
    assert.equal(view.cache.state, 'not-asked');
    assert.deepEqual(view.branches, []);
    assert.deepEqual(view.resume, { enabled: false, from: 'CURSOR_RESUME_ENABLED', why: 'CURSOR_RESUME_ENABLED is "off"' });
    // The plugin's switch has no wrong value: anything but 1, true, on or yes is off, and inspect says so.
    const other = await cli(['inspect', '--transcript', file], { ...env, CURSOR_ACP_SESSION_RESUME: 'nope' });
    assert.deepEqual([other.code, other.stderr], [0, '']);
    assert.match(
      other.stdout,
      /^resume +off: CURSOR_ACP_SESSION_RESUME is "nope" \(on only for 1, true, on or yes\) and CURSOR_RESUME_ENABLED is not set$/m,
    );
  });

  test('no helper: an empty cache, nothing started; stdin, --model and a run line', async () => {
    const env = world();
    const body = JSON.stringify({
      model: 'cursor-acp/gpt-5',
      messages: [{ role: 'user', content: 'Generate a title for this conversation: x' }],
    });
    const side = json(await cli(['inspect', '--transcript', '-', '--json'], env, body));
    assert.equal(side.decision.reason, 'side-call');
    assert.equal(side.sideCall.role, 'user');

    const plain = JSON.stringify({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    const view = json(await cli(['inspect', '--transcript', '-', '--model', 'sonnet-4', '--json', '--', '--print', '--force'], env, plain));
    assert.equal(view.cache.state, 'not-running');
    assert.equal(view.decision.reason, 'no-entry');
    assert.equal(view.anchor.model, 'sonnet-4');
    assert.equal(view.anchor.modelFrom, 'flag');
    assert.equal(view.anchor.workspaceFrom, 'current directory');
    assert.equal(view.anchor.workspace, ROOT.replace(/\/$/, ''));
    assert.deepEqual(view.anchor.account, { apiKeyFrom: null, endpoint: null });
    const keyed = json(
      await cli(['inspect', '--transcript', '-', '--json', '--', '--api-key', 'secret-key', '-e', 'https://b.example'], env, plain),
    );
    assert.deepEqual(keyed.anchor.account, { apiKeyFrom: 'flag', endpoint: 'https://b.example' });
    assert.notEqual(keyed.anchor.value, view.anchor.value, 'another account, another anchor');
    assert.ok(
      !JSON.stringify(keyed).replaceAll('"--api-key","secret-key"', '').includes('secret-key'),
      'the key shown only in the argv it goes to',
    );
    assert.deepEqual(view.decision.argv, ['--model', 'sonnet-4', '--print', '--force', '--output-format', 'stream-json']);
    const human = await cli(['inspect', '--transcript', '-'], env, plain);
    assert.match(human.stdout, /^cache +no helper running: empty cache \(a run would start one\)$/m);
    assert.match(human.stdout, /^transcript +stdin: openai, 2 messages, 0 tools$/m);
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no helper was started');
  });

  test('a helper that cannot be reached: the table exits 1, --transcript explains no-cache and exits 0, as --help says', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    // A symlinked runtime dir is refused: no helper can be reached there.
    const env = world({ CURSOR_RESUME_RUNTIME_DIR: join(dir, 'link') });
    const table = await cli(['inspect'], env);
    assert.equal(table.code, 1);
    assert.match(table.stderr, /^cursor-resume: cannot reach the helper: refusing the helper runtime dir .*symbolic link/);
    const body = write(dir, 'body.json', JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    const view = await cli(['inspect', '--transcript', body, '--json'], env);
    assert.equal(view.code, 0, view.stderr);
    assert.equal(view.stderr, '');
    const data = JSON.parse(view.stdout);
    assert.equal(data.cache.state, 'unreachable');
    assert.deepEqual([data.decision.decision, data.decision.reason], ['fresh', 'no-cache']);
    const help = (await cli(['inspect', '--help'], env)).stdout.replace(/\s+/g, ' ');
    assert.match(
      help,
      /Exit status: 0; 1 when, without --transcript, the helper cannot be reached or answers badly, or the runtimeDir setting cannot be used \(with --transcript, a folder that cannot be used is part of the explanation: reason no-cache, as a run would get, and exit 0\); 2 for a bad command line, and with --transcript for a bad transcript or setting \(a runtimeDir that is not an absolute path, or too long for the socket, included; without it, a setting not allowed is ignored with a warning, as a run ignores it\)/,
    );
    const relative = await cli(['inspect', '--transcript', body], world({ CURSOR_RESUME_RUNTIME_DIR: 'relative/dir' }));
    assert.equal(relative.code, 2, relative.stderr);
    assert.match(relative.stderr, /^cursor-resume: runtimeDir \(from CURSOR_RESUME_RUNTIME_DIR\): must be an absolute path/);
    assert.equal(relative.stdout, '');
  });

  test('bad arguments and transcripts: exit 2, one line saying what to do', async () => {
    const env = world();
    const dir = tempDir();
    const cases: Array<[string[], RegExp, string?]> = [
      [
        ['inspect', '--transcript', join(dir, 'missing.json')],
        /^cursor-resume: cannot read the transcript .*missing\.json: no such file\n$/,
      ],
      [['inspect', '--transcript', write(dir, 'bad.json', '{"messages": [')], /^cursor-resume: .*bad\.json: not valid JSON/],
      [
        ['inspect', '--transcript', write(dir, 'role.json', '{"messages":[{"role":"bot","content":"x"}]}')],
        /role\.json: messages\[0\]\.role: unknown role "bot"/,
      ],
      [['inspect', '--model', 'gpt-5'], /^cursor-resume: a run line, --model and --workspace go with --transcript FILE/],
      [['inspect', '--bogus'], /^cursor-resume: unknown option '--bogus' \(add --help for usage and examples\)\n$/],
      [['inspect', '--transcript'], /^cursor-resume: option '--transcript <file>' argument missing/],
      // A slip of one of our flags on the run line is refused as the run refuses it, not explained as cursor-agent's.
      [
        ['inspect', '--transcript', write(dir, 'ok.json', '{"messages":[{"role":"user","content":"hi"}]}'), '--', '--dryrun'],
        /^cursor-resume: unknown option "--dryrun": did you mean "--dry-run"\? Nothing was run/,
      ],
      [['config', 'list', '--', '--print', '--verbos'], /^cursor-resume: unknown option "--verbos": did you mean "--verbose"\?/],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, expected);
    }
  });
});

describe('evict', { concurrency: true }, () => {
  test('no helper running: nothing to evict, exit 0', async () => {
    const env = world();
    const r = await cli(['evict', '--all'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'no helper running: nothing is cached, nothing to evict\n');
    // One shape with or without a helper: what was asked (the anchor evicted, or --all and whether a mark is left).
    assert.deepEqual(json(await cli(['evict', 'abcd', '--json'], env)), { running: false, evicted: 0, anchor: null });
    assert.deepEqual(json(await cli(['evict', '--all', '--json'], env)), { running: false, evicted: 0, all: true, marked: false });
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no runtime folder made: no turn runs without one');
  });

  test('by prefix, then a prefix that matches nothing, then --all', async () => {
    const { c, env, anchor } = await filledCache();
    const miss = anchor[0] === 'f' ? '0000' : 'ffff';
    const none = await cli(['evict', miss], env);
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /^no cached conversation has an anchor beginning ffff|^no cached conversation has an anchor beginning 0000/);
    assert.deepEqual(json(await cli(['evict', miss, '--json'], env)), { running: true, evicted: 0, anchor: null });
    const r = await cli(['evict', anchor.slice(0, 8).toUpperCase()], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `evicted 2 branches of ${anchor}\n`);
    assert.deepEqual(json(await cli(['inspect', '--json'], env)).entries, []);
    // The next turn of that conversation starts a fresh chat.
    await c.turn('and now?');
    assert.deepEqual([c.lastTrace().decision, c.lastTrace().reason], ['fresh', 'no-entry']);
    assert.deepEqual(json(await cli(['evict', '--all', '--json'], env)), { running: true, evicted: 1, all: true, marked: false });
    const again = await cli(['evict', '--all'], env);
    assert.equal(again.stdout, 'evicted 0 branches: the cache is empty\n');
  });

  test('--all while a turn runs: what that turn would record is forgotten too', async (t) => {
    const { c, env } = await filledCache();
    c.messages.push({ role: 'user', content: 'remember: the db is pg' });
    const gate = startGate(t);
    const slow = runCli(STREAM_ARGS, { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    await waitFor('the slow turn to start cursor-agent', async () => c.invocations().length === 3);
    assert.deepEqual(json(await cli(['evict', '--all', '--json'], env)), { running: true, evicted: 2, all: true, marked: false });
    gate.open();
    const late = await slow;
    assert.equal(late.code, 0, late.stderr);
    assert.deepEqual(json(await cli(['inspect', '--json'], env)).entries, [], 'its record was refused');
  });

  test('--all with no helper running while a first turn runs: the helper that turn starts refuses its record', async (t) => {
    const env = world();
    const c = new Conversation(env);
    c.messages.push({ role: 'user', content: 'remember: the db is pg' });
    const gate = startGate(t);
    const slow = runCli(STREAM_ARGS, { input: c.body(), env: { ...c.env, CURSOR_STAND_IN_MODE: gate.mode } });
    let ended = false;
    void slow.then(() => (ended = true));
    await waitFor('the slow turn to start cursor-agent', async () => c.invocations().length === 1);
    assert.deepEqual(json(await cli(['evict', '--all', '--json'], env)), { running: false, evicted: 0, all: true, marked: true });
    const said = await cli(['evict', '--all'], env);
    assert.equal(said.stdout, 'no helper running: nothing is cached, nothing to evict; no turn running now will record its chat\n');
    assert.equal(ended, false, 'the first turn still runs: its helper is not yet started');
    gate.open();
    const late = await slow;
    assert.equal(late.code, 0, late.stderr);
    assert.deepEqual(json(await cli(['inspect', '--json'], env)).entries, [], 'its record was refused');
    assert.equal(readdirSync(env.CURSOR_RESUME_RUNTIME_DIR!).filter((name) => name.startsWith('forget-before.')).length, 0);
  });

  test('bad arguments: exit 2 with what to give', async () => {
    const env = world();
    const cases: Array<[string[], RegExp]> = [
      [['evict'], /evict what\? Give an anchor \(cursor-resume inspect lists them\), or --all/],
      [['evict', 'abc'], /"abc" is too short: give at least 4 characters/],
      [['evict', 'xyz1'], /"xyz1" is not an anchor: anchors are hexadecimal/],
      [['evict', 'ab\ncd'], /^cursor-resume: "ab\\ncd" is not an anchor: anchors are hexadecimal[^\n]*\n$/],
      [['evict', 'a'.repeat(33)], /is too long: an anchor has 32 characters/],
      [['evict', 'abcd', '--all'], /give an anchor or --all, not both/],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^cursor-resume: /);
      assert.match(r.stderr, expected);
    }
  });
});

describe('config', { concurrency: true }, () => {
  const fileOf = (env: NodeJS.ProcessEnv): string => join(env.XDG_CONFIG_HOME!, 'cursor-resume', 'config.json');

  test('a relative XDG_CONFIG_HOME is ignored, as the XDG spec says: the file is under ~/.config wherever cursor-resume runs', async () => {
    const base = world();
    const env = { ...base, XDG_CONFIG_HOME: 'relative/config' };
    const file = join(base.HOME!, '.config', 'cursor-resume', 'config.json');
    for (const cwd of [tempDir(), tempDir()]) {
      assert.equal((await runCli(['config', 'path'], { env, cwd })).stdout, `${file}\n`);
      const set = await runCli(['config', 'set', 'ttlMinutes', '30'], { env, cwd });
      assert.deepEqual([set.code, set.stdout, existsSync(join(cwd, 'relative'))], [0, `ttlMinutes = 30 (in ${file})\n`, false], set.stderr);
    }
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { ttlMinutes: 30 });
  });

  test('config set under a umask of 000 makes a file and folder only its user can write: the file names the program every turn runs', async () => {
    const env = world();
    const file = fileOf(env);
    const set = await runProcess(
      '/bin/sh',
      ['-c', 'umask 000 && exec "$@"', 'sh', process.execPath, BIN, 'config', 'set', 'resume', 'true'],
      {
        env,
      },
    );
    assert.equal(set.code, 0, set.stderr);
    for (const path of [file, dirname(file), env.XDG_CONFIG_HOME!]) {
      assert.equal((statSync(path).mode & 0o077).toString(8), '0', `${path} is open to others`);
    }
  });

  test('config set at the same time from many processes: every change lands (one writer at a time)', async () => {
    const env = world();
    const changes: Array<[string, string]> = [
      ['ttlMinutes', '30'],
      ['maxEntries', '40'],
      ['verbose', 'true'],
      ['retryFresh', 'false'],
      ['unsafeDelta', 'resume-full'],
      ['sideCallPatterns', '["^Summarise"]'],
    ];
    const runs = await Promise.all(changes.map(([name, value]) => cli(['config', 'set', name, value], env)));
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(fileOf(env), 'utf8'))).sort(), changes.map(([name]) => name).sort());
    assert.deepEqual(readdirSync(dirname(fileOf(env))), ['config.json'], 'no lock left behind');
  });

  test('a lock left by a writer that was killed is taken over: the next config set waits for it to go stale and lands', async () => {
    const env = world();
    assert.equal((await cli(['config', 'set', 'ttlMinutes', '30'], env)).code, 0);
    // What a writer killed while holding the lock leaves behind (proper-lockfile's lock is a folder).
    mkdirSync(`${fileOf(env)}.lock`);
    const set = await cli(['config', 'set', 'maxEntries', '40'], env);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(readFileSync(fileOf(env), 'utf8')), { ttlMinutes: 30, maxEntries: 40 });
    assert.deepEqual(readdirSync(dirname(fileOf(env))), ['config.json'], 'the old lock is gone too');
  });

  test('a writer that keeps holding the lock: config set gives up naming the lock, exit 1, nothing changed', async () => {
    const env = world();
    assert.equal((await cli(['config', 'set', 'ttlMinutes', '30'], env)).code, 0);
    const lock = `${fileOf(env)}.lock`;
    mkdirSync(lock);
    // A live writer keeps its lock's time fresh. A time an hour ahead stays fresh for the whole attempt
    // however slowly a loaded machine runs this test (a refreshing timer here could be late by seconds).
    const ahead = new Date(Date.now() + 3_600_000);
    utimesSync(lock, ahead, ahead);
    const set = await cli(['config', 'set', 'maxEntries', '40'], env);
    assert.equal(set.code, 1);
    assert.match(
      set.stderr,
      /^cursor-resume: another cursor-resume has been changing [^\n]*config\.json for over 3 seconds and holds its lock \([^\n]*config\.json\.lock\); try again, and if no other cursor-resume is running, remove that lock\n$/,
    );
    assert.deepEqual(JSON.parse(readFileSync(fileOf(env), 'utf8')), { ttlMinutes: 30 });
    assert.ok(existsSync(lock), "another's lock is not ours to remove");
  });

  test('a config folder that cannot be made: one line naming it and what to do, exit 1, nothing written', async () => {
    const env = world();
    // A file where the folder should be: refused by the file system whoever runs this (root included).
    writeFileSync(env.XDG_CONFIG_HOME!, 'not a folder');
    const r = await cli(['config', 'set', 'verbose', 'true'], env);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^cursor-resume: cannot write the config file [^\n]*config\.json: ENOTDIR[^\n]*Nothing was changed; check that you can create and write [^\n]*, or point XDG_CONFIG_HOME at a folder you own\n$/,
    );
    assert.equal(readFileSync(env.XDG_CONFIG_HOME!, 'utf8'), 'not a folder');
  });

  test('any other refusal of the file system, or a file nested too deeply to write back: one line, exit 1, nothing changed', async () => {
    const line = (what: RegExp) =>
      new RegExp(
        `^cursor-resume: cannot write the config file [^\\n]*config\\.json: ${what.source}[^\\n]*Nothing was changed; [^\\n]*\\n$`,
      );
    // A path too long for the file system.
    const long = world({ XDG_CONFIG_HOME: join(tempDir(), 'z'.repeat(5000)) });
    const tooLong = await cli(['config', 'set', 'ttlMinutes', '5'], long);
    assert.equal(tooLong.code, 1, tooLong.stderr);
    assert.match(tooLong.stderr, line(/ENAMETOOLONG/));
    // A lock folder that holds something: a lock left by a killed writer is taken over, and this one cannot be.
    const env = world();
    const lock = `${fileOf(env)}.lock`;
    mkdirSync(lock, { recursive: true });
    writeFileSync(join(lock, 'junk'), '');
    utimesSync(lock, new Date(0), new Date(0));
    const full = await cli(['config', 'set', 'ttlMinutes', '5'], env);
    assert.equal(full.code, 1, full.stderr);
    assert.match(full.stderr, line(/ENOTEMPTY/));
    assert.equal(existsSync(fileOf(env)), false, 'nothing was written');
    // Nested deeper than JSON.stringify can recurse: read, it is refused as a setting; written back, it overflowed.
    const deep = world();
    mkdirSync(dirname(fileOf(deep)), { recursive: true });
    const nested = `{"ttlMinutes": 30, "x": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    writeFileSync(fileOf(deep), nested);
    const overflow = await cli(['config', 'unset', 'ttlMinutes'], deep);
    assert.equal(overflow.code, 1, overflow.stderr);
    assert.match(
      overflow.stderr,
      /^cursor-resume: cannot write the config file [^\n]*config\.json: it nests too deeply to be written back \(Maximum call stack size exceeded\)\. Nothing was changed; remove its deepest value\n$/,
    );
    assert.equal(readFileSync(fileOf(deep), 'utf8'), nested, 'the file as it was');
  });

  test('a config file that cannot be read: a run whose agent the environment names says so once and runs; one that needs the file for it exits 2', async () => {
    const env = world();
    // A file where the folder should be: unreadable whoever runs this (root included).
    writeFileSync(env.XDG_CONFIG_HOME!, 'not a folder');
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    const run = await cli(['-p', '--output-format', 'text'], env, body);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Turn 1 of this chat/);
    assert.match(
      run.stderr,
      /^cursor-resume: ignoring the config file [^\n]*config\.json, which cannot be read \(ENOTDIR: [^\n]*\): running on the defaults, CURSOR_RESUME_AGENT naming the agent; one of the folders on its path is a file: move that file away, or point XDG_CONFIG_HOME at a folder you own\n$/,
    );
    const { CURSOR_RESUME_AGENT: _agent, ...noAgent } = env;
    const refused = await cli(['-p', '--output-format', 'text'], noAgent, body);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /^cursor-resume: cannot read the config file [^\n]*config\.json \(ENOTDIR: [^\n]*\); one of the folders on its path is a file: move that file away, or point XDG_CONFIG_HOME at a folder you own\n$/,
    );
  });

  test('a config file someone else could have written (theirs, writable by all, in a folder all may write) is not read: its agent never runs', async () => {
    // The file names the program every turn runs: read, it would run another user's program as ours.
    const cases: Array<{ make: (file: string) => void; reason: string; advice: (file: string) => string }> = [
      {
        make: (file) => chmodSync(file, 0o666),
        reason: 'every user may write it, mode 0666, and it names the program every turn runs',
        advice: (file) => `check that its agent is yours, then: chmod o-w ${file}`,
      },
      {
        // The tests run as root, who can give the file away; another user's file is refused even to root.
        make: (file) => chownSync(file, 4242, 4242),
        reason: 'it belongs to another user (uid 4242), and it names the program every turn runs',
        advice: () => ROOT_ADVICE,
      },
      {
        make: (file) => chmodSync(dirname(file), 0o777),
        reason: 'every user may replace it: its folder FOLDER is writable by all and not sticky',
        advice: (file) => `check that its agent is yours, then: chmod o-w ${dirname(file)}, or point XDG_CONFIG_HOME at a folder you own`,
      },
    ];
    for (const { make, reason, advice } of cases) {
      const env = world();
      const file = fileOf(env);
      const ran = join(tempDir('cr-theirs-'), 'ran');
      const theirs = scriptAgent('cursor-agent', `#!/bin/sh\necho ran > ${ran}\n`);
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, JSON.stringify({ agent: theirs }), { mode: 0o600 });
      make(file);
      const said = `the config file ${file} (${reason.replace('FOLDER', dirname(file))}); ${advice(file)}`;
      const list = await cli(['config', 'list'], env);
      assert.equal(list.code, 2, reason);
      assert.equal(list.stderr, `cursor-resume: will not read ${said}\n`);
      const set = await cli(['config', 'set', 'ttlMinutes', '10'], env);
      assert.equal(set.code, 2, reason);
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).agent, theirs, 'the file as it was');
      for (const args of [
        ['simulate', '-'],
        ['inspect', '--transcript', '-'],
      ]) {
        const refusedToo = await cli(args, env, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
        assert.deepEqual([refusedToo.code, refusedToo.stderr], [2, `cursor-resume: will not read ${said}\n`], args.join(' '));
      }
      // The commands that only find the helper go on without it, as the README says.
      const status = await cli(['helper', 'status'], { ...env, CURSOR_RESUME_AGENT: '' });
      assert.deepEqual([status.code, status.stderr], [3, `cursor-resume: ignoring the config file: will not read ${said}\n`], reason);
      assert.ok(
        README_FLAT.includes(
          '`config`, `simulate` and `inspect --transcript` refuse it (exit 2, saying why and the `chmod` or the move that fixes it; `config set` starts no file in such a folder, exit 2 too), `inspect`, `evict` and `helper` say so and go on without it',
        ),
      );
      const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
      // The environment names our agent: the turn runs on it, and says why the file was passed over.
      const run = await cli(['-p', '--output-format', 'text'], env, body);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^Turn 1 of this chat/);
      assert.ok(
        run.stderr.includes(
          `ignoring the config file ${file}, which is not read (${reason.replace('FOLDER', dirname(file))}): running on the defaults`,
        ),
        run.stderr,
      );
      const { CURSOR_RESUME_AGENT: _agent, ...noAgent } = env;
      const refused = await cli(['-p', '--output-format', 'text'], noAgent, body);
      assert.equal(refused.code, 2, reason);
      assert.equal(refused.stderr, `cursor-resume: will not read ${said}\n`);
      assert.equal(existsSync(ran), false, `${reason}: their agent ran`);
      // What the README's troubleshooting says such an exit 2 means.
      assert.ok(
        README_FLAT.includes(
          'exit 2 naming the config file means the `agent` setting in it cannot be used, or the file cannot be read or is not read (someone else could have written it',
        ),
      );
    }
  });

  test('on macOS, where XDG_CONFIG_HOME does not move the config file, no message says to point it elsewhere', async () => {
    // This Node says it runs on macOS (a preload): the file is then under ~/Library/Preferences, whatever XDG_CONFIG_HOME says.
    const preload = write(tempDir('cr-mac-'), 'darwin.cjs', "Object.defineProperty(process, 'platform', { value: 'darwin' });\n");
    const mac = (): NodeJS.ProcessEnv => world({ NODE_OPTIONS: `--require ${preload}` });
    const macFile = (env: NodeJS.ProcessEnv): string => join(env.HOME!, 'Library', 'Preferences', 'cursor-resume', 'config.json');
    const ours = (env: NodeJS.ProcessEnv, make: (file: string) => void): string => {
      const file = macFile(env);
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, '{}', { mode: 0o600 });
      make(file);
      return file;
    };
    const path = await cli(['config', 'path'], mac());
    assert.match(path.stdout, /\/Library\/Preferences\/cursor-resume\/config\.json\n$/, 'the preload makes it macOS');
    // Nor does the manual's entry for the variable say it moves the file there.
    const manual = readFileSync(join(ROOT, 'man', 'cursor-resume.1'), 'utf8');
    const entry = manual.slice(manual.indexOf('.B XDG_CONFIG_HOME\n'), manual.indexOf('.B XDG_RUNTIME_DIR\n'));
    assert.match(entry, /not on macOS, where the file is always\n\.IR ~\/Library\/Preferences\/cursor\\-resume\/config\.json \.\n\.TP\n$/);
    const theirs = mac();
    const theirFile = ours(theirs, (file) => chownSync(file, 4242, 4242));
    const open = mac();
    const openFile = ours(open, (file) => chmodSync(dirname(file), 0o777));
    const blocked = mac();
    const folder = dirname(macFile(blocked));
    mkdirSync(dirname(folder), { recursive: true });
    writeFileSync(folder, 'not a folder');
    const said: Array<[NodeJS.ProcessEnv, string[], RegExp | string]> = [
      [
        theirs,
        ['config', 'list'],
        `cursor-resume: will not read the config file ${theirFile} (it belongs to another user (uid 4242), and it names the program every turn runs); ${ROOT_ADVICE}\n`,
      ],
      [
        open,
        ['config', 'list'],
        `cursor-resume: will not read the config file ${openFile} (every user may replace it: its folder ${dirname(openFile)} is writable by all and not sticky); check that its agent is yours, then: chmod o-w ${dirname(openFile)}\n`,
      ],
      [
        blocked,
        ['config', 'list'],
        /^cursor-resume: cannot read the config file \S+ \(ENOTDIR: [^\n]*\); one of the folders on its path is a file: move that file away\n$/,
      ],
      [
        blocked,
        ['config', 'set', 'verbose', 'true'],
        /^cursor-resume: cannot write the config file [^\n]*: EEXIST: [^\n]*\. Nothing was changed; check that you can create and write \S+\n$/,
      ],
    ];
    for (const [env, args, stderr] of said) {
      const r = await cli(args, env);
      assert.ok(r.code === 1 || r.code === 2, `${args.join(' ')}: ${r.stderr}`);
      if (typeof stderr === 'string') assert.equal(r.stderr, stderr);
      else assert.match(r.stderr, stderr);
    }
  });

  test('a config file that is a symbolic link to a file in a folder every user may write, not sticky: not read, that folder named', async () => {
    const env = world();
    const file = fileOf(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const open = tempDir('cr-open-');
    chmodSync(open, 0o777);
    const target = write(open, 'config.json', JSON.stringify({ ttlMinutes: 7 }));
    chmodSync(target, 0o600);
    symlinkSync(target, file);
    const list = await cli(['config', 'get', 'ttlMinutes'], env);
    assert.equal(list.code, 2, list.stdout);
    assert.equal(
      list.stderr,
      `cursor-resume: will not read the config file ${file} (every user may replace it: its folder ${open} is writable by all and not sticky); check that its agent is yours, then: chmod o-w ${open}, or point XDG_CONFIG_HOME at a folder you own\n`,
    );
    // The folder made private, the link is read as ever.
    chmodSync(open, 0o700);
    assert.equal((await cli(['config', 'get', 'ttlMinutes'], env)).stdout, '7\n');
  });

  test('a config file below a folder every user may write, not sticky, higher up its path: not read, that folder named; config set starts none there', async () => {
    const env = world();
    const file = fileOf(env);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ ttlMinutes: 7 }), { mode: 0o600 });
    // XDG_CONFIG_HOME, two folders above the file: anyone may rename cursor-resume/ there and put their own.
    const open = env.XDG_CONFIG_HOME!;
    chmodSync(open, 0o777);
    const reason = `every user may replace it: ${open}, a folder above it, is writable by all and not sticky`;
    const get = await cli(['config', 'get', 'ttlMinutes'], env);
    assert.deepEqual([get.code, get.stdout], [2, '']);
    assert.equal(
      get.stderr,
      `cursor-resume: will not read the config file ${file} (${reason}); check that its agent is yours, then: chmod o-w ${open}, or point XDG_CONFIG_HOME at a folder you own\n`,
    );
    unlinkSync(file);
    const set = await cli(['config', 'set', 'ttlMinutes', '5'], env);
    assert.equal(set.code, 2, set.stderr);
    assert.ok(set.stderr.includes(`(${reason}, so it would not be read); chmod o-w ${open}`), set.stderr);
    assert.deepEqual(readdirSync(dirname(file)), [], 'nothing written, no lock left behind');
    // Sticky, as /tmp is, the file below is read.
    chmodSync(open, 0o1777);
    assert.equal((await cli(['config', 'set', 'ttlMinutes', '5'], env)).code, 0);
    assert.equal((await cli(['config', 'get', 'ttlMinutes'], env)).stdout, '5\n');
  });

  test('a config folder reached through a symbolic link that leads below a folder every user may write, not sticky: the file is not read, that folder named', async () => {
    const env = world();
    const open = tempDir('cr-open-');
    chmodSync(open, 0o777);
    mkdirSync(join(open, 'config', 'cursor-resume'), { recursive: true, mode: 0o700 });
    chmodSync(join(open, 'config'), 0o700);
    writeFileSync(join(open, 'config', 'cursor-resume', 'config.json'), JSON.stringify({ ttlMinutes: 7 }), { mode: 0o600 });
    // XDG_CONFIG_HOME itself a link into the open folder: the path as written passes every check.
    symlinkSync(join(open, 'config'), env.XDG_CONFIG_HOME!);
    const get = await cli(['config', 'get', 'ttlMinutes'], env);
    assert.deepEqual([get.code, get.stdout], [2, '']);
    assert.ok(
      get.stderr.includes(`(every user may replace it: ${open}, a folder above it, is writable by all and not sticky)`),
      get.stderr,
    );
    chmodSync(open, 0o1777);
    assert.equal((await cli(['config', 'get', 'ttlMinutes'], env)).stdout, '7\n');
  });

  test('config set into a folder every user may write, not sticky, where no file is yet: refused before it writes one no command would read', async () => {
    const env = world();
    const file = fileOf(env);
    mkdirSync(dirname(file), { recursive: true });
    chmodSync(dirname(file), 0o777);
    const set = await cli(['config', 'set', 'ttlMinutes', '5'], env);
    assert.equal(set.code, 2, set.stderr);
    assert.equal(set.stdout, '');
    assert.equal(
      set.stderr,
      `cursor-resume: will not write the config file ${file} (every user may replace it: its folder ${dirname(file)} is writable by all and not sticky, so it would not be read); chmod o-w ${dirname(file)}, or point XDG_CONFIG_HOME at a folder you own\n`,
    );
    assert.deepEqual(readdirSync(dirname(file)), [], 'nothing written, no lock left behind');
    // Sticky, it is read: written as ever.
    chmodSync(dirname(file), 0o1777);
    assert.equal((await cli(['config', 'set', 'ttlMinutes', '5'], env)).code, 0);
    assert.equal((await cli(['config', 'get', 'ttlMinutes'], env)).stdout, '5\n');
  });

  test('a config file its group may write, or in a sticky folder all may write, is read: as ssh reads one where each user has a group of their own', async () => {
    for (const make of [(file: string) => chmodSync(file, 0o664), (file: string) => chmodSync(dirname(file), 0o1777)]) {
      const env = world();
      const file = fileOf(env);
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      writeFileSync(file, JSON.stringify({ ttlMinutes: 7 }), { mode: 0o600 });
      make(file);
      const out = await cli(['config', 'get', 'ttlMinutes'], env);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(out.stdout, '7\n');
    }
  });

  test('a config file that cannot be read: config list, get, set and unset name it and what to do, exit 2, and change nothing', async () => {
    const env = world();
    const file = fileOf(env);
    // A folder where the file should be: unreadable whoever runs this (root included).
    mkdirSync(file, { recursive: true });
    for (const args of [
      ['config', 'list'],
      ['config', 'get', 'agent'],
      ['config', 'set', 'ttlMinutes', '10'],
      ['config', 'unset', 'ttlMinutes'],
    ]) {
      const out = await cli(args, env);
      assert.equal(out.code, 2, args.join(' '));
      assert.match(
        out.stderr,
        /^cursor-resume: cannot read the config file [^\n]*config\.json \(EISDIR: [^\n]*\); make it a file you can read\n$/,
        args.join(' '),
      );
    }
    assert.deepEqual(readdirSync(file), [], 'still the folder it was');
    assert.deepEqual(readdirSync(dirname(file)), ['config.json'], 'no lock left behind');
  });

  test('a FIFO where the config file should be: refused unread (exit 2), and a run goes on without it', { timeout: 60_000 }, async () => {
    const env = world();
    const file = fileOf(env);
    mkdirSync(dirname(file), { recursive: true });
    assert.equal(spawnSync('mkfifo', [file]).status, 0);
    for (const args of [
      ['config', 'list'],
      ['config', 'set', 'ttlMinutes', '10'],
    ]) {
      const out = await cli(args, env);
      assert.equal(out.code, 2, args.join(' '));
      assert.equal(
        out.stderr,
        `cursor-resume: cannot read the config file ${file} (it is a FIFO or a socket, not a file); make it a file you can read\n`,
        args.join(' '),
      );
    }
    assert.deepEqual(readdirSync(dirname(file)), ['config.json'], 'no lock left behind');
    const c = new Conversation(env);
    const r = await c.turn('hello');
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /ignoring the config file \S+, which cannot be read \(it is a FIFO or a socket, not a file\): running on the defaults/,
    );
  });

  test('a config file over 4 MiB, or a device that never ends (/dev/zero): refused (exit 2), and a run goes on without it', async () => {
    // /dev/zero was read until memory ran out (16 GB, then an abort), in every run and command.
    for (const make of [(file: string) => symlinkSync('/dev/zero', file), (file: string) => writeFileSync(file, ' '.repeat(5 << 20))]) {
      const env = world();
      const file = fileOf(env);
      mkdirSync(dirname(file), { recursive: true });
      make(file);
      const out = await cli(['config', 'list'], env);
      assert.equal(out.code, 2, out.stderr);
      assert.equal(
        out.stderr,
        `cursor-resume: cannot read the config file ${file} (it is larger than 4 MiB); a config file holds a few hundred bytes: move that one away, or (not on macOS) point XDG_CONFIG_HOME at another folder\n`,
      );
      const r = await new Conversation(env).turn('hello');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /ignoring the config file \S+, which cannot be read \(it is larger than 4 MiB\): running on the defaults/);
    }
  });

  test('runtimeDir set empty is its default written out, the automatic folder; a relative one, or one too long for its socket, is refused', async () => {
    const env = world();
    const set = await cli(['config', 'set', 'runtimeDir', ''], env);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(readFileSync(fileOf(env), 'utf8')), { runtimeDir: '' });
    const { CURSOR_RESUME_RUNTIME_DIR: _dir, ...fromFile } = env;
    assert.match((await cli(['config', 'list'], fromFile)).stdout, /^runtimeDir +\(automatic: [^)]+\) +file$/m);
    const relative = await cli(['config', 'set', 'runtimeDir', 'run/here'], env);
    assert.equal(relative.code, 2);
    assert.match(
      relative.stderr,
      /must be an absolute path whose helper\.sock fits the Unix limit of 103 bytes, or empty for the automatic folder/,
    );
    // /aaa.../helper.sock: 103 bytes, the Unix limit, then one more.
    const fits = `/${'a'.repeat(90)}`;
    assert.equal((await cli(['config', 'set', 'runtimeDir', fits], env)).code, 0);
    const tooLong = await cli(['config', 'set', 'runtimeDir', `${fits}a`], env);
    assert.equal(tooLong.code, 2);
    assert.equal(tooLong.stdout, '');
    assert.match(
      tooLong.stderr,
      /^cursor-resume: runtimeDir \(config set\): must be an absolute path whose helper\.sock fits the Unix limit of 103 bytes, or empty/,
    );
    assert.deepEqual(JSON.parse(readFileSync(fileOf(env), 'utf8')), { runtimeDir: fits }, 'the file as it was');
  });

  test('config get runtimeDir names the folder the helper uses, the automatic one too, or says why none can be used', async () => {
    const env = world();
    const { CURSOR_RESUME_RUNTIME_DIR: dir, ...automatic } = env;
    assert.equal((await cli(['config', 'get', 'runtimeDir'], env)).stdout, `${dir}\n`);
    // The folder a helper command uses is the one printed: helper status names its socket in it.
    const xdg = tempDir('xdg-run-');
    const chosen = { ...automatic, XDG_RUNTIME_DIR: xdg };
    const got = await cli(['config', 'get', 'runtimeDir'], chosen);
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, `${join(xdg, 'cursor-resume')}\n`);
    assert.deepEqual(json(await cli(['config', 'get', 'runtimeDir', '--json'], chosen)), {
      name: 'runtimeDir',
      value: '',
      source: 'default',
      folder: join(xdg, 'cursor-resume'),
    });
    const status = await cli(['helper', 'status', '--json'], chosen);
    assert.equal(status.code, 3, 'no helper runs there');
    assert.equal(JSON.parse(status.stdout).socketPath, join(xdg, 'cursor-resume', 'helper.sock'));

    const tooLong = await cli(['config', 'get', 'runtimeDir'], { ...automatic, XDG_RUNTIME_DIR: `/${'a'.repeat(120)}` });
    assert.equal(tooLong.code, 1);
    assert.equal(tooLong.stdout, '');
    assert.match(
      tooLong.stderr,
      /^cursor-resume: the helper socket path \S+ is \d+ bytes long, over the Unix limit .*Set CURSOR_RESUME_RUNTIME_DIR/,
    );
  });

  test('config get runtimeDir refuses, as a helper would, a path that names a file or a symbolic link, and changes nothing', async () => {
    const place = tempDir('runtime-');
    const file = join(place, 'a-file');
    writeFileSync(file, 'kept\n');
    const link = join(place, 'a-link');
    symlinkSync(place, link);
    for (const [dir, what] of [
      [file, 'it exists but is not a directory'],
      [link, 'it is a symbolic link, which someone else may control'],
    ] as const) {
      const env = { ...world(), CURSOR_RESUME_RUNTIME_DIR: dir };
      for (const args of [
        ['config', 'get', 'runtimeDir'],
        ['config', 'get', 'runtimeDir', '--json'],
      ]) {
        const got = await cli(args, env);
        assert.equal(got.code, 1, `${args.join(' ')} on ${dir}: ${got.stderr}`);
        assert.equal(got.stdout, '');
        assert.match(
          got.stderr,
          new RegExp(`^cursor-resume: refusing the helper runtime dir ${dir}: ${what}\\. Remove it, or set CURSOR_RESUME_RUNTIME_DIR`),
        );
      }
    }
    assert.equal(readFileSync(file, 'utf8'), 'kept\n');
    // A folder of ours open to others is one a helper makes private as it starts: usable, and left as it is by a look.
    const open = join(place, 'open');
    mkdirSync(open, { mode: 0o755 });
    chmodSync(open, 0o755);
    const got = await cli(['config', 'get', 'runtimeDir'], { ...world(), CURSOR_RESUME_RUNTIME_DIR: open });
    assert.equal(got.code, 0, got.stderr);
    assert.equal(got.stdout, `${open}\n`);
    assert.equal(statSync(open).mode & 0o777, 0o755, 'a get changes no mode');
  });

  test('config get runtimeDir below a file (no folder can be made there): one line saying so, exit 1, as helper status says it', async () => {
    const file = write(tempDir('runtime-'), 'a-file', 'kept\n');
    const dir = join(file, 'below', 'run');
    const env = { ...world(), CURSOR_RESUME_RUNTIME_DIR: dir };
    const got = await cli(['config', 'get', 'runtimeDir'], env);
    assert.equal(got.code, 1, got.stderr);
    assert.equal(got.stdout, '');
    assert.match(
      got.stderr,
      new RegExp(`^cursor-resume: cannot inspect the helper runtime dir ${dir}: ENOTDIR.*Set CURSOR_RESUME_RUNTIME_DIR`),
    );
    assert.doesNotMatch(got.stderr, /unexpected error|\n {4}at /);
    const status = await cli(['helper', 'status'], env);
    assert.match(status.stderr, new RegExp(`cannot inspect the helper runtime dir ${dir}: ENOTDIR`));
    assert.equal(readFileSync(file, 'utf8'), 'kept\n');
  });

  test('config get runtimeDir set in the config file: a folder a helper would refuse names that setting, as the helper commands do, not CURSOR_RESUME_RUNTIME_DIR', async () => {
    const place = tempDir('runtime-');
    const taken = write(place, 'a-file', 'kept\n');
    const { CURSOR_RESUME_RUNTIME_DIR: _dir, ...env } = world();
    assert.equal((await cli(['config', 'set', 'runtimeDir', taken], env)).code, 0);
    const said = `cursor-resume: refusing the helper runtime dir ${taken}: it exists but is not a directory. Remove it, or set runtimeDir (cursor-resume config set runtimeDir)`;
    const got = await cli(['config', 'get', 'runtimeDir'], env);
    assert.equal(got.code, 1, got.stderr);
    assert.ok(got.stderr.startsWith(said), got.stderr);
    assert.ok(got.stderr.includes(`(runtime dir chosen by the runtimeDir setting in ${fileOf(env)})`), got.stderr);
    const status = await cli(['helper', 'status'], env);
    assert.ok(status.stderr.includes(said.replace('cursor-resume: ', '')), status.stderr);
  });

  test('path, set, get, list with sources, unset; the run path reads what conf wrote', async () => {
    const env = world();
    const file = fileOf(env);
    assert.equal((await cli(['config', 'path'], env)).stdout, `${file}\n`);
    const set = await cli(['config', 'set', 'ttlMinutes', '30'], env);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, `ttlMinutes = 30 (in ${file})\n`);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { ttlMinutes: 30 });
    assert.equal((await cli(['config', 'get', 'ttlMinutes'], env)).stdout, '30\n');
    assert.deepEqual(json(await cli(['config', 'get', 'ttlMinutes', '--json'], env)), { name: 'ttlMinutes', value: 30, source: 'file' });

    // A pattern written through conf changes what a run decides: it reads the same file.
    assert.equal((await cli(['config', 'set', 'sideCallPatterns', '["^Summarize the"]'], env)).code, 0);
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'Summarize the chat so far' }] });
    assert.equal(json(await runCli(['--dry-run'], { env, input: body })).reason, 'side-call');

    const list = json(await cli(['config', 'list', '--json', '--', '--verbose'], { ...env, CURSOR_RESUME_AGENT: '/opt/agent' }));
    assert.equal(list.file, file);
    assert.deepEqual(list.resume, {
      enabled: true,
      from: 'CURSOR_ACP_SESSION_RESUME',
      why: 'CURSOR_ACP_SESSION_RESUME is "1" and CURSOR_RESUME_ENABLED is not set',
    });
    assert.deepEqual(list.settings.resume, { value: true, source: 'shared environment', default: false, env: 'CURSOR_RESUME_ENABLED' });
    assert.deepEqual(list.settings.ttlMinutes, { value: 30, source: 'file', default: 60, env: null });
    assert.deepEqual(list.settings.agent, {
      value: '/opt/agent',
      source: 'environment',
      default: 'cursor-agent',
      env: 'CURSOR_RESUME_AGENT',
    });
    assert.equal(list.settings.verbose.source, 'flag');
    assert.equal(list.settings.maxEntries.source, 'default');
    assert.deepEqual(Object.keys(list.settings), [
      'resume',
      'agent',
      'runtimeDir',
      'sideCallPatterns',
      'retryFresh',
      'unsafeDelta',
      'ttlMinutes',
      'maxEntries',
      'verbose',
      'trace',
    ]);

    const human = await cli(['config', 'list'], { ...env, CURSOR_RESUME_AGENT: '/opt/agent' });
    assert.match(human.stdout, /^SETTING +VALUE +SOURCE$/m);
    assert.match(human.stdout, /^agent +\/opt\/agent +environment \(CURSOR_RESUME_AGENT\)$/m);
    assert.match(human.stdout, /^ttlMinutes +30 +file$/m);
    assert.match(human.stdout, /^maxEntries +64 +default$/m);
    assert.match(human.stdout, /^resume +true +environment \(CURSOR_ACP_SESSION_RESUME\)$/m);
    assert.match(human.stdout, /^resume +on: CURSOR_ACP_SESSION_RESUME is "1" and CURSOR_RESUME_ENABLED is not set$/m);
    assert.deepEqual((await cli(['config'], env)).stdout, (await cli(['config', 'list'], env)).stdout, 'config alone lists');
    const listed = await cli(['config', '--json'], env);
    assert.deepEqual([listed.code, listed.stdout], [0, (await cli(['config', 'list', '--json'], env)).stdout], 'with --json too');
    // --json before the command's name goes to it, or is refused where it prints no JSON.
    assert.deepEqual((await cli(['config', '--json', 'list'], env)).stdout, listed.stdout);
    assert.deepEqual(
      (await cli(['config', '--json', 'get', 'resume'], env)).stdout,
      (await cli(['config', 'get', 'resume', '--json'], env)).stdout,
    );
    const path = await cli(['config', '--json', 'path'], env);
    assert.deepEqual(
      [path.code, path.stdout, path.stderr],
      [2, '', 'cursor-resume: config path prints no JSON: drop --json (it goes with config list, config get)\n'],
    );

    const unset = await cli(['config', 'unset', 'ttlMinutes'], env);
    assert.equal(unset.stdout, `ttlMinutes removed from ${file}; it is back to 60\n`);
    // Raised from 30: a helper running now keeps 30 (limits only go down), and is told of.
    assert.equal(
      unset.stderr,
      'cursor-resume: note: a helper running now keeps its lower ttlMinutes until it exits; cursor-resume helper stop ends it (the next turn starts another)\n',
    );
    assert.equal((await cli(['config', 'set', 'maxEntries', '9'], env)).stderr, '', 'set where the default was: lower');
    const lowered = await cli(['config', 'set', 'maxEntries', '8'], env);
    assert.equal(lowered.stderr, '', 'a lower limit reaches a running helper with the next turn: nothing to say');
    assert.match((await cli(['config', 'set', 'maxEntries', '9'], env)).stderr, /keeps its lower maxEntries until it exits/);
    await cli(['config', 'unset', 'maxEntries'], env);
    assert.equal((await cli(['config', 'unset', 'ttlMinutes'], env)).stdout, `ttlMinutes is not set in ${file}\n`);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { sideCallPatterns: ['^Summarize the'] });
  });

  test('config unset resume where CURSOR_ACP_SESSION_RESUME is on says that it decides now, not that resume is off', async () => {
    const env = world({ CURSOR_ACP_SESSION_RESUME: 'yes' });
    const file = fileOf(env);
    assert.equal((await cli(['config', 'set', 'resume', 'false'], env)).code, 0);
    assert.equal((await cli(['config', 'get', 'resume'], env)).stdout, 'false\n', 'the file decides');
    const unset = await cli(['config', 'unset', 'resume'], env);
    assert.equal(unset.code, 0, unset.stderr);
    assert.equal(unset.stdout, `resume removed from ${file}; it is back to false\n`);
    assert.equal(
      unset.stderr,
      'cursor-resume: note: CURSOR_ACP_SESSION_RESUME is "yes" in the environment and decides resume when neither CURSOR_RESUME_ENABLED nor the config file does: it is on\n',
    );
    assert.equal((await cli(['config', 'get', 'resume'], env)).stdout, 'true\n', 'as the note says');
    // Off, or our own variable set: nothing new to say (the one that wins is named as before).
    await cli(['config', 'set', 'resume', 'true'], env);
    assert.equal((await cli(['config', 'unset', 'resume'], { ...env, CURSOR_ACP_SESSION_RESUME: '0' })).stderr, '');
    await cli(['config', 'set', 'resume', 'true'], env);
    assert.equal(
      (await cli(['config', 'unset', 'resume'], { ...env, CURSOR_RESUME_ENABLED: '1' })).stderr,
      'cursor-resume: note: CURSOR_RESUME_ENABLED is set in the environment and wins over the config file\n',
    );
  });

  test('config get answers for its setting while another setting holds a value not allowed; its own such value is exit 2', async () => {
    const env = { ...world(), CURSOR_RESUME_ENABLED: 'maybe', CURSOR_RESUME_RUNTIME_DIR: 'relative' };
    const ttl = await cli(['config', 'get', 'ttlMinutes', '--json'], env);
    assert.equal(ttl.code, 0, ttl.stderr);
    assert.equal(json(ttl).source, 'default');
    assert.equal(ttl.stderr, '');
    const own = await cli(['config', 'get', 'resume'], env);
    assert.equal(own.code, 2);
    assert.equal(own.stdout, '');
    assert.match(own.stderr, /^cursor-resume: resume \(from CURSOR_RESUME_ENABLED\): "maybe" is not a boolean/);
    assert.equal((await cli(['config', 'get', 'runtimeDir'], env)).code, 2);
  });

  test('config get answers for its setting while the config file holds a value not allowed for another', async () => {
    const env = world();
    const file = (await cli(['config', 'path'], env)).stdout.trim();
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify({ ttlMinutes: 30, maxEntries: 999 }), { mode: 0o600 });
    const ttl = await cli(['config', 'get', 'ttlMinutes', '--json'], env);
    assert.equal(ttl.code, 0, ttl.stderr);
    assert.deepEqual(json(ttl), { name: 'ttlMinutes', value: 30, source: 'file' });
    const own = await cli(['config', 'get', 'maxEntries'], env);
    assert.equal(own.code, 2);
    assert.equal(own.stdout, '');
    assert.match(own.stderr, /^cursor-resume: maxEntries \(in .*\): must be at most 64/);
  });

  test('config set where the variable of that setting holds a value not allowed: not said to win, since runs ignore it and take the file', async () => {
    const env = { ...world(), CURSOR_RESUME_ENABLED: 'maybe' };
    const set = await cli(['config', 'set', 'resume', 'true'], env);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(
      set.stderr,
      'cursor-resume: note: CURSOR_RESUME_ENABLED in the environment is not allowed, and runs ignore it with a warning: resume (from CURSOR_RESUME_ENABLED): "maybe" is not a boolean; use 1, true, on or yes, or 0, false, off or no; unset CURSOR_RESUME_ENABLED or fix its value\n',
    );
    // As a run takes it: the file's true decides.
    const run = await runCli(['--dry-run'], {
      env: { ...env, CURSOR_ACP_SESSION_RESUME: '' },
      input: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(JSON.parse(run.stdout).reason, 'no-entry', 'resume is on');
    const valid = await cli(['config', 'set', 'resume', 'true'], { ...env, CURSOR_RESUME_ENABLED: 'off' });
    assert.equal(valid.stderr, 'cursor-resume: note: CURSOR_RESUME_ENABLED is set in the environment and wins over the config file\n');
  });

  test('limits may be lowered, never raised; errors say what is allowed; nothing is written', async () => {
    const env = world();
    const cases: Array<[string[], RegExp]> = [
      [
        ['config', 'set', 'ttlMinutes', '90'],
        /^cursor-resume: ttlMinutes \(config set\): must be at most 60: the limit may be lowered, never raised\. Allowed: .*1 to 60/,
      ],
      [['config', 'set', 'maxEntries', '65'], /maxEntries \(config set\): must be at most 64/],
      [['config', 'set', 'maxEntries', '0'], /maxEntries \(config set\): must be at least 1/],
      // Too large to be exact (1e20), which is not whole to a number check: too large is what it is.
      [['config', 'set', 'ttlMinutes', '99999999999999999999'], /ttlMinutes \(config set\): must be at most 60: the limit may be lowered/],
      [['config', 'set', 'maxEntries', '-99999999999999999999'], /maxEntries \(config set\): must be at least 1/],
      [['config', 'set', 'ttlMinutes', 'soon'], /ttlMinutes \(config set\): "soon" is not a whole number/],
      [
        ['config', 'set', 'retryFresh', 'maybe'],
        /retryFresh \(config set\): "maybe" is not a boolean; use 1, true, on or yes, or 0, false, off or no/,
      ],
      [['config', 'set', 'unsafeDelta', 'always'], /unsafeDelta \(config set\): must be fresh or resume-full/],
      [['config', 'set', 'runtimeDir', 'relative/dir'], /runtimeDir \(config set\): must be an absolute path/],
      [['config', 'set', 'sideCallPatterns', '["("]'], /sideCallPatterns\[0\] \(config set\): is not a valid regular expression/],
      // Valid only inside the ^(?:...) it is tested in, which it would break out of.
      [
        ['config', 'set', 'sideCallPatterns', '["x)|(?:careful"]'],
        /sideCallPatterns\[0\] \(config set\): is not a valid regular expression/,
      ],
      [
        ['config', 'set', 'sideCallPatterns', JSON.stringify(['a'.repeat(1001)])],
        /sideCallPatterns\[0\] \(config set\): is not a valid regular expression of at most 1000 characters/,
      ],
      [
        ['config', 'set', 'sideCallPatterns', JSON.stringify(['ok', 'a?'.repeat(7000)])],
        /sideCallPatterns\[1\] \(config set\): is not a valid regular expression/,
      ],
      [['config', 'set', 'sideCallPatterns', 'nope'], /sideCallPatterns \(config set\): expected a JSON array of strings/],
      [['config', 'set', 'colour', 'red'], /unknown setting "colour"; the settings are: resume, agent, runtimeDir, .*trace/],
      [['config', 'get', 'nope'], /unknown setting "nope"/],
      [['config', 'set', 'ttlMinutes'], /missing required argument 'value'/],
      [['config', 'frobnicate'], /unknown config command "frobnicate"; use list, get, set, unset or path/],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, expected);
    }
    assert.equal(existsSync(fileOf(env)), false, 'nothing was written');
  });

  test('helper status counts entries and anchors in words that agree with the count: 1 anchor, 2 anchors', async () => {
    const env = world();
    const entries = async (): Promise<string> => {
      const status = await cli(['helper', 'status'], env);
      assert.equal(status.code, 0, status.stderr);
      return /^entries +(.*)$/m.exec(status.stdout)?.[1] ?? status.stdout;
    };
    assert.equal((await new Conversation(env).turn('the first conversation')).code, 0);
    assert.match(await entries(), /^1 of \d+ \(1 anchor, 0 leased\)$/);
    assert.equal((await new Conversation(env).turn('another conversation')).code, 0);
    assert.match(await entries(), /^2 of \d+ \(2 anchors, 0 leased\)$/);
  });

  test('a broken file: the commands refuse it with exit 2; unset repairs it', async () => {
    const env = world();
    const file = fileOf(env);
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'cursor-resume'), { recursive: true });
    writeFileSync(file, JSON.stringify({ bogus: 1, ttlMinutes: 90 }));
    const list = await cli(['config', 'list'], env);
    assert.equal(list.code, 2);
    assert.match(list.stderr, /unknown setting "bogus"; remove it \(cursor-resume config unset bogus\)/);
    // Looking at and stopping the helper still work: a broken file must not lock a person out.
    assert.equal((await cli(['helper', 'status'], env)).code, 3);
    const bare = await cli(['helper'], env);
    assert.deepEqual([bare.code, bare.stdout], [3, (await cli(['helper', 'status'], env)).stdout], '`helper` alone is `helper status`');
    const bareJson = await cli(['helper', '--json'], env);
    assert.deepEqual([bareJson.code, bareJson.stdout], [3, (await cli(['helper', 'status', '--json'], env)).stdout], 'with --json too');
    assert.equal(JSON.parse(bareJson.stdout).running, false);
    assert.deepEqual((await cli(['helper', '--json', 'status'], env)).stdout, bareJson.stdout, '--json before the command goes to it');
    assert.equal((await cli(['inspect'], env)).code, 0);
    assert.equal((await cli(['evict', '--all'], env)).code, 0);
    const set = await cli(['config', 'set', 'ttlMinutes', '20'], env);
    assert.equal(set.code, 2, 'written, but the file is still refused');
    assert.match(
      set.stderr,
      /the change was written, but the config file still has a setting that is not allowed \(runs, inspect, evict and helper ignore it with a warning; config, simulate and inspect --transcript refuse it\)/,
    );
    assert.equal((await cli(['config', 'unset', 'bogus'], env)).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), { ttlMinutes: 20 });
    assert.equal((await cli(['config', 'list'], env)).code, 0);
    writeFileSync(file, '{not json');
    const broken = await cli(['config', 'list'], env);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /is not valid JSON: invalid symbol at line 1, column 2; fix with cursor-resume config set NAME VALUE/);
  });
});

describe('arguments', () => {
  test('every subcommand refuses excess and missing arguments: exit 2, a message, nothing printed or written', async () => {
    const env = world();
    const dir = tempDir();
    const body = write(dir, 'body.json', JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    const tooMany = (name: string): RegExp =>
      new RegExp(
        `^cursor-resume: too many arguments for '${name}'\\. Expected \\d arguments? but got \\d+\\. \\(add --help for usage and examples\\)\n$`,
      );
    const missing = (name: string): RegExp =>
      new RegExp(`^cursor-resume: missing required argument '${name}' \\(add --help for usage and examples\\)\n$`);
    const noSetting = (word: string): RegExp =>
      new RegExp(`^cursor-resume: config list: "${word}" changes no setting; after "--" give only --verbose and --trace FILE`);
    const prompt = (word: string): RegExp =>
      new RegExp(`^cursor-resume: inspect --transcript: the run line has "${word}"; .* Give only flags after "--"`);
    const cases: Array<[string[], RegExp]> = [
      [['config', 'a', 'b'], tooMany('config')],
      [['config', 'list', 'extra'], noSetting('extra')],
      [['config', 'list', '--json', 'extra'], noSetting('extra')],
      [['config', 'list', '--', '--print'], noSetting('--print')],
      [['config', 'list', '--', '--verbose', '--model', 'gpt-5'], noSetting('--model')],
      [['config', 'list', '--', '--dry-run'], noSetting('--dry-run')],
      [['config', 'get'], missing('name')],
      [['config', 'get', 'ttlMinutes', 'extra'], tooMany('get')],
      [['config', 'set', 'ttlMinutes'], missing('value')],
      [['config', 'set', 'ttlMinutes', '30', 'extra'], tooMany('set')],
      [['config', 'unset'], missing('name')],
      [['config', 'unset', 'ttlMinutes', 'extra'], tooMany('unset')],
      [['config', 'path', 'extra'], tooMany('path')],
      [['inspect', 'extra'], /^cursor-resume: a run line, --model and --workspace go with --transcript FILE/],
      [['inspect', '--transcript', body, 'extra'], prompt('extra')],
      [['inspect', '--transcript', body, '--', '--print', 'status'], prompt('status')],
      [['inspect', '--transcript', body, '--', '--version'], prompt('--version')],
      [['inspect', '--transcript', body, '--', '--print', '--help'], prompt('--help')],
      [['inspect', '--transcript'], /^cursor-resume: option '--transcript <file>' argument missing/],
      [['evict'], /^cursor-resume: evict what\? Give an anchor/],
      [['evict', 'abcd', 'ef01'], tooMany('evict')],
      [['evict', '--all', 'abcd'], /^cursor-resume: give an anchor or --all, not both/],
      [['simulate'], missing('file')],
      [['simulate', body, '--gap'], /^cursor-resume: option '--gap <minutes>' argument missing/],
      [['simulate', body, '--expect'], /^cursor-resume: option '--expect <decisions>' argument missing/],
      [['helper', 'bogus'], /^cursor-resume: unknown helper command "bogus"; use start, stop or status \(cursor-resume helper --help\)\n$/],
      [['helper', 'start', 'extra'], tooMany('start')],
      [['helper', 'stop', 'extra'], tooMany('stop')],
      [['helper', 'status', 'extra'], tooMany('status')],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      assert.match(r.stderr, expected, args.join(' '));
    }
    assert.equal(existsSync(join(env.XDG_CONFIG_HOME!, 'cursor-resume')), false, 'no config file written');
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no helper started');
  });
});

// ---- simulate ---------------------------------------------------------------------

const SYS = { role: 'system', content: 'You are a careful coding agent.' };
const TOOLS = [{ type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object' } } }];
const bodyOf = (messages: object[]): string => JSON.stringify({ model: 'gpt-5', workspace: '/work/project', messages, tools: TOOLS });
/** Three turns of one conversation, each transcript carrying cursor's earlier replies. */
function threeTurns(dir: string): string[] {
  const u1 = { role: 'user', content: 'remember: the port is 8080' };
  const a1 = { role: 'assistant', content: 'Turn 1 of this chat.' };
  const u2 = { role: 'user', content: 'remember: the host is db' };
  const a2 = { role: 'assistant', content: 'Turn 2 of this chat.' };
  const u3 = { role: 'user', content: 'What do you remember?' };
  return [
    write(dir, 't1.json', bodyOf([SYS, u1])),
    write(dir, 't2.json', bodyOf([SYS, u1, a1, u2])),
    write(dir, 't3.json', bodyOf([SYS, u1, a1, u2, a2, u3])),
  ];
}

describe('simulate', { concurrency: true }, () => {
  test("cursor's reply as a later turn carried it is what the chat knows, as in a run: a copy changed after is an edit", async () => {
    const env = world();
    const dir = tempDir();
    const u1 = { role: 'user', content: 'remember: the port is 8080' };
    const u2 = { role: 'user', content: 'remember: the host is db' };
    const a2 = { role: 'assistant', content: 'Turn 2 of this chat.' };
    const u3 = { role: 'user', content: 'What do you remember?' };
    const files = [
      write(dir, 't1.json', bodyOf([SYS, u1])),
      // Turn 2 keeps cursor's first reply with other whitespace: still what cursor replied.
      write(dir, 't2.json', bodyOf([SYS, u1, { role: 'assistant', content: '  Turn 1 of\nthis chat. ' }, u2])),
      // Turn 3 has that copy as cursor wrote it: not what turn 2 sent the chat.
      write(dir, 't3.json', bodyOf([SYS, u1, { role: 'assistant', content: 'Turn 1 of this chat.' }, u2, a2, u3])),
    ];
    for (const unsafeDelta of ['fresh', 'resume-full']) {
      const configured = { ...env, XDG_CONFIG_HOME: tempDir() };
      assert.equal((await cli(['config', 'set', 'unsafeDelta', unsafeDelta], configured)).code, 0);
      const r = await cli(['simulate', '--resume-on', '--json', ...files], configured);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        (JSON.parse(r.stdout).turns as Array<{ decision: string; reason: string }>).map((t) => [t.decision, t.reason]),
        [
          ['fresh', 'no-entry'],
          ['resume-delta', 'delta'],
          ['fresh', 'diverged'],
        ],
        unsafeDelta,
      );
    }
  });

  test('turns in order, with a private cache: human and JSON', async () => {
    const env = world();
    const files = threeTurns(tempDir());
    const human = await cli(['simulate', '--resume-on', ...files], env);
    assert.equal(human.code, 0, human.stderr);
    const lines = human.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^TURN +TRANSCRIPT +DECISION +REASON +CHAT +PROMPT +FULL +WHY$/);
    assert.match(lines[1]!, /^ +1 +\S+t1\.json +fresh +no-entry +sim-1 +\d+ B +\d+ B +no earlier turn/);
    assert.match(lines[2]!, /^ +2 +\S+t2\.json +resume-delta +delta +sim-1 +24 B +\d+ B +all 3 known messages match; 1 new$/);
    assert.match(lines[3]!, /^ +3 +\S+t3\.json +resume-delta +delta +sim-1 +21 B/);
    assert.match(lines[4]!, /^3 turns: 1 fresh, 2 resume-delta; sent [\d.]+ (B|KiB) of [\d.]+ (B|KiB) full \(\d+% saved\)$/);
    assert.equal(existsSync(env.CURSOR_RESUME_RUNTIME_DIR!), false, 'no helper');

    const data = json(await cli(['simulate', '--resume-on', '--json', ...files], env));
    assert.deepEqual(data.resume, { enabled: true, from: '--resume-on' });
    assert.deepEqual(
      data.turns.map((t: any) => [t.turn, t.decision, t.reason, t.chatId, t.recorded]),
      [
        [1, 'fresh', 'no-entry', 'sim-1', true],
        [2, 'resume-delta', 'delta', 'sim-1', true],
        [3, 'resume-delta', 'delta', 'sim-1', false],
      ],
    );
    assert.equal(data.turns[2].prompt, 'What do you remember?');
    assert.deepEqual(data.turns[2].argv, [
      '--print',
      '--output-format',
      'stream-json',
      '--model',
      'gpt-5',
      '--workspace',
      '/work/project',
      '--resume',
      'sim-1',
    ]);
    assert.match(data.turns[2].note, /not recorded: the last turn/);
    assert.equal(data.totals.turns, 3);
    assert.deepEqual(data.totals.decisions, { fresh: 1, 'resume-delta': 2, 'resume-full': 0 });
    assert.equal(data.totals.savedBytes, data.totals.fullPromptBytes - data.totals.promptBytes);
  });

  test('resume follows CURSOR_RESUME_ENABLED, else CURSOR_ACP_SESSION_RESUME, like a run', async () => {
    const files = threeTurns(tempDir());
    const off = sandboxEnv();
    const human = await cli(['simulate', ...files], off);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /resume is off: every turn is fresh; set CURSOR_RESUME_ENABLED=1, or pass --resume-on/);
    const data = json(await cli(['simulate', '--json', ...files], off));
    assert.deepEqual(
      data.turns.map((t: any) => t.reason),
      ['disabled', 'disabled', 'disabled'],
    );
    const on = json(await cli(['simulate', '--json', ...files], sandboxEnv({ CURSOR_ACP_SESSION_RESUME: 'TRUE' })));
    assert.deepEqual(
      on.turns.map((t: any) => t.decision),
      ['fresh', 'resume-delta', 'resume-delta'],
    );
    assert.equal(on.resume.from, 'CURSOR_ACP_SESSION_RESUME');
    const own = json(
      await cli(['simulate', '--json', ...files], sandboxEnv({ CURSOR_RESUME_ENABLED: '1', CURSOR_ACP_SESSION_RESUME: '0' })),
    );
    assert.deepEqual(
      [own.resume, own.turns.map((t: any) => t.decision)],
      [{ enabled: true, from: 'CURSOR_RESUME_ENABLED' }, ['fresh', 'resume-delta', 'resume-delta']],
    );
    const forced = json(await cli(['simulate', '--json', '--resume-on', ...files], sandboxEnv({ CURSOR_RESUME_ENABLED: '0' })));
    assert.deepEqual(
      [forced.resume, forced.turns.map((t: any) => t.decision)],
      [{ enabled: true, from: '--resume-on' }, ['fresh', 'resume-delta', 'resume-delta']],
    );
  });

  test('--expect: pass exits 0, a difference exits 1 naming the first one', async () => {
    const env = world();
    const files = threeTurns(tempDir());
    const pass = await cli(['simulate', '--expect', 'fresh:no-entry,resume-delta,resume-delta:delta', ...files], env);
    assert.equal(pass.code, 0, pass.stderr);
    assert.equal(pass.stderr, '');
    assert.match(pass.stdout, /\nexpected decisions: all 3 match\n$/);

    const fail = await cli(['simulate', '--expect', 'fresh,fresh,resume-delta', ...files], env);
    assert.equal(fail.code, 1);
    assert.match(fail.stdout, /^TURN/, 'the table is still printed');
    assert.match(
      fail.stderr,
      /^cursor-resume: turn 2 \(\S+t2\.json\): expected fresh, got resume-delta \(delta: all 3 known messages match; 1 new\)\n$/,
    );

    const reason = await cli(['simulate', '--json', '--expect', 'fresh:expired,resume-delta,resume-delta', ...files], env);
    assert.equal(reason.code, 1);
    const data = JSON.parse(reason.stdout);
    assert.deepEqual(data.expect.firstDifference, {
      turn: 1,
      expected: 'fresh:expired',
      actual: 'fresh:no-entry',
      message: data.expect.firstDifference.message,
    });
    assert.equal(data.expect.ok, false);

    const count = await cli(['simulate', '--expect', 'fresh,resume-delta', ...files], env);
    assert.equal(count.code, 1);
    assert.match(count.stderr, /--expect names 2 decisions but there are 3 turns/);
  });

  test('JSONL, stdin, --gap, and a turn whose reply is not carried (not recorded)', async () => {
    const env = world();
    const dir = tempDir();
    const files = threeTurns(dir);
    const lines = files.map((f) => readFileSync(f, 'utf8')).join('\n') + '\n\n';
    const jsonl = write(dir, 'conversation.jsonl', lines);
    const viaFile = json(await cli(['simulate', '--resume-on', '--json', jsonl], env));
    assert.deepEqual(
      viaFile.turns.map((t: any) => t.source),
      [`${jsonl}:1`, `${jsonl}:2`, `${jsonl}:3`],
    );
    assert.deepEqual(
      viaFile.turns.map((t: any) => t.decision),
      ['fresh', 'resume-delta', 'resume-delta'],
    );
    const ndjson = write(dir, 'conversation.ndjson', lines);
    assert.deepEqual(
      json(await cli(['simulate', '--resume-on', '--json', ndjson], env)).turns.map((t: any) => [t.source, t.decision]),
      [
        [`${ndjson}:1`, 'fresh'],
        [`${ndjson}:2`, 'resume-delta'],
        [`${ndjson}:3`, 'resume-delta'],
      ],
    );
    const viaStdin = json(await cli(['simulate', '--resume-on', '--json', '-'], env, lines));
    assert.deepEqual(
      viaStdin.turns.map((t: any) => [t.source, t.decision]),
      [
        ['stdin:1', 'fresh'],
        ['stdin:2', 'resume-delta'],
        ['stdin:3', 'resume-delta'],
      ],
    );

    const expired = json(await cli(['simulate', '--resume-on', '--json', '--gap', '61', ...files.slice(0, 2)], env));
    assert.deepEqual(
      expired.turns.map((t: any) => t.reason),
      ['no-entry', 'expired'],
    );
    const lowered = json(
      await cli(['simulate', '--resume-on', '--json', '--gap', '11', ...files.slice(0, 2)], { ...env, CURSOR_RESUME_TTL_MS: '600000' }),
    );
    assert.deepEqual(
      lowered.turns.map((t: any) => t.reason),
      ['no-entry', 'expired'],
      'the helper limits in the environment apply',
    );

    // Turn 1 failed (no reply kept) and the caller sent the message again with another: nothing was recorded.
    const retry = write(
      dir,
      'retry.json',
      bodyOf([SYS, { role: 'user', content: 'remember: the port is 8080' }, { role: 'user', content: 'hello?' }]),
    );
    const failed = json(await cli(['simulate', '--resume-on', '--json', files[0]!, retry], env));
    assert.deepEqual(
      failed.turns.map((t: any) => [t.reason, t.recorded]),
      [
        ['no-entry', false],
        ['no-entry', false],
      ],
    );
    assert.match(failed.turns[0].note, /^not recorded: the next transcript of this conversation \(turn 2\) carries no reply to this turn$/);
  });

  test("a turn's reply comes from the next transcript of its conversation: side calls, other conversations and a sibling branch in between are skipped", async () => {
    const env = world();
    const dir = tempDir();
    const [a1, a2, a3] = threeTurns(dir);
    const u1 = { role: 'user', content: 'remember: the port is 8080' };
    const other = (messages: object[]): string => JSON.stringify({ model: 'gpt-5', workspace: '/work/other', messages, tools: TOOLS });
    const v1 = { role: 'user', content: 'remember: the colour is blue' };
    const b1 = write(dir, 'b1.json', other([SYS, v1]));
    const b2 = write(
      dir,
      'b2.json',
      other([SYS, v1, { role: 'assistant', content: 'Noted: blue.' }, { role: 'user', content: 'and the size?' }]),
    );
    // OpenCode's title request: the title agent's system prompt, then the conversation's opener (the same anchor as a1).
    const title = write(dir, 'title.json', bodyOf([{ role: 'system', content: 'You are a title generator. Reply with a title.' }, u1]));
    const title2 = write(
      dir,
      'title2.json',
      bodyOf([{ role: 'user', content: 'Generate a title for this conversation: remember: the port is 8080' }]),
    );
    // The same opener, another second message: a sibling branch that diverges from a2 and does not continue it.
    const sibling = write(
      dir,
      'sibling.json',
      bodyOf([SYS, u1, { role: 'assistant', content: 'Turn 1 of this chat.' }, { role: 'user', content: 'remember: the user is alice' }]),
    );
    const data = json(await cli(['simulate', '--resume-on', '--json', a1!, title, b1, title2, a2!, sibling, b2, a3!], env));
    assert.deepEqual(
      data.turns.map((t: any) => [t.source.replace(/.*\//, ''), `${t.decision}:${t.reason}`, t.chatId, t.recorded]),
      [
        ['t1.json', 'fresh:no-entry', 'sim-1', true],
        ['title.json', 'fresh:side-call', null, false],
        ['b1.json', 'fresh:no-entry', 'sim-2', true],
        ['title2.json', 'fresh:side-call', null, false],
        ['t2.json', 'resume-delta:delta', 'sim-1', true],
        ['sibling.json', 'fresh:diverged', null, false],
        ['b2.json', 'resume-delta:delta', 'sim-2', false],
        ['t3.json', 'resume-delta:delta', 'sim-1', false],
      ],
    );
    assert.match(data.turns[5].note, /^not recorded: no later transcript continues this conversation$/);
    assert.match(data.turns[6].note, /^not recorded: no later transcript continues this conversation$/);
    assert.match(data.turns[7].note, /^not recorded: the last turn/);
  });

  test('agrees with real runs when a title call and another conversation come between turns', async () => {
    const env = world();
    const trace = join(tempDir(), 'trace.jsonl');
    const a = new Conversation(env);
    const b = new Conversation(env);
    a.env.CURSOR_RESUME_TRACE = trace;
    b.env.CURSOR_RESUME_TRACE = trace;
    const dir = tempDir();
    const files: string[] = [];
    const turn = async (c: Conversation, text: string): Promise<void> => {
      c.messages.push({ role: 'user', content: text });
      files.push(write(dir, `${files.length + 1}.json`, c.body()));
      const r = await c.send();
      assert.equal(r.code, 0, r.stderr);
    };
    const titleCall = async (): Promise<void> => {
      const body = JSON.stringify({
        model: 'gpt-5',
        workspace: a.workspace,
        messages: [{ role: 'system', content: 'You are a title generator.' }, a.messages[1]],
      });
      files.push(write(dir, `${files.length + 1}.json`, body));
      const r = await runCli(STREAM_ARGS, { env: a.env, input: body });
      assert.equal(r.code, 0, r.stderr);
    };
    await turn(a, 'remember: the port is 8080');
    await titleCall();
    await turn(b, 'remember: the colour is blue');
    await turn(a, 'remember: the host is db');
    await turn(b, 'remember: the size is 3');
    await titleCall();
    await turn(a, 'What do you remember?');
    const runs = readFileSync(trace, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      runs.map((t) => `${t.decision}:${t.reason}`),
      [
        'fresh:no-entry',
        'fresh:side-call',
        'fresh:no-entry',
        'resume-delta:delta',
        'resume-delta:delta',
        'fresh:side-call',
        'resume-delta:delta',
      ],
      'the real runs resume across the interruptions',
    );
    const sim = json(await cli(['simulate', '--json', ...files], env));
    assert.deepEqual(
      sim.turns.map((t: any) => [t.decision, t.reason, t.promptBytes, t.fullPromptBytes]),
      runs.map((t) => [t.decision, t.reason, t.promptBytes, t.fullPromptBytes]),
    );
  });

  test('agrees with real runs through the stand-in, turn by turn', async () => {
    const env = world();
    const c = new Conversation(env);
    const dir = tempDir();
    const files: string[] = [];
    const texts = ['remember: the port is 8080', 'remember: the host is db', 'What do you remember?'];
    for (const [i, text] of texts.entries()) {
      c.messages.push({ role: 'user', content: text });
      files.push(write(dir, `turn${i + 1}.json`, c.body()));
      const r = await c.send();
      assert.equal(r.code, 0, r.stderr);
    }
    const sim = json(await cli(['simulate', '--json', ...files], env));
    const runs = c.traces();
    assert.deepEqual(
      sim.turns.map((t: any) => [t.decision, t.reason, t.promptBytes, t.fullPromptBytes]),
      runs.map((t) => [t.decision, t.reason, t.promptBytes, t.fullPromptBytes]),
    );
    const invoked = c.invocations();
    assert.deepEqual(
      sim.turns.map((t: any) => t.prompt),
      invoked.map((e) => e.stdin),
      'the same prompts',
    );
  });

  test('--json output longer than Node can hold (512 MiB): one line, exit 1, nothing printed', async () => {
    // Each turn's argv carries the 120 KB model: 6,000 turns make about 720 MB of JSON, where JSON.stringify threw.
    const dir = tempDir();
    const turns = write(dir, 'many.jsonl', `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })}\n`.repeat(6000));
    const r = await cli(['simulate', '--json', '--model', 'm'.repeat(120_000), turns], world());
    assert.equal(r.code, 1, r.stderr.slice(0, 300));
    assert.equal(r.stdout, '');
    assert.equal(
      r.stderr,
      'cursor-resume: the JSON output would be longer than the longest text Node can hold (512 MiB); ask for less at once\n',
    );
  });

  test('bad arguments: exit 2', async () => {
    const env = world();
    const dir = tempDir();
    const files = threeTurns(dir);
    const cases: Array<[string[], RegExp]> = [
      [['simulate'], /missing required argument 'file'/],
      [['simulate', '--expect', 'fresh,resumed', ...files], /--expect: "resumed" is not a decision; use fresh, resume-delta, resume-full/],
      [['simulate', '--expect', 'fresh:because', ...files], /--expect: "because" is not a reason code/],
      [['simulate', '--gap', 'soon', ...files], /--gap: "soon" is not a number of minutes/],
      // Added up turn by turn, such gaps reached Infinity, whose ages never expired a chat.
      [['simulate', '--gap', '3e303', ...files], /--gap: "3e303" is over a year \(525600 minutes\)/],
      [['simulate', '--gap', '525601', ...files], /--gap: "525601" is over a year/],
      // Quoted as JSON: a line break in what was given keeps the error on one line.
      [['simulate', '--gap', '1\nx', ...files], /^cursor-resume: --gap: "1\\nx" is not a number of minutes[^\n]*\n$/],
      [['simulate', join(dir, 'nope.json')], /cannot read the transcript .*nope\.json: no such file/],
      [['simulate', write(dir, 'bad.jsonl', `${readFileSync(files[0]!, 'utf8')}\n{"messages": 3}\n`)], /bad\.jsonl:2: /],
      [['simulate', write(dir, 'empty.jsonl', '\n\n')], /no transcripts in \S+empty\.jsonl \(one a line, blank lines aside\)\n$/],
      // Named among others: a source that holds nothing is said, not passed over.
      [['simulate', files[0]!, write(dir, 'blank.jsonl', ' \n'), files[1]!], /no transcripts in \S+blank\.jsonl/],
      [['simulate', files[0]!, '-'], /^cursor-resume: no transcripts on stdin \(one a line, blank lines aside\)\n$/],
      // A file is given, not piped: no advice to pipe it.
      [
        ['simulate', write(dir, 'empty.json', '')],
        /^cursor-resume: \S+empty\.json: it is empty: a transcript is a JSON body or a plain-text prompt\n$/,
      ],
      [
        ['simulate', write(dir, 'conversation.txt', files.map((f) => readFileSync(f, 'utf8')).join('\n'))],
        /^cursor-resume: \S+conversation\.txt looks like JSON Lines \(a JSON object per line\): name it \.jsonl \(or \.ndjson\) to simulate one turn per line\n$/,
      ],
      // Not JSON Lines (the second line is not an object): the JSON error itself is the useful one.
      [['simulate', write(dir, 'two.json', `${readFileSync(files[0]!, 'utf8')}\n[1]\n`)], /^cursor-resume: \S+two\.json: not valid JSON/],
      // Millions of tiny objects, one per line: the value limit speaks, and the hint never parses them all.
      [
        ['simulate', write(dir, 'many.json', '{}\n'.repeat(3_000_000))],
        /^cursor-resume: \S+many\.json: JSON with more than 2,000,000 values/,
      ],
    ];
    for (const [args, expected] of cases) {
      const r = await cli(args, env);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^cursor-resume: /);
      assert.match(r.stderr, expected);
    }
  });
});

describe('the trace file', { concurrency: true }, () => {
  test('one JSON line per run, with every field', async () => {
    const env = world();
    const c = new Conversation(env);
    await c.turn('remember: one');
    await c.turn('remember: two');
    const lines = readFileSync(c.trace, 'utf8').split('\n');
    assert.equal(lines.length, 3, 'two lines, each ending in a newline');
    assert.equal(lines[2], '');
    const [first, second] = c.traces();
    for (const line of [first!, second!]) {
      assert.deepEqual(Object.keys(line), [
        'time',
        'anchor',
        'decision',
        'reason',
        'chatId',
        'promptBytes',
        'fullPromptBytes',
        'exit',
        'failure',
        'retried',
        'durationMs',
      ]);
      assert.ok(!Number.isNaN(Date.parse(line.time as string)));
      assert.match(line.anchor as string, /^[0-9a-f]{32}$/);
      assert.equal(line.exit, 0);
      assert.equal(line.failure, null);
      assert.equal(line.retried, false);
      assert.equal(typeof line.durationMs, 'number');
    }
    assert.deepEqual([first!.decision, first!.reason, second!.decision, second!.reason], ['fresh', 'no-entry', 'resume-delta', 'delta']);
    assert.equal(first!.chatId, second!.chatId);
    assert.equal(first!.chatId, c.lastInvocation().chatId);
    assert.ok((second!.promptBytes as number) < (second!.fullPromptBytes as number));
  });

  test('--trace FILE on the run line, and a failed run', async () => {
    const env = world();
    const c = new Conversation(env);
    // The flag wins over CURSOR_RESUME_TRACE, which the conversation sets.
    const file = join(tempDir(), 'mine.jsonl');
    const r = await c.turn('hello', { args: [...STREAM_ARGS, '--trace', file] });
    assert.equal(r.code, 0, r.stderr);
    const failed = await c.turn('again', { mode: 'auth', args: [...STREAM_ARGS, '--trace', file] });
    assert.equal(failed.code, 1);
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 2);
    assert.deepEqual([lines[1].decision, lines[1].exit, lines[1].failure], ['resume-delta', 1, 'auth']);
    assert.equal(existsSync(c.trace), false);
    // --verbose: the decision on stderr, stdout untouched.
    const verbose = await c.turn('and again', { args: [...STREAM_ARGS, '--verbose'] });
    assert.equal(verbose.code, 0, verbose.stderr);
    assert.match(verbose.stderr, /^cursor-resume: resume-delta \(delta\): all \d+ known messages match; 2 new; prompt \d+ of \d+ bytes$/m);
    assert.doesNotMatch(verbose.stdout, /cursor-resume:/);
  });

  test(
    'a FIFO nobody reads as the trace file: said, and the run ends with its turn, not waiting for a reader',
    { timeout: 60_000 },
    async () => {
      const c = new Conversation(world());
      const fifo = join(tempDir(), 'trace.fifo');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      const r = await c.turn('hello', { args: [...STREAM_ARGS, '--trace', fifo] });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /"type":"result"/);
      assert.equal(r.stderr, `cursor-resume: cannot append to the trace file ${fifo}: ENXIO: no such device or address, open '${fifo}'\n`);
    },
  );
});

describe('presentation', { concurrency: true }, () => {
  test('colour: FORCE_COLOR colours a pipe, NO_COLOR wins, --json and plain pipes never', async () => {
    const env = world();
    const files = threeTurns(tempDir());
    for (const args of [
      ['config', 'list'],
      ['simulate', '--resume-on', ...files],
    ]) {
      assert.doesNotMatch((await cli(args, env)).stdout, ANSI, `${args[0]}: not a TTY`);
      assert.match((await cli(args, { ...env, FORCE_COLOR: '1' })).stdout, ANSI, `${args[0]}: FORCE_COLOR=1`);
      const both = await cli(args, { ...env, FORCE_COLOR: '1', NO_COLOR: '1' });
      assert.doesNotMatch(both.stdout, ANSI, `${args[0]}: NO_COLOR wins`);
      assert.equal(both.stderr, '');
      assert.doesNotMatch((await cli([...args, '--json'], { ...env, FORCE_COLOR: '3' })).stdout, ANSI, `${args[0]}: --json`);
    }
    const { env: full } = await filledCache();
    assert.match((await cli(['inspect'], { ...full, FORCE_COLOR: '1' })).stdout, ANSI);
    assert.doesNotMatch((await cli(['inspect'], { ...full, FORCE_COLOR: '1', NO_COLOR: 'x' })).stdout, ANSI);
  });

  test('every command has --help with examples', async () => {
    const env = world();
    const commands = await ourCommands();
    // Taken from the program itself, so a new command is checked too; these at least must be there.
    for (const name of [
      'inspect',
      'evict',
      'config',
      'config list',
      'config get',
      'config set',
      'config unset',
      'config path',
      'simulate',
      'helper',
      'helper start',
      'helper stop',
      'helper status',
    ]) {
      assert.ok(
        commands.some((c) => c.path.join(' ') === name),
        name,
      );
    }
    await Promise.all(
      commands.map(async ({ path: command }) => {
        const r = await cli([...command, '--help'], env);
        assert.equal(r.code, 0, `${command.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, /^Usage: cursor-resume /);
        assert.match(r.stdout, /\nExamples:\n {2}cursor-resume /, command.join(' '));
        // Not a terminal: 80 columns, as commander wraps its own lines; examples stay whole, to be copied.
        const prose = r.stdout.split('\nExamples:\n')[0]!;
        assert.deepEqual(
          prose.split('\n').filter((l) => l.length > 80),
          [],
          `${command.join(' ')}: lines over 80 columns`,
        );
      }),
    );
    const top = await cli(['--help'], env);
    assert.match(top.stdout, /inspect .*\n[\s\S]*evict[\s\S]*config[\s\S]*simulate/);
    // The usage's lines: a wrapped one goes on under the first's words, never back at the margin.
    const usage = top.stdout.split('\n\n')[0]!.split('\n');
    assert.deepEqual(
      usage.filter((l, i) => i > 0 && !l.startsWith(' ')),
      [],
      top.stdout,
    );
  });
});

/** Every command of ours, from the program the binary runs: its words, whether it has --json, whether it has subcommands. */
async function ourCommands(): Promise<Array<{ path: string[]; json: boolean; leaf: boolean }>> {
  const { buildProgram } = await import('../../src/program.js');
  type Cmd = ReturnType<typeof buildProgram>;
  const out: Array<{ path: string[]; json: boolean; leaf: boolean }> = [];
  const walk = (command: Cmd, path: string[]): void => {
    for (const sub of command.commands) {
      const words = [...path, sub.name()];
      out.push({ path: words, json: sub.options.some((o) => o.long === '--json'), leaf: sub.commands.length === 0 });
      walk(sub, words);
    }
  };
  walk(buildProgram(), []);
  return out;
}

describe('the README', () => {
  test('it names exactly the commands that take --json, and those that print a plain line', async () => {
    const claim = /These print one JSON object for scripts with `--json`: ([^;]+); ([^.]+) print one plain line\./.exec(README_FLAT);
    assert.ok(claim, 'the README says which commands take --json');
    const named = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort();
    const commands = await ourCommands();
    // Only the leaves: a parent such as `config` or `helper` runs a subcommand.
    const leaves = commands.filter((c) => c.leaf);
    assert.deepEqual(
      named(claim[1]!),
      leaves
        .filter((c) => c.json)
        .map((c) => c.path.join(' '))
        .sort(),
    );
    assert.deepEqual(
      named(claim[2]!),
      leaves
        .filter((c) => !c.json)
        .map((c) => c.path.join(' '))
        .sort(),
    );
  });

  test('it names every npm script, each `npm run` it names exists, and its first lines stay the two a newcomer needs', () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
    );
    const named = new Set([...README.matchAll(/\bnpm (?:run ([\w:-]+)|(test)\b)/g)].map((m) => m[1] ?? m[2]!));
    assert.deepEqual([...named].sort(), [...scripts].sort());
    assert.match(README, /^# cursor-resume\n\n```sh\nnpm ci && npm run demo +# [^\n]+\nnpm test +# [^\n]+\n```\n/);
  });

  test('its reason-code table lists exactly the codes a plan can give, in their order', async () => {
    const { REASONS } = await import('../../src/resume/reasons.js');
    const section = /^### Reason codes\n([\s\S]*?)\n(?=#)/m.exec(README)?.[1] ?? '';
    const rows = section.split('\n').filter((line) => /^\| `/.test(line));
    assert.deepEqual(
      rows.map((row) => /^\| `([^`]+)` \|/.exec(row)?.[1]),
      Object.keys(REASONS),
    );
    // The decision column: only delta resumes; unsafe-delta may resume with the full prompt.
    for (const row of rows) {
      const [, code, decision] = /^\| `([^`]+)` \| ([^|]+) \|/.exec(row)!;
      assert.equal(decision!.trim(), code === 'delta' ? 'resume-delta' : code === 'unsafe-delta' ? 'fresh or resume-full' : 'fresh', code);
    }
  });
});

describe('the manual page', () => {
  const page = join(ROOT, 'man', 'cursor-resume.1');

  test('renders with groff -man -ww without a single warning', () => {
    const groff = spawnSync('groff', ['-man', '-ww', '-Tutf8', page], { encoding: 'utf8' });
    assert.ok(!groff.error, `groff is needed to check the manual page (install groff): ${groff.error?.message}`);
    assert.equal(groff.stderr, '', 'groff warnings');
    assert.equal(groff.status, 0);
    // Bold and italics come as overstrikes (X\bX) or SGR sequences, depending on grotty's defaults.
    // eslint-disable-next-line no-control-regex
    const text = groff.stdout.replace(/.\u0008/g, '').replace(/\u001b\[[0-9;]*m/g, '');
    for (const section of [
      'NAME',
      'SYNOPSIS',
      'DESCRIPTION',
      'COMMANDS',
      'OPTIONS',
      'ENVIRONMENT',
      'FILES',
      'EXIT STATUS',
      'EXAMPLES',
      'SEE ALSO',
    ]) {
      assert.match(text, new RegExp(`^${section}$`, 'm'), section);
    }
  });

  test('agrees with the code: version, commands, variables, reason codes, exit codes', async () => {
    const text = readFileSync(page, 'utf8');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    assert.match(text, new RegExp(`^\\.TH CURSOR-RESUME 1 "\\d{4}" "cursor-resume ${pkg.version.replace(/\./g, '\\.')}"`, 'm'));
    assert.deepEqual(pkg.man, ['man/cursor-resume.1']);
    const plain = text.replace(/\\-/g, '-');
    const { SETTINGS } = await import('../../src/config.js');
    const { REASONS } = await import('../../src/resume/reasons.js');
    for (const name of [
      'inspect',
      'helper',
      'evict',
      'config',
      'simulate',
      '--dry-run',
      '--verbose',
      '--trace',
      '--transcript',
      '--expect',
      '--resume-on',
      '--gap',
      '--all',
      '--json',
    ]) {
      assert.ok(plain.includes(name), name);
    }
    const variables = [
      ...Object.values(SETTINGS).flatMap((s) => (s.env ? [s.env] : [])),
      'CURSOR_ACP_SESSION_RESUME',
      'CURSOR_RESUME_TTL_MS',
      'CURSOR_RESUME_MAX_ENTRIES',
      'CURSOR_RESUME_IDLE_MS',
      'CURSOR_CONFIG_DIR',
      'NO_COLOR',
      'FORCE_COLOR',
    ];
    for (const name of variables) assert.ok(plain.includes(`.B ${name}\n`), `ENVIRONMENT names ${name}`);
    for (const name of Object.keys(SETTINGS)) assert.ok(plain.includes(name), `FILES names the setting ${name}`);
    // The list under "Decisions and reason codes" names exactly the codes, in their order.
    const reasons =
      /^\.SS Decisions and reason codes\n([\s\S]*?)^\.SH /m.exec(plain)?.[1]?.split('Each comes with a reason code:')[1] ?? '';
    assert.deepEqual(
      [...reasons.matchAll(/^\.T[PQ].*\n\.B (\S+)$/gm)].map((m) => m[1]),
      Object.keys(REASONS),
    );
    for (const code of ['126', '127', '141', '128+', '.B 2\n', '.B 3\n']) assert.ok(plain.includes(code), `exit status ${code}`);
  });
});
