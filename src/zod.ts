// The part of zod/mini the project uses, and the one place that imports it. dist/cli.cjs
// loads it on first use from its own bundle, dist/zod.cjs (scripts/build.mjs, lazyZod): a turn
// whose input needs no schema never reads, compiles or initialises zod.
export {
  array,
  boolean,
  config,
  discriminatedUnion,
  enum,
  gte,
  int,
  literal,
  lte,
  maximum,
  maxLength,
  minimum,
  minLength,
  NEVER,
  never,
  nullable,
  number,
  object,
  optional,
  pipe,
  refine,
  regex,
  safeParse,
  strictObject,
  string,
  transform,
  union,
  unknown,
} from 'zod/mini';
export type { core, infer, output, ZodMiniType } from 'zod/mini';
