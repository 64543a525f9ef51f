import type * as z from '../zod.js';
import { TranscriptError, formatPath } from './errors.js';

type Issue = z.core.$ZodIssue;

/**
 * The issue a person should see. A union failure hides its options' own issues;
 * when one option got further into the value (a longer path), that one names the
 * real problem: `content[0].text: expected a string` rather than "not a string or array".
 */
function mostSpecific(issue: Issue): Issue {
  if (issue.code !== 'invalid_union') return issue;
  let best: Issue | undefined;
  for (const option of issue.errors) {
    const first = option[0];
    if (first && first.path.length > 0 && (!best || first.path.length > best.path.length)) best = first;
  }
  if (!best) return issue;
  const inner = mostSpecific(best);
  return { ...inner, path: [...issue.path, ...inner.path] } as Issue;
}

/** Turns a failed parse into our error: one line, the path, what was expected. */
export function toTranscriptError(issues: ReadonlyArray<Issue>, prefix: ReadonlyArray<PropertyKey>): TranscriptError {
  const issue = mostSpecific(issues[0]!);
  const where = formatPath([...prefix, ...issue.path]);
  return new TranscriptError(`${where || 'transcript'}: ${issue.message}`);
}
