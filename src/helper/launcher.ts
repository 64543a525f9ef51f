// Finding the helper, starting it when asked, and replacing one of another
// version (so an upgrade never talks to an old daemon). Never throws: the caller
// gets a client, or a reason it can show with --verbose before going on without
// the cache.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { HelperClient, HelperError, isSameVersion } from './client.js';
import type { ClientOptions } from './client.js';
import { checkRuntimeDir, ensureRuntimeDir, runtimePaths, socketRefusal } from './paths.js';
import type { RuntimePaths } from './paths.js';
import { PROTOCOL_VERSION } from './protocol.js';
import type { HelloReply } from './protocol.js';
import { VERSION } from '../version.js';

export const DEFAULT_START_TIMEOUT_MS = 2000;
/** How long a helper asked to shut down gets to let go of its socket. */
const STOP_TIMEOUT_MS = 1500;
/**
 * How often a run that started the helper looks for its socket. A failed attempt
 * costs a fraction of a millisecond; polling this often rather than backing off
 * means the turn goes on within 5 ms of the helper being ready (backing off from
 * 10 ms to 50 ms overshot a 60 ms start by up to 50 ms).
 */
const START_POLL_MS = 5;
/**
 * The helper is a long-lived, mostly idle process holding a few MB of hashes. Young
 * generation semi-spaces of 2 MB (instead of up to 16 MB) keep its garbage, and so
 * its resident memory, small: 64 branches of 10,000 messages take 88 MB of RSS
 * instead of 128, at the same CPU per request (1 MB cost 15% more). Any V8 flag
 * makes Node start a few ms slower (its built-in code cache no longer applies).
 */
const HELPER_NODE_FLAGS = ['--max-semi-space-size=2'];

/**
 * The helper makes no TLS connection, so it need not read NODE_EXTRA_CA_CERTS: Node
 * parses that file as it starts (45 ms for a 220 KB bundle on the benchmark machine),
 * and a run that starts the helper waits for it.
 */
function withoutCaCerts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.NODE_EXTRA_CA_CERTS === undefined) return env;
  const { NODE_EXTRA_CA_CERTS: _certs, ...rest } = env;
  return rest;
}

export interface ConnectHelperOptions extends ClientOptions {
  /** Start a helper if none answers (and replace one of another version). */
  start: boolean;
  /** Where CURSOR_RESUME_RUNTIME_DIR & co. come from, and the helper's environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The helper program (default: dist/helper/helper-server.js beside this bundle). Tests point it elsewhere. */
  serverScript?: string | URL;
  /** How long to wait for a started helper to answer. */
  startTimeoutMs?: number;
}

export type ConnectFailure =
  /** The runtime dir is unusable (symlink, foreign owner, path too long, ...). */
  | 'bad-runtime-dir'
  /** Nothing answers and `start` was false. */
  | 'not-running'
  /** A helper of another version answers and `start` was false, or another version keeps coming back. */
  | 'version-mismatch'
  | 'start-failed'
  /** A helper is there but did not answer in time, or refused us. */
  | 'unavailable';

export type ConnectHelperResult =
  | { ok: true; client: HelperClient; server: HelloReply; paths: RuntimePaths; started: boolean; replaced: boolean }
  | { ok: false; code: ConnectFailure; reason: string; paths?: RuntimePaths };

type Attempt =
  | { kind: 'ok'; client: HelperClient; hello: HelloReply }
  | { kind: 'mismatch'; client: HelperClient; hello: HelloReply }
  | { kind: 'absent' }
  | { kind: 'error'; error: HelperError };

