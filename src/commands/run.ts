// The main job: a transcript on stdin → one cursor-agent turn (or, with --dry-run, its plan).
import { parseCallerArgs, type CallerArgs } from '../agent/argv.js';
import { resolveWorkspace } from '../agent/workspace.js';
import { resolveSettings } from '../config.js';
import { analyzeTurn, dryRunView, planTurn, type TurnContext } from '../plan.js';
import { decodeInput } from '../transcript/decode.js';
import { parseTranscript } from '../transcript/parse.js';
import { readInput } from '../transcript/read-input.js';

export async function runCommand(argv: ReadonlyArray<string>, caller: CallerArgs = parseCallerArgs(argv)): Promise<number> {
  const { settings } = resolveSettings(process.env, caller.verbose ? { verbose: true } : {});
  const conversation = parseTranscript(decodeInput(await readInput(process.stdin)));
  const workspace = resolveWorkspace(caller.workspace ?? conversation.workspace ?? '.', process.cwd());
  const context: TurnContext = { caller, settings, env: process.env, workspace };
  const analysis = analyzeTurn(conversation, context);
  const plan = planTurn(analysis, context, { branches: [] });
  process.stdout.write(`${JSON.stringify(dryRunView(plan))}\n`);
  return 0;
}
