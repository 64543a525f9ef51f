// The part of zod/mini the project uses, and the one place that imports it. In dist/cli.cjs
// the build loads this module on first use (scripts/build.mjs, lazyZod): a turn whose input
// needs no schema never initialises zod, whose modules build a few hundred objects as they start.
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
  never,
  nullable,
  number,
  object,
  optional,
  refine,
  regex,
  strictObject,
  string,
  union,
  unknown,
} from 'zod/mini';
export type { core, infer, ZodMiniType } from 'zod/mini';
