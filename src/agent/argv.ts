// cursor-agent's command line, as a drop-in must understand it: which words are
// flags, which flags take a value, which are ours to remove, which are subcommands.
import { UsageError } from '../errors.js';

/** cursor-agent flags that take a value (`--flag value` or `--flag=value`). */
const VALUE_FLAGS = new Set([
  '--output-format',
  '--model',
  '--workspace',
  '--api-key',
  '--mode',
  '--sandbox',
  '--add-dir',
  '-H',
  '--header',
  '-e',
  '--endpoint',
]);

const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];
const isOutputFormat = (value: string): value is OutputFormat => (OUTPUT_FORMATS as readonly string[]).includes(value);

export const AGENT_SUBCOMMANDS = new Set([
  'login',
  'logout',
  'status',
  'whoami',
  'about',
  'models',
  'mcp',
  'update',
  'ls',
  'resume',
  'create-chat',
  'generate-rule',
  'rule',
  'install-shell-integration',
  'uninstall-shell-integration',
  'sandbox',
  'worker',
  'acp',
  'help',
]);

export interface CallerArgs {
  /** cursor-agent's arguments, ours removed, in the caller's order. */
  agentArgs: string[];
  dryRun: boolean;
  verbose: boolean;
  trace: string | undefined;
  model: string | undefined;
  workspace: string | undefined;
  /** --api-key (the last one given): with -e/--endpoint, the account the chat is made under. */
  apiKey: string | undefined;
  /** -e/--endpoint (the last one given). */
  endpoint: string | undefined;
  outputFormat: OutputFormat | undefined;
  print: boolean;
  /** --resume or --continue: the caller picked a chat itself. */
  callerResume: boolean;
  /** The chat --resume names, when it names one. */
  resumeChatId: string | undefined;
  /** Words that are not flags: a subcommand or a prompt. */
  positionals: string[];
  /** Where in agentArgs a `--` ends the options, if one does: what we add goes before it. */
  separatorAt: number | undefined;
  help: boolean;
  version: boolean;
}

/** cursor-agent's subcommands that may continue any chat: `resume` (the latest), `acp` (a session its client loads). */
const CONTINUING_SUBCOMMANDS = new Set(['resume', 'acp']);

/** A chat the caller has cursor-agent continue: `chatId` null when the line does not say which. */
export interface CallerChat {
  chatId: string | null;
}

/**
 * The chat a run line has cursor-agent continue outside the cache's sight: the one
 * --resume names, or an unnamed one (--continue, a bare --resume, several of these at
 * once, the `resume` and `acp` subcommands, and `ls` on a terminal, where a chat is
 * picked from the list); null when the line starts a new chat. Whatever the cache
 * holds of that chat no longer knows its history.
 */
export function callerChat(caller: CallerArgs, stdinIsTty: () => boolean): CallerChat | null {
  // Help and the version continue nothing.
  if (caller.help || caller.version) return null;
  if (caller.resumeChatId !== undefined) return { chatId: caller.resumeChatId };
  if (caller.callerResume) return { chatId: null };
  // A word after a `--` too: cursor-agent's parser still takes the first one as a subcommand.
  const first = caller.positionals[0];
  if (first === undefined) return null;
  return CONTINUING_SUBCOMMANDS.has(first) || (first === 'ls' && stdinIsTty()) ? { chatId: null } : null;
}

/** A run line cursor-agent takes whole, reading no transcript: a prompt word, a subcommand or --version. */
export const handsOver = (caller: CallerArgs): boolean => caller.positionals.length > 0 || caller.version;

