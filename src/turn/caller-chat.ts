// A run line that continues a chat itself (--resume ID, --continue, the `resume`
// subcommand, ...) gives that chat turns the cache never sees: a branch of it would
// later be resumed with a delta that skips them. So such a chat is forgotten before the
// run (no turn may resume it while the caller's runs) and again after it (a turn may
// have recorded it meanwhile), with the chat the stream named; the helper then refuses
// any record of it, so that a turn that read it before cannot bring it back. A chat the
// line does not name cannot be told from the others: before the run every branch goes
// (and every chat cached or leased then is refused later), and after it the chat the
// stream named, or again every branch. With no helper running nothing is cached, and a
// mark in the runtime dir reaches the helper a first turn running now starts
// (forget-marks.ts), as it does one that replaces a helper that does not answer; one that
// runs but cannot forget is said in any case.
import type { CallerChat } from '../agent/argv.js';
import type { Settings } from '../config.js';
import { markForgetAllNow, removeMark } from '../helper/forget-marks.js';
import { connectHelper } from '../helper/launcher.js';
import { isSafeChatId } from '../resume/chat-id.js';
import { plural } from '../present.js';
import { helperEnv } from './helper-env.js';

/**
 * The deadlines of a forget, longer than a turn's (250 ms to connect, 500 to answer): a turn
 * that gives up on a slow helper only misses a resume, a forget that does lets one resume wrongly.
 */
const FORGET_PATIENCE = { connectTimeoutMs: 1_000, requestTimeoutMs: 3_000 };

/**
 * Forgets `chat` and `seen`, the chat the stream named (undefined when it named none,
 * or several): every branch when neither names one. Best-effort: what was forgotten is
 * said with --verbose; a helper that is running but could not forget is returned, to be
 * said whatever --verbose is (a later turn could resume the chat without the caller's turns).
 */
export async function forgetCallerChat(
  chat: CallerChat,
  seen: unknown,
  settings: Settings,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<string | null> {
  // Only a safe ID is ever recorded (README, "Limits"): any other cannot be cached.
  const named = [...new Set([chat.chatId, seen])].filter(isSafeChatId);
  const unnamed = chat.chatId === null && !isSafeChatId(seen);
  if (!unnamed && named.length === 0) return null;
  const failed = (why: string, when = 'the helper answers'): string =>
    `could not make the cache forget ${unnamed ? 'the chat' : `chat ${named.join(', ')}`} the caller continued itself (${why}): a later turn could resume it without the caller's turns; run cursor-resume evict --all once ${when}`;
  // Patient: what a helper that is only slow (a loaded machine) still caches of the chat would be resumed.
  let connected = await connectHelper({ start: false, env: helperEnv(settings, env), ...FORGET_PATIENCE });
  let mark: string | null = null;
  if (
    !connected.ok &&
    (connected.code === 'not-running' || connected.code === 'version-mismatch' || connected.code === 'stuck') &&
    connected.paths
  ) {
    // Nothing is cached (a run replaces a helper of another version, or one that does not answer), but a
    // first turn running now hands its record to a helper it starts as it ends, and its new chat may be
    // the one continued: a mark makes that helper refuse it (and a stuck one forget, at its next sweep).
    try {
      mark = markForgetAllNow(connected.paths);
      if (mark === null) return null;
    } catch (error) {
      return failed(
        `no helper running, and no mark could be left for a turn running now: ${(error as Error).message}`,
        'the turns running now have ended',
      );
    }
    if (connected.code === 'stuck') return failed(`${connected.reason}; a mark was left for the helper that replaces it`);
    // A helper that began to listen meanwhile took the marks before ours: it is asked instead, and then
    // the mark goes (at its next sweep it would drop all that turns started by then began there).
    connected = await connectHelper({ start: false, env: helperEnv(settings, env), ...FORGET_PATIENCE });
    if (!connected.ok && (connected.code === 'not-running' || connected.code === 'version-mismatch')) return null;
  }
  if (!connected.ok) {
    // A runtime folder cursor-resume refuses holds no cache, and no run starts a helper there (a run says so
    // only with --verbose too): nothing to forget.
    if (connected.code === 'bad-runtime-dir') {
      say(`nothing to forget: ${connected.reason}`);
      return null;
    }
    return failed(connected.reason);
  }
  const { client } = connected;
  try {
    let evicted = 0;
    if (unnamed) evicted = await client.evict({ all: true });
    else for (const chatId of named) evicted += await client.evict({ chatId });
    const which = unnamed ? 'a chat it did not name: every conversation' : `chat ${named.join(', ')}`;
    if (evicted > 0) say(`the caller continued ${which} forgotten (${plural(evicted, 'branch', 'branches')})`);
    if (mark !== null) removeMark(mark);
    return null;
  } catch (error) {
    return failed((error as Error).message);
  } finally {
    client.close();
  }
}
