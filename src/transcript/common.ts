import * as z from '../zod.js';
import { escapeControls } from '../escape.js';
import { concreteModel } from './model.js';
import { TranscriptError } from './errors.js';
import { MAX_FIELD_LENGTH } from './limits.js';
import type { Conversation } from './types.js';

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Longest part of an input value an error message quotes. */
const QUOTED_LENGTH = 60;

/**
 * A value from the input as an error message shows it: JSON, at most QUOTED_LENGTH
 * characters of it (then "…"), control and bidi characters escaped, so that a
 * hostile value can neither flood stderr nor rewrite the terminal line.
 */
export function quote(value: unknown): string {
  let text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const long = text.length > QUOTED_LENGTH;
  if (long) text = text.slice(0, QUOTED_LENGTH).replace(/[\uD800-\uDBFF]$/, '');
  if (typeof value === 'string') text = JSON.stringify(long ? `${text}…` : text);
  else if (long) text += '…';
  // JSON.stringify escapes C0 controls; C1 and bidi ones it leaves as they are.
  return escapeControls(text);
}

export const str = (what?: string) => (what ? z.string({ error: `expected ${what}` }) : z.string());

/** A tool's name: it is what calls and results refer to, so it must be there. */
export const toolName = () => z.string().check(z.minLength(1, 'must not be empty: a tool needs a name'));

export const isSchema = (value: unknown): boolean => value === null || (typeof value === 'object' && !Array.isArray(value));

/**
 * A tool's parameters: a JSON schema object, or null. Checked, not parsed: zod would
 * copy the object, and a "__proto__" key in a schema must stay plain data.
 */
export const toolSchema = () => z.optional(z.unknown().check(z.refine(isSchema, 'expected a JSON schema (an object)')));

/**
 * zod configured for our schemas, and the schemas both shapes share: built the first time
 * a transcript needs a schema, which a plain OpenAI body's or a plain-text prompt's never
 * does, so such a turn never initialises zod (scripts/build.mjs, lazyZod).
 */
function buildShared() {
  // One wording for every type mismatch, in every schema: what was expected, and what came.
  // jitless: zod would compile a parser per object schema with new Function() on first use;
  // a run parses one transcript and exits, and the plain path is faster for it at every
  // size measured (10 to 10,000 messages; bench/scale.ts).
  z.config({
    jitless: true,
    customError: (iss) => {
      if (iss.code !== 'invalid_type') return undefined;
      // zod's word for a required value of any type.
      if (iss.expected === 'nonoptional') return 'missing; expected a value';
      const expected = iss.expected === 'array' || iss.expected === 'object' ? `an ${iss.expected}` : `a ${iss.expected}`;
      return iss.input === undefined ? `missing; expected ${expected}` : `expected ${expected}, got ${describe(iss.input)}`;
    },
  });
  return {
    /** Only an assistant message carries tool calls; anywhere else they would be dropped without a word. */
    noToolCalls: z.optional(z.nullable(z.never({ error: 'only an assistant message carries tool calls' }))),
    textPart: z.object({ type: z.literal('text'), text: str() }),
    /** Values a transcript may carry beside its messages; checked the same way for every shape. */
    envelope: {
      model: z.optional(str()),
      workspace: z.optional(str()),
      sessionId: z.optional(str()),
    },
  };
}
let shared: ReturnType<typeof buildShared> | undefined;
/**
 * Call before building any transcript schema: it configures zod (the settings' and the helper's
 * schemas each word their own errors, and are no object schemas jitless would change).
 */
export const sharedSchemas = () => (shared ??= buildShared());
export type TextPart = z.infer<ReturnType<typeof sharedSchemas>['textPart']>;

