// Runs cursor-agent once: the prompt on its stdin (then closed: no argv length
// limit), its stdout passed to ours byte for byte as it arrives while the tap reads
// it, its stderr passed on, signals relayed. Spawned with node:child_process
// directly: this is the hot path, and every module loaded costs start-up time.
import { spawn } from 'node:child_process';
import { RELAYED_SIGNALS } from './passthrough.js';
import type { BridgeOffer } from '../resume/bridge-calls.js';
import { endsAtHeldCalls, MAX_TAP_LINE, StreamTap } from './stream-tap.js';

/** How much of cursor-agent's stderr is kept to classify a failure (the tail). */
const STDERR_TAIL = 64 * 1024;
/**
 * How much a resumed run may print before its stream shows which chat answered. Past
 * this the run is stopped unseen, as a resume that cannot be verified (cursor-agent's
 * first line, init, carries the chat ID: a real stream never comes near this).
 */
export const HOLD_LIMIT = 4 * 1024 * 1024;
/**
 * With stdout 'hold', the answer reaches the caller only through the tap (translated to
 * text or json): it must read a result line as long as any a caller could want printed.
 */
export const MAX_HELD_TAP_LINE = 64 * 1024 * 1024;

/**
 * How long cursor-agent gets to end after a relayed signal before it is killed
 * hard: the turn is recorded (or released) only once it has ended, and the caller
 * that sent the signal may send its next request at once.
 */
export const KILL_AFTER_MS = 1000;

export interface AgentRunOptions {
  agent: string;
  argv: string[];
  /** What cursor-agent reads on stdin: the prompt, or a plain-text transcript's own bytes. */
  prompt: string | Uint8Array;
  env: NodeJS.ProcessEnv;
  /** 'stream': pass stdout through live. 'hold': print nothing; the caller prints a translation afterwards. */
  stdout: 'stream' | 'hold';
  /**
   * A resumed chat's ID: output is held until the first event that carries a session_id
   * shows that ID (lines before it, such as a warning, prove nothing). Another ID means
   * cursor silently started a new chat, and no ID within HOLD_LIMIT bytes leaves the
   * chat unknown: either way the run is stopped before anything reaches the caller.
   * With stdout 'hold', stderr is held until the run ends, so that the caller, who
   * decides only then whether to retry the turn, has shown nothing yet.
   */
  expectSession?: string;
  /**
   * Told once, when the stream first shows a tool call or a whole bridge envelope (the tap
   * then holds the chat ID, the reply so far and the calls). Output from that line on waits
   * until the returned promise settles: a caller that ends the run at that tool call and
   * sends the call's result at once must find the cache ready for it.
   */
  onToolCall?: (tap: StreamTap) => Promise<void>;
  /** The bridge envelopes the caller (the OpenCode plugin) turns into tool calls: such a reply is a tool call here too. */
  bridge?: BridgeOffer | null;
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The tail of cursor-agent's stderr. */
  stderr: string;
  tap: StreamTap;
  /** Anything reached our stdout or stderr (a retry would then be visible). */
  wroteOutput: boolean;
  /**
   * Why we stopped the agent ourselves, if we did: it answered as another chat, it
   * printed HOLD_LIMIT bytes without naming its chat, or our reader went away. 'unread':
   * cursor-agent had ended with its output still waiting in our stdout for the caller to take
   * it, and the caller signalled, before that end or since (it has not got the end of the turn).
   */
  stopped: 'session-mismatch' | 'unverified' | 'stdout-closed' | 'unread' | null;
  /**
   * Our caller ended the run: the signal it sent us (relayed to cursor-agent; with 'unread', perhaps
   * sent once cursor-agent had ended), or its reading end of our stdout closed.
   */
  endedByCaller: NodeJS.Signals | 'stdout-closed' | null;
  /** cursor-agent outlived a relayed signal by KILL_AFTER_MS and was killed with SIGKILL. */
  killedHard: boolean;
  /**
   * cursor-agent ended without taking the whole prompt: its stdin closed before all of it was
   * written. Whatever its stream says, its chat never got the messages it was sent. (A prompt that
   * fits in the pipe's buffer is taken whole by the pipe, read or not: only a longer one shows this.)
   */
  promptCut: boolean;
  /** Set when cursor-agent could not be started at all. */
  spawnError?: NodeJS.ErrnoException;
  /**
   * Passes on output still held when the run ended (a resumed run that failed before it
   * named its chat, or the stderr of a translated one). The caller calls it once it has
   * judged the run, or drops the output by not calling it (a retry, a broken resume).
   */
  flushHeld: () => void;
}

