// `cursor-resume helper start|stop|status`: the helper, for people.
//   start   starts it unless it runs (replacing one of another version); exit 0, or 1 if it cannot.
//   stop    stops it (any version) and waits for its process to exit; none running is fine; exit 0, or 1 if it would not stop.
//   status  shows it; exit 0 when it runs, 3 when it does not (as `systemctl status`),
//           1 when the runtime dir is unusable. Never starts one.
import type { Command } from 'commander';
import { CliError, QuietExit, UsageError } from '../errors.js';
import { passJsonOn } from './json-option.js';
import { findingEnv } from '../turn/helper-env.js';
import { PATIENT } from '../helper/client.js';
import { connectHelper, probeHelper, stopHelper } from '../helper/launcher.js';
import type { StatsReply } from '../helper/protocol.js';
import { VERSION } from '../version.js';
import { PROTOCOL_VERSION } from '../helper/protocol.js';
import { fields, paint, printJson as print, span } from '../present.js';
import { plural } from '../plural.js';

export const EXIT_NOT_RUNNING = 3;

export function addHelperCommand(program: Command): Command {
  const helper = program
    .command('helper')
    .description('the memory-only cache helper: start, stop or show it')
    .usage('[start|stop|status] [options]')
    .addHelpText(
      'after',
      `
The helper keeps resume state (hashes, chat IDs, workspace paths, model names, counts, times; never
message text) in memory behind a Unix socket, helper.sock, in $CURSOR_RESUME_RUNTIME_DIR (an absolute
path short enough for the socket; default $XDG_RUNTIME_DIR/cursor-resume, else <tmpdir>/cursor-resume-<uid>), a private 0700
folder. A run that needs it starts it, with none of the caller's environment but its runtime folder,
the two idle settings below, NODE_OPTIONS without its --inspect and --debug flags, glibc's
MALLOC_MMAP_THRESHOLD_ and, when it starts with a turn's record, CURSOR_RESUME_HAND_OFF. It exits by itself after 5 minutes with no connections and an empty
cache, and on SIGTERM, SIGINT or SIGHUP.

\`helper\` alone is \`helper status\`. Exit status of status: 0 running, 3 not running, 1 the runtime
dir cannot be used or the helper does not answer.

Environment (tests and advanced use):
  CURSOR_RESUME_TTL_MS        life of an entry after its last turn (default and maximum 3600000)
  CURSOR_RESUME_MAX_ENTRIES   entries kept, expired then least recently used evicted first (default and maximum 64)
  CURSOR_RESUME_IDLE_MS       idle time before the helper exits (default 300000, 100 to 3600000)
  CURSOR_RESUME_CONNECTION_IDLE_MS  silence after which a connection holding no lease is closed
                              (default 30000, 100 to 3600000)
The first two are read by a run or helper start, not by the helper: like config ttlMinutes and
maxEntries they only lower the limits, which a run (or helper start) sends to the helper it connects
to. The last two are the helper's own, read as it starts, which says nothing of them: a value that
is not a positive number means the default, and one outside 100 to 3600000 the nearest bound.

Examples:
  cursor-resume helper status
  cursor-resume helper status --json | jq .entries
  cursor-resume helper stop
  CURSOR_RESUME_RUNTIME_DIR=/tmp/cr-test cursor-resume helper start`,
    );

  helper
    .command('start')
    .description('start the helper unless it is running')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Starts the helper unless one of this version answers; one of another version, or one that is
stopped or stuck, is replaced. It reports the helper that answers in the end: one it did not start
(a stuck one that came back first, or one another run started meanwhile) is "already running"
("started": false). Exit 0 when a helper runs, 1 when none can be started.

Examples:
  cursor-resume helper start
  cursor-resume helper start --json | jq .pid
  CURSOR_RESUME_RUNTIME_DIR=/tmp/cr-test cursor-resume helper start`,
    )
    .action(async (options: { json?: boolean }) => {
      // Where a run looks, and the limits a helper a run starts gets (config file included).
      const result = await connectHelper({ start: true, env: findingEnv() });
      if (!result.ok) {
        throw new CliError(`cannot start the helper: ${result.reason}`);
      }
      result.client.close();
      const { pid, version } = result.server;
      if (options.json) {
        print({
          running: true,
          started: result.started,
          replaced: result.replaced !== false,
          pid,
          version,
          socketPath: result.paths.socket,
        });
        return;
      }
      const replaced = {
        'another-version': 'replaced a helper of another version and started',
        stuck: 'replaced a stopped or stuck helper and started',
      };
      const what = result.started ? (result.replaced ? replaced[result.replaced] : 'started') : 'already running';
      process.stdout.write(`helper ${what}: pid ${pid}, version ${version}, socket ${result.paths.socket}\n`);
    });

  helper
    .command('stop')
    .description('stop the helper (its cache is lost); fine if none runs')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Returns once the helper's process has exited. Exit 0 when no helper runs afterwards (also
when none ran), 1 when it does not stop or exit (the message names its pid) or does not answer
(the message names its socket).

Examples:
  cursor-resume helper stop
  cursor-resume helper stop --json`,
    )
    .action(async (options: { json?: boolean }) => {
      const result = await stopHelper({ env: findingEnv(), ...PATIENT });
      if (!result.ok) {
        throw new CliError(`cannot stop the helper: ${result.reason}`);
      }
      if (options.json) {
        print(
          result.stopped ? { running: false, stopped: true, pid: result.pid, version: result.version } : { running: false, stopped: false },
        );
        return;
      }
      process.stdout.write(result.stopped ? `helper stopped (pid ${result.pid})\n` : 'no helper running\n');
    });

  helper
    .command('status')
    .description('show pid, version, uptime, socket, entries and memory; exit 3 if not running')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Never starts a helper. Exit 0 running, 3 not running, 1 the runtime dir cannot be used or the helper
