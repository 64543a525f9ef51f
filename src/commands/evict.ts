// `cursor-resume evict <anchor>|--all`: forget conversations, so their next turn
// starts a fresh chat. A short prefix is fine as long as it names one anchor
// (as git refuses an ambiguous short hash); --all drops everything, and no turn
// running now records its chat afterwards.
import type { Command } from 'commander';
import { CliError, UsageError } from '../errors.js';
import { findingEnv } from '../turn/helper-env.js';
import { isSameVersion, PATIENT } from '../helper/client.js';
import { markForgetAllNow, removeMark } from '../helper/forget-marks.js';
import { probeHelper } from '../helper/launcher.js';
import type { RuntimePaths } from '../helper/paths.js';
import { printJson } from '../present.js';
import { plural } from '../plural.js';

/** Shorter prefixes would too easily name several conversations by accident. */
export const MIN_PREFIX = 4;
const ANCHOR_HEX = 32;

export function addEvictCommand(program: Command): Command {
  return program
    .command('evict')
    .description('forget cached conversations: their next turn starts a fresh chat')
    .argument('[anchor]', `an anchor, or a prefix of at least ${MIN_PREFIX} hex characters naming one (see cursor-resume inspect)`)
    .option('--all', 'forget every conversation, and what the turns running now would record')
    .option('--json', 'print one JSON object: running, evicted, and anchor (the one evicted, or null), or with --all, all and marked')
    .addHelpText(
      'after',
      `
Every branch (Cursor chat) of the conversation goes, and a turn of it running now cannot record
its chat back. The chats themselves stay in Cursor; only cursor-resume forgets them. Nothing is
started: with no helper running there is nothing to evict, and --all leaves a mark that keeps a
first turn running now from recording its chat.

Exit status: 0 (also when nothing matched or no helper runs); 1 when the helper cannot be reached
or does not evict (--all then leaves a mark, and the helper forgets every chat when it answers
again or is replaced)
or the runtimeDir setting cannot be used (or --all, with none running, cannot leave its mark);
2 for a bad or ambiguous anchor, or none and no --all, or both.

Examples:
  cursor-resume evict 3f2a9c1e
  cursor-resume evict 3f2a9c1e0b7d44e5a8f1c2b3d4e5f607
  cursor-resume evict --all --json`,
    )
    .action(async (anchor: string | undefined, options: { all?: boolean; json?: boolean }) => {
      const prefix = target(anchor, options.all === true);
      // Once: it says on stderr what it ignores.
      const env = findingEnv();
      let probe = await probeHelper({ env, ...PATIENT });
      let mark: string | null = null;
      if (!probe.running && !('error' in probe) && prefix === null) {
        // Nothing is cached, but a first turn running now records through the helper it starts as it
        // ends: a mark makes that helper refuse it (README, "Chats the caller continues itself").
        try {
          // A helper that began to listen meanwhile took the marks before ours: it is asked instead.
          mark = markForgetAllNow(probe.paths);
          if (mark !== null) probe = await probeHelper({ env, ...PATIENT });
        } catch (error) {
          throw new CliError(
            `no helper running, and a turn running now could not be kept from recording its chat: ${(error as Error).message}`,
          );
        }
      }
      /** For --all that reached no helper that evicted: the mark left (one already, or one now), said as the error's end. */
      const markLeft = (paths: RuntimePaths | undefined): string =>
        prefix === null && (mark !== null || (paths !== undefined && leaveMark(paths))) ? MARK_LEFT : '';
      if (!probe.running) {
        if ('error' in probe) {
          // A helper that does not answer (stopped, stuck) takes the marks when it answers again, and one that
          // replaces it as it starts: with one left, this eviction still happens, with the turns running now.
          throw new CliError(`cannot reach the helper: ${probe.error}${markLeft(probe.paths)}`);
        }
        const marked = mark !== null;
        if (options.json) printJson({ running: false, evicted: 0, ...scope(prefix, null, marked) });
        else
          process.stdout.write(
            `no helper running: nothing is cached, nothing to evict${marked ? '; no turn running now will record its chat' : ''}\n`,
          );
        return;
      }
      try {
        let evicted: number;
        let anchors: string[] = [];
        if (prefix === null) {
          evicted = await probe.client.evict({ all: true });
          // Told directly: the mark is not needed (one of another version does not take marks: left for the next helper).
          if (mark !== null && isSameVersion(probe.hello)) {
            removeMark(mark);
            mark = null;
          }
        } else {
          anchors = [...new Set((await probe.client.list()).map((b) => b.anchor).filter((a) => a.startsWith(prefix)))].sort();
          if (anchors.length > 1) {
            const names = anchors.map((a) => a.slice(0, Math.max(prefix.length + 4, 12))).join(', ');
            throw new UsageError(
              `${prefix} is ambiguous: it begins ${anchors.length} anchors (${names}); give more characters, or use --all`,
            );
          }
          evicted = anchors.length === 0 ? 0 : await probe.client.evict({ anchorPrefix: anchors[0]! });
        }
        if (options.json) {
          printJson({ running: true, evicted, ...scope(prefix, anchors[0] ?? null, mark !== null) });
        } else if (prefix === null) {
          process.stdout.write(`evicted ${plural(evicted, 'branch', 'branches')}: the cache is empty\n`);
        } else if (anchors.length === 0) {
          process.stdout.write(
            `no cached conversation has an anchor beginning ${prefix}: nothing evicted (cursor-resume inspect lists them)\n`,
          );
        } else {
          process.stdout.write(`evicted ${plural(evicted, 'branch', 'branches')} of ${anchors[0]}\n`);
        }
      } catch (error) {
        if (error instanceof CliError) throw error;
        // Greeted, then no count (stalled, gone, nonsense): whether it forgot is unknown, so --all marks as for one that never answered.
        throw new CliError(`the helper (pid ${probe.hello.pid}) did not evict: ${(error as Error).message}${markLeft(probe.paths)}`);
      } finally {
        probe.client.close();
      }
    });
}

