import * as z from 'zod/mini';
import { concreteModel } from './model.js';
import { TranscriptError } from './errors.js';
import { MAX_FIELD_LENGTH } from './limits.js';
import type { Conversation } from './types.js';

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// One wording for every type mismatch, in every schema: what was expected, and what came.
// jitless: zod would compile a parser per object schema with new Function() on first use;
// a run parses one transcript and exits, and the plain path is faster for it at every
// size measured (10 to 10,000 messages; bench/scale.ts).
z.config({
  jitless: true,
  customError: (iss) => {
    if (iss.code !== 'invalid_type') return undefined;
    const expected = iss.expected === 'array' || iss.expected === 'object' ? `an ${iss.expected}` : `a ${iss.expected}`;
    return iss.input === undefined ? `missing; expected ${expected}` : `expected ${expected}, got ${describe(iss.input)}`;
  },
});

export const str = (what?: string) => (what ? z.string({ error: `expected ${what}` }) : z.string());

export const textPart = z.object({ type: z.literal('text'), text: str() });

/** Values a transcript may carry beside its messages; checked the same way for every shape. */
export const envelope = {
  model: z.optional(str()),
  workspace: z.optional(str()),
  sessionId: z.optional(str()),
};

/** Anything from stdin that will reach an argv must never be read as a flag. */
export function checkEnvelope(
  fields: { model?: string | undefined; workspace?: string | undefined; sessionId?: string | undefined },
): Pick<Conversation, 'model' | 'workspace' | 'sessionId'> {
  const out: Pick<Conversation, 'model' | 'workspace' | 'sessionId'> = {};
  for (const key of ['model', 'workspace', 'sessionId'] as const) {
    const value = fields[key];
    if (value === undefined) continue;
    if (value.length === 0) throw new TranscriptError(`${key}: must not be empty`);
    if (value.length > MAX_FIELD_LENGTH) throw new TranscriptError(`${key}: longer than ${MAX_FIELD_LENGTH} characters`);
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(value)) throw new TranscriptError(`${key}: contains a control character`);
    if (key !== 'sessionId' && value.startsWith('-')) {
      throw new TranscriptError(`${key}: "${value}" begins with "-" and could be read as a flag; refused`);
    }
    // The argv gets the model without its provider prefix: "cursor-acp/--resume=x" would put "--resume=x" there.
    if (key === 'model' && concreteModel(value).startsWith('-')) {
      throw new TranscriptError(`model: "${value}" names a model beginning with "-" after its provider prefix, which could be read as a flag; refused`);
    }
    out[key] = value;
  }
  if (out.workspace !== undefined && !out.workspace.startsWith('/')) {
    throw new TranscriptError(`workspace: "${out.workspace}" is not an absolute path`);
  }
  return out;
}

/** Parts told apart by their "type", with a message that names the accepted types. */
export const partOf = <T extends readonly [z.core.$ZodTypeDiscriminable, ...z.core.$ZodTypeDiscriminable[]]>(
  options: T,
  names: string,
) =>
  z.discriminatedUnion('type', options, {
    error: (iss) => {
      const type = (iss.input as { type?: unknown } | undefined)?.type;
      return type === undefined ? `a part needs a "type" (${names})` : `unknown part type ${JSON.stringify(type)} (expected ${names})`;
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
        : `unknown role ${JSON.stringify(role)} (expected system, user, assistant or tool)`;
    },
  });
