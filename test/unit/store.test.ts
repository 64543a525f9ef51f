// BranchStore: the resume cache's rules, on an injected monotonic clock.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SEED_LIMITS, clampLimits, envLimits, lowered } from '../../src/cache/limits.js';
import { BranchStore, MAX_EVICTED_ANCHORS, MAX_FORGOTTEN_CHATS } from '../../src/cache/store.js';
import type { RecordInput, StoreOptions } from '../../src/cache/store.js';
import { DIGEST_BYTES, MAX_KNOWN_MESSAGES, pack, prefixHash } from '../../src/cache/known.js';
import { ANCHOR, DIGEST, storeRecord } from '../support/records.js';

const { ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES } = SEED_LIMITS;
const A = ANCHOR;
const B = 'b'.repeat(32);

function clocked(options: StoreOptions = {}) {
  const clock = { now: 1000 };
  const store = new BranchStore({ clock: () => clock.now, wallClock: () => 1_700_000_000_000 + clock.now, ...options });
  return { store, clock };
}

const rec = storeRecord;

function recorded(store: BranchStore, input: RecordInput, holder?: string) {
  const result = store.record(input, holder);
  assert.ok(result.recorded, `record refused: ${result.recorded ? '' : result.message}`);
  return result.branch;
}

describe('limits', () => {
  test('default to the seed limits and can only be lowered', () => {
    assert.deepEqual(clampLimits(), { ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES });
    assert.deepEqual(clampLimits({ ttlMs: 500, maxEntries: 3 }), { ttlMs: 500, maxEntries: 3 });
    assert.deepEqual(clampLimits({ ttlMs: 10 * MAX_TTL_MS, maxEntries: 1000 }), { ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES });
    assert.deepEqual(clampLimits({ ttlMs: Number.NaN, maxEntries: -1 }), { ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES });
    assert.deepEqual(clampLimits({ ttlMs: 0.5, maxEntries: 2.7 }), { ttlMs: 1, maxEntries: 2 });
    assert.deepEqual(new BranchStore({ ttlMs: 2 * MAX_TTL_MS, maxEntries: 65 }).limits, { ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES });
  });
});

describe('the limits rule, in one place', () => {
  test('lowered, never raised, from any source; the environment asks only with whole positive numbers', () => {
    const seed = { ...SEED_LIMITS };
    assert.deepEqual(lowered(seed, { ttlMs: 500 }), { ttlMs: 500, maxEntries: 64 });
    assert.deepEqual(lowered({ ttlMs: 500, maxEntries: 3 }, { ttlMs: 900, maxEntries: 1000 }), { ttlMs: 500, maxEntries: 3 });
    assert.deepEqual(lowered(seed, { ttlMs: -1, maxEntries: Number.NaN }), seed);
    assert.deepEqual(envLimits({ CURSOR_RESUME_TTL_MS: ' 300 ', CURSOR_RESUME_MAX_ENTRIES: '2.9' }), { ttlMs: 300, maxEntries: 2 });
    for (const bad of ['', 'abc', '0', '-5', '0.5']) assert.deepEqual(envLimits({ CURSOR_RESUME_TTL_MS: bad }), {}, JSON.stringify(bad));
  });
});