const MARK_LEFT =
  '; a mark is left: the helper forgets every chat, and what the turns running now would record, as soon as it answers again or is replaced';

/** Leaves a mark that forgets every chat (forget-marks.ts); whether one could be left. */
function leaveMark(paths: RuntimePaths): boolean {
  try {
    return markForgetAllNow(paths) !== null;
  } catch {
    return false;
  }
}

/** What `--json` says was asked, in one shape with or without a helper: --all and whether a mark is left, or the anchor evicted. */
function scope(prefix: string | null, anchor: string | null, marked: boolean): { all: true; marked: boolean } | { anchor: string | null } {
  return prefix === null ? { all: true, marked } : { anchor };
}

/** The anchor prefix to evict (lowercase), or null for --all. */
function target(anchor: string | undefined, all: boolean): string | null {
  if (all && anchor !== undefined) throw new UsageError('give an anchor or --all, not both');
  if (all) return null;
  if (anchor === undefined) throw new UsageError('evict what? Give an anchor (cursor-resume inspect lists them), or --all');
  const prefix = anchor.trim().toLowerCase();
  // Quoted as JSON: an argument with a line break in it keeps the error on one line.
  const shown = JSON.stringify(anchor);
  if (!/^[0-9a-f]+$/.test(prefix))
    throw new UsageError(`${shown} is not an anchor: anchors are hexadecimal (cursor-resume inspect lists them)`);
  if (prefix.length < MIN_PREFIX) throw new UsageError(`${shown} is too short: give at least ${MIN_PREFIX} characters of the anchor`);
  if (prefix.length > ANCHOR_HEX) throw new UsageError(`${shown} is too long: an anchor has ${ANCHOR_HEX} characters`);
  return prefix;
}
