// A branch's known message sequence, held packed: 16 bytes a message digest, and
// the prefix hash (SHA-256 of the packed digests, first 16 bytes) of the whole. The
// wire carries the count and that hash, never the sequence: a client proves a
// prefix by hashing its own first `count` digests, the last as cursor's reply
// (src/resume/digests.ts), and a record sends only the digests added since the
// branch it read, with its copy of that reply. Pure: no I/O.
import { createHash, type Hash } from 'node:crypto';
import { MESSAGE_DIGEST_HEX } from './types.js';

/** Bytes of one packed message digest. */
export const DIGEST_BYTES = MESSAGE_DIGEST_HEX / 2;
/** Hex length of a prefix hash. */
export const PREFIX_HEX = 32;
/** The longest sequence a branch may know: far above any conversation, and a bound on what one record may make the helper hold. */
export const MAX_KNOWN_MESSAGES = 2_000_000;

const hexOf = (hash: Hash): string => hash.digest('hex').slice(0, PREFIX_HEX);

/** The prefix hash of the first `count` digests of a packed sequence. */
export function prefixHash(packed: Uint8Array, count: number): string {
  return hexOf(createHash('sha256').update(packed.subarray(0, count * DIGEST_BYTES)));
}

/** A transcript's digests, as branches are matched against them (an Analysis). */
export interface TranscriptDigests {
  /** One a message, each as a prompt carries it. */
  readonly digests: ReadonlyArray<string>;
  /** Message `index` as a chat that knows it as its last message holds it: as cursor's reply. */
  replyDigestAt(index: number): string;
}

/**
 * The prefix hash of a chat that knows `count` messages, for a transcript whose digests are
 * `packed`: its first `count - 1` digests, then `last`, its message at `count - 1` as cursor's
 * reply (the last message a chat knows is always that).
 */
export function knownPrefixHash(packed: Uint8Array, count: number, last: string): string {
  return hexOf(
    createHash('sha256')
      .update(packed.subarray(0, (count - 1) * DIGEST_BYTES))
      .update(Buffer.from(last, 'hex')),
  );
}

/** Prefix hashes at several counts, in one pass over the sequence (`counts` in any order, each within it). */
export function prefixHashes(packed: Uint8Array, counts: ReadonlyArray<number>): string[] {
  const order = [...counts.keys()].sort((a, b) => counts[a]! - counts[b]!);
  const out = new Array<string>(counts.length);
  const hash = createHash('sha256');
  let at = 0;
  for (const i of order) {
    const count = counts[i]!;
    hash.update(packed.subarray(at * DIGEST_BYTES, count * DIGEST_BYTES));
    at = count;
    out[i] = hexOf(hash.copy());
  }
  return out;
}

const packedOf = new WeakMap<ReadonlyArray<string>, Buffer>();

/** Hex digests packed into bytes; remembered per array, as one turn packs its digests for several branches. */
export function pack(digests: ReadonlyArray<string>): Buffer {
  let packed = packedOf.get(digests);
  if (!packed) packedOf.set(digests, (packed = Buffer.from(digests.join(''), 'hex')));
  return packed;
}

/**
 * Storage shared by a sequence and the longer ones appended to it, with room to grow:
 * a turn adds a couple of digests, and copying 10,000 of them each time left the
 * helper's memory full of freed buffers.
 */
interface Storage {
  bytes: Buffer;
  /** Bytes in use by the longest sequence on this storage; only that one may append in place. */
  used: number;
}

/** Room left when storage grows: an eighth more, at least 64 digests. */
const headroom = (bytes: number): number => Math.max(64 * DIGEST_BYTES, Math.ceil(bytes / 8 / DIGEST_BYTES) * DIGEST_BYTES);

/** A known sequence as the store holds it. Immutable but for revised(), which only the store calls, on the sequence it replaces. */
export class KnownSequence {
  static readonly EMPTY = new KnownSequence({ bytes: Buffer.alloc(0), used: 0 }, 0, createHash('sha256'), createHash('sha256'));