/** Connects to the helper, starting or replacing it when `start` is set. */
export async function connectHelper(options: ConnectHelperOptions): Promise<ConnectHelperResult> {
  const env = options.env ?? process.env;
  let paths: RuntimePaths;
  try {
    paths = runtimePaths(env);
    if (options.start) ensureRuntimeDir(paths);
    else if (checkRuntimeDir(paths) === 'missing') return { ok: false, code: 'not-running', reason: `no helper is running (no runtime dir ${paths.dir})`, paths };
  } catch (error) {
    return { ok: false, code: 'bad-runtime-dir', reason: (error as Error).message };
  }

  let replaced = false;
  const first = await attempt(paths, options);
  if (first.kind === 'ok') return { ok: true, client: first.client, server: first.hello, paths, started: false, replaced };
  if (first.kind === 'mismatch') {
    if (!options.start) {
      first.client.close();
      return { ok: false, code: 'version-mismatch', reason: mismatchReason(first.hello), paths };
    }
    const stopped = await stopAndWait(first.client, paths, options);
    if (!stopped) return { ok: false, code: 'unavailable', reason: `${mismatchReason(first.hello)}, and it did not stop when asked`, paths };
    replaced = true;
  } else if (first.kind === 'absent') {
    if (!options.start) return { ok: false, code: 'not-running', reason: `no helper is running (nothing answers at ${paths.socket})`, paths };
  } else if (!options.start || first.error.code !== 'timeout') {
    // A helper that refuses us (too many connections, ...) or a socket we may not use: starting another would not help.
    return { ok: false, code: 'unavailable', reason: first.error.message, paths };
  }
  // Nothing answers, or a wedged helper (timeout): a new one replaces it after probing it.

  const scriptPath = serverScriptPath(options.serverScript);
  if (!fs.existsSync(scriptPath)) {
    return { ok: false, code: 'start-failed', reason: `the helper program is missing at ${scriptPath}; reinstall cursor-resume (or run npm run build)`, paths };
  }
  let exitCode: number | null | undefined;
  let spawnError: Error | undefined;
  try {
    // Detached in its own session with no stdio: it must not hold the caller's terminal or pipes.
    const child = spawn(process.execPath, [...HELPER_NODE_FLAGS, scriptPath], { detached: true, stdio: 'ignore', cwd: '/', env: withoutCaCerts(env) });
    child.once('error', (error) => (spawnError = error));
    child.once('exit', (code) => (exitCode = code));
    child.unref();
  } catch (error) {
    return { ok: false, code: 'start-failed', reason: `cannot start the helper: ${(error as Error).message}`, paths };
  }

  const deadline = performance.now() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  let last: Attempt = first;
  for (;;) {
    await sleep(START_POLL_MS);
    last = await attempt(paths, options);
    if (last.kind === 'ok') return { ok: true, client: last.client, server: last.hello, paths, started: true, replaced };
    if (last.kind === 'mismatch') {
      // Another installation started its own helper meanwhile; do not fight over the socket.
      last.client.close();
      return { ok: false, code: 'version-mismatch', reason: `${mismatchReason(last.hello)} (started by another installation just now)`, paths };
    }
    if (last.kind === 'error' && last.error.code !== 'timeout') return { ok: false, code: 'unavailable', reason: last.error.message, paths };
    if (spawnError) return { ok: false, code: 'start-failed', reason: `cannot start the helper: ${spawnError.message}`, paths };
    if (exitCode !== undefined && exitCode !== 0 && last.kind === 'absent') {
      return { ok: false, code: 'start-failed', reason: `the helper exited with status ${exitCode} while starting; run \`${process.execPath} ${scriptPath}\` to see its message`, paths };
    }
    if (performance.now() > deadline) break;
  }
  const why = last.kind === 'error' ? `: ${last.error.message}` : '';
  return { ok: false, code: 'start-failed', reason: `the helper did not answer within ${options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS} ms of starting${why}`, paths };
}

export type ProbeResult =
  | { running: true; client: HelperClient; hello: HelloReply; paths: RuntimePaths }
  | { running: false; paths: RuntimePaths }
  | { running: false; error: string; paths?: RuntimePaths };

/** Connects to whatever helper runs, whatever its version, starting nothing and creating no folder. */
export async function probeHelper(options: { env?: NodeJS.ProcessEnv } & ClientOptions = {}): Promise<ProbeResult> {
  let paths: RuntimePaths;
  try {
    paths = runtimePaths(options.env ?? process.env);
    if (checkRuntimeDir(paths) === 'missing') return { running: false, paths };
  } catch (error) {
    return { running: false, error: (error as Error).message };
  }
  const found = await attempt(paths, options);
  if (found.kind === 'absent') return { running: false, paths };
  if (found.kind === 'error') return { running: false, error: found.error.message, paths };
  return { running: true, client: found.client, hello: found.hello, paths };
}

