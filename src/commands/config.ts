// `cursor-resume config list|get|set|unset|path`: the settings file. The
// SETTINGS table in src/config.ts is the one source of truth for names, types,
// defaults, limits and environment variables; values are checked with it before
// they are written, and `list` resolves them exactly as a run does
// (run-line flag > environment > file > default).
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { CliError, ConfigError, UsageError } from '../errors.js';
import { passJsonOn } from './json-option.js';
import {
  BrokenConfigFile,
  SETTINGS,
  configFile,
  describeResume,
  isSettingName,
  parseSettingText,
  readConfigFile,
  readConfigObject,
  resolveSetting,
  resolveSettings,
  validateSetting,
  type SettingName,
  type Settings,
} from '../config.js';
import { envValue } from '../env-value.js';
import { SHARED_SWITCH, sharedSwitchOn } from '../resume/enabled.js';
import { checkRuntimeDir, RUNTIME_DIR_FILE, RuntimeDirError, runtimePaths } from '../helper/paths.js';
import { fields, paint, printJson, table } from '../present.js';
import { runLine } from '../turn/input.js';
import { currentDirectory } from '../agent/workspace.js';

const NAMES = Object.keys(SETTINGS) as SettingName[];

export function addConfigCommand(program: Command): Command {
  const config = program
    .command('config')
    .description('show and change settings (config file, environment, defaults)')
    .usage('[list|get|set|unset|path] [args] [options]')
    .addHelpText(
      'after',
      `
Settings (environment variable, if any, in brackets):
${NAMES.map((n) => `  ${n.padEnd(18)}${SETTINGS[n].help}${SETTINGS[n].env ? ` [${SETTINGS[n].env}]` : ''}`).join('\n')}

A value comes from, first to last: a run-line flag (--verbose, --trace), its environment variable,
the config file, the default. ttlMinutes and maxEntries may be lowered, never raised above the
seed limits (60 minutes, 64 entries). When resume is set nowhere (neither CURSOR_RESUME_ENABLED nor
the file), CURSOR_ACP_SESSION_RESUME decides it (source "shared environment" in --json); OpenCode's
Cursor plugin reads that one too and then resumes by itself, so under OpenCode use
CURSOR_RESUME_ENABLED or config set resume true.

Exit status: 0; 1 when set or unset cannot write the config file (its folder, or another writer
holding its lock over 3 s), or get runtimeDir finds a folder a helper could not use; 2
for an unknown setting, a value that is not allowed, or a config file that is broken, cannot be
read, or is not read (someone else could have written it).

Examples:
  cursor-resume config list
  cursor-resume config set resume true
  cursor-resume config set ttlMinutes 30
  cursor-resume config set agent ~/.local/bin/cursor-agent
  cursor-resume config set sideCallPatterns '["Summarize the conversation"]'
  cursor-resume config unset ttlMinutes
  cursor-resume config get agent
  cursor-resume config path`,
    )
    // `config` alone lists (`config --json` as `config list --json`); any other word is a mistake worth naming.
    .argument('[command]')
    .option('--json', 'alone: config list --json; before a command: that command with --json')
    .action((command: string | undefined, options: { json?: boolean }) => {
      if (command !== undefined)
        throw new UsageError(
          `unknown config command ${JSON.stringify(command)}; use list, get, set, unset or path (cursor-resume config --help)`,
        );
      listSettings([], options);
    });

  config
    .command('list')
    .description('every setting: its effective value and where it comes from')
    .argument('[run-line...]', 'after "--": run-line flags to take into account (--verbose, --trace FILE)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      '\nExamples:\n  cursor-resume config list\n  cursor-resume config list --json | jq .settings.agent\n  cursor-resume config list -- --verbose --trace /tmp/trace.jsonl',
    )
    .action((rest: string[], options: { json?: boolean }) => listSettings(rest, options));

  config
    .command('get')
    .description("print one setting's effective value")
    .argument('<name>', `one of: ${NAMES.join(', ')}`)
    .option('--json', 'print {"name", "value", "source"}; for runtimeDir also "folder", the folder it names')
    .addHelpText(
      'after',
      `
runtimeDir prints the folder the helper's socket is in: when the setting is empty, the one chosen
automatically (XDG_RUNTIME_DIR/cursor-resume, else TMPDIR/cursor-resume-UID). Exit status: 0; 1 when
that automatic folder cannot hold the socket (its path would be too long), or when the folder's path,
set or automatic, already names something a helper would refuse (a file, a symbolic link, another
user's folder, one below a folder every user may write that is not sticky, one open to others that
is sticky or holds files not cursor-resume's); 2 for an
unknown setting or a value of it that is not allowed (a runtimeDir too long for the socket included);
a value not allowed for another setting does not stop it.

Examples:
  cursor-resume config get ttlMinutes
  "$(cursor-resume config get agent)" --version
  ls -l "$(cursor-resume config get runtimeDir)"`,
    )
    .action((name: string, options: { json?: boolean }) => {
      const setting = settingName(name);
      const { settings, sources } = resolveSetting(process.env, setting);
      const value = settings[setting];
      // An empty runtimeDir means "choose one": the folder chosen is what a script asks for.
      const folder = setting === 'runtimeDir' ? runtimeFolder(settings.runtimeDir, sources.runtimeDir === 'file') : undefined;
      if (options.json) printJson({ name: setting, value, source: sources[setting], ...(folder === undefined ? {} : { folder }) });
      else process.stdout.write(`${folder ?? (typeof value === 'string' ? value : JSON.stringify(value))}\n`);
    });

  config
    .command('set')
    .description('write a setting to the config file, after checking it')
    .argument('<name>', `one of: ${NAMES.join(', ')}`)
    .argument('<value>', 'true/false, a whole number, text, or for sideCallPatterns a JSON array of strings')
    .addHelpText(
      'after',
      '\nA relative path given for agent (containing a "/") or trace is stored made absolute. An agent must\nbe an executable file (a name without "/": one on PATH), and not cursor-resume itself. A config\nfile that is not valid JSON is kept beside the new one (config.json.broken-TIME) and started anew.\n\nExamples:\n  cursor-resume config set ttlMinutes 30\n  cursor-resume config set unsafeDelta resume-full\n  cursor-resume config set trace ~/cursor-resume-trace.jsonl',
    )
    .action(async (name: string, text: string) => {
      const setting = settingName(name);
      let value = validateSetting(setting, parseSettingText(setting, text, 'config set'), 'config set');
      if ((setting === 'trace' && value !== '') || (setting === 'agent' && String(value).includes('/'))) {
        const next = `nothing was written. cd into an existing folder, or give ${setting} as an absolute path`;
        value = isAbsolute(String(value)) ? value : resolve(currentDirectory(next), String(value));
      }
      if (setting === 'agent') checkAgent(String(value));
      const { changeConfigFile } = await import('../config-store.js');
      const {
        path,
        setAside,
        result: before,
      } = await changeConfigFile((file) => {
        const before = file.get(setting);
        file.set(setting, value);
        return before;
      });
      if (setAside !== undefined) process.stderr.write(`cursor-resume: note: ${setAside}\n`);
      process.stdout.write(`${setting} = ${show(setting, value)} (in ${path})\n`);
      afterWrite(setting, before, value);
    });

  config
    .command('unset')
    .description('remove a setting from the config file (back to its default)')
    .argument('<name>', 'a setting; also any unknown name the file holds, to repair it')
    .addHelpText('after', '\nExamples:\n  cursor-resume config unset ttlMinutes')
    .action(async (name: string) => {
      const { existsSync } = await import('node:fs');
      const path = configFile();
      if (!existsSync(path)) {
        settingName(name);
        process.stdout.write(`${name} is not set (there is no config file ${path})\n`);
        return;
      }
      // A name that is no setting is one only a readable file can hold: a slip must not set a broken file aside.
      if (!isSettingName(name) && !holds(path, name)) settingName(name);
      const { changeConfigFile } = await import('../config-store.js');
      const { result: removed, setAside } = await changeConfigFile((file) => {
        if (!file.has(name)) return false;
        const before = file.get(name);
        file.delete(name);
        return { before };
      });
      if (setAside !== undefined) process.stderr.write(`cursor-resume: note: ${setAside}\n`);
      if (!removed) {
        settingName(name);
        process.stdout.write(`${name} is not set in ${path}\n`);
        return;
      }
      process.stdout.write(
        isSettingName(name)
          ? `${name} removed from ${path}; it is back to ${show(name, SETTINGS[name].default)}\n`
          : `${name} removed from ${path}\n`,
      );
      afterWrite(name, removed.before, isSettingName(name) ? SETTINGS[name].default : undefined, { unset: true });
    });

  config
    .command('path')
    .description('print where the config file is (it need not exist)')
    .addHelpText('after', '\nExamples:\n  cursor-resume config path\n  ${EDITOR:-vi} "$(cursor-resume config path)"')
    .action(() => {
      process.stdout.write(`${configFile()}\n`);
    });

  return passJsonOn(config);
}

