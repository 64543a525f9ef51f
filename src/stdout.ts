// The one way every command treats a stdout that takes no more output. A reader that
// went away (`| head`, a caller that closed its pipe): nothing more is written, no stack
// trace, and the process exits with the status a process killed by SIGPIPE reports, as a
// pipeline expects. Any other write error (a full disk, /dev/full, EIO) ends the output
// alike, but is said once on stderr and exits 1: the output is lost, not refused.
import { signalExit } from './agent/passthrough.js';

export const EXIT_STDOUT_CLOSED = signalExit('SIGPIPE');

// Kept on process.stdout itself, not in this module: program.js, loaded beside cli.cjs, has its
// own copy of it. (The stream's own `errored` is cleared once its 'error' event is emitted.)
const REFUSAL = Symbol.for('cursor-resume.stdout-refusal');
type Marked = { [REFUSAL]?: NodeJS.ErrnoException };
const refusal = (): NodeJS.ErrnoException | undefined => (process.stdout as Marked)[REFUSAL];

const readerGone = (error: NodeJS.ErrnoException): boolean => error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED';

/** The exit status once stdout took no more output: SIGPIPE's for a reader gone, 1 for a failed write. */
export function closedStdoutExit(): number {
  const error = refusal();
  return error !== undefined && !readerGone(error) ? 1 : EXIT_STDOUT_CLOSED;
}

/** The first write stdout refused ends it; one that is not a reader gone is said (a write's callback sees it before the 'error' event). */
function refused(error: NodeJS.ErrnoException): void {
  if (refusal() !== undefined) return;
  (process.stdout as Marked)[REFUSAL] = error;
  if (!readerGone(error))
    process.stderr.write(`cursor-resume: cannot write to stdout (${error.message}): the rest of the output is lost\n`);
}

/**
 * Called once at start: a write stdout refuses then ends stdout instead of throwing
 * from an 'error' event nobody listens to. A closed stderr only loses what is written to
 * it (cursor-agent's warnings, our messages): the turn goes on and its answer still
 * reaches stdout, as with cursor-agent itself.
 */
export function watchOutputs(): void {
  process.stdout.on('error', refused);
  process.stderr.on('error', () => {
    // Nowhere left to say anything: the turn goes on without its messages.
  });
}

/** Writes our own output to stdout; false when stdout takes no more. */
export function writeStdout(text: string): Promise<boolean> {
  if (refusal() !== undefined) return Promise.resolve(false);
  return new Promise((resolve) => {
    process.stdout.write(text, (error) => {
      if (error) refused(error);
      resolve(!error);
    });
  });
}