describe('records and branches', () => {
  test("a branch read has its fields in one order, storeSeen or not, after a release too (the helper's replies are these bytes)", () => {
    const order = [
      'anchor',
      'chatId',
      'toolsFingerprint',
      'workspace',
      'model',
      'bytesSaved',
      'version',
      'turns',
      'state',
      'lastOutcome',
      'createdAt',
      'updatedAt',
    ];
    const tail = ['knownCount', 'prefix', 'ttlLeftMs', 'leased'];
    const { store } = clocked();
    const seen = recorded(store, rec({ chatId: 'seen', storeSeen: true, added: '01'.repeat(DIGEST_BYTES) }));
    const plain = recorded(store, rec({ chatId: 'plain', added: '02'.repeat(DIGEST_BYTES) }));
    assert.deepEqual(Object.keys(seen), [...order, 'storeSeen', ...tail]);
    assert.deepEqual(Object.keys(plain), [...order, ...tail]);
    assert.ok(store.lease(A, 'seen', seen.version, 'h').granted);
    store.release('h', 'error', 'unknown');
    for (const branch of [...store.lookup(A), ...store.peek(A), ...store.list()]) {
      assert.deepEqual(Object.keys(branch), branch.chatId === 'seen' ? [...order, 'storeSeen', ...tail] : [...order, ...tail]);
    }
  });

  test('a new record becomes a branch with version, turn count and times', () => {
    const { store } = clocked();
    const branch = recorded(store, rec({ savedBytes: 10 }));
    assert.equal(branch.turns, 1);
    assert.equal(branch.bytesSaved, 10);
    assert.equal(branch.state, 'ok');
    assert.equal(branch.lastOutcome, 'success');
    assert.equal(branch.leased, false);
    assert.equal(branch.ttlLeftMs, MAX_TTL_MS);
    assert.equal(branch.createdAt, branch.updatedAt);
    assert.deepEqual(store.lookup(A), [branch]);
    assert.deepEqual(store.lookup(B), []);
  });

  test('compare-and-set: the right base version updates, a moved one is refused as a conflict', () => {
    const { store, clock } = clocked();
    const first = recorded(store, rec({ savedBytes: 5 }));
    clock.now += 10;
    const second = recorded(store, rec({ baseVersion: first.version, added: DIGEST.repeat(2), savedBytes: 7 }));
    assert.ok(second.version > first.version);
    assert.equal(second.turns, 2);
    assert.equal(second.bytesSaved, 12);
    assert.equal(second.createdAt, first.createdAt);
    assert.ok(second.updatedAt > first.updatedAt);
    const late = store.record(rec({ baseVersion: first.version }));
    assert.equal(late.recorded, false);
    assert.equal(!late.recorded && late.reason, 'conflict');
    assert.equal(store.lookup(A)[0]!.knownCount, 4, 'the conflicting record changed nothing');
    assert.equal(store.lookup(A)[0]!.prefix, second.prefix);
    const missing = store.record(rec({ chatId: 'other', baseVersion: 1 }));
    assert.equal(!missing.recorded && missing.reason, 'gone');
  });

  test('baseVersion null replaces a branch with the same chat ID, and the old version no longer matches', () => {
    const { store } = clocked();
    const old = recorded(store, rec({ savedBytes: 100 }));
    const fresh = recorded(store, rec({ added: DIGEST }));
    assert.equal(fresh.turns, 1);
    assert.equal(fresh.bytesSaved, 0);
    assert.notEqual(fresh.version, old.version);
    assert.equal(store.lookup(A).length, 1);
    const stale = store.record(rec({ baseVersion: old.version }));
    assert.equal(!stale.recorded && stale.reason, 'conflict');
  });

  test('an anchor holds several branches, most recently updated first, each one entry', () => {
    const { store, clock } = clocked();
    recorded(store, rec({ chatId: 'one' }));
    clock.now += 5;
    recorded(store, rec({ chatId: 'two' }));
    recorded(store, rec({ anchor: B, chatId: 'three' }));
    assert.deepEqual(
      store.lookup(A).map((b) => b.chatId),
      ['two', 'one'],
    );
    assert.deepEqual(store.stats(), { entries: 3, anchors: 2, leases: 0, ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES });
    assert.equal(store.size, 3);
  });

  test('versions are never reused, even by a branch evicted and recorded again', () => {
    const { store } = clocked();
    const before = recorded(store, rec());
    store.evictBranch(A, 'chat-1');
    const again = recorded(store, rec());
    assert.notEqual(again.version, before.version);
    const result = store.record(rec({ baseVersion: before.version }));
    assert.equal(!result.recorded && result.reason, 'conflict');
  });

  test('optional outcome and state are kept; savedBytes never goes negative', () => {
    const { store } = clocked();
    const branch = recorded(store, rec({ outcome: 'network', state: 'unknown', savedBytes: -5 }));
    assert.equal(branch.lastOutcome, 'network');
    assert.equal(branch.state, 'unknown');
    assert.equal(branch.bytesSaved, 0);
  });
});

describe('TTL on the monotonic clock', () => {
  test('a branch lives ttlMs after its last record; lookup does not extend it', () => {
    const { store, clock } = clocked({ ttlMs: 1000 });
    recorded(store, rec());
    clock.now += 600;
    assert.equal(store.lookup(A)[0]!.ttlLeftMs, 400);
    clock.now += 399;
    assert.equal(store.lookup(A).length, 1);
    assert.equal(store.list().length, 1);
    clock.now += 2;
    assert.equal(store.list().length, 0, 'list shows live branches only');
    assert.equal(store.stats().entries, 0);
    const expired = store.lookup(A);
    assert.equal(expired.length, 1, 'an expired branch is returned once');
    assert.ok(expired[0]!.ttlLeftMs <= 0);
    assert.deepEqual(store.lookup(A), [], 'and then dropped');
  });

  test('a record starts the TTL again; prune drops expired branches', () => {
    const { store, clock } = clocked({ ttlMs: 1000 });
    const first = recorded(store, rec());
    recorded(store, rec({ chatId: 'other' }));
    clock.now += 900;
    recorded(store, rec({ baseVersion: first.version }));
    clock.now += 500;
    store.prune();
    assert.deepEqual(
      store.list().map((b) => b.chatId),
      ['chat-1'],
    );
    assert.deepEqual(
      store.lookup(A).map((b) => [b.chatId, b.ttlLeftMs]),
      [['chat-1', 500]],
    );
  });

  test('a clock starting at 0 still expires entries', () => {
    const clock = { now: 0 };
    const store = new BranchStore({ ttlMs: 10, clock: () => clock.now });
    recorded(store, rec());
    clock.now = 11;
    assert.equal(store.list().length, 0);
  });

  test('an expired branch cannot be leased', () => {
    const { store, clock } = clocked({ ttlMs: 100 });
    const branch = recorded(store, rec());
    clock.now += 101;
    const lease = store.lease(A, 'chat-1', branch.version, 'h1');
    assert.equal(!lease.granted && lease.reason, 'gone');
  });
});

