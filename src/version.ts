import pkg from '../package.json' with { type: 'json' };

/** The package version; the helper compares it so an upgrade never talks to an old daemon. */
export const VERSION: string = pkg.version;
