// What the cache says about a turn, found one way for a run, a dry run and
// `inspect --transcript`: a run may start the helper and its lookup counts as a
// use; the other two start nothing and peek (no LRU touch, no expiry), yet plan as
// the run after them will. `branches` is null when the cache could not be used.
import type { MatchedBranch } from '../cache/types.js';
import type { HelperClient, TurnRecord } from '../helper/client.js';
import { connectHelper, handOffRecord, holdHelper, underSettings, type HeldHelper } from '../helper/launcher.js';
import { runtimeDirId } from '../helper/paths.js';
import type { Analysis } from '../resume/decide.js';
import { helperEnv } from './helper-env.js';
import { cacheUse, type TurnContext } from './plan.js';

export type CacheState = 'running' | 'not-running' | 'other-version' | 'stuck' | 'unreachable' | 'not-asked';

export interface CacheView {
  state: CacheState;
  /** One line for people: what was found, or why the cache was not used. */
  note: string;
  branches: MatchedBranch[] | null;
  /** The run replaced a helper (stopped or stuck, or of another version), whose cache went with it: the note says so. */
  replaced: boolean;
  /** A run's open connection, for the lease and the record; the caller closes it. */
  client: HelperClient | null;
  /** No helper ran (its cache would be empty anyway): how a run starts one (the held one, if any) and waits for it, once the turn needs it mid-way. */
  reconnect: ((held: HeldHelper | null) => Promise<HelperClient | null>) | null;
  /** With `reconnect`: how a run holds a helper's start ready while cursor-agent runs (null if it cannot), for `handOff`. */
  hold: (() => HeldHelper | null) | null;
  /** With `reconnect`: how a run that never needed the helper mid-way starts one with its record (the held one, if any), without waiting for it. */
  handOff: ((record: TurnRecord, held: HeldHelper | null) => string) | null;
}

const view = (state: CacheState, note: string, branches: MatchedBranch[] | null, client: HelperClient | null = null): CacheView => ({
  state,
  note,
  branches,
  client,
  replaced: false,
  reconnect: null,
  hold: null,
  handOff: null,
});

/**
 * `mode` 'run' starts (or replaces) the helper when needed and looks up for real;
 * 'peek' starts nothing: with no helper, or one a run would replace, the cache is
 * empty, as that run would find it.
 */
export async function viewCache(
  analysis: Analysis,
  context: TurnContext,
  options: { mode: 'run' | 'peek'; runtimeDirIgnored: boolean },
): Promise<CacheView> {
  const use = cacheUse(analysis, context);
  if (!use.asked) return view('not-asked', `not consulted: ${use.why}`, []);
  if (options.runtimeDirIgnored) return view('unreachable', 'the runtimeDir setting is not usable (see the warning above)', null);
  const env = helperEnv(context.settings, context.env);
  const run = options.mode === 'run';
  // With no helper, a run starts one only when it needs it, at its end: a new helper's cache is empty.
  const connected = await connectHelper({ start: run, defer: run, env });
  if (!connected.ok) {
    if (connected.code === 'deferred') {
      // The folder as the turn began (the connect made it if need be): records go into that one only.
      const dirId = connected.paths ? runtimeDirId(connected.paths.dir) : undefined;
      const sameDir = dirId !== undefined ? { runtimeDirId: dirId } : {};
      const reconnect = async (held: HeldHelper | null): Promise<HelperClient | null> => {
        const again = await connectHelper({ start: true, env, held, ...sameDir });
        return again.ok ? again.client : null;
      };
      const hold = (): HeldHelper | null => holdHelper({ env });
      const handOff = (record: TurnRecord, held: HeldHelper | null): string => {
        const handed = handOffRecord(record, { env, held, ...sameDir });
        return handed.ok
          ? `handed chat ${record.chatId} to a new helper for ${handed.socket} (not waited for)`
          : `not recorded: ${handed.reason}`;
      };
      return { ...view('not-running', `${connected.reason}; planning on an empty cache`, []), reconnect, hold, handOff };
    }
    if (connected.code === 'not-running') return view('not-running', 'no helper running: empty cache (a run would start one)', []);
    if (connected.code === 'version-mismatch') {
      return view('other-version', `${connected.reason}: a run replaces it and starts with an empty cache`, []);
    }
    if (connected.code === 'stuck') return view('stuck', `${connected.reason}; a run does so and starts with an empty cache`, []);
    return view('unreachable', `the helper cannot be reached: ${connected.reason}`, null);
  }
  const { client, server, replaced } = connected;
  // The cache a run found empty was lost with the helper it replaced.
  const lost =
    replaced === 'stuck'
      ? 'replaced a helper that did not answer (stopped or stuck), and its cache with it; '
      : replaced === 'another-version'
        ? 'replaced a helper of another version, and its cache with it; '
        : '';
  try {
    const branches = run
      ? await client.lookup(use.anchor, analysis)
      : await underSettings(client, await client.peek(use.anchor, analysis), server, env);
    const note = `${lost}helper pid ${server.pid}: ${branches.length} ${branches.length === 1 ? 'branch' : 'branches'} for this anchor`;
    if (run) return { ...view('running', note, branches, client), replaced: lost !== '' };
    client.close();
    return view('running', note, branches);
  } catch (error) {
    client.close();
    return view('unreachable', `the helper did not answer the lookup: ${(error as Error).message}`, null);
  }
}