export type StopResult =
  | { ok: true; stopped: false; paths: RuntimePaths }
  | { ok: true; stopped: true; pid: number; version: string; paths: RuntimePaths }
  | { ok: false; reason: string };

/** Stops the running helper of any version; none running is not an error. */
export async function stopHelper(options: { env?: NodeJS.ProcessEnv } & ClientOptions = {}): Promise<StopResult> {
  const probe = await probeHelper(options);
  if (!probe.running) return 'error' in probe ? { ok: false, reason: probe.error } : { ok: true, stopped: false, paths: probe.paths };
  const { pid, version } = probe.hello;
  if (!(await stopAndWait(probe.client, probe.paths, options))) {
    return { ok: false, reason: `the helper (pid ${pid}) did not stop when asked; send it SIGTERM: kill ${pid}` };
  }
  return { ok: true, stopped: true, pid, version, paths: probe.paths };
}

/**
 * The helper program: dist/helper/ beside this bundle (cli.cjs and program.js both
 * live in dist/), or, when this module runs from source (tsx: tests, development),
 * the built one.
 */
function serverScriptPath(explicit: string | URL | undefined): string {
  if (explicit !== undefined) return explicit instanceof URL ? fileURLToPath(explicit) : explicit;
  const bundled = fileURLToPath(new URL('./helper/helper-server.js', import.meta.url));
  if (fs.existsSync(bundled) || !import.meta.url.endsWith('/src/helper/launcher.ts')) return bundled;
  return fileURLToPath(new URL('../../dist/helper/helper-server.js', import.meta.url));
}

/** Connects and says hello without judging the version. */
async function attempt(paths: RuntimePaths, options: ClientOptions): Promise<Attempt> {
  const refusal = socketRefusal(paths);
  if (refusal !== undefined) return { kind: 'error', error: new HelperError('bad-socket', refusal) };
  let client: HelperClient;
  try {
    client = await HelperClient.connect(paths.socket, options);
  } catch (error) {
    const helperError = asHelperError(error);
    return helperError.code === 'not-running' ? { kind: 'absent' } : { kind: 'error', error: helperError };
  }
  try {
    const hello = await client.hello(false);
    return isSameVersion(hello) ? { kind: 'ok', client, hello } : { kind: 'mismatch', client, hello };
  } catch (error) {
    client.close();
    const helperError = asHelperError(error);
    // Connected, then closed at once: a helper on its way out. Treat it as gone.
    return helperError.code === 'closed' || helperError.code === 'shutting-down' ? { kind: 'absent' } : { kind: 'error', error: helperError };
  }
}

/** Asks a helper to shut down and waits until it no longer answers on its socket (nothing, or another helper, does). */
async function stopAndWait(client: HelperClient, paths: RuntimePaths, options: ClientOptions): Promise<boolean> {
  const pid = client.server?.pid;
  try {
    await client.shutdown();
  } catch {
    // An old helper may close without a reply; whether it is gone is checked below.
  } finally {
    client.close();
  }
  const deadline = performance.now() + STOP_TIMEOUT_MS;
  for (let delay = 5; performance.now() < deadline; delay = Math.min(delay * 2, 50)) {
    const found = await attempt(paths, options);
    if (found.kind === 'absent') return true;
    if (found.kind !== 'error') {
      found.client.close();
      if (found.hello.pid !== pid) return true;
    }
    await sleep(delay);
  }
  return false;
}

function mismatchReason(hello: HelloReply): string {
  return `the running helper (pid ${hello.pid}) is version ${hello.version}, protocol ${hello.protocol}; this is version ${VERSION}, protocol ${PROTOCOL_VERSION}`;
}

function asHelperError(error: unknown): HelperError {
  return error instanceof HelperError ? error : new HelperError('connect-failed', (error as Error).message);
}