describe('LRU and max entries', () => {
  test('the least recently used branch goes first; lookup counts as use', () => {
    const { store } = clocked({ maxEntries: 3 });
    recorded(store, rec({ chatId: 'one' }));
    recorded(store, rec({ chatId: 'two' }));
    recorded(store, rec({ anchor: B, chatId: 'three' }));
    store.lookup(A); // one and two are now more recent than three
    recorded(store, rec({ anchor: B, chatId: 'four' }));
    assert.deepEqual(
      store.lookup(B).map((b) => b.chatId),
      ['four'],
    );
    recorded(store, rec({ chatId: 'five' }));
    assert.equal(store.size, 3);
    assert.deepEqual(new Set(store.list().map((b) => b.chatId)), new Set(['five', 'four', 'two']));
  });

  test('a full cache makes room by dropping an expired branch before a live one, however recently the expired one was used', () => {
    const { store, clock } = clocked({ ttlMs: 1000, maxEntries: 2 });
    recorded(store, rec({ anchor: B, chatId: 'old' }));
    clock.now += 500;
    recorded(store, rec({ chatId: 'live' }));
    clock.now += 100;
    store.lookup(B); // old is now the most recently used, live the least
    clock.now += 500; // old has expired (no sweep yet), live has 400 ms left
    recorded(store, rec({ chatId: 'new' }));
    assert.deepEqual(store.peek(B), []);
    assert.deepEqual(
      store.peek(A).map((b) => [b.chatId, b.ttlLeftMs]),
      [
        ['new', 1000],
        ['live', 400],
      ],
    );
  });

  test('list is most recently used first and does not change recency', () => {
    const { store } = clocked({ maxEntries: 2 });
    recorded(store, rec({ chatId: 'one' }));
    recorded(store, rec({ chatId: 'two' }));
    assert.deepEqual(
      store.list().map((b) => b.chatId),
      ['two', 'one'],
    );
    store.list();
    recorded(store, rec({ chatId: 'three' }));
    assert.deepEqual(
      store.list().map((b) => b.chatId),
      ['three', 'two'],
    );
  });
});

describe('known sequences', () => {
  test('a record adds to the base it read: another count or prefix hash under the right version is a conflict', () => {
    const { store } = clocked();
    const first = recorded(store, rec());
    const wrong = store.record(
      rec({ base: { version: first.version, count: first.knownCount + 1, prefix: first.prefix, last: DIGEST }, added: DIGEST }),
    );
    assert.equal(!wrong.recorded && wrong.reason, 'conflict');
    const other = store.record(
      rec({ base: { version: first.version, count: first.knownCount, prefix: 'e'.repeat(32), last: DIGEST }, added: DIGEST }),
    );
    assert.equal(!other.recorded && other.reason, 'conflict');
    assert.deepEqual(
      store.lookup(A).map((b) => [b.version, b.knownCount]),
      [[first.version, 2]],
      'nothing changed',
    );
  });

  test("a resumed turn's record writes the turn's copy of cursor's reply over the reply's digest, then adds its own", () => {
    const { store } = clocked();
    const [sent, reply, copy, next, reply2] = ['01', '02', '03', '04', '05'].map((b) => b.repeat(DIGEST_BYTES));
    const first = recorded(store, rec({ added: `${sent}${reply}` }));
    const base = { version: first.version, count: 2, prefix: first.prefix, last: copy! };
    const second = recorded(store, rec({ base, added: `${next}${reply2}` }));
    assert.equal(second.knownCount, 4);
    assert.equal(second.prefix, prefixHash(pack([sent!, copy!, next!, reply2!]), 4));
    const found = store.prefixes(A, 'chat-1', second.version, [2]);
    assert.ok(found.found);
    assert.equal(found.prefixes[0], prefixHash(pack([sent!, copy!]), 2), 'the copy, not the reply, from now on');
  });

  test('prefix hashes for the search, read-only; a moved or missing branch says so', () => {
    const { store } = clocked();
    const branch = recorded(store, rec({ added: DIGEST.repeat(5) }));
    const found = store.prefixes(A, 'chat-1', branch.version, [5, 0, 6]);
    assert.ok(found.found);
    assert.equal(found.prefixes[0], branch.prefix);
    assert.equal(found.prefixes[2], null, 'past the end');
    assert.equal((store.prefixes(A, 'chat-1', branch.version + 1, [1]) as { reason: string }).reason, 'stale');
    assert.equal((store.prefixes(A, 'nobody', 1, [1]) as { reason: string }).reason, 'gone');
  });

  test('a branch knows up to MAX_KNOWN_MESSAGES messages', () => {
    const { store } = clocked();
    const tooMany = store.record({ ...rec(), added: new Uint8Array((MAX_KNOWN_MESSAGES + 1) * DIGEST_BYTES) });
    assert.equal(!tooMany.recorded && tooMany.reason, 'too-long');
    assert.equal(recorded(store, { ...rec(), added: new Uint8Array(100_000 * DIGEST_BYTES) }).knownCount, 100_000);
  });

  test('a turn that would take its branch past MAX_KNOWN_MESSAGES drops it: its chat has moved on, the branch would stay a turn behind', () => {
    const { store } = clocked();
    const branch = recorded(store, { ...rec(), added: new Uint8Array(MAX_KNOWN_MESSAGES * DIGEST_BYTES) });
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    const base = { version: branch.version, count: branch.knownCount, prefix: branch.prefix, last: '00'.repeat(DIGEST_BYTES) };
    const next = store.record({ ...rec(), base, added: Buffer.from(DIGEST.repeat(2), 'hex') }, 'h1');
    assert.equal(!next.recorded && next.reason, 'too-long');
    assert.deepEqual(store.lookup(A), []);
  });
});

