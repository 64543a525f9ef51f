// Values from a transcript, the helper or cursor-agent as a terminal line shows them. No imports:
// the run path uses it for its messages, and the commands for their tables.

// eslint-disable-next-line no-control-regex
const UNSHOWN = /[\u0000-\u001f\u007f-\u009f\u061c\u180e\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * The control characters (C0, DEL, C1) and the bidi marks that reorder a line escaped as
 * \uXXXX, so that a value can neither move the cursor, recolour or retitle the terminal,
 * nor reverse the text after it; and the characters that show as nothing at all (zero-width
 * space, word joiner, invisible operators, BOM), so that two messages `inspect` names as
 * different never look the same. The joiners that shape scripts and emoji (U+200C, U+200D) stay.
 */
export const escapeControls = (text: string): string => text.replace(UNSHOWN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
