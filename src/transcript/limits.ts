/** Largest transcript read from stdin; a larger one is refused rather than buffered without end. */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** Deepest JSON nesting accepted: real tool schemas stay far below it, and hashing recurses. */
export const MAX_DEPTH = 64;

/** Longest model, workspace or session ID accepted from a transcript. */
export const MAX_FIELD_LENGTH = 4096;
