// What OpenCode users do to a session (undo, edit, fork, compaction, two sessions at once;
// README, "Using it from OpenCode"), through the stand-in caller (in-process, one Caller per
// `opencode run`), the built cursor-resume and the stand-in cursor-agent. After every user
// turn the chat that answered is read back from the stand-in's store: every user message the
// session holds must be in it exactly once, and nothing a user said elsewhere (in an undone
// turn, another session) may be there.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BIN, sandboxEnv, tempDir } from '../support/cli.js';
import { readJsonLines } from '../support/json-lines.js';
import { stopHelpersAt } from '../support/hardening.js';
import { loadFrame, type Frame } from '../fixtures/opencode-caller/frame.js';
import { Caller, newSession, type SessionState, type ToolsList } from '../fixtures/opencode-caller/session.js';
import type { AgentRun } from '../fixtures/opencode-caller/agent.js';

const worlds: string[] = [];
after(async () => {
  for (const dir of worlds) await stopHelpersAt(dir);
});

interface Trace {
  decision: string;
  reason: string;
  chatId: string | null;
  promptBytes: number;
}

function world(extra: NodeJS.ProcessEnv = {}) {
  const dir = tempDir('cr-scen-');
  const workspace = tempDir('cr-ws-');
  const trace = join(dir, 'trace.jsonl');
  const env = sandboxEnv({ CURSOR_RESUME_ENABLED: '1', CURSOR_ACP_SESSION_RESUME: '0', CURSOR_RESUME_TRACE: trace, ...extra });
  worlds.push(env.CURSOR_RESUME_RUNTIME_DIR!);
  const runs: AgentRun[] = [];
  const chatPrompts = (chatId: string): string[] => {
    const file = join(env.CURSOR_CONFIG_DIR!, 'chats', createHash('md5').update(workspace).digest('hex'), chatId, 'store.db');
    if (!existsSync(file)) return [];
    const chat = JSON.parse(readFileSync(file, 'utf8')) as { turns: Array<{ prompt: string }> };
    return chat.turns.map((t) => t.prompt);
  };
  return {
    env,
    workspace,
    runs,
    traces: () => readJsonLines<Trace>(trace),
    chatPrompts,
    caller(options: { frame?: Frame; toolsList?: ToolsList; pluginResume?: boolean } = {}) {
      return new Caller(
        {
          executable: BIN,
          env,
          pluginResume: options.pluginResume ?? false,
          toolsList: options.toolsList ?? 'alternate',
          onRun: (r) => runs.push(r),
        },
        options.frame ?? loadFrame(workspace),
      );
    },
  };
}
type World = ReturnType<typeof world>;

/** One `opencode run`: a new caller process (its plugin cache empty) for one user message. */
async function turn(w: World, state: SessionState, text: string, options: Parameters<World['caller']>[0] = {}) {
  const before = w.runs.length;
  const reply = await w.caller(options).userTurn(state, `"${text}"`);
  const chats = w.runs.slice(before).filter((r) => r.kind === 'chat');
  return { reply, chatId: chats.at(-1)!.sessionId!, chats };
}

/** How often `needle` occurs in `hay`. */
const count = (hay: string, needle: string): number => hay.split(needle).length - 1;

/**
 * The oracle: the chat holds each of `present` (a user's `"remember: X` or a tool result's
 * `\nremember: X` line) exactly once over all of its prompts, and none of `absent`.
 */
function assertChatHolds(w: World, chatId: string, present: string[], absent: string[] = [], label = '') {
  const all = w.chatPrompts(chatId).join('\n\u0000\n');
  for (const p of present) assert.equal(count(all, p), 1, `${label}: chat ${chatId} should hold ${JSON.stringify(p)} once`);
  for (const a of absent) assert.equal(count(all, a), 0, `${label}: chat ${chatId} must not hold ${JSON.stringify(a)}`);
}

const said = (fact: string): string => `"remember: ${fact}`;

