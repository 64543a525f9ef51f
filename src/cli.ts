// Entry point. A run line (anything that is not one of our subcommands) goes
// straight to the run path, which loads as little as it can; our subcommands and
// --help go through commander.
import { parseCallerArgs } from './agent/argv.js';

const OUR_COMMANDS = new Set(['inspect', 'helper', 'evict', 'config', 'simulate']);

/** Exit status for a bad command line or an unreadable transcript (README, "Exit status"). */
export const EXIT_USAGE = 2;

async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  // --version is cursor-agent's; ours has a name of its own.
  if (first !== undefined && (OUR_COMMANDS.has(first) || first === '--our-version')) {
    const { runProgram } = await import('./program.js');
    return runProgram(argv);
  }
  const caller = parseCallerArgs(argv);
  // `cursor-resume mcp --help` asks for cursor-agent's help on its subcommand: only a bare --help is ours.
  if (caller.help && caller.positionals.length === 0) {
    const { runProgram } = await import('./program.js');
    return runProgram(['--help']);
  }
  const { runCommand } = await import('./commands/run.js');
  return runCommand(argv, caller);
}

/**
 * Our errors for a bad command line, config file or transcript (TranscriptError,
 * UsageError, ConfigError), told apart by name: the subcommands are a separate bundle
 * (dist/program.js) with their own copies of these classes, so instanceof would miss theirs.
 */
const USAGE_ERRORS = new Set(['TranscriptError', 'UsageError', 'ConfigError']);

function report(error: unknown): number {
  if (error instanceof Error && USAGE_ERRORS.has(error.name)) {
    process.stderr.write(`cursor-resume: ${error.message}\n`);
    return EXIT_USAGE;
  }
  process.stderr.write(`cursor-resume: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.exitCode = report(error);
  },
);
