// Packed known sequences, prefix hashes and the search for the first differing message.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { KnownSequence, knownPrefixHash, pack, prefixHash, prefixHashes } from '../../src/cache/known.js';
import { firstContinuations, provePrefix, searchShared } from '../../src/resume/prefix.js';

/** How many digests two sequences share from the start, one by one: the oracle for the search and the trie walk. */
function sharedPrefix(a: ReadonlyArray<string>, b: ReadonlyArray<string>): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

const digests = (n: number, seed: string): string[] =>
  Array.from({ length: n }, (_, i) => createHash('sha256').update(`${seed}${i}`).digest('hex').slice(0, 32));

/** The search run against two sequences, counting its rounds. */
function search(mine: string[], theirs: string[]): { shared: number; rounds: number } {
  const [a, b] = [pack(mine), pack(theirs)];
  const steps = searchShared(0, Math.min(mine.length, theirs.length));
  let rounds = 0;
  for (let step = steps.next(); ; rounds++) {
    if (step.done) return { shared: step.value, rounds };
    step = steps.next(step.value.map((count) => prefixHash(a, count) === prefixHash(b, count)));
  }
}

describe('prefix hashes', () => {
  test('equal exactly when the prefixes are; one pass gives the same hashes as one at a time', () => {
    const seq = digests(50, 's');
    const other = seq.map((d, i) => (i === 20 ? 'e'.repeat(32) : d));
    for (const count of [0, 1, 20, 21, 50])
      assert.equal(prefixHash(pack(seq), count) === prefixHash(pack(other), count), count <= 20, String(count));
    const counts = [50, 0, 7, 7, 33];
    assert.deepEqual(
      prefixHashes(pack(seq), counts),
      counts.map((c) => prefixHash(pack(seq), c)),
    );
  });

  test('a known sequence appended to hashes as the whole', () => {
    const seq = digests(40, 'k');
    const built = KnownSequence.EMPTY.append(pack(seq.slice(0, 25))).append(pack(seq.slice(25)));
    assert.equal(built.count, 40);
    assert.equal(built.prefix, prefixHash(pack(seq), 40));
    assert.deepEqual(built.prefixesAt([3, 40, 41]), [prefixHash(pack(seq), 3), built.prefix, null]);
    assert.equal(built.sharedWith(pack([...seq.slice(0, 30), 'e'.repeat(32)])), 30);
    assert.equal(KnownSequence.EMPTY.count, 0, 'appending makes a new sequence');
  });

  test('two sequences appended to one base (its storage has room) keep their own digests', () => {
    const base = KnownSequence.EMPTY.append(pack(digests(10, 'b')));
    const [x, y] = [digests(3, 'x'), digests(3, 'y')];
    const one = base.append(pack(x));
    const two = base.append(pack(y));
    const longer = one.append(pack(y));
    assert.equal(one.prefix, prefixHash(pack([...digests(10, 'b'), ...x]), 13));
    assert.equal(two.prefix, prefixHash(pack([...digests(10, 'b'), ...y]), 13));
    assert.equal(one.sharedWith(pack([...digests(10, 'b'), ...x])), 13, 'the second append did not write over the first');
    assert.equal(base.count, 10);
    assert.equal(longer.sharedWith(pack([...digests(10, 'b'), ...x, ...y])), 16);
  });
});