/** Splits a run's command line into cursor-agent's flags and ours (--dry-run, --verbose, --trace FILE). */
export function parseCallerArgs(argv: ReadonlyArray<string>): CallerArgs {
  const out: CallerArgs = {
    agentArgs: [],
    dryRun: false,
    verbose: false,
    trace: undefined,
    model: undefined,
    workspace: undefined,
    apiKey: undefined,
    endpoint: undefined,
    outputFormat: undefined,
    print: false,
    callerResume: false,
    resumeChatId: undefined,
    positionals: [],
    separatorAt: undefined,
    help: false,
    version: false,
  };
  let resumeFlags = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.separatorAt = out.agentArgs.length;
      out.agentArgs.push(...argv.slice(i));
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.agentArgs.push(arg);
      out.positionals.push(arg);
      continue;
    }
    if (!arg.startsWith('--') && arg.length > 2) {
      i = groupedShortFlags(argv, i, out);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = name === arg ? undefined : arg.slice(eq + 1);

    if (name === '--dry-run' || name === '--verbose') {
      if (inline !== undefined) throw new UsageError(`${name} takes no value`);
      if (name === '--dry-run') out.dryRun = true;
      else out.verbose = true;
      continue;
    }
    if (name === '--trace') {
      const value = inline ?? argv[++i];
      if (value === undefined || value === '') throw new UsageError('--trace needs a file to append to');
      // `--trace --dry-run` lost its file, and would run a turn, not plan one: a file named like a flag is given as --trace=FILE.
      if (inline === undefined && value.startsWith('-'))
        throw new UsageError(
          `--trace needs a file to append to, and ${JSON.stringify(value)} is taken for a flag; nothing was run. A file of that name goes as --trace=${value}`,
        );
      out.trace = value;
      continue;
    }
    if (VALUE_FLAGS.has(name)) {
      const value = inline ?? argv[i + 1];
      if (value === undefined) throw new UsageError(`${name} needs a value`);
      if (inline === undefined) i++;
      out.agentArgs.push(name, value);
      if (name === '--model') out.model = value;
      else if (name === '--workspace') out.workspace = value;
      else if (name === '--api-key') out.apiKey = value;
      else if (name === '--endpoint' || name === '-e') out.endpoint = value;
      else if (name === '--output-format') {
        // We may run stream-json in its place and print the caller's format ourselves: only a format we can print.
        if (!isOutputFormat(value)) throw new UsageError(`--output-format must be text, json or stream-json, not ${JSON.stringify(value)}`);
        out.outputFormat = value;
      }
      continue;
    }
    if (name === '--resume') {
      // The chat ID is optional: a following word is taken only when it looks like one.
      resumeFlags++;
      out.callerResume = true;
      out.agentArgs.push(arg);
      const next = argv[i + 1];
      if (inline === undefined && next !== undefined && !next.startsWith('-') && !AGENT_SUBCOMMANDS.has(next)) {
        out.agentArgs.push(next);
        out.resumeChatId = next;
        i++;
      } else if (inline !== undefined && inline !== '') out.resumeChatId = inline;
      continue;
    }
    if (name === '--continue') {
      resumeFlags++;
      out.callerResume = true;
    } else if (name === '-p' || name === '--print') out.print = true;
    else if (name === '-h' || name === '--help') out.help = true;
    else if (name === '-v' || name === '--version') out.version = true;
    out.agentArgs.push(arg);
  }
  // Which of several a parser keeps is its own affair: such a line names no one chat.
  if (resumeFlags > 1) out.resumeChatId = undefined;
  return out;
}

/**
 * Grouped short flags (`-pf`, `-fH value`, `-Hvalue`), read as cursor-agent's parser
 * reads them: letters are flags until one that takes a value, which takes the rest of
 * the word or, at its end, the next word. Returns the index of the last word used.
 */
function groupedShortFlags(argv: ReadonlyArray<string>, i: number, out: CallerArgs): number {
  const arg = argv[i]!;
  out.agentArgs.push(arg);
  for (let at = 1; at < arg.length; at++) {
    const flag = `-${arg[at]}`;
    if (VALUE_FLAGS.has(flag)) {
      const inline = at < arg.length - 1;
      const value = inline ? arg.slice(at + 1) : argv[i + 1];
      if (value === undefined) throw new UsageError(`${flag} needs a value`);
      if (flag === '-e') out.endpoint = value;
      if (inline) return i;
      out.agentArgs.push(value);
      return i + 1;
    }
    if (flag === '-p') out.print = true;
    else if (flag === '-h') out.help = true;
    else if (flag === '-v') out.version = true;
  }
  return i;
}

export interface ArgvAdditions {
  /** From the transcript, used only when the caller gave no --model. */
  model: string | undefined;
  /** From the transcript, used only when the caller gave no --workspace. */
  workspace: string | undefined;
  resumeChatId: string | null;
  /** We need cursor-agent's stream to learn the chat ID, whatever format the caller asked for. */
  streamJson: boolean;
}

/** What cursor-agent gets: the caller's flags in order, then only what the plan adds. */
export function buildAgentArgv(caller: CallerArgs, add: ArgvAdditions): string[] {
  const { separatorAt } = caller;
  // After a `--` cursor-agent would read our flags as prompt words.
  const tail = separatorAt === undefined ? [] : caller.agentArgs.slice(separatorAt);
  let args = separatorAt === undefined ? [...caller.agentArgs] : caller.agentArgs.slice(0, separatorAt);
  if (add.streamJson && caller.outputFormat !== 'stream-json') {
    args = withoutOutputFormat(args);
    if (!caller.print) args.push('--print');
    args.push('--output-format', 'stream-json');
  }
  if (caller.model === undefined && add.model !== undefined) args.push('--model', add.model);
  if (caller.workspace === undefined && add.workspace !== undefined) args.push('--workspace', add.workspace);
  if (add.resumeChatId !== null) args.push('--resume', add.resumeChatId);
  return [...args, ...tail];
}

function withoutOutputFormat(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--output-format') i++;
    else if (!arg.startsWith('--output-format=')) out.push(arg);
  }
  return out;
}