describe('copies', () => {
  test("a new chat knowing exactly another branch's history replaces it, unless that one is leased or has other tools", () => {
    const { store } = clocked({ maxEntries: 4 });
    const same = DIGEST.repeat(3);
    recorded(store, rec({ anchor: B, chatId: 'other' }));
    recorded(store, rec({ chatId: 'one', added: same }));
    recorded(store, rec({ chatId: 'two', added: same }));
    assert.deepEqual(
      store.lookup(A).map((b) => b.chatId),
      ['two'],
      'the copy replaced the first',
    );
    assert.equal(store.lookup(B).length, 1, 'the other conversation stayed');
    const leased = store.lookup(A)[0]!;
    assert.ok(store.lease(A, 'two', leased.version, 'h1').granted);
    recorded(store, rec({ chatId: 'three', added: same }));
    recorded(store, rec({ chatId: 'four', added: same, toolsFingerprint: 'e'.repeat(32) }));
    assert.deepEqual(
      store
        .lookup(A)
        .map((b) => b.chatId)
        .sort(),
      ['four', 'three', 'two'],
      'a leased branch and one with other tools are not copies to drop',
    );
  });
});

describe('leases', () => {
  test('one holder at a time; the version must be the one looked up', () => {
    const { store } = clocked();
    const branch = recorded(store, rec());
    const first = store.lease(A, 'chat-1', branch.version, 'h1');
    assert.ok(first.granted);
    assert.equal(first.granted && first.branch.leased, true);
    assert.equal(store.lookup(A)[0]!.leased, true);
    const second = store.lease(A, 'chat-1', branch.version, 'h2');
    assert.equal(!second.granted && second.reason, 'busy');
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted, 'the holder may lease again');
    assert.equal(store.leasesOf('h1'), 1);
    const stale = store.lease(A, 'chat-1', branch.version + 100, 'h1');
    assert.equal(!stale.granted && stale.reason, 'stale');
    const gone = store.lease(A, 'nope', 1, 'h2');
    assert.equal(!gone.granted && gone.reason, 'gone');
    assert.equal(store.stats().leases, 1);
  });

  test("a leased branch refuses records from others; the holder's record ends its lease", () => {
    const { store } = clocked();
    const branch = recorded(store, rec());
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    const intruder = store.record(rec({ baseVersion: branch.version }), 'h2');
    assert.equal(!intruder.recorded && intruder.reason, 'busy');
    const anonymous = store.record(rec({ baseVersion: null }));
    assert.equal(!anonymous.recorded && anonymous.reason, 'busy');
    const mine = recorded(store, rec({ baseVersion: branch.version }), 'h1');
    assert.equal(mine.leased, false);
    assert.equal(store.leasesOf('h1'), 0);
    assert.ok(store.lease(A, 'chat-1', mine.version, 'h2').granted);
  });

  test("a refused record still ends the recorder's lease, and leaves its chat unknown: the turn ran on it", () => {
    const { store } = clocked();
    const branch = recorded(store, rec());
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    const wrong = store.record(rec({ baseVersion: branch.version + 1 }), 'h1');
    assert.equal(!wrong.recorded && wrong.reason, 'conflict');
    const after = store.lookup(A)[0]!;
    assert.equal(after.leased, false);
    assert.deepEqual([after.state, after.lastOutcome], ['unknown', 'interrupted']);
    assert.ok(after.version > branch.version);
    // One refused without a lease of the recorder's changes nothing.
    const other = recorded(store, rec({ chatId: 'chat-2' }));
    assert.ok(!store.record(rec({ chatId: 'chat-2', baseVersion: other.version + 1 }), 'h2').recorded);
    const untouched = store.lookup(A).find((b) => b.chatId === 'chat-2')!;
    assert.deepEqual([untouched.state, untouched.version], ['ok', other.version]);
  });

  test('a turn begun before a forget, yet resuming a chat recorded after it, is refused and leaves that chat unknown', () => {
    const { store } = clocked();
    store.forgetAll(100);
    const branch = recorded(store, rec({ startedAt: 200 }));
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    const late = store.record(rec({ baseVersion: branch.version, startedAt: 50 }), 'h1');
    assert.equal(!late.recorded && late.reason, 'forgotten');
    assert.equal(store.lookup(A)[0]!.state, 'unknown');
  });

  test('release with an outcome updates the branch and bumps its version, without extending its life', () => {
    const { store, clock } = clocked({ ttlMs: 1000 });
    const branch = recorded(store, rec());
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    clock.now += 300;
    assert.equal(store.release('h1', 'network', 'unknown'), 1);
    const after = store.lookup(A)[0]!;
    assert.equal(after.state, 'unknown');
    assert.equal(after.lastOutcome, 'network');
    assert.equal(after.leased, false);
    assert.equal(after.ttlLeftMs, 700);
    assert.ok(after.version > branch.version);
    const old = store.lease(A, 'chat-1', branch.version, 'h2');
    assert.equal(!old.granted && old.reason, 'stale', 'a decision made before the failure is stale');
  });

  test('release without an outcome only ends the lease', () => {
    const { store } = clocked();
    const branch = recorded(store, rec());
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    assert.equal(store.release('h1'), 1);
    assert.equal(store.release('h1'), 0);
    const after = store.lookup(A)[0]!;
    assert.equal(after.version, branch.version);
    assert.equal(after.leased, false);
    assert.equal(after.state, 'ok');
  });

  test('a release that says only the state (the protocol lets it) still marks the chat unknown: never resumed as if its history were known', () => {
    const { store } = clocked();
    const branch = recorded(store, rec());
    assert.ok(store.lease(A, 'chat-1', branch.version, 'h1').granted);
    assert.equal(store.release('h1', undefined, 'unknown'), 1);
    const after = store.lookup(A)[0]!;
    // Interrupted, not the success before it: 'success' with 'unknown' says cursor ran its calls itself (decide.ts).
    assert.deepEqual([after.state, after.lastOutcome, after.version > branch.version], ['unknown', 'interrupted', true]);
  });

  test('a vanished holder leaves the branch unknown and interrupted', () => {
    const { store } = clocked();
    const one = recorded(store, rec({ chatId: 'one' }));
    const two = recorded(store, rec({ chatId: 'two' }));
    assert.ok(store.lease(A, 'one', one.version, 'h1').granted);
    assert.ok(store.lease(A, 'two', two.version, 'h1').granted);
    assert.equal(store.release('h1', 'interrupted', 'unknown'), 2);
    for (const branch of store.lookup(A)) {
      assert.equal(branch.state, 'unknown');
      assert.equal(branch.lastOutcome, 'interrupted');
    }
  });
});

