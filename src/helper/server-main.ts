// Entry of the helper daemon (bundled to dist/helper/helper-server.js and started
// detached by the launcher). Exits 0 when it served and stopped, or when another
// helper already answers; 1 when it could not start. Its stdio is ignored and it
// writes nothing to disk but its socket and, for a moment, the start lock.
import { tuneHelperHeap } from './heap.js';
import { runtimePaths } from './paths.js';
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

// No top-level await: the bundle is CommonJS, which starts faster (see scripts/build.mjs).
void (async () => {
  try {
    const result = await startHelperServer({
      // The launcher names the runtime dir it resolved, absolute: we run from `/`, it from anywhere.
      paths: runtimePaths(process.env),
      settings: settingsFromEnv(process.env),
      connectionIdleMs: connectionIdleFromEnv(process.env),
      onExit: () => process.exit(exitCode),
    });
    if (!result.started) process.exit(0);
    server = result.server;
  } catch (error) {
    // Visible only when run by hand: the launcher ignores our stdio and reports its own reason.
    process.stderr.write(`cursor-resume helper: ${(error as Error).message}\n`);
    process.exit(1);
  }
})();
