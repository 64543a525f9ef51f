/** Largest transcript read from stdin; a larger one is refused rather than buffered without end. */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** Deepest JSON nesting accepted: real tool schemas stay far below it, and hashing recurses. */
export const MAX_DEPTH = 64;

/**
 * Most JSON values (strings, numbers, objects, ...) accepted in one transcript, counted
 * before parsing. Parsing costs memory per value: 64 MiB of "{}" took 4 GB. A
 * 10,000-message, 18 MB coding session has about 50,000; this is forty times that.
 */
export const MAX_JSON_VALUES = 2_000_000;

/** Longest model, workspace or session ID accepted from a transcript. */
export const MAX_FIELD_LENGTH = 4096;
