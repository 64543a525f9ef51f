// Runs cursor-agent once: the prompt on its stdin (then closed: no argv length
// limit), its stdout passed to ours byte for byte as it arrives while the tap reads
// it, its stderr passed on, signals relayed. Spawned with node:child_process
// directly: this is the hot path, and every module loaded costs start-up time.
import { spawn } from 'node:child_process';
import { MAX_TAP_LINE, StreamTap } from './stream-tap.js';

/** How much of cursor-agent's stderr is kept to classify a failure (the tail). */
const STDERR_TAIL = 64 * 1024;
/** How much output is held while a resumed chat's identity is being checked. */
const HOLD_LIMIT = 4 * 1024 * 1024;
/**
 * With stdout 'hold', the answer reaches the caller only through the tap (translated to
 * text or json): it must read a result line as long as any a caller could want printed.
 */
export const MAX_HELD_TAP_LINE = 64 * 1024 * 1024;

export interface AgentRunOptions {
  agent: string;
  argv: string[];
  /** What cursor-agent reads on stdin: the prompt, or a plain-text transcript's own bytes. */
  prompt: string | Uint8Array;
  env: NodeJS.ProcessEnv;
  /** 'stream': pass stdout through live. 'hold': print nothing; the caller prints a translation afterwards. */
  stdout: 'stream' | 'hold';
  /**
   * A resumed chat's ID: output is held until the stream's first line shows that
   * session_id. Another ID means cursor silently started a new chat: the run is
   * stopped before anything reaches the caller.
   */
  expectSession?: string;
}

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The tail of cursor-agent's stderr. */
  stderr: string;
  tap: StreamTap;
  /** Anything reached our stdout or stderr (a retry would then be visible). */
  wroteOutput: boolean;
  /** Why we stopped the agent ourselves, if we did. */
  stopped: 'session-mismatch' | 'stdout-closed' | null;
  /** Set when cursor-agent could not be started at all. */
  spawnError?: NodeJS.ErrnoException;
  /**
   * Output still held when the run ended (a resumed run that failed before its first
   * line). The caller passes it on, or drops it when it retries the turn as a fresh chat.
   */
  flushHeld: () => void;
}

const RELAYED_SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function runAgent(options: AgentRunOptions): Promise<AgentRun> {
  return new Promise((resolve) => {
    const tap = new StreamTap(options.stdout === 'hold' ? MAX_HELD_TAP_LINE : MAX_TAP_LINE);
    const result: AgentRun = { code: null, signal: null, stderr: '', tap, wroteOutput: false, stopped: null, flushHeld: () => {} };
    let verified = options.expectSession === undefined;
    let heldOut: Buffer[] = [];
    let heldErr: Buffer[] = [];
    let heldBytes = 0;

    const child = spawn(options.agent, options.argv, { env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });

    const relay = (signal: NodeJS.Signals): void => {
      child.kill(signal);
    };
    for (const signal of RELAYED_SIGNALS) process.on(signal, relay);

    const writeOut = (chunk: Buffer): void => {
      result.wroteOutput = true;
      if (!process.stdout.write(chunk)) {
        child.stdout.pause();
        process.stdout.once('drain', () => child.stdout.resume());
      }
    };
    const writeErr = (chunk: Buffer): void => {
      result.wroteOutput = true;
      process.stderr.write(chunk);
    };
    const release = (): void => {
      verified = true;
      for (const chunk of heldErr) writeErr(chunk);
      if (options.stdout === 'stream') for (const chunk of heldOut) writeOut(chunk);
      heldOut = [];
      heldErr = [];
    };
    const stop = (why: AgentRun['stopped']): void => {
      if (result.stopped !== null) return;
      result.stopped = why;
      heldOut = [];
      heldErr = [];
      child.kill('SIGTERM');
    };

    if (options.expectSession !== undefined) {
      const expected = options.expectSession;
      tap.onFirstLine((line) => {
        if (line === undefined) return; // the stream ended without a line: the caller decides
        let sessionId: unknown;
        try {
          sessionId = line ? (JSON.parse(line) as { session_id?: unknown }).session_id : undefined;
        } catch {
          sessionId = undefined;
        }
        // A first line without a session ID proves nothing either way: let it through;
        // the whole stream is checked again when the run ends.
        if (sessionId !== undefined && sessionId !== expected) stop('session-mismatch');
        else release();
      });
    }

    const onStdoutError = (error: NodeJS.ErrnoException): void => {
      if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') stop('stdout-closed');
    };
    process.stdout.on('error', onStdoutError);

    child.stdout.on('data', (chunk: Buffer) => {
      tap.push(chunk);
      if (result.stopped !== null || options.stdout === 'hold') return;
      if (verified) writeOut(chunk);
      else hold(heldOut, chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      result.stderr = (result.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
      if (result.stopped !== null) return;
      if (verified) writeErr(chunk);
      else hold(heldErr, chunk);
    });
    function hold(into: Buffer[], chunk: Buffer): void {
      into.push(chunk);
      heldBytes += chunk.length;
      // Cannot verify within a sane amount of output: stop holding rather than buffer without end.
      if (heldBytes > HOLD_LIMIT) release();
    }

    child.stdin.on('error', () => {
      /* cursor-agent may exit without reading its stdin (a failed login): its exit says why */
    });
    child.stdin.end(options.prompt);

    child.on('error', (error: NodeJS.ErrnoException) => {
      result.spawnError = error;
    });
    child.on('close', (code, signal) => {
      tap.end();
      if (result.stopped === null && !verified) result.flushHeld = release;
      for (const s of RELAYED_SIGNALS) process.off(s, relay);
      process.stdout.off('error', onStdoutError);
      result.code = code;
      result.signal = signal;
      resolve(result);
    });
  });
}
