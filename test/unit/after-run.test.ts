// The after-run step, unit-tested as decide() is: from a plan and what the run
// showed to what happens next.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EXIT_STDOUT_CLOSED } from '../../src/stdout.js';
import { judge, settle, type RunFacts } from '../../src/turn/after-run.js';
import type { Plan } from '../../src/turn/plan.js';
import { placeFor, recordFor } from '../../src/turn/record.js';
import { analysisOf, asst, branchAfter, decideFor, user, type Body } from '../support/engine.js';

const turn1: Body = { messages: [user('hello')] };
const turn2: Body = { messages: [user('hello'), asst('hi'), user('more')] };
const asPlan = (decision: ReturnType<typeof decideFor>): Plan => ({
  ...decision,
  argv: [],
  callerFormat: 'stream-json',
  stdin: decision.prompt,
  promptBytes: 10,
  fullPromptBytes: () => 100,
  bridge: null,
});
const fresh = asPlan(decideFor(turn1, []));
const resumed = asPlan(decideFor(turn2, [branchAfter(turn1, { text: 'hi' }, { chatId: 'chat-1' })]));

function run(over: Partial<RunFacts> = {}, tap: Partial<RunFacts['tap']> = {}): RunFacts {
  return {
    code: 0,
    signal: null,
    stderr: '',
    wroteOutput: true,
    stopped: null,
    endedByCaller: null,
    killedHard: false,
    promptCut: false,
    ...over,
    tap: {
      sessionId: 'chat-1',
      sessionChanged: false,
      answerStarted: true,
      results: 1,
      isError: false,
      resultText: 'the answer',
      replyText: 'the answer',
      pastCalls: false,
      unheldCall: false,
      toolCalls: [],
      ...tap,
    },
  };
}
const OPTIONS = { retryFresh: true, holdLimit: 4 * 1024 * 1024 };
const settled = (plan: Plan, facts: RunFacts) => {
  const judged = judge(plan, facts, OPTIONS);
  return settle(plan, facts, { failure: judged.failure, lost: judged.next === 'lost' }, 'cursor-agent');
};

describe('the plans under test', () => {
  test('one fresh and recorded, one resumed', () => {
    assert.equal(fresh.decision, 'fresh');
    assert.equal(fresh.record, true);
    assert.equal(resumed.decision, 'resume-delta');
  });
});

