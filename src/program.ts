// The commander program: our own subcommands and the help a person reads.
import { Command, CommanderError } from 'commander';
import { addConfigCommand } from './commands/config.js';
import { addEvictCommand } from './commands/evict.js';
import { addHelperCommand } from './commands/helper.js';
import { addInspectCommand } from './commands/inspect.js';
import { addSimulateCommand } from './commands/simulate.js';
import { EXIT_USAGE, reportError } from './errors.js';
import { oneLine, wrapHelp } from './present.js';
import { closedStdoutExit, writeStdout } from './stdout.js';
import { VERSION } from './version.js';

export function buildProgram(): Command {
  const program = new Command('cursor-resume')
    .description(
      'A drop-in front for cursor-agent: reads a conversation transcript on stdin and, when it can prove it is safe, ' +
        'continues the existing Cursor chat (--resume) sending only the new messages.',
    )
    .version(VERSION, '--our-version', "print cursor-resume's version (--version goes to cursor-agent)")
    .usage(
      // Lines of our own: commander wraps a long one at 80 columns with no indent.
      '[cursor-agent flags] [--dry-run] [--verbose] [--trace FILE]\n                     < transcript\n       cursor-resume <command> [options]',
    )
    .enablePositionalOptions()
    // `help` is cursor-agent's subcommand (`cursor-resume help` goes to it); ours is --help.
    .helpCommand(false)
    .exitOverride()
    // Our errors all read `cursor-resume: ...` on one line and say what to do next; subcommands
    // inherit this. Help is wrapped to the terminal (80 columns elsewhere, as commander wraps its own part).
    .configureOutput({
      // One line: commander puts its "(Did you mean ...?)" on a line of its own.
      outputError: (text, write) => write(`cursor-resume: ${oneLine(text.replace(/^error: /, ''))} (add --help for usage and examples)\n`),
      writeOut: (text) => process.stdout.write(wrapHelp(text, process.stdout.isTTY ? process.stdout.columns : 80)),
    })
    .addHelpText(
      'after',
      `
Run options (on a run line, beside cursor-agent's own flags):
  --dry-run        print the plan as JSON (decision, reason, anchor, chatId, argv, prompt); run nothing
  --verbose        print the decision and its reason to stderr
  --trace FILE     append one JSON line per turn read from stdin to FILE

Every other flag, and every cursor-agent subcommand (login, status, models, create-chat, ...), goes to
cursor-agent unchanged, but for a near miss of one of ours (--dryrun) and an --output-format other than
text, json or stream-json: both exit 2. A turn that is recorded runs cursor-agent with --print
--output-format stream-json, and prints what text or json would. Resume is opt-in: CURSOR_RESUME_ENABLED=1 (or config set resume
true); when neither is set, CURSOR_ACP_SESSION_RESUME=1 (or true, on, yes). OpenCode's plugin reads
that one too and then resumes by itself, so under OpenCode use CURSOR_RESUME_ENABLED.

Examples:
  CURSOR_RESUME_ENABLED=1 cursor-resume --print --output-format stream-json < body.json
  CURSOR_RESUME_ENABLED=1 cursor-resume --dry-run --model gpt-5 < body.json
  CURSOR_RESUME_ENABLED=1 cursor-resume inspect --transcript body.json
  cursor-resume simulate --resume-on --expect fresh,resume-delta turn1.json turn2.json

See also: man cursor-resume`,
    );
  addInspectCommand(program);
  addHelperCommand(program);
  addEvictCommand(program);
  addConfigCommand(program);
  addSimulateCommand(program);
  return program;
}

/**
 * Runs one of our subcommands; its errors are reported here, where they were made
 * (this bundle's copies of the classes in errors.ts), and only the exit status goes back.
 */
export async function runProgram(argv: string[]): Promise<number> {
  const program = buildProgram();
  let code = 0;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    // commander has printed its own message; its status 1 is a bad command line.
    if (error instanceof CommanderError) code = error.exitCode === 1 ? EXIT_USAGE : error.exitCode;
    else code = reportError(error);
  }
  // A reader that stopped early (`| head`) is seen once what was written has been flushed.
  return (await writeStdout('')) ? code : closedStdoutExit();
}
