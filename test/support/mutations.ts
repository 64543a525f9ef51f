// For the tests that hold a hand-written check to its schema (request-checks, beside-checks,
// setting-checks): one bend of a JSON value (a key set, added or dropped at one place in it),
// and a check's outcome as a value to compare.
import fc from 'fast-check';

/** What `read` gives, or the message of the `Refusal` it throws (anything else is thrown on). */
export function outcome(read: () => unknown, Refusal: new (...args: never[]) => Error): { value: unknown } | { error: string } {
  try {
    return { value: read() };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { error: error.message };
  }
}

export interface Mutation<Where extends string> {
  where: Where;
  key: string;
  drop: boolean;
  value: unknown;
}

/**
 * A key the value must not carry, or one it may, and a value for it: mostly at the edges of
 * its rule (`edges`, by key), sometimes anything. A key goes to the places `places` names for
 * it, any other to one of `everywhere`; `odd` are keys worth trying on any object.
 */
export function mutation<Where extends string>(
  edges: Record<string, unknown[]>,
  places: Record<string, readonly Where[]>,
  everywhere: readonly Where[],
  odd: string[],
  maxKeyLength: number,
): fc.Arbitrary<Mutation<Where>> {
  return fc
    .oneof(
      { arbitrary: fc.constantFrom(...Object.keys(edges)), weight: 6 },
      fc.constantFrom(...odd),
      fc.string({ maxLength: maxKeyLength }),
    )
    .chain((key) =>
      fc.record({
        where: fc.constantFrom(...(Object.hasOwn(places, key) ? places[key]! : everywhere)),
        key: fc.constant(key),
        drop: fc.boolean(),
        value: fc.oneof(
          { arbitrary: fc.constantFrom(...(Object.hasOwn(edges, key) ? edges[key]! : [null])), weight: 4 },
          fc.jsonValue({ maxDepth: 2 }),
        ),
      }),
    );
}