describe('evict', () => {
  test('by anchor prefix and by branch; leases on evicted branches end', () => {
    const { store } = clocked();
    const one = recorded(store, rec({ chatId: 'one' }));
    recorded(store, rec({ chatId: 'two' }));
    recorded(store, rec({ anchor: B, chatId: 'three' }));
    recorded(store, rec({ anchor: 'ab' + '0'.repeat(30), chatId: 'four' }));
    assert.ok(store.lease(A, 'one', one.version, 'h1').granted);
    assert.equal(store.evictBranch(A, 'two'), 1);
    assert.equal(store.evictBranch(A, 'two'), 0);
    assert.equal(store.evict('a', 0), 2, 'A and ab00.. both start with "a"');
    assert.equal(store.leasesOf('h1'), 0);
    assert.equal(store.stats().leases, 0);
    assert.deepEqual(store.lookup(A), []);
    assert.throws(() => store.evict('', 0), /empty anchor prefix/);
    assert.equal(store.evict('b', 0), 1);
    assert.equal(store.size, 0);
    assert.equal(store.stats().anchors, 0);
    const recordAfter = store.record(rec({ baseVersion: one.version }), 'h1');
    assert.equal(!recordAfter.recorded && recordAfter.reason, 'gone');
  });

  test("an evicted anchor's chats are refused later, whole too, and its turns begun by then: a running turn cannot put a chat back", () => {
    const { store } = clocked();
    const one = recorded(store, rec({ chatId: 'one' }));
    recorded(store, rec({ anchor: B, chatId: 'other' }));
    assert.ok(store.lease(A, 'one', one.version, 'h1').granted);
    assert.equal(store.evict(A.slice(0, 8), 100), 1);
    // On its base (gone), then whole as a client does after 'gone': both refused, whenever the turn began.
    for (const late of [rec({ chatId: 'one', baseVersion: one.version }), rec({ chatId: 'one', startedAt: 500 })]) {
      const refused = store.record(late, 'h1');
      assert.equal(!refused.recorded && refused.reason, 'forgotten');
    }
    // A new chat of a turn of that conversation that began by then (a fresh turn running): refused too.
    const fresh = store.record(rec({ chatId: 'new', startedAt: 100 }));
    assert.equal(!fresh.recorded && fresh.reason, 'forgotten');
    assert.match(!fresh.recorded ? fresh.message : '', /started before its conversation \S+ was evicted/);
    assert.ok(store.record(rec({ chatId: 'new', startedAt: 101 })).recorded, 'a turn begun after the evict records');
    assert.ok(store.record(rec({ anchor: B, chatId: 'other', startedAt: 50 })).recorded, 'other anchors as ever');
  });
});