describe("cursor's reply, the last message a chat knows", () => {
  /** The reply digest of a message whose own digest is `d`: another digest. */
  const reply = (d: string): string => createHash('sha256').update(`reply/${d}`).digest('hex').slice(0, 32);
  const transcript = (ds: string[], replies: Record<number, string> = {}) => ({
    digests: ds,
    replyDigestAt: (i: number) => replies[i] ?? reply(ds[i]!),
  });

  test("a transcript matches a chat's last message by its reply digest, every other one as it is", () => {
    const sent = digests(5, 'm');
    const next = [...sent, ...digests(1, 'n')];
    const asSent = KnownSequence.EMPTY.append(pack(sent));
    assert.equal(asSent.matchedBy(transcript(next), pack(next)), 4, 'a last digest as sent: message 4 read as a reply does not match it');
    // The chat knows sent[0..4) and, for message 4, cursor's reply: the transcript holds its copy there.
    const chat = KnownSequence.EMPTY.append(pack([...sent.slice(0, 4), reply(sent[4]!)]));
    assert.equal(chat.matchedBy(transcript(next), pack(next)), 5);
    assert.equal(knownPrefixHash(pack(next), 5, reply(sent[4]!)), chat.prefix, 'the hash a client compares says the same');
    assert.equal(chat.matchedBy(transcript(sent), pack(sent)), 5, 'nothing new: still all known');
    assert.equal(chat.matchedBy(transcript(sent.slice(0, 3)), pack(sent.slice(0, 3))), 3, 'a shorter transcript');
    const edited = next.map((d, i) => (i === 2 ? 'e'.repeat(32) : d));
    assert.equal(chat.matchedBy(transcript(edited), pack(edited)), 2);
    // A digest equal to the reply's where the transcript has a sent message does not stand for it.
    const lookalike = [...sent.slice(0, 4), reply(sent[4]!), ...digests(1, 'n')];
    assert.equal(chat.matchedBy(transcript(lookalike, { 4: 'f'.repeat(32) }), pack(lookalike)), 4);
  });

  test("a revision puts the caller's copy in the reply's place, in place or in a copy, and leaves shorter sequences be", () => {
    const sent = digests(6, 'v');
    const base = KnownSequence.EMPTY.append(pack(sent.slice(0, 3)));
    const chat = base.append(pack([sent[3]!, reply(sent[4]!)]));
    const revised = chat.revised(pack([sent[4]!]), pack([sent[5]!, reply('x'.repeat(32))]));
    const whole = [...sent, reply('x'.repeat(32))];
    assert.equal(revised.count, 7);
    assert.equal(revised.prefix, prefixHash(pack(whole), 7));
    assert.deepEqual(revised.prefixesAt([5, 6]), [prefixHash(pack(whole), 5), prefixHash(pack(whole), 6)]);
    assert.equal(base.sharedWith(pack(sent)), 3, 'the base, on the same storage, keeps its digests');
    assert.equal(revised.revised(pack([whole[6]!]), new Uint8Array()).prefix, revised.prefix, 'revised with its own last digest: the same');
    // Revising a sequence that is not the longest on its storage copies it: the longer one keeps its digests.
    const longer = base.append(pack(digests(4, 'w')));
    const fromBase = base.revised(pack(['e'.repeat(32)]), pack([sent[3]!]));
    assert.equal(fromBase.prefix, prefixHash(pack([...sent.slice(0, 2), 'e'.repeat(32), sent[3]!]), 4));
    assert.equal(longer.sharedWith(pack([...sent.slice(0, 3), ...digests(4, 'w')])), 7);
    assert.throws(() => KnownSequence.EMPTY.revised(pack([sent[0]!]), new Uint8Array()), /replaces the last digest/);
  });
});

describe('the search for the first differing message', () => {
  test('finds exactly what a message-by-message comparison finds', () => {
    fc.assert(
      fc.property(fc.nat(300), fc.nat(300), fc.nat(400), (length, otherLength, changeAt) => {
        const mine = digests(length, 'm');
        const theirs = digests(otherLength, 'm').map((d, i) => (i === changeAt ? 'e'.repeat(32) : d));
        assert.equal(search(mine, theirs).shared, sharedPrefix(mine, theirs));
      }),
      { numRuns: 200 },
    );
  });

  test('a few rounds of 64 hashes, whatever the length', () => {
    const long = digests(100_000, 'l');
    const edited = long.map((d, i) => (i === 77_777 ? 'e'.repeat(32) : d));
    const { shared, rounds } = search(edited, long);
    assert.equal(shared, 77_777);
    assert.ok(rounds <= 3, `${rounds} rounds`);
  });

  test('every answer from lo to hi, over spans either side of the width, in a bounded number of rounds', () => {
    for (const width of [1, 2, 4]) {
      for (let lo = 0; lo <= 3; lo++) {
        for (let hi = lo; hi <= lo + 12; hi++) {
          for (let answer = lo; answer <= hi; answer++) {
            const steps = searchShared(lo, hi, width);
            let step = steps.next();
            for (let rounds = 0; !step.done; rounds++) {
              assert.ok(rounds <= hi - lo, `width ${width}, (${lo}, ${hi}], answer ${answer}: no end`);
              assert.ok(
                step.value.every((count) => count > lo && count <= hi),
                `probes ${step.value.join(',')} outside (${lo}, ${hi}]`,
              );
              step = steps.next(step.value.map((count) => count <= answer));
            }
            assert.equal(step.value, answer, `width ${width}, (${lo}, ${hi}]`);
          }
        }
      }
    }
  });

  test('prefix hashes that contradict themselves (equal after a difference) are an error, never a longer match', () => {
    const steps = searchShared(0, 10);
    const probes = steps.next().value as number[];
    assert.throws(() => steps.next(probes.map((count) => count !== 3)), /prefix hashes disagree with themselves/);
  });

  test('the verdicts', () => {
    assert.equal(provePrefix(4, 4, 6).verdict, 'holds');
    assert.equal(provePrefix(4, 4, 4).verdict, 'nothing-new');
    assert.equal(provePrefix(4, 3, 3).verdict, 'shorter');
    assert.equal(provePrefix(4, 2, 6).verdict, 'diverged');
    assert.equal(provePrefix(4, 2, 3).verdict, 'diverged', 'a transcript shorter than the chat that also differs from it');
  });
});