describe('OpenCode session edits', () => {
  test('revert (undo): the next prompt is an earlier prefix plus a new message: never the chat that holds the undone turn', async () => {
    const w = world();
    const s = newSession(w.workspace);
    await turn(w, s, 'remember: codeword ALPHA');
    await turn(w, s, 'remember: codeword BRAVO');
    // /undo: the last user message and its answer go.
    s.conversation = s.conversation.slice(0, 2);
    const t3 = await turn(w, s, 'remember: codeword CHARLIE');
    assertChatHolds(w, t3.chatId, [said('codeword ALPHA'), said('codeword CHARLIE')], [said('codeword BRAVO')], 'after the undo');
    assert.match(t3.reply, /I remember: codeword ALPHA; codeword CHARLIE\./);
    const t4 = await turn(w, s, 'remember: codeword DELTA');
    assertChatHolds(w, t4.chatId, [said('codeword ALPHA'), said('codeword CHARLIE'), said('codeword DELTA')], [said('codeword BRAVO')]);
    assert.deepEqual(
      w.traces().map((t) => [t.decision, t.reason]),
      [
        ['fresh', 'side-call'],
        ['fresh', 'no-entry'],
        ['resume-delta', 'delta'],
        ['fresh', 'diverged'],
        ['resume-delta', 'delta'],
      ],
    );
  });

  test('an edit of an early user message: a fresh chat with the edited text, never the old chat', async () => {
    const w = world();
    const s = newSession(w.workspace);
    await turn(w, s, 'remember: codeword ALPHA');
    await turn(w, s, 'remember: codeword BRAVO');
    await turn(w, s, 'remember: codeword CHARLIE');
    // The middle one of three, its later turns kept as they were.
    const edited = s.conversation.findIndex((m) => m.role === 'user' && m.content.includes('BRAVO'));
    s.conversation[edited] = { role: 'user', content: '"remember: codeword ZULU"' };
    const t4 = await turn(w, s, 'remember: codeword DELTA');
    assertChatHolds(
      w,
      t4.chatId,
      [said('codeword ALPHA'), said('codeword ZULU'), said('codeword CHARLIE'), said('codeword DELTA')],
      [said('codeword BRAVO')],
    );
  });

  test('a fork: two sessions share a prefix and both continue, each in a chat holding only its own turns', async () => {
    const w = world();
    const a = newSession(w.workspace);
    await turn(w, a, 'remember: codeword ALPHA');
    await turn(w, a, 'remember: codeword BRAVO');
    const b: SessionState = JSON.parse(JSON.stringify(a));
    for (let i = 0; i < 2; i++) {
      const ta = await turn(w, a, `remember: codeword A${i}`);
      const tb = await turn(w, b, `remember: codeword B${i}`);
      const shared = [said('codeword ALPHA'), said('codeword BRAVO')];
      const as = Array.from({ length: i + 1 }, (_, k) => said(`codeword A${k}`));
      const bs = Array.from({ length: i + 1 }, (_, k) => said(`codeword B${k}`));
      assertChatHolds(w, ta.chatId, [...shared, ...as], bs, `a ${i}`);
      assertChatHolds(w, tb.chatId, [...shared, ...bs], as, `b ${i}`);
    }
  });

  test('compaction: the history replaced by a summary, then more turns', async () => {
    const w = world();
    const s = newSession(w.workspace);
    await turn(w, s, 'remember: codeword ALPHA');
    await turn(w, s, 'remember: codeword BRAVO');
    s.conversation = [
      { role: 'user', content: 'What did we do so far?' },
      { role: 'assistant', content: 'We noted codewords.\nremember: codeword SUMMARY' },
    ];
    const t3 = await turn(w, s, 'remember: codeword CHARLIE');
    assertChatHolds(
      w,
      t3.chatId,
      [said('codeword CHARLIE'), '\nremember: codeword SUMMARY'],
      [said('codeword ALPHA'), said('codeword BRAVO')],
    );
    const t4 = await turn(w, s, 'remember: codeword DELTA');
    assertChatHolds(w, t4.chatId, [said('codeword CHARLIE'), said('codeword DELTA')], [said('codeword ALPHA'), said('codeword BRAVO')]);
  });

  test('two sessions of one workspace at the same time (each its own opencode process)', async () => {
    const w = world();
    const a = newSession(w.workspace);
    const b = newSession(w.workspace);
    await Promise.all([turn(w, a, 'remember: codeword ALPHA'), turn(w, b, 'remember: codeword ALPHA')]);
    for (let i = 0; i < 3; i++) {
      const [ta, tb] = await Promise.all([turn(w, a, `remember: codeword A${i}`), turn(w, b, `remember: codeword B${i}`)]);
      const as = Array.from({ length: i + 1 }, (_, k) => said(`codeword A${k}`));
      const bs = Array.from({ length: i + 1 }, (_, k) => said(`codeword B${k}`));
      assertChatHolds(w, ta.chatId, [said('codeword ALPHA'), ...as], bs, `a ${i}`);
      assertChatHolds(w, tb.chatId, [said('codeword ALPHA'), ...bs], as, `b ${i}`);
    }
  });
});

describe("the plugin's own resume on as well (CURSOR_ACP_SESSION_RESUME=1 turns both on)", () => {
  test('a long-lived opencode (its plugin cache lives) and an opencode run in the same workspace, both begun alike', async () => {
    const w = world({ CURSOR_RESUME_ENABLED: '', CURSOR_ACP_SESSION_RESUME: '1' });
    const a = newSession(w.workspace);
    const b = newSession(w.workspace);
    const serve = w.caller({ pluginResume: true });
    const inServe = async (s: SessionState, text: string) => {
      const before = w.runs.length;
      const reply = await serve.userTurn(s, `"${text}"`);
      return {
        reply,
        chatId: w.runs
          .slice(before)
          .filter((r) => r.kind === 'chat')
          .at(-1)!.sessionId!,
      };
    };
    // B (a script's opencode run) first, then A in the long-lived opencode: A's new chat, a copy of B's, replaces it.
    await turn(w, b, 'remember: codeword ALPHA', { pluginResume: true });
    await inServe(a, 'remember: codeword ALPHA');
    // Were B's next turn resumed by cursor-resume, it could go into the chat A's plugin remembers for its session,
    // which that plugin then resumes itself: with the plugin's switch on, its prompts go on unproven (plugin-resumes).
    await turn(w, b, 'remember: codeword BRAVO-B', { pluginResume: true });
    const ta = await inServe(a, 'remember: codeword CHARLIE-A');
    assertChatHolds(w, ta.chatId, [said('codeword ALPHA'), said('codeword CHARLIE-A')], [said('codeword BRAVO-B')], 'A');
    // Resume off would pass too, were it not for the reasons: each prompt of the plugin's passed on unproven.
    assert.deepEqual([...new Set(w.traces().map((t) => `${t.decision}:${t.reason}`))].sort(), [
      'fresh:caller-resume',
      'fresh:plugin-resumes',
      'fresh:side-call',
    ]);
  });
});