function listSettings(rest: string[], options: { json?: boolean }): void {
  const caller = runLine({}, rest);
  // Only these two change a setting; anything else would be silently ignored.
  const other = caller.dryRun ? '--dry-run' : caller.agentArgs[0];
  if (other !== undefined) {
    throw new UsageError(
      `config list: ${JSON.stringify(other)} changes no setting; after "--" give only --verbose and --trace FILE: cursor-resume config list -- --verbose`,
    );
  }
  const flags: Partial<Settings> = {
    ...(caller.verbose ? { verbose: true } : {}),
    ...(caller.trace !== undefined ? { trace: caller.trace } : {}),
  };
  const resolved = resolveSettings(process.env, flags);
  const { settings, sources } = resolved;
  const resume = describeResume(resolved, process.env);
  if (options.json) {
    printJson({
      file: configFile(),
      resume,
      settings: Object.fromEntries(
        NAMES.map((n) => [n, { value: settings[n], source: sources[n], default: SETTINGS[n].default, env: SETTINGS[n].env ?? null }]),
      ),
    });
    return;
  }
  const c = paint();
  const rows = NAMES.map((n) => [
    c.bold(n),
    show(n, settings[n]),
    sources[n] === 'environment'
      ? `environment (${SETTINGS[n].env})`
      : sources[n] === 'shared environment'
        ? `environment (${resume.from})`
        : sources[n] === 'default'
          ? c.dim('default')
          : sources[n],
  ]);
  process.stdout.write(table([{ header: 'SETTING' }, { header: 'VALUE' }, { header: 'SOURCE' }], rows, (h) => c.bold(h)));
  process.stdout.write(
    fields(
      [
        ['resume', `${resume.enabled ? c.green('on') : 'off'}: ${resume.why}`],
        ['file', configFile()],
      ],
      (l) => c.dim(l),
    ),
  );
}