describe('which later turn continues each one (simulate)', () => {
  type Turn = { anchor: string | null; digests: string[] };
  /** The definition, turn against every later turn: quadratic, fine for a few dozen. */
  const byScan = (turns: Turn[]): Array<number | null> =>
    turns.map((turn, i) => {
      if (turn.anchor === null) return null;
      for (let j = i + 1; j < turns.length; j++) {
        const later = turns[j]!;
        if (later.anchor !== turn.anchor) continue;
        if (provePrefix(turn.digests.length, sharedPrefix(turn.digests, later.digests), later.digests.length).verdict === 'holds') return j;
      }
      return null;
    });

  test('the first later turn of the same anchor that begins with all of it and adds to it', () => {
    // Each turn an earlier one cut short and added to (or a new one), under one of few anchors:
    // turns repeat, branch and continue one another.
    const step = fc.record({
      anchor: fc.constantFrom(null, 'a', 'a', 'a', 'b'),
      from: fc.nat(),
      keep: fc.nat(8),
      add: fc.array(fc.constantFrom('x', 'y', '1', ':1', '1:'), { minLength: 1, maxLength: 3 }),
    });
    const conversations = fc.array(step, { maxLength: 30 }).map((steps) =>
      steps.reduce<Turn[]>((turns, { anchor, from, keep, add }) => {
        const earlier = turns.length > 0 && from % 4 !== 0 ? turns[from % turns.length]!.digests : [];
        return [...turns, { anchor, digests: [...earlier.slice(0, keep), ...add] }];
      }, []),
    );
    let [continued, all] = [0, 0];
    fc.assert(
      fc.property(conversations, (turns) => {
        const found = firstContinuations(turns);
        assert.deepEqual(found, byScan(turns));
        continued += found.filter((j) => j !== null).length;
        all += turns.length;
      }),
      { numRuns: 500 },
    );
    // About a sixth of the turns are continued (16.5 to 19.6 % over 20 seeds); far fewer would not test the walk.
    assert.ok(continued * 10 > all, `only ${continued} of ${all} turns were continued: the runs did not test the search`);
    assert.deepEqual(
      firstContinuations([
        { anchor: 'a', digests: ['x'] },
        { anchor: 'b', digests: ['x', 'y'] },
        { anchor: 'a', digests: ['x'] },
        { anchor: 'a', digests: ['x', 'z'] },
        { anchor: 'a', digests: [] },
        { anchor: 'a', digests: ['y'] },
      ]),
      [3, null, 3, null, 5, null],
    );
  });

  test('each digest read once: linear in the turns and their messages, where the scan compared every pair', () => {
    // Counted, not timed: the digests are read through a proxy that counts reads of their elements.
    let reads = 0;
    const counted = (digests: string[]): string[] =>
      new Proxy(digests, {
        get(target, key, receiver) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
          return Reflect.get(target, key, receiver) as unknown;
        },
      });
    // 2,000 one-message side calls of one anchor, none continued: the scan read about 4,000,000 digests.
    const calls = Array.from({ length: 2000 }, () => ({ anchor: 'a', digests: counted(['x']) }));
    assert.ok(
      firstContinuations(calls).every((j) => j === null),
      'no call continues another',
    );
    assert.ok(reads <= 2000, `${reads} digests read for 2,000 of them`);
    // A conversation of 1,000 turns, each one message longer: each turn continued by the next.
    reads = 0;
    const all = Array.from({ length: 1000 }, (_, k) => `m${k}`);
    const turns = all.map((_, k) => ({ anchor: 'a', digests: counted(all.slice(0, k + 1)) }));
    const total = turns.reduce((n, t) => n + t.digests.length, 0);
    assert.deepEqual(
      firstContinuations(turns),
      turns.map((_, k) => (k + 1 < turns.length ? k + 1 : null)),
      'each turn continued by the next',
    );
    assert.ok(reads <= total, `${reads} digests read for ${total} of them`);
  });
});