does not answer.

Examples:
  cursor-resume helper status
  cursor-resume helper status --json | jq '{pid, entries, limits}'
  cursor-resume helper status >/dev/null || cursor-resume helper start`,
    )
    .action(showStatus);

  // `helper` alone shows the status (`helper --json` as `helper status --json`), as `config` alone lists; any other word is a mistake worth naming.
  helper
    .argument('[command]')
    .option('--json', 'alone: helper status --json; before a command: that command with --json')
    .action(async (command: string | undefined, options: { json?: boolean }) => {
      if (command !== undefined)
        throw new UsageError(`unknown helper command ${JSON.stringify(command)}; use start, stop or status (cursor-resume helper --help)`);
      await showStatus(options);
    });

  return passJsonOn(helper);
}

async function showStatus(options: { json?: boolean }): Promise<void> {
  const probe = await probeHelper({ env: findingEnv(), ...PATIENT });
  if (!probe.running) {
    if ('error' in probe) {
      throw new CliError(`cannot reach the helper: ${probe.error}`);
    }
    if (options.json) print({ running: false, socketPath: probe.paths.socket });
    else process.stdout.write(`no helper running (socket ${probe.paths.socket})\n`);
    throw new QuietExit(EXIT_NOT_RUNNING);
  }
  const { pid, version, protocol } = probe.hello;
  const current = version === VERSION && protocol === PROTOCOL_VERSION;
  let stats: StatsReply;
  try {
    stats = await probe.client.stats();
  } catch (error) {
    if (!current) {
      // A helper of another version may not know our stats: say what its hello told.
      if (options.json) print({ running: true, current, pid, version, protocol, socketPath: probe.paths.socket });
      else
        process.stdout.write(
          `helper running: pid ${pid}, version ${version} (protocol ${protocol}); this cursor-resume is ${VERSION}: the next run replaces it\n`,
        );
      return;
    }
    throw new CliError(`the helper (pid ${pid}) did not answer: ${(error as Error).message}`);
  } finally {
    probe.client.close();
  }
  if (options.json) {
    // Points in time as ISO strings, as every --json prints them (README, "--json").
    print({ running: true, current, ...stats, startedAt: new Date(stats.startedAt).toISOString() });
    return;
  }
  process.stdout.write(formatStatus(stats, current));
}

function formatStatus(stats: StatsReply, current: boolean): string {
  // Colour only for people: a terminal (or FORCE_COLOR), and NO_COLOR unset.
  const chalk = paint();
  const note = current ? '' : chalk.yellow(`  (this cursor-resume is ${VERSION}: the next run replaces it)`);
  // Times as inspect shows them (present.ts's span).
  const rows: [string, string][] = [
    ['helper', chalk.green('running')],
    ['pid', String(stats.pid)],
    ['version', `${stats.version} (protocol ${stats.protocol})${note}`],
    ['uptime', span(stats.uptimeMs)],
    ['socket', stats.socketPath],
    ['entries', `${stats.entries} of ${stats.limits.maxEntries} (${plural(stats.anchors, 'anchor')}, ${stats.leases} leased)`],
    ['lifetime', `${span(stats.limits.ttlMs)} per entry`],
    ['idle exit', `after ${span(stats.limits.idleMs)} with no connections and an empty cache`],
    ['connections', String(stats.connections)],
    ['memory', `rss ${mib(stats.memory.rss)}, heap used ${mib(stats.memory.heapUsed)}`],
  ];
  return fields(rows, (label) => chalk.bold(label));
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
