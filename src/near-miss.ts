// A word or flag that is one slip away from one of ours (`hepler`, `--dryrun`) must
// never reach cursor-agent as a prompt or an unknown option: it is refused with the
// word that was meant.
import leven from 'leven';
import { AGENT_SUBCOMMANDS } from './agent/argv.js';

export const OUR_COMMANDS = ['inspect', 'helper', 'evict', 'config', 'simulate'] as const;
const OUR_FLAGS = ['--dry-run', '--verbose', '--trace', '--our-version'] as const;

/** Within two edits (a swap of two letters counts two): every one of ours has five letters or more. */
const close = (typed: string, ours: string): boolean => typed !== ours && leven(typed, ours) <= 2;

/** The command or flag of ours a word is a slip of, if any. */
export function nearMiss(word: string, isFirst: boolean): string | undefined {
  if (word.startsWith('--')) {
    const name = word.split('=')[0]!;
    if ((OUR_FLAGS as readonly string[]).includes(name)) return undefined;
    return OUR_FLAGS.find((flag) => flag === name.toLowerCase() || close(name.toLowerCase(), flag));
  }
  // Only the first word can be a subcommand; a prompt's later words are the prompt.
  if (!isFirst || AGENT_SUBCOMMANDS.has(word)) return undefined;
  const lower = word.toLowerCase();
  return OUR_COMMANDS.find((command) => command === lower || close(lower, command));
}

/** The first slip on a run line, as the one line the user sees. */
export function slipOnRunLine(argv: ReadonlyArray<string>): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return undefined;
    // Ours only as the first word, alone (cli.ts and handover.ts take that before a slip is looked for); with a
    // value, later, or in a run line given after "--", it would reach cursor-agent as an unknown option.
    if (arg.split('=')[0] === '--our-version')
      return '--our-version goes alone, as the first word: cursor-resume --our-version. Nothing was run';
    // Our commands work only as the first word; later, a word is a prompt (or a flag's value).
    const meant = nearMiss(arg, i === 0);
    if (meant === undefined) continue;
    const what = arg.startsWith('-') ? 'option' : 'command';
    return `unknown ${what} ${JSON.stringify(arg)}: did you mean ${JSON.stringify(meant)}? Nothing was run (cursor-resume --help lists ours)`;
  }
  return undefined;
}
