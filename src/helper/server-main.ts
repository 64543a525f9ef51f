// Entry of the helper daemon (bundled to dist/helper/helper-server.js and started
// detached by the launcher). Exits 0 when it served and stopped, or when another
// helper already answers; 1 when it could not start. Its stdout and stderr are
// ignored; a pipe on its stdin brings the record of the turn whose run started it
// (hand-off.ts), delivered once a helper answers. It writes nothing to disk but its
// socket, for a moment the start lock, and, once it forgot chats, a note of when
// (forget-marks.ts); it removes the marks it takes.
import fs from 'node:fs';
import { tuneHelperHeap } from './heap.js';
import { deliverHandOff, HAND_OFF_MARKER_ENV, parseHandOff, removeMarker, type HandOff } from './hand-off.js';
import { runtimePaths, type RuntimePaths } from './paths.js';
import { connectionIdleFromEnv, settingsFromEnv, startHelperServer } from './server.js';
import type { HelperServer } from './server.js';

tuneHelperHeap();
// Everything it creates (socket, lock) is for this user only.
process.umask(0o077);
// Hold no directory busy (an unmounted workspace, a deleted checkout).
try {
  process.chdir('/');
} catch {
  // stay where we are
}

let server: HelperServer | undefined;
let exitCode = 0;

async function stop(code: number): Promise<never> {
  exitCode = Math.max(exitCode, code);
  try {
    await server?.close('signal');
  } finally {
    process.exit(exitCode);
  }
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => void stop(0));
process.on('uncaughtException', () => void stop(1));
process.on('unhandledRejection', () => void stop(1));
// A detached helper has no terminal; writes to a closed stdio must not kill it.
process.stdout.on?.('error', () => {});
process.stderr.on?.('error', () => {});

/** The record a run handed us on a pipe (Node's are socket pairs), read while we start; none on /dev/null (`helper start`) or a terminal. */
function readHandOff(): Promise<HandOff | undefined> {
  try {
    const stdin = fs.fstatSync(0);
    if (!stdin.isFIFO() && !stdin.isSocket()) return Promise.resolve(undefined);
  } catch {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const stdin = fs.createReadStream('', { fd: 0 });
    stdin.on('data', (chunk) => chunks.push(chunk as Buffer));
    stdin.once('error', () => resolve(undefined));
    stdin.once('end', () => resolve(parseHandOff(Buffer.concat(chunks).toString('utf8'))));
  });
}

// No top-level await: the bundle is CommonJS, which starts faster (see scripts/build.mjs).
void (async () => {
  const marker = process.env[HAND_OFF_MARKER_ENV];
  const handed = readHandOff();
  let paths: RuntimePaths | undefined;
  try {
    // The launcher names the runtime dir it resolved, absolute: we run from `/`, it from anywhere.
    paths = runtimePaths(process.env);
    const result = await startHelperServer({
      paths,
      settings: settingsFromEnv(process.env),
      connectionIdleMs: connectionIdleFromEnv(process.env),
      onExit: () => process.exit(exitCode),
    });
    if (result.started) server = result.server;
    const handOff = await handed;
    // A record that cannot land (or never came whole: its run was killed writing it) is lost, and the
    // next turn of that conversation runs fresh: nothing wrong is cached.
    if (handOff) await deliverHandOff(handOff, paths).catch(() => {});
    if (marker !== undefined) removeMarker(paths, marker);
    if (!result.started) process.exit(0);
  } catch (error) {
    await handed;
    if (marker !== undefined && paths) removeMarker(paths, marker);
    // Visible only when run by hand: the launcher ignores our stdio and reports its own reason.
    process.stderr.write(`cursor-resume helper: ${(error as Error).message}\n`);
    process.exit(1);
  }
})();
