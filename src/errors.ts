// Our errors, each carrying the exit status it ends the process with. A command
// throws one; the entry point of its bundle (cli.ts for the run path, program.ts for
// the subcommands) prints it as one `cursor-resume: ...` line and exits with its code.
// Each bundle has its own copy of these classes and catches only its own, so nothing
// crosses the boundary between dist/cli.cjs and dist/program.js but a number.

/** Exit status for a bad command line, setting or transcript. */
export const EXIT_USAGE = 2;

/** A failure we can explain: its message is the whole line the user sees, without our prefix. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
  }
  override name = 'CliError';
}

/** A bad command line: exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
  override name = 'UsageError';
}

/** A setting, config file or environment value that is not allowed: exit 2. */
export class ConfigError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
  override name = 'ConfigError';
}

/** A transcript we cannot read: exit 2, nothing runs. */
export class TranscriptError extends CliError {
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
  override name = 'TranscriptError';
}

/** An exit status with nothing more to say (what the command printed says it): `helper status` when none runs. */
export class QuietExit extends CliError {
  constructor(exitCode: number) {
    super('', exitCode);
  }
  override name = 'QuietExit';
}

/** Prints an error as the user sees it and gives the exit status: ours as one line, anything else with its stack (a bug). */
export function reportError(error: unknown): number {
  if (error instanceof CliError) {
    if (error instanceof QuietExit) return error.exitCode;
    process.stderr.write(`cursor-resume: ${error.message}\n`);
    return error.exitCode;
  }
  process.stderr.write(`cursor-resume: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
}
