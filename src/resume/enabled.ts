// Reading an on/off switch written as text: CURSOR_RESUME_ENABLED, CURSOR_RESUME_VERBOSE,
// `config set resume`, and the shared CURSOR_ACP_SESSION_RESUME (on only for 1, true,
// on, yes). Any case; blanks around the value do not count.
const ON = new Set(['1', 'true', 'on', 'yes']);
const OFF = new Set(['0', 'false', 'off', 'no']);

/** true or false, or undefined for a value that is neither (said to the user, then ignored). */
export function parseSwitch(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  return ON.has(t) ? true : OFF.has(t) ? false : undefined;
}

/** The variable callers such as OpenCode's Cursor plugin share with us: read only when our own resume setting is unset. */
export const SHARED_SWITCH = 'CURSOR_ACP_SESSION_RESUME';

/** The shared switch read as the plugin reads it: on for 1, true, on, yes; any other value is off, and not ours to question. */
export const sharedSwitchOn = (text: string): boolean => ON.has(text.trim().toLowerCase());