export function runAgent(options: AgentRunOptions): Promise<AgentRun> {
  return new Promise((resolve) => {
    const tap = new StreamTap(
      options.stdout === 'hold' ? MAX_HELD_TAP_LINE : MAX_TAP_LINE,
      options.argv.includes('--stream-partial-output'),
      options.bridge ?? null,
    );
    const result: AgentRun = {
      code: null,
      signal: null,
      stderr: '',
      tap,
      wroteOutput: false,
      stopped: null,
      endedByCaller: null,
      killedHard: false,
      promptCut: false,
      flushHeld: () => {},
    };
    let hardKill: NodeJS.Timeout | undefined;
    /** Our stdout is full: cursor-agent's stdout is paused until the caller has read it. */
    let draining = false;
    /** Chunks of cursor-agent's output handed to our stdout and not yet taken by it (the pipe to our caller). */
    let untaken = 0;
    /** Set while the ended run waits for its output to be taken: called once it is, or once the caller gave up on it. */
    let whenTaken: (() => void) | null = null;
    /** The caller's first signal once cursor-agent had exited. */
    let signalAfterExit: NodeJS.Signals | null = null;
    const taken = (): void => {
      const then = whenTaken;
      whenTaken = null;
      then?.();
    };
    /** The caller signalled before it took all of cursor-agent's output: the run ends now, unread. */
    const unread = (signal: NonNullable<AgentRun['endedByCaller']>): void => {
      result.endedByCaller ??= signal;
      result.stopped ??= 'unread';
    };
    const resumed = options.expectSession !== undefined;
    let verified = !resumed;
    let errLive = !resumed;
    let heldOut: Buffer[] = [];
    let heldErr: Buffer[] = [];
    let unverifiedBytes = 0;
    let heldErrBytes = 0;

    const child = spawn(options.agent, options.argv, { env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });

    const running = (): boolean => child.exitCode === null && child.signalCode === null;
    // cursor-agent gets KILL_AFTER_MS to end once we asked it to; what it does longer is unknown.
    // A process it left behind holding its stdout or stderr open (its exit is not their end) gets
    // as long again: the run ends without what that one prints, as its caller asked. Never while
    // cursor-agent's own output waits for the caller to read it (draining).
    const endSoon = (): void => {
      const end = (): void => {
        hardKill = setTimeout(end, KILL_AFTER_MS).unref();
        if (running()) {
          result.killedHard = true;
          child.kill('SIGKILL');
        } else if (!draining) {
          child.stdout.destroy();
          child.stderr.destroy();
        }
      };
      hardKill ??= setTimeout(end, KILL_AFTER_MS).unref();
    };
    const relay = (signal: NodeJS.Signals): void => {
      // Only a signal that found cursor-agent running ended the run; one after its exit says nothing of it,
      // but is not kept waiting on what cursor-agent left holding its pipes open, nor on output the caller
      // has still not read: then the caller never got the end of the turn.
      if (!running()) {
        signalAfterExit ??= signal;
        if (whenTaken !== null) {
          unread(signal);
          taken();
        }
        return endSoon();
      }
      result.endedByCaller ??= signal;
      child.kill(signal);
      endSoon();
    };
    for (const signal of RELAYED_SIGNALS) process.on(signal, relay);

    const writeOut = (chunk: Buffer): void => {
      result.wroteOutput = true;
      untaken += 1;
      const more = process.stdout.write(chunk, (error) => {
        untaken -= 1;
        // Told here before the stream's 'error' event: the run must not end as if this chunk had reached the caller.
        if (error) stop('stdout-closed');
        if (untaken === 0 || error) taken();
      });
      if (!more && !draining) {
        // One wait for 'drain' however many chunks are written meanwhile (held ones come in bursts).
        draining = true;
        child.stdout.pause();
        process.stdout.once('drain', () => {
          draining = false;
          child.stdout.resume();
        });
      }
    };
    const writeErr = (chunk: Buffer): void => {
      result.wroteOutput = true;
      process.stderr.write(chunk);
    };
    const releaseOut = (): void => {
      verified = true;
      for (const chunk of heldOut) writeOut(chunk);
      heldOut = [];
    };
    const releaseErr = (): void => {
      errLive = true;
      for (const chunk of heldErr) writeErr(chunk);
      heldErr = [];
    };
    const stop = (why: AgentRun['stopped']): void => {
      if (result.stopped !== null) return;
      result.stopped = why;
      if (why === 'stdout-closed' && running()) result.endedByCaller ??= why;
      heldOut = [];
      heldErr = [];
      child.kill('SIGTERM');
      endSoon();
    };

    // Output from the first tool_call on, while the cache is told of it.
    let placing: Promise<void> | null = null;
    let placed: Buffer[] | null = null;
    let told = false;
    const onToolCall = options.onToolCall;
    const tell = (): void => {
      if (told || !onToolCall || !endsAtHeldCalls(tap)) return;
      told = true;
      const telling = onToolCall(tap).then(
        () => {},
        () => {},
      );
      placing = telling;
      void telling.then(() => {
        const held = placed;
        placed = null;
        placing = null;
        if (result.stopped === null) for (const chunk of held ?? []) writeOut(chunk);
      });
    };

    if (resumed) {
      const expected = options.expectSession;
      tap.onSession((id) => {
        if (id !== expected) return stop('session-mismatch');
        releaseOut();
        // A streamed run is live from here on; a translated one shows its stderr only once judged.
        if (options.stdout === 'stream') releaseErr();
      });
    }

    // Whatever the error (a reader gone, a full disk), the caller gets no more of this turn (stdout.ts).
    const onStdoutError = (): void => stop('stdout-closed');
    process.stdout.on('error', onStdoutError);

    child.stdout.on('data', (chunk: Buffer) => {
      tap.push(chunk);
      if (result.stopped !== null) return;
      if (verified) {
        if (options.stdout !== 'stream') return;
        tell();
        if (placing !== null) (placed ??= []).push(chunk);
        else writeOut(chunk);
        return;
      }
      if (options.stdout === 'stream') heldOut.push(chunk);
      unverifiedBytes += chunk.length;
      if (unverifiedBytes > HOLD_LIMIT) stop('unverified');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      result.stderr = (result.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      if (result.stopped !== null) return;
      if (errLive) return writeErr(chunk);
      heldErr.push(chunk);
      heldErrBytes += chunk.length;
      // Not held without end: past the limit it goes out, and the turn can no longer be retried unseen.
      if (heldErrBytes > HOLD_LIMIT) releaseErr();
    });

    child.stdin.on('error', () => {
      /* cursor-agent may exit without reading its stdin (a failed login): its exit says why */
    });
    child.stdin.end(options.prompt);

    child.on('error', (error: NodeJS.ErrnoException) => {
      result.spawnError = error;
    });
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      tap.end();
      if (result.stopped === null) {
        result.flushHeld = () => {
          releaseErr();
          releaseOut();
        };
      }
      for (const s of RELAYED_SIGNALS) process.off(s, relay);
      process.stdout.off('error', onStdoutError);
      result.code = code;
      result.signal = signal;
      // The pipe is closed for good once cursor-agent has ended: what was not written by then never will be.
      result.promptCut = !child.stdin.writableFinished;
      resolve(result);
    };
    // The run ends once our stdout has taken all of cursor-agent's output that reached us (a caller
    // that reads slowly), or refused it (a reader gone): a turn is recorded only once its caller has it.
    const afterOutput = (then: () => void): void => {
      if (untaken === 0 || result.stopped !== null) return then();
      // The caller signalled already (while cursor-agent ran, or since it exited): it is not waited for either.
      const signal = result.endedByCaller ?? signalAfterExit;
      if (signal !== null) {
        unread(signal);
        return then();
      }
      whenTaken = then;
    };
    child.on('close', (code, signal) => {
      clearTimeout(hardKill);
      // What waits on the chat's place goes out first, in order.
      if (placing === null) afterOutput(() => finish(code, signal));
      else void placing.then(() => afterOutput(() => finish(code, signal)));
    });
  });
}
