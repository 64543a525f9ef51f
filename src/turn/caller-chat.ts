// A run line that continues a chat itself (--resume ID, --continue, the `resume`
// subcommand, ...) gives that chat turns the cache never sees: a branch of it would
// later be resumed with a delta that skips them. So such a chat is forgotten before the
// run (no turn may resume it while the caller's runs) and again after it (a turn may
// have recorded it meanwhile), with the chat the stream named; the helper then refuses
// any record of it, so that a turn that read it before cannot bring it back. A chat the
// line does not name cannot be told from the others: before the run every branch goes
// (and every chat cached or leased then is refused later), and after it the chat the
// stream named, or again every branch. Where no helper could be told (none runs, one of
// another version, one that does not answer or refuses us), a mark in the runtime dir
// does it (forget-marks.ts): the helper a first turn running now starts takes it as it
// starts, one that replaces a stalled helper too, and a serving helper before it answers a
// lookup or a lease. Only a line that can leave no mark either has to say so in any case.
import type { CallerChat } from '../agent/argv.js';
import type { Settings } from '../config.js';
import { PATIENT, type HelperClient } from '../helper/client.js';
import { markForgetAllNow, removeMark } from '../helper/forget-marks.js';
import { connectHelper } from '../helper/launcher.js';
import type { RuntimePaths } from '../helper/paths.js';
import { isSafeChatId } from '../resume/chat-id.js';
import { plural } from '../plural.js';
import { helperEnv } from './helper-env.js';

export interface ForgetOutcome {
  /** Said whatever --verbose is: the cache may still hold the chat (no helper told, no mark left). */
  failure: string | null;
  /** No helper answered: a mark was left instead. The line's next forget need not wait for one again. */
  unanswered: boolean;
}

/**
 * Forgets `chat` and `seen`, the chat the stream named (undefined when it named none,
 * or several): every branch when neither names one. What was forgotten, or marked, is
 * said with --verbose. `patient`: wait for the helper as a person's command does (PATIENT: a helper
 * that is only slow then forgets the one chat, where a mark would make it drop every branch),
 * else a turn's deadlines.
 */
export async function forgetCallerChat(
  chat: CallerChat,
  seen: unknown,
  settings: Settings,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
  patient = true,
): Promise<ForgetOutcome> {
  // Only a safe ID is ever recorded (README, "Limits"): any other cannot be cached.
  const named = [...new Set([chat.chatId, seen])].filter(isSafeChatId);
  const unnamed = chat.chatId === null && !isSafeChatId(seen);
  const done: ForgetOutcome = { failure: null, unanswered: false };
  if (!unnamed && named.length === 0) return done;
  const what = unnamed ? 'the chat' : `chat ${named.join(', ')}`;
  const connect = () => connectHelper({ start: false, env: helperEnv(settings, env), ...(patient ? PATIENT : {}) });
  const saidMarked = (why: string): void =>
    say(`${why}: a mark was left in its place, for the helper to forget ${what} the caller continued`);
  /** A mark in place of a helper that could not be told; a failure only when none could be left. */
  const marked = (paths: RuntimePaths | undefined, why: string): ForgetOutcome => {
    let left: string | null;
    try {
      left = paths ? markForgetAllNow(paths) : null;
    } catch (error) {
      return {
        failure: `could not make the cache forget ${what} the caller continued itself (${why}), and no mark could be left for it (${(error as Error).message}): a later turn could resume it without the caller's turns; run cursor-resume evict --all once the helper answers`,
        unanswered: true,
      };
    }
    if (left !== null) saidMarked(why);
    return { failure: null, unanswered: true };
  };
  let connected = await connect();
  if (!connected.ok && (connected.code === 'not-running' || connected.code === 'version-mismatch') && connected.paths) {
    // Nothing is cached (a run replaces a helper of another version), but a first turn running now
    // hands its record to a helper it starts as it ends, and its new chat may be the one continued:
    // a mark makes that helper refuse it.
    let mark: string | null;
    try {
      mark = markForgetAllNow(connected.paths);
      if (mark === null) return done;
    } catch (error) {
      return {
        failure: `could not make the cache forget ${what} the caller continued itself (no helper running, and no mark could be left for a turn running now: ${(error as Error).message}): a first turn running now could record it; run cursor-resume evict --all once the turns running now have ended`,
        unanswered: false,
      };
    }
    // A helper that began to listen meanwhile took the marks before ours: it is asked instead, and then
    // the mark goes (at its next sweep it would drop all that turns started by then began there).
    connected = await connect();
    if (!connected.ok) {
      const none = connected.code === 'not-running' || connected.code === 'version-mismatch';
      if (!none) saidMarked(connected.reason);
      return { failure: null, unanswered: !none };
    }
    const told = await tell(connected.client, unnamed, named, what, say);
    if (told === null) {
      removeMark(mark);
      return done;
    }
    saidMarked(`the helper did not forget: ${told}`);
    return { failure: null, unanswered: true };
  }
  if (!connected.ok) {
    // A runtime folder cursor-resume refuses holds no cache, and no run starts a helper there (a run says so
    // only with --verbose too): nothing to forget.
    if (connected.code === 'bad-runtime-dir') {
      say(`nothing to forget: ${connected.reason}`);
      return done;
    }
    return marked(connected.paths, connected.reason);
  }
  const failed = await tell(connected.client, unnamed, named, what, say);
  return failed === null ? done : marked(connected.paths, `the helper did not forget: ${failed}`);
}

/** Asks the helper to forget, and closes the connection: null once it did, else why not. */
async function tell(
  client: HelperClient,
  unnamed: boolean,
  named: ReadonlyArray<string>,
  what: string,
  say: (line: string) => void,
): Promise<string | null> {
  try {
    let evicted = 0;
    if (unnamed) evicted = await client.evict({ all: true });
    else for (const chatId of named) evicted += await client.evict({ chatId });
    const which = unnamed ? 'a chat it did not name: every conversation' : what;
    if (evicted > 0) say(`the caller continued ${which} forgotten (${plural(evicted, 'branch', 'branches')})`);
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.close();
  }
}
