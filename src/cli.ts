// Entry point. A run line (anything that is not one of our subcommands) goes
// straight to the run path, which loads as little as it can; our subcommands and
// --help go through commander.
import { parseCallerArgs } from './agent/argv.js';
import { reportError } from './errors.js';
import { watchStdout } from './stdout.js';

const OUR_COMMANDS = new Set(['inspect', 'helper', 'evict', 'config', 'simulate']);

async function main(argv: string[]): Promise<number> {
  watchStdout();
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // The subcommands (program.js) report their own errors: what reaches here is the run path's.
    process.exitCode = reportError(error);
  },
);