/**
 * An agent setting that cannot run would fail only on the next turn: checked now.
 * A name without a "/" is looked for on PATH, as a run looks for it.
 */
function checkAgent(agent: string): void {
  const where = (file: string): 'ok' | 'missing' | 'directory' | 'not executable' => {
    try {
      if (statSync(file).isDirectory()) return 'directory';
      accessSync(file, constants.X_OK);
      return 'ok';
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'not executable';
    }
  };
  const fix = 'give the path of the cursor-agent executable, or its name on PATH';
  let file = agent;
  if (!agent.includes('/')) {
    // The one a run would start: the first on PATH.
    const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
    const found = dirs.map((dir) => join(dir, agent)).find((candidate) => where(candidate) === 'ok');
    if (found === undefined) throw new ConfigError(`agent (config set): ${JSON.stringify(agent)} is not an executable on PATH; ${fix}`);
    file = found;
  } else {
    const state = where(agent);
    if (state === 'missing') throw new ConfigError(`agent (config set): ${agent} does not exist; ${fix}`);
    if (state === 'directory') throw new ConfigError(`agent (config set): ${agent} is a directory; ${fix}`);
    if (state === 'not executable') throw new ConfigError(`agent (config set): ${agent} is not executable; ${fix} (or chmod +x it)`);
  }
  // The check a run makes only once it is nested; here it is certain at once.
  if (process.argv[1] !== undefined && realpathSync(file) === realpathSync(process.argv[1])) {
    const what = file === agent ? agent : `${JSON.stringify(agent)} (${file} on PATH)`;
    throw new ConfigError(`agent (config set): ${what} is cursor-resume itself, which would call itself without end; ${fix}`);
  }
}