describe('judge', () => {
  test('a good run is delivered', () => {
    assert.deepEqual(judge(resumed, run(), OPTIONS), { next: 'deliver', failure: null, evict: null });
  });
  test('a resumed chat that answered as another, with nothing shown: evict and retry fresh', () => {
    const j = judge(resumed, run({ wroteOutput: false, stopped: 'session-mismatch' }, { sessionId: 'other' }), OPTIONS);
    assert.equal(j.next, 'retry-fresh');
    assert.equal(j.evict, 'chat-1');
    assert.match(j.next === 'retry-fresh' ? j.say : '', /answered as chat other/);
  });
  test('the same with retryFresh off: lost, said, nothing delivered', () => {
    const j = judge(resumed, run({ wroteOutput: false, stopped: 'session-mismatch' }, { sessionId: 'other' }), {
      ...OPTIONS,
      retryFresh: false,
    });
    assert.equal(j.next, 'lost');
    assert.match(j.next === 'lost' ? j.error : '', /Nothing was printed and its entry was dropped/);
    assert.equal(settle(resumed, run(), { failure: 'resume', lost: true }, 'a').exit, 1);
  });
  test('a run we stopped unseen (another chat, or none named) is a failed resume though our SIGTERM ended it', () => {
    // stop() kills cursor-agent: the run dies of that signal, which alone would read as an interrupted turn.
    for (const [stopped, sessionId] of [
      ['session-mismatch', 'other'],
      ['unverified', undefined],
    ] as const) {
      const facts = run({ wroteOutput: false, stopped, code: null, signal: 'SIGTERM' }, { sessionId, results: 0, resultText: undefined });
      const j = judge(resumed, facts, OPTIONS);
      assert.equal(j.next, 'retry-fresh', stopped);
      assert.equal(j.evict, 'chat-1', stopped);
    }
  });
  test("cursor-agent's own resume error with retryFresh off is passed on as it printed it, and evicted", () => {
    const j = judge(resumed, run({ wroteOutput: false, code: 1, stderr: 'Error: chat not found' }), { ...OPTIONS, retryFresh: false });
    assert.deepEqual(j, { next: 'deliver', failure: 'resume', evict: 'chat-1' });
  });
  test('output already shown: never retried, still evicted', () => {
    assert.deepEqual(judge(resumed, run({ code: 1, stderr: 'Error: failed to resume' }), OPTIONS), {
      next: 'deliver',
      failure: 'resume',
      evict: 'chat-1',
    });
  });
  test('ended by the caller before it named a chat, and exiting 0 for it: an interrupted turn, not a failed resume', () => {
    for (const endedByCaller of ['SIGTERM', 'SIGINT', 'stdout-closed'] as const) {
      const facts = run(
        { wroteOutput: false, endedByCaller },
        { sessionId: undefined, answerStarted: false, results: 0, resultText: undefined },
      );
      assert.deepEqual(judge(resumed, facts, OPTIONS), { next: 'deliver', failure: 'signal', evict: null }, endedByCaller);
      assert.deepEqual(settled(resumed, facts).update, { kind: 'release', outcome: 'interrupted', state: 'unknown' }, endedByCaller);
    }
  });
  test('a chat proven gone, then the caller asked us to stop: evicted, but never run again nor called lost', () => {
    const facts = run({ wroteOutput: false, stopped: 'session-mismatch', endedByCaller: 'SIGTERM' }, { sessionId: 'other' });
    for (const retryFresh of [true, false]) {
      assert.deepEqual(judge(resumed, facts, { ...OPTIONS, retryFresh }), { next: 'deliver', failure: 'resume', evict: 'chat-1' });
    }
    // Nothing of it was shown: the turn ends of the caller's signal, not with the status of a run they never saw.
    for (const code of [0, 1]) {
      for (const stopped of ['session-mismatch', 'unverified'] as const) {
        assert.equal(settled(resumed, { ...facts, code, stopped, endedByCaller: 'SIGINT' }).exit, 130);
        assert.equal(settled(resumed, { ...facts, code, signal: 'SIGTERM', stopped, endedByCaller: 'SIGHUP' }).exit, 129);
      }
    }
  });
  test('a fresh run is never retried', () => {
    assert.equal(judge(fresh, run({ wroteOutput: false, code: 1, stderr: 'chat not found' }), OPTIONS).next, 'deliver');
  });
});