/** Anything from stdin that will reach an argv must never be read as a flag. */
export function checkEnvelope(fields: {
  model?: string | undefined;
  workspace?: string | undefined;
  sessionId?: string | undefined;
}): Pick<Conversation, 'model' | 'workspace' | 'sessionId'> {
  const out: Pick<Conversation, 'model' | 'workspace' | 'sessionId'> = {};
  for (const key of ['model', 'workspace', 'sessionId'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (value.length === 0) throw new TranscriptError(`${key}: must not be empty`);
    if (value.length > MAX_FIELD_LENGTH) throw new TranscriptError(`${key}: longer than ${MAX_FIELD_LENGTH} characters`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value)) throw new TranscriptError(`${key}: contains a control character`);
    if (key !== 'sessionId' && value.startsWith('-')) {
      throw new TranscriptError(`${key}: ${quote(value)} begins with "-" and could be read as a flag; refused`);
    }
    // The argv gets the model without its provider prefix: "cursor-acp/--resume=x" would put "--resume=x" there.
    if (key === 'model' && concreteModel(value).startsWith('-')) {
      throw new TranscriptError(
        `model: ${quote(value)} names a model beginning with "-" after its provider prefix, which could be read as a flag; refused`,
      );
    }
    out[key] = value;
  }
  if (out.workspace !== undefined && !out.workspace.startsWith('/')) {
    throw new TranscriptError(`workspace: ${quote(out.workspace)} is not an absolute path`);
  }
  return out;
}

/** How a transcript schema makes its arrays: zod's own (arrayOf) or listOf. */
export type ListOf = <T extends z.core.$ZodType>(element: T, error?: string) => z.ZodMiniType<Array<z.output<T>>, unknown>;

/** zod's own array: the quicker, which lists every bad element's problems. */
export const arrayOf: ListOf = (element, error) => z.array(element, error === undefined ? undefined : { error });

/**
 * An array checked element by element up to the first that fails. zod's own lists every
 * element's problems, and gathers them into one list its parent spreads into a call, which
 * overflows the stack past about 100,000 (a body of 200,000 bad messages ended in a
 * RangeError, not exit 2). Only the first problem is reported (schema-errors.ts), and it is
 * the same either way.
 */
export const listOf: ListOf = (element, error) =>
  z.pipe(
    // zod's array of anything first, so that a value that is no array is worded as arrayOf words it.
    z.array(z.unknown(), error === undefined ? undefined : { error }),
    z.transform((items: unknown[], ctx) => {
      const out: Array<z.output<typeof element>> = [];
      for (let i = 0; i < items.length; i++) {
        const result = z.safeParse(element, items[i]);
        if (!result.success) {
          for (const issue of result.error.issues) ctx.issues.push({ ...issue, path: [i, ...issue.path] } as (typeof ctx.issues)[number]);
          return z.NEVER;
        }
        out.push(result.data);
      }
      return out;
    }),
  );

/**
 * A transcript schema built with zod's arrays, which are quicker, and parsed again with
 * listOf's only when a huge array's problems overflowed the stack: each variant is built
 * the first time it is needed.
 */
export function listSchemas<S extends z.core.$ZodType>(
  build: (list: ListOf) => S,
): (value: unknown) => z.core.util.SafeParseResult<z.output<S>> {
  let quick: S | undefined;
  let firstOnly: S | undefined;
  return (value) => {
    try {
      return z.safeParse((quick ??= build(arrayOf)), value);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      return z.safeParse((firstOnly ??= build(listOf)), value);
    }
  };
}

/** Parts told apart by their "type", with a message that names the accepted types. */
export const partOf = <T extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(options: T, names: string) =>
  z.discriminatedUnion('type', options, {
    error: (iss) => {
      const type = (iss.input as { type?: unknown } | undefined)?.type;
      return type === undefined ? `a part needs a "type" (${names})` : `unknown part type ${quote(type)} (expected ${names})`;
    },
  });

/** Messages told apart by their "role". */
export const messageOf = <T extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(options: T) =>
  z.discriminatedUnion('role', options, {
    error: (iss) => {
      if (iss.input === null || typeof iss.input !== 'object' || Array.isArray(iss.input)) return 'expected a message object';
      const role = (iss.input as { role?: unknown }).role;
      return role === undefined
        ? 'missing "role" (system, user, assistant or tool)'
        : `unknown role ${quote(role)} (expected system, user, assistant or tool)`;
    },
  });
