// The prefix proof: does this transcript begin with exactly the sequence a chat
// knows? The cache tells a branch's count and prefix hash; `matched` (how many of
// the transcript's messages the branch's history repeats from the start) comes
// from comparing prefix hashes, and, when they differ, from the search below.
export interface PrefixProof {
  /** How many messages the chat knows. */
  known: number;
  /** How many of those the transcript repeats exactly, from the start. */
  matched: number;
  /** 'holds': the transcript begins with the whole known sequence and adds to it. */
  verdict: 'holds' | 'diverged' | 'shorter' | 'nothing-new';
}

/** The verdict for a chat knowing `known` messages, `matched` of which begin a transcript of `messages`. */
export function provePrefix(known: number, matched: number, messages: number): PrefixProof {
  let verdict: PrefixProof['verdict'];
  if (matched < known) verdict = matched === messages ? 'shorter' : 'diverged';
  else verdict = messages > known ? 'holds' : 'nothing-new';
  return { known, matched, verdict };
}

/** Prefix hashes asked for in one round trip: 64 of them find the first difference in 10,000 messages in 3 rounds, in 1,000,000 in 4. */
export const PROBES_PER_ROUND = 64;

/**
 * Finds how many messages two sequences share from the start by comparing prefix
 * hashes at chosen counts: it yields the counts to compare and takes back, for each,
 * whether both sides' hashes there are equal. Equal prefixes at a count are equal at
 * every smaller one, so each round narrows the answer to one gap between probes.
 * `lo` is a count known to be shared (0 always is), `hi` the most there can be.
 */
export function* searchShared(lo: number, hi: number, width = PROBES_PER_ROUND): Generator<number[], number, boolean[]> {
  while (lo < hi) {
    const probes = probesBetween(lo, hi, width);
    const same = yield probes;
    let top = lo;
    let bottom = hi + 1;
    probes.forEach((count, i) => {
      if (same[i]) top = Math.max(top, count);
      else bottom = Math.min(bottom, count);
    });
    if (bottom <= top) throw new Error('prefix hashes disagree with themselves: equal at a count after a differing one');
    lo = top;
    hi = bottom - 1;
  }
  return lo;
}

/** Up to `width` counts spread over (lo, hi], always including hi. */
function probesBetween(lo: number, hi: number, width: number): number[] {
  const span = hi - lo;
  if (span <= width) return Array.from({ length: span }, (_, i) => lo + i + 1);
  return Array.from({ length: width }, (_, i) => lo + Math.ceil((span * (i + 1)) / width));
}

/**
 * For each sequence, the first later one of the same anchor that begins with all of
 * it and adds to it (`provePrefix(...).verdict === 'holds'` against it), or null.
 * One walk of a trie of every sequence, so linear in their total length: comparing
 * each with every later one was quadratic in their number (many one-message side
 * calls of one anchor, none continued).
 */
export function firstContinuations(
  sequences: ReadonlyArray<{ anchor: string | null; digests: ReadonlyArray<string> }>,
): Array<number | null> {
  const found: Array<number | null> = sequences.map(() => null);
  // A trie node is a number; its child by a digest is keyed `node:digest` (a root by its anchor).
  const nodes = new Map<string, number>();
  // The sequences that end at a node and no later one has continued yet.
  const waiting = new Map<number, number[]>();
  sequences.forEach(({ anchor, digests }, j) => {
    if (anchor === null) return;
    let node = child(nodes, `a:${anchor}`);
    for (const digest of digests) {
      const ended = waiting.get(node);
      if (ended) {
        for (const i of ended) found[i] = j;
        waiting.delete(node);
      }
      node = child(nodes, `${node}:${digest}`);
    }
    const ending = waiting.get(node);
    if (ending) ending.push(j);
    else waiting.set(node, [j]);
  });
  return found;
}

function child(nodes: Map<string, number>, key: string): number {
  let node = nodes.get(key);
  if (node === undefined) nodes.set(key, (node = nodes.size));
  return node;
}
