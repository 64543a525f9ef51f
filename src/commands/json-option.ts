// `helper --json` and `config --json` are their bare forms' JSON (`helper status --json`,
// `config list --json`). Given before a subcommand's name, the parent's --json would be taken
// by the parent and the subcommand would print text: it is handed on, or refused.
import type { Command } from 'commander';
import { UsageError } from '../errors.js';

export function passJsonOn(parent: Command): Command {
  return parent.hook('preSubcommand', (self, sub) => {
    if (self.opts().json !== true) return;
    if (!sub.options.some((o) => o.long === '--json'))
      throw new UsageError(`${self.name()} ${sub.name()} prints no JSON: drop --json (it goes with ${jsonCommands(self)})`);
    sub.setOptionValue('json', true);
  });
}

const jsonCommands = (parent: Command): string =>
  parent.commands
    .filter((c) => c.options.some((o) => o.long === '--json'))
    .map((c) => `${parent.name()} ${c.name()}`)
    .join(', ');
