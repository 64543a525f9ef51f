// The one way every command treats a reader that went away (`| head`, a caller that
// closed its pipe): nothing more is written, no stack trace, and the process exits
// with the status a process killed by SIGPIPE reports, as a pipeline expects.
import { signalExit } from './agent/passthrough.js';

export const EXIT_STDOUT_CLOSED = signalExit('SIGPIPE');

let closed = false;

/** Whether stdout's reader has gone away (an EPIPE seen on a write). */
export const stdoutClosed = (): boolean => closed;

const readerGone = (error: NodeJS.ErrnoException): boolean => error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';

/**
 * Called once at start: a write to a closed stdout then marks it closed instead of
 * throwing from an 'error' event nobody listens to. A closed stderr only loses what
 * is written to it (cursor-agent's warnings, our messages): the turn goes on and its
 * answer still reaches stdout, as with cursor-agent itself.
 */
export function watchOutputs(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (!readerGone(error)) throw error;
    closed = true;
  });
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (!readerGone(error)) throw error;
  });
}

/** Writes our own output to stdout; false when the reader has gone away. */
export function writeStdout(text: string): Promise<boolean> {
  if (closed) return Promise.resolve(false);
  return new Promise((resolve) => {
    process.stdout.write(text, (error) => resolve(!error));
  });
}