describe('evictChat: a chat the caller continued itself', () => {
  test("drops its branches under every anchor, ends their leases, and refuses any later record of it, a turn's that read it before included", () => {
    const { store } = clocked();
    const one = recorded(store, rec({ chatId: 'one' }));
    recorded(store, rec({ anchor: B, chatId: 'one' }));
    recorded(store, rec({ chatId: 'two' }));
    assert.ok(store.lease(A, 'one', one.version, 'h1').granted);
    assert.equal(store.evictChat('one', 1), 2, "chat one's branches under A and B");
    assert.equal(store.evictChat('one', 1), 0);
    assert.equal(store.leasesOf('h1'), 0);
    assert.deepEqual(
      store.lookup(A).map((b) => b.chatId),
      ['two'],
    );
    // The turn that leased it records: neither on its base nor whole.
    for (const late of [rec({ chatId: 'one', baseVersion: one.version }), rec({ chatId: 'one' }), rec({ anchor: B, chatId: 'one' })]) {
      const refused = store.record(late, 'h1');
      assert.equal(!refused.recorded && refused.reason, 'forgotten');
    }
    assert.ok(store.record(rec({ chatId: 'three' })).recorded, 'other chats record as ever');
  });

  test('forgetAll: drops every branch and refuses any later record of the chats cached or leased then, and of any turn started by then', () => {
    const { store } = clocked();
    const one = recorded(store, rec({ chatId: 'one', startedAt: 10 }));
    recorded(store, rec({ anchor: B, chatId: 'two', startedAt: 10 }));
    assert.ok(store.lease(A, 'one', one.version, 'h1').granted);
    assert.equal(store.forgetAll(100), 2);
    assert.equal(store.size, 0);
    assert.equal(store.leasesOf('h1'), 0);
    const refusedAll = (records: RecordInput[], why: string) => {
      for (const late of records) {
        const refused = store.record(late, 'h1');
        assert.equal(!refused.recorded && refused.reason, 'forgotten', `${why}: ${late.chatId} started at ${late.startedAt}`);
      }
    };
    refusedAll(
      [
        rec({ chatId: 'one', baseVersion: one.version, startedAt: 200 }),
        rec({ chatId: 'one', startedAt: 200 }),
        rec({ anchor: B, chatId: 'two', startedAt: 200 }),
      ],
      'a chat cached or leased then, whenever its turn started',
    );
    // A new chat of a turn running then (its own, or one the caller's line picked): its history is not known either.
    refusedAll([rec({ chatId: 'new', startedAt: 50 }), rec({ chatId: 'new', startedAt: 100 })], 'a turn started by then');
    const { startedAt: _, ...undated } = rec({ chatId: 'new' });
    refusedAll([undated], 'a turn that does not say when it started');
    assert.ok(store.record(rec({ chatId: 'three', startedAt: 101 })).recorded, 'a turn started later records as ever');
    // A reading of an earlier clock does not let the turns between it and the last one back in.
    store.forgetAll(50);
    refusedAll([rec({ chatId: 'four', startedAt: 90 })], 'started before the latest forgetAll');
  });

  test('forgetAll: a turn whose branch, and so its lease, went while it ran is refused too', () => {
    for (const how of ['evicted', 'expired'] as const) {
      const { store, clock } = clocked(how === 'evicted' ? { maxEntries: 1 } : { ttlMs: 1000 });
      const one = recorded(store, rec({ chatId: 'one', startedAt: 10 }));
      assert.ok(store.lease(A, 'one', one.version, 'h1').granted, 'a turn started at 20 resumes chat one');
      if (how === 'evicted') recorded(store, rec({ anchor: B, chatId: 'two', startedAt: 30 }));
      else {
        clock.now += 2000;
        store.prune();
      }
      assert.equal(store.leasesOf('h1'), 0, `the lease ends with the ${how} branch`);
      store.forgetAll(40);
      // The turn's record on its base finds nothing ('gone'); the one of its whole sequence must not stand either.
      const whole = store.record(rec({ chatId: 'one', startedAt: 20 }), 'h1');
      assert.equal(!whole.recorded && whole.reason, 'forgotten', how);
    }
  });

  test("forgetBefore (a mark): drops and refuses the branches turns started by then began here, keeps later ones' however resumed since", () => {
    const { store } = clocked();
    const early = recorded(store, rec({ chatId: 'early', startedAt: 10 }));
    // Resumed by a later turn: begun early all the same, so it may hold a chat continued out of sight.
    recorded(store, rec({ chatId: 'early', baseVersion: early.version, startedAt: 60 }));
    const late = recorded(store, rec({ anchor: B, chatId: 'late', startedAt: 60 }));
    const { startedAt: _, ...undated } = rec({ chatId: 'undated' });
    recorded(store, undated);
    assert.equal(store.forgetBefore(50), 2, 'early and the undated one');
    assert.deepEqual(
      store.list().map((b) => b.chatId),
      ['late'],
    );
    assert.equal(store.lastForgetAt, 50);
    assert.equal(store.record(rec({ chatId: 'early', startedAt: 70 })).recorded, false, 'refused later, whatever its turn');
    assert.equal(store.record(rec({ chatId: 'other', startedAt: 50 })).recorded, false, 'a turn started by then');
    assert.ok(store.record(rec({ anchor: B, chatId: 'late', baseVersion: late.version, startedAt: 70 })).recorded);
    assert.equal(store.forgetBefore(5), 0, 'an old mark (one carried from helper to helper) costs nothing');
    assert.equal(store.list().length, 1);
  });

  test('forgetBefore also refuses a chat leased while its branch expired: the turn that leased it cannot record it back whole', () => {
    const { store, clock } = clocked({ ttlMs: 100 });
    const early = recorded(store, rec({ chatId: 'early', startedAt: 10 }));
    // A turn started after the mark's time resumes it; the branch expires while that turn runs.
    assert.ok(store.lease(A, 'early', early.version, 'h1').granted);
    clock.now += 200;
    assert.equal(store.forgetBefore(50), 0, 'an expired branch is no longer cached');
    const refused = store.record(rec({ chatId: 'early', startedAt: 60 }), 'h1');
    assert.equal(!refused.recorded && refused.reason, 'forgotten', 'begun before the mark: it may hold a chat continued out of sight');
  });

  test('forgetBefore(t) drops a branch begun by a turn started at t itself: "by then" includes t', () => {
    const { store } = clocked();
    recorded(store, rec({ chatId: 'at', startedAt: 50 }));
    recorded(store, rec({ chatId: 'after', startedAt: 51 }));
    assert.equal(store.forgetBefore(50), 1);
    assert.deepEqual(
      store.list().map((b) => b.chatId),
      ['after'],
    );
  });

  test('of several evictions whose prefixes an anchor starts with, the latest refuses: a turn started between them records nothing', () => {
    const { store } = clocked();
    store.evict(A.slice(0, 8), 100);
    store.evict(A.slice(0, 2), 10);
    store.evict(A.slice(0, 4), 50);
    for (const startedAt of [5, 30, 100]) {
      const refused = store.record(rec({ chatId: `t${startedAt}`, startedAt }));
      assert.equal(!refused.recorded && refused.reason, 'forgotten', `started at ${startedAt}`);
    }
    assert.ok(store.record(rec({ chatId: 't101', startedAt: 101 })).recorded);
  });

  test('says when it last forgot a chat (what a store replacing it must refuse), by every way of forgetting', () => {
    const { store } = clocked();
    recorded(store, rec({ chatId: 'one' }));
    assert.equal(store.lastForgetAt, undefined);
    store.evict(A.slice(0, 8), 1);
    assert.equal(store.lastForgetAt, 1, 'a store that knows no anchors refuses what turns running then record');
    store.evictChat('one', 5);
    assert.equal(store.lastForgetAt, 5);
    store.forgetAll(3);
    assert.equal(store.lastForgetAt, 5, 'never earlier');
    store.forgetAll(9);
    assert.equal(store.lastForgetAt, 9);
  });

  test(`remembers the last ${MAX_FORGOTTEN_CHATS} chats forgotten, the oldest dropped first`, () => {
    const { store } = clocked();
    for (let i = 0; i <= MAX_FORGOTTEN_CHATS; i++) store.evictChat(`chat-${i}`, 1);
    assert.ok(store.record(rec({ chatId: 'chat-0' })).recorded);
    assert.equal(store.record(rec({ chatId: 'chat-1' })).recorded, false);
    assert.equal(store.record(rec({ chatId: `chat-${MAX_FORGOTTEN_CHATS}` })).recorded, false);
  });

  test('a chat dropped from those still refuses the turns started by its forget: one that leased it cannot bring it back', () => {
    const { store } = clocked();
    const one = recorded(store, rec({ chatId: 'one', startedAt: 10 }));
    assert.ok(store.lease(A, 'one', one.version, 'h1').granted); // a turn of it, started at 20
    store.evictChat('one', 30); // the caller continues the chat itself
    for (let i = 0; i < MAX_FORGOTTEN_CHATS; i++) store.evictChat(`other-${i}`, 40 + i);
    // On its base (gone with the forget), then whole as a client sends it after 'gone'.
    const onBase = store.record(rec({ chatId: 'one', baseVersion: one.version, startedAt: 20 }), 'h1');
    assert.equal(!onBase.recorded && onBase.reason, 'gone');
    const whole = store.record(rec({ chatId: 'one', startedAt: 20 }), 'h1');
    assert.equal(!whole.recorded && whole.reason, 'forgotten', "the chat holds the caller's turn");
    assert.match(!whole.recorded ? whole.message : '', /more chats were forgotten than are remembered one by one/);
    assert.ok(store.record(rec({ chatId: 'one', startedAt: 31 })).recorded, 'a turn started after that forget records');
  });

  test('and only those: a turn of a chat still cached, running then, records on its base, so the branch keeps up with its chat', () => {
    const { store } = clocked();
    const y = recorded(store, rec({ chatId: 'y', startedAt: 10 }));
    assert.ok(store.lease(A, 'y', y.version, 'h1').granted); // a long turn of y, started at 20
    for (let i = 0; i <= MAX_FORGOTTEN_CHATS; i++) store.evictChat(`other-${i}`, 30 + i);
    const turn = store.record(rec({ chatId: 'y', baseVersion: y.version, startedAt: 20, added: '09'.repeat(2 * DIGEST_BYTES) }), 'h1');
    assert.ok(turn.recorded, turn.recorded ? '' : turn.message);
    assert.deepEqual(
      store.lookup(A).map((b) => [b.chatId, b.version, b.knownCount]),
      [['y', turn.branch.version, y.knownCount + 2]],
    );
  });

  test('so does an evicted conversation dropped from those remembered: a turn of it started by then records nothing', () => {
    const { store } = clocked();
    store.evict(A.slice(0, 8), 30);
    for (let i = 0; i < MAX_EVICTED_ANCHORS; i++) store.evict(`e${i.toString(16).padStart(7, '0')}`, 40 + i);
    const fresh = store.record(rec({ chatId: 'new', startedAt: 30 }));
    assert.equal(!fresh.recorded && fresh.reason, 'forgotten');
    assert.ok(store.record(rec({ chatId: 'new', startedAt: 31 })).recorded);
  });
});