/** Whether the config file holds `name`; a file that cannot be read as an object holds nothing one can name. */
function holds(path: string, name: string): boolean {
  try {
    return Object.hasOwn(readConfigObject(path), name);
  } catch (error) {
    if (error instanceof BrokenConfigFile) return false;
    throw error;
  }
}

function settingName(name: string): SettingName {
  if (isSettingName(name)) return name;
  throw new UsageError(`unknown setting ${JSON.stringify(name)}; the settings are: ${NAMES.join(', ')} (cursor-resume config list)`);
}

/**
 * The folder a runtimeDir setting names (when empty, the automatic one), if a helper could use it:
 * its socket's path fits, and what is there already is a folder of ours (none yet is fine).
 */
function runtimeFolder(value: string, fromFile: boolean): string {
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, CURSOR_RESUME_RUNTIME_DIR: value };
    // Set in the config file: what to change is that setting, as the helper commands say (helper-env.ts).
    if (fromFile && value !== '') (env as Record<symbol, unknown>)[RUNTIME_DIR_FILE] = configFile();
    const paths = runtimePaths(env);
    checkRuntimeDir(paths, { tighten: false });
    return paths.dir;
  } catch (error) {
    if (error instanceof RuntimeDirError) throw new CliError(error.message);
    throw error;
  }
}

/** A value for a person. */
function show(name: SettingName, value: unknown): string {
  if (value === '') {
    if (name === 'runtimeDir') {
      try {
        return `(automatic: ${runtimePaths({ ...process.env, CURSOR_RESUME_RUNTIME_DIR: '' }).dir})`;
      } catch {
        return '(automatic)';
      }
    }
    return '(none)';
  }
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Why a setting's value given as text is not allowed, or undefined when it is. */
function notAllowed(name: SettingName, text: string, where: string): string | undefined {
  try {
    validateSetting(name, parseSettingText(name, text, where), where);
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

/** After a write: an environment variable that still decides, and a file still not right, are said. */
function afterWrite(name: string, before: unknown, after: unknown, { unset = false } = {}): void {
  const env = isSettingName(name) ? SETTINGS[name].env : undefined;
  // The file is written, but the environment wins: say so, or the change seems ignored.
  const fromEnv = env === undefined ? undefined : envValue(process.env[env]);
  if (fromEnv !== undefined) {
    // A value not allowed does not win: runs say so and ignore it (config.ts, resolveRunSettings).
    const wrong = isSettingName(name) ? notAllowed(name, fromEnv, `from ${env}`) : undefined;
    process.stderr.write(
      wrong === undefined
        ? `cursor-resume: note: ${env} is set in the environment and wins over the config file\n`
        : `cursor-resume: note: ${env} in the environment is not allowed, and runs ${name === 'runtimeDir' ? 'say so and use no cache' : 'ignore it with a warning'}: ${wrong}; unset ${env} or fix its value\n`,
    );
  } else if (name === 'resume' && unset) {
    // Set nowhere now: the switch callers share with us decides, and may turn it on.
    const shared = envValue(process.env[SHARED_SWITCH]);
    if (shared !== undefined && sharedSwitchOn(shared))
      process.stderr.write(
        `cursor-resume: note: ${SHARED_SWITCH} is ${JSON.stringify(shared)} in the environment and decides resume when neither ${env} nor the config file does: it is on\n`,
      );
  }
  // A running helper's limits only go down (README, "The helper"): a raised one waits for the next helper.
  if ((name === 'ttlMinutes' || name === 'maxEntries') && typeof before === 'number' && typeof after === 'number' && after > before) {
    process.stderr.write(
      `cursor-resume: note: a helper running now keeps its lower ${name} until it exits; cursor-resume helper stop ends it (the next turn starts another)\n`,
    );
  }
  // Checked as the commands check it: what is still wrong is best said now.
  try {
    readConfigFile();
  } catch (error) {
    throw new ConfigError(
      `the change was written, but the config file still has a setting that is not allowed (runs, inspect, evict and helper ignore it with a warning; config, simulate and inspect --transcript refuse it): ${(error as Error).message}`,
    );
  }
}
