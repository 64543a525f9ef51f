// Entry point. A run line (anything that is not one of our subcommands) goes
// straight to the run path, which loads as little as it can; our subcommands and
// --help go through commander.
import { parseCallerArgs } from './agent/argv.js';
import { reportError, UsageError } from './errors.js';
import { OUR_COMMANDS, slipOnRunLine } from './near-miss.js';
import { watchOutputs } from './stdout.js';

async function main(argv: string[]): Promise<number> {
  watchOutputs();
  const first = argv[0];
  // --version is cursor-agent's; ours has a name of its own.
  if (first !== undefined && ((OUR_COMMANDS as readonly string[]).includes(first) || first === '--our-version')) {
    const { runProgram } = await import('./program.js');
    return runProgram(argv);
  }
  // A slip of one of our commands or flags must never start a chat.
  const slip = slipOnRunLine(argv);
  if (slip !== undefined) throw new UsageError(slip);
  const caller = parseCallerArgs(argv);
  // `cursor-resume mcp --help` asks for cursor-agent's help on its subcommand: only a bare --help is ours.
  if (caller.help && caller.positionals.length === 0) {
    const { runProgram } = await import('./program.js');
    return runProgram(['--help']);
  }
  const { runCommand } = await import('./commands/run.js');
  return runCommand(argv, caller);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // The subcommands (program.js) report their own errors: what reaches here is the run path's.
    process.exitCode = reportError(error);
  },
);