describe('settle', () => {
  test('a finished turn is recorded with the result text and the calls a stream-json caller saw; a text or json caller, the text alone', () => {
    for (const callerFormat of ['text', 'json'] as const) {
      const s = settled({ ...fresh, callerFormat }, run({}, { toolCalls: [{ id: 'c1', name: 'read' }] }));
      assert.deepEqual(
        s.update,
        { kind: 'record', chatId: 'chat-1', reply: { text: 'the answer', calls: [] }, ended: 'result' },
        callerFormat,
      );
    }
    const s = settled(fresh, run({}, { toolCalls: [{ id: 'c1', name: 'read' }] }));
    assert.deepEqual(s.update, {
      kind: 'record',
      chatId: 'chat-1',
      reply: { text: 'the answer', calls: [{ id: 'c1', name: 'read' }] },
      ended: 'result',
    });
    assert.equal(s.exit, 0);
    assert.equal(s.failure, null);
  });
  test('the tool-loop handover: killed by the caller right after a tool call is recorded up to the calls', () => {
    const facts = run(
      { code: null, signal: 'SIGTERM', endedByCaller: 'SIGTERM' },
      { results: 0, resultText: undefined, replyText: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'read' }] },
    );
    for (const plan of [fresh, resumed]) {
      const s = settled(plan, facts);
      assert.deepEqual(s.update, {
        kind: 'record',
        chatId: 'chat-1',
        reply: { text: 'Let me look.', calls: [{ id: 'call_1', name: 'read' }] },
        ended: 'tool-calls',
      });
      assert.equal(s.exit, 143);
      assert.equal(s.failure, null);
    }
  });
  test('a cursor-agent that did not read the whole prompt is never recorded: neither its answer nor its calls', () => {
    const cut = { promptCut: true };
    assert.equal(settled(fresh, run(cut)).update, null);
    assert.match(settled(fresh, run(cut)).say ?? '', /without reading the whole prompt/);
    assert.deepEqual(settled(resumed, run(cut)).update, { kind: 'release', outcome: 'error', state: 'unknown' });
    const atCalls = run(
      { ...cut, code: null, signal: 'SIGTERM', endedByCaller: 'SIGTERM' },
      { results: 0, resultText: undefined, replyText: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'read' }] },
    );
    assert.equal(settled(fresh, atCalls).update, null);
    assert.deepEqual(settled(resumed, atCalls).update, { kind: 'release', outcome: 'interrupted', state: 'unknown' });
    assert.equal(settled(resumed, atCalls).exit, 143, "the exit stays cursor-agent's");
  });
  test('a closed stdout after a tool call is a handover too (exit 141)', () => {
    const facts = run(
      { code: null, signal: 'SIGTERM', stopped: 'stdout-closed', endedByCaller: 'stdout-closed' },
      { results: 0, resultText: undefined, replyText: '', toolCalls: [{ id: 'call_1', name: 'read' }] },
    );
    const s = settled(resumed, facts);
    assert.equal(s.update?.kind, 'record');
    assert.equal(s.exit, EXIT_STDOUT_CLOSED);
  });
  test('killed before any tool call: interrupted, the leased chat released as unknown', () => {
    const facts = run(
      { code: null, signal: 'SIGTERM', endedByCaller: 'SIGTERM' },
      { results: 0, resultText: undefined, replyText: 'Let me' },
    );
    assert.deepEqual(settled(resumed, facts).update, { kind: 'release', outcome: 'interrupted', state: 'unknown' });
    assert.equal(settled(fresh, facts).update, null);
    assert.equal(settled(fresh, facts).failure, 'signal');
  });
  test('no handover when the agent died of a signal nobody sent us, outlived the signal, or answered as another chat', () => {
    const calls = { results: 0, resultText: undefined, replyText: '', toolCalls: [{ id: 'call_1', name: 'read' }] };
    assert.equal(settled(resumed, run({ code: null, signal: 'SIGKILL' }, calls)).update?.kind, 'release');
    assert.equal(
      settled(resumed, run({ code: null, signal: 'SIGKILL', endedByCaller: 'SIGTERM', killedHard: true }, calls)).update?.kind,
      'release',
    );
    assert.equal(
      settled(fresh, run({ code: null, signal: 'SIGTERM', endedByCaller: 'SIGTERM' }, { ...calls, replyText: undefined })).update,
      null,
    );
    assert.equal(
      settled(resumed, run({ code: null, signal: 'SIGTERM', endedByCaller: 'SIGTERM' }, { ...calls, sessionId: 'other' })).update?.kind,
      'release',
    );
  });
  test('no handover once the stream went past its calls (cursor ran the tool itself), or for a caller that never saw them live', () => {
    const calls = { results: 0, resultText: undefined, replyText: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'read' }] };
    const killed = { code: null, signal: 'SIGTERM' as const, endedByCaller: 'SIGTERM' as const };
    assert.equal(settled(fresh, run(killed, calls)).update?.kind, 'record', 'the case itself is a handover');
    assert.equal(settled(fresh, run(killed, { ...calls, pastCalls: true })).update, null);
    assert.deepEqual(settled(resumed, run(killed, { ...calls, pastCalls: true })).update, {
      kind: 'release',
      outcome: 'interrupted',
      state: 'unknown',
    });
    assert.equal(settled({ ...fresh, callerFormat: 'text' }, run(killed, calls)).update, null);
  });
  test("no handover at a call its chat may not hold yet (a function or MCP call cursor-agent runs itself): nothing recorded, a resumed chat's history unknown", () => {
    const calls = { results: 0, resultText: undefined, replyText: 'Calling tool lookup.', toolCalls: [{ id: 'call_1', name: 'lookup' }] };
    const killed = { code: null, signal: 'SIGTERM' as const, endedByCaller: 'SIGTERM' as const };
    assert.equal(settled(fresh, run(killed, calls)).update?.kind, 'record', "the same run at a call of Cursor's own tools is a handover");
    assert.equal(settled(fresh, run(killed, { ...calls, unheldCall: true })).update, null);
    assert.equal(
      settled(fresh, run(killed, { ...calls, unheldCall: true })).say,
      'not recorded: the caller ended the run at a function or MCP call, which cursor-agent runs itself and its chat may not hold yet',
    );
    // Said only where the run would otherwise have been a handover: not to a caller who never saw the call.
    assert.equal(settled({ ...fresh, callerFormat: 'text' }, run(killed, { ...calls, unheldCall: true })).say, null);
    assert.deepEqual(settled(resumed, run(killed, { ...calls, unheldCall: true })).update, {
      kind: 'release',
      outcome: 'interrupted',
      state: 'unknown',
    });
  });
  test('a finished turn whose stream went past its calls (cursor ran them itself) is not recorded for a stream-json caller, who may answer them again', () => {
    const ran = { toolCalls: [{ id: 'call_1', name: 'read' }], pastCalls: true };
    // Whether the caller's signal came too late to matter, or never came.
    for (const over of [{}, { endedByCaller: 'SIGTERM' as const }]) {
      const once = settled(fresh, run(over, ran));
      assert.equal(once.update, null, 'a fresh chat: nothing recorded');
      assert.equal(once.say, 'not recorded: cursor ran 1 tool call itself, which a caller that saw it may answer again');
      assert.deepEqual(
        settled(resumed, run(over, ran)).update,
        { kind: 'release', outcome: 'success', state: 'unknown' },
        'a resumed one: unknown',
      );
      assert.equal(once.exit, 0);
      assert.equal(once.failure, null);
    }
    const two = settled(fresh, run({}, { ...ran, toolCalls: [...ran.toolCalls, { id: 'call_2', name: 'shell' }] }));
    assert.equal(two.say, 'not recorded: cursor ran 2 tool calls itself, which a caller that saw them may answer again');
    // A text or json caller never saw the calls, so cannot answer them: recorded by its text, as before.
    for (const callerFormat of ['text', 'json'] as const) {
      assert.deepEqual(settled({ ...fresh, callerFormat }, run({}, ran)).update, {
        kind: 'record',
        chatId: 'chat-1',
        reply: { text: 'the answer', calls: [] },
        ended: 'result',
      });
    }
  });
  test("a bridge envelope is recorded as the plugin's calls with no text: ended there by the caller, or finished before it could", () => {
    const envelope = '{"name":"write","arguments":{"path":"a.txt","content":"x"}}';
    const bridgeCalls = [{ id: 'call_bridge_0123456789ab', name: 'write' }];
    const killed = { code: null, signal: 'SIGTERM' as const, endedByCaller: 'SIGTERM' as const };
    const cut = { results: 0, resultText: undefined, replyText: envelope, bridgeCalls };
    for (const plan of [fresh, resumed]) {
      assert.deepEqual(settled(plan, run(killed, cut)).update, {
        kind: 'record',
        chatId: 'chat-1',
        reply: { text: '', calls: bridgeCalls },
        ended: 'tool-calls',
      });
    }
    assert.deepEqual(settled(fresh, run({}, { resultText: envelope, replyText: envelope, bridgeCalls })).update, {
      kind: 'record',
      chatId: 'chat-1',
      reply: { text: '', calls: bridgeCalls },
      ended: 'result',
    });
    // Text after the envelope: the plugin never saw it, yet the chat holds it.
    assert.equal(settled(fresh, run(killed, { ...cut, pastCalls: true })).update, null);
    assert.deepEqual(
      settled(fresh, run({}, { resultText: `${envelope} Done.`, replyText: `${envelope} Done.`, bridgeCalls, pastCalls: true })).update,
      { kind: 'record', chatId: 'chat-1', reply: { text: `${envelope} Done.`, calls: [] }, ended: 'result' },
    );
  });
  test('a finished turn is recorded only when nothing failed, nothing was stopped and one chat answered', () => {
    assert.equal(settled(fresh, run()).update?.kind, 'record', 'the case itself is recorded');
    // Two chat IDs in one stream: which chat holds the turn is not known.
    const two = settled(fresh, run({}, { sessionChanged: true }));
    assert.equal(two.update, null);
    assert.match(two.say ?? '', /more than one chat ID/);
    // Cursor's error result, or an exit status of its own: no reply to record.
    assert.equal(settled(fresh, run({}, { isError: true })).update, null);
    assert.equal(settled(fresh, run({ code: 1, stderr: 'Error: something broke' })).update, null);
    // Stopped by us (the caller closed stdout) after the result, cursor-agent exiting 0 for it: not recorded as a finished turn.
    assert.equal(settled(fresh, run({ stopped: 'stdout-closed', endedByCaller: 'stdout-closed' })).update, null);
    // A plan that records nothing (side call, the caller's own --resume): never recorded, whatever the run.
    assert.equal(settled({ ...fresh, record: false } as Plan, run()).update, null);
  });
  test('no handover once cursor sent a result: the turn did not end at its calls', () => {
    const killed = { code: null, signal: 'SIGTERM' as const, endedByCaller: 'SIGTERM' as const };
    const calls = { resultText: undefined, replyText: 'Let me look.', toolCalls: [{ id: 'call_1', name: 'read' }] };
    assert.equal(settled(fresh, run(killed, { ...calls, results: 0 })).update?.kind, 'record', 'the case itself is a handover');
    assert.equal(settled(fresh, run(killed, { ...calls, results: 1 })).update, null);
  });
  test('a resumed chat killed by a signal before it answered: its history is unknown all the same (it may hold the new messages)', () => {
    assert.deepEqual(settled(resumed, run({ code: null, signal: 'SIGKILL' }, { answerStarted: false, results: 0 })).update, {
      kind: 'release',
      outcome: 'interrupted',
      state: 'unknown',
    });
  });
  test('a resumed chat whose ID changed during the answer is a failed resume: evicted, and nothing released', () => {
    const facts = run({}, { sessionChanged: true });
    const j = judge(resumed, facts, OPTIONS);
    assert.deepEqual([j.next, j.failure, j.evict], ['deliver', 'resume', 'chat-1']);
    assert.equal(settled(resumed, facts).update, null);
  });
  test('an unusable chat ID is said, not recorded', () => {
    const s = settled(fresh, run({}, { sessionId: '../etc' }));
    assert.equal(s.update, null);
    assert.match(s.say ?? '', /unusable chat ID/);
  });
  test('an unusable chat ID is said cut short, with the C1 controls a terminal may act on escaped', () => {
    const said = (id: unknown) => settled(fresh, run({}, { sessionId: id })).say ?? '';
    const long = said('x'.repeat(100_000));
    assert.ok(long.length < 200, `${long.length} characters`);
    assert.match(long, /"x{127}…$/);
    assert.match(said('a\u009b31mb'), /"a\\u009b31mb"$/);
    assert.match(said({ id: 1 }), /unusable chat ID \{"id":1\}$/);
    assert.equal(said(undefined), 'not recorded: cursor named no chat ID', 'none at all is said as none, not as "undefined"');
  });
  test('a resumed turn that failed before answering keeps its history; after answering, unknown', () => {
    assert.deepEqual(
      settled(resumed, run({ code: 1, stderr: 'Error: Authentication required' }, { answerStarted: false, results: 0 })).update,
      {
        kind: 'release',
        outcome: 'auth',
        state: 'ok',
      },
    );
    assert.deepEqual(settled(resumed, run({ code: 1, stderr: 'fetch failed' }, { results: 0 })).update, {
      kind: 'release',
      outcome: 'network',
      state: 'unknown',
    });
  });
  test('a resumed turn that exits 0 without a result, its chat named: its history unknown, said', () => {
    const s = settled(resumed, run({}, { answerStarted: false, results: 0, resultText: undefined, replyText: '' }));
    assert.deepEqual(s.update, { kind: 'release', outcome: 'error', state: 'unknown' });
    assert.match(s.say ?? '', /exited without a result/);
    assert.equal(s.exit, 0);
  });
  test('cursor-agent not found: 127, a message, and a leased chat released as it was', () => {
    const missing = Object.assign(new Error('spawn x ENOENT'), { code: 'ENOENT' });
    const s = settled(resumed, run({ code: -2, spawnError: missing }));
    assert.equal(s.exit, 127);
    assert.equal(s.failure, 'not-found');
    assert.deepEqual(s.update, { kind: 'release', outcome: 'error', state: 'ok' });
    assert.ok(s.error);
  });
});

describe('the early record of a fresh chat at its first tool call', () => {
  test('is a new branch whose history is unknown: until the lease is taken, no other turn may resume it', () => {
    const analysis = analysisOf(turn1);
    const place = placeFor({ ...fresh, anchor: fresh.anchor! }, analysis, 'chat-1', { text: '', calls: [{ id: 'c1', name: 'read' }] }, 5);
    assert.deepEqual([place.base, place.outcome, place.state, place.savedBytes], [null, 'interrupted', 'unknown', 0]);
    assert.deepEqual(place.digests, analysis.digests);
    assert.equal(
      place.reply,
      recordFor({ ...fresh, anchor: fresh.anchor! }, analysis, 'chat-1', { text: '', calls: [{ id: 'c1', name: 'read' }] }, 5).reply,
    );
  });
});