describe('peek: a lookup that changes nothing', () => {
  test('shows what lookup shows, without counting as a use', () => {
    const { store } = clocked({ maxEntries: 2 });
    recorded(store, rec({ chatId: 'one' }));
    recorded(store, rec({ anchor: B, chatId: 'two' }));
    assert.deepEqual(
      store.peek(A),
      store.lookup(A).map((b) => ({ ...b })),
    );
    store.lookup(B); // two is now the more recent
    assert.deepEqual(
      store.peek(A).map((b) => b.chatId),
      ['one'],
    );
    recorded(store, rec({ chatId: 'three' }));
    assert.deepEqual(new Set(store.list().map((b) => b.chatId)), new Set(['three', 'two']), 'one went first: peek did not make it recent');
  });

  test('an expired branch is shown with no time left and kept for the next lookup to report', () => {
    const { store, clock } = clocked({ ttlMs: 100 });
    recorded(store, rec());
    clock.now += 150;
    for (let i = 0; i < 2; i++) {
      const [seen] = store.peek(A);
      assert.ok(seen && seen.ttlLeftMs <= 0);
    }
    assert.ok(store.lookup(A)[0]!.ttlLeftMs <= 0, 'lookup still finds it expired, once');
    assert.deepEqual(store.lookup(A), []);
  });
});

