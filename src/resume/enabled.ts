const TRUE_VALUES = new Set(['1', 'true', 'on', 'yes']);

/** CURSOR_ACP_SESSION_RESUME: on only for 1, true, on, yes (any case, blanks ignored). */
export function isResumeEnabled(value: string | undefined): boolean {
  return value !== undefined && TRUE_VALUES.has(value.trim().toLowerCase());
}