  readonly #storage: Storage;
  readonly #length: number;
  /** The hash state after every digest, so an append hashes only what it adds. */
  readonly #hash: Hash;
  /** The hash state after every digest but the last, so a revision of the last hashes only what it writes. */
  readonly #before: Hash;
  readonly prefix: string;

  private constructor(storage: Storage, length: number, hash: Hash, before: Hash) {
    this.#storage = storage;
    this.#length = length;
    this.#hash = hash;
    this.#before = before;
    this.prefix = hexOf(hash.copy());
  }

  get count(): number {
    return this.#length / DIGEST_BYTES;
  }

  get #packed(): Buffer {
    return this.#storage.bytes.subarray(0, this.#length);
  }

  /** This sequence followed by `added` (packed digests, a whole number of them). */
  append(added: Uint8Array): KnownSequence {
    return added.length === 0 ? this : this.#extend(this.#length, this.#hash, added);
  }

  /**
   * This sequence with its last digest replaced by `last`, then `added`: a resumed turn's record,
   * where cursor's reply, known until then by its reply digest, becomes the caller's copy of it.
   * The last digest may be written over in place: this sequence must not be read afterwards.
   */
  revised(last: Uint8Array, added: Uint8Array): KnownSequence {
    if (this.#length === 0 || last.length !== DIGEST_BYTES)
      throw new Error('a revision replaces the last digest of a sequence with one digest');
    return this.#extend(this.#length - DIGEST_BYTES, this.#before, Buffer.concat([last, added]));
  }

  /** The first `at` bytes of this sequence, then `added` (at least one digest); `hashAt` is the hash state after those bytes. */
  #extend(at: number, hashAt: Hash, added: Uint8Array): KnownSequence {
    if (added.length % DIGEST_BYTES !== 0) throw new Error(`packed digests must be whole ${DIGEST_BYTES}-byte digests`);
    const length = at + added.length;
    let storage = this.#storage;
    // In place only past `at` in the longest sequence on this storage: a shorter one sharing it keeps its digests.
    if (storage.used !== this.#length || length > storage.bytes.length) {
      // Outside the heap, sized to what it holds plus room: this is what the helper's memory is made of.
      const bytes = Buffer.allocUnsafeSlow(length + headroom(length));
      this.#storage.bytes.copy(bytes, 0, 0, at);
      storage = { bytes, used: at };
    }
    storage.bytes.set(added, at);
    storage.used = length;
    const before = hashAt.copy().update(added.subarray(0, added.length - DIGEST_BYTES));
    return new KnownSequence(storage, length, before.copy().update(added.subarray(added.length - DIGEST_BYTES)), before);
  }

  /** Prefix hashes at these counts; null for a count beyond the sequence. */
  prefixesAt(counts: ReadonlyArray<number>): Array<string | null> {
    const within = counts.map((c) => Math.min(c, this.count));
    const hashes = prefixHashes(this.#packed, within);
    return counts.map((c, i) => (c <= this.count ? hashes[i]! : null));
  }

  /**
   * How many of a transcript's messages begin this sequence, as a client's lookup finds them
   * (src/helper/client.ts): all but its last digest compared as they are, and its last, cursor's
   * reply, against the transcript's message there read as a reply. `packed`: the transcript's digests.
   */
  matchedBy(transcript: TranscriptDigests, packed: Uint8Array): number {
    const count = this.count;
    if (count === 0) return 0;
    const messages = transcript.digests.length;
    const shared = this.sharedWith(packed.subarray(0, Math.min(count - 1, messages) * DIGEST_BYTES));
    if (shared < count - 1 || count > messages) return shared;
    return this.#packed.subarray(shared * DIGEST_BYTES).equals(Buffer.from(transcript.replyDigestAt(shared), 'hex')) ? count : shared;
  }

  /** How many digests `packed` shares with this sequence from the start. */
  sharedWith(packed: Uint8Array): number {
    const n = Math.min(this.count, packed.length / DIGEST_BYTES);
    let i = 0;
    while (i < n && this.#packed.compare(packed, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES) === 0)
      i++;
    return i;
  }
}