describe('lower: limits lowered on a running store', () => {
  test('never raises; a shorter life expires older branches, a lower count evicts the least recently used', () => {
    const { store, clock } = clocked();
    recorded(store, rec({ chatId: 'old' }));
    clock.now += 2000;
    recorded(store, rec({ chatId: 'mid' }));
    recorded(store, rec({ anchor: B, chatId: 'new' }));
    const leased = store.lookup(B)[0]!;
    assert.ok(store.lease(B, 'new', leased.version, 'holder').granted);
    assert.deepEqual(store.lower({ ttlMs: 10 * MAX_TTL_MS, maxEntries: 1000 }), { ttlMs: MAX_TTL_MS, maxEntries: MAX_ENTRIES });

    assert.deepEqual(store.lower({ ttlMs: 1000 }), { ttlMs: 1000, maxEntries: MAX_ENTRIES });
    const [mid, old] = store.lookup(A);
    assert.deepEqual([mid!.chatId, mid!.ttlLeftMs], ['mid', 1000], 'a branch keeps its age');
    assert.ok(old!.chatId === 'old' && old!.ttlLeftMs <= 0, 'one older than the new life has expired');
    assert.equal(store.lookup(B)[0]!.leased, true, 'a lease survives');

    recorded(store, rec({ chatId: 'mid', baseVersion: mid!.version }));
    assert.deepEqual(store.lower({ maxEntries: 1 }), { ttlMs: 1000, maxEntries: 1 });
    assert.deepEqual(
      store.list().map((b) => b.chatId),
      ['mid'],
      'the least recently used went',
    );
    assert.deepEqual(store.lookup(B), []);
    assert.equal(store.stats().maxEntries, 1);
  });

  test('a lower count drops expired branches before live ones', () => {
    const { store, clock } = clocked({ ttlMs: 1000, maxEntries: 3 });
    recorded(store, rec({ anchor: B, chatId: 'old' }));
    clock.now += 500;
    recorded(store, rec({ chatId: 'b' }));
    recorded(store, rec({ chatId: 'c' }));
    clock.now += 100;
    store.lookup(B); // old is now the most recently used
    clock.now += 500; // old has expired, b and c have 400 ms left
    store.lower({ maxEntries: 2 });
    assert.deepEqual(store.peek(B), []);
    assert.deepEqual(new Set(store.peek(A).map((b) => b.chatId)), new Set(['b', 'c']));
  });
});
