// Finding the helper, starting it when asked, and replacing one of another
// version (so an upgrade never talks to an old daemon). Never throws: the caller
// gets a client, or a reason it can show with --verbose before going on without
// the cache.
import { spawn, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sleep } from '../sleep.js';
import { HelperClient, HelperError, isSameVersion } from './client.js';
import type { ClientOptions, TurnRecord } from './client.js';
import {
  createMarker,
  HAND_OFF_LIVE_MS,
  HAND_OFF_MARKER_ENV,
  handOffPending,
  newMarkerName,
  notePid,
  removeMarker,
  type HandOff,
} from './hand-off.js';
import { alive } from './alive.js';
import { HeldStart } from './held-start.js';
import { limitsBelow } from './limits-below.js';
import { checkRuntimeDir, ensureRuntimeDir, lockRefusal, replacedDirReason, runtimeDirId, runtimePaths, socketRefusal } from './paths.js';
import type { RuntimePaths } from './paths.js';
import { PROTOCOL_VERSION } from './protocol.js';
import type { HelloReply } from './protocol.js';
import type { Branch } from '../cache/types.js';
import { envLimits } from '../cache/limits.js';
import { VERSION } from '../version.js';
import { monotonicMs } from '../monotonic.js';

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
/** How often a run waiting for a handed record looks again: the helper delivers it within a few ms of answering. */
const HAND_OFF_POLL_MS = 2;
/**
 * What the helper is started with besides its runtime dir: its own knobs, and
 * NODE_OPTIONS (Node's settings the user gave every Node process: memory, preloads).
 * Nothing else: it lives for hours, and the caller's environment holds credentials
 * (API keys, tokens) that it must never keep. (NODE_EXTRA_CA_CERTS, for one, would
 * also cost 45 ms of start-up for a 220 KB bundle it never uses.)
 */
const HELPER_ENV = ['CURSOR_RESUME_IDLE_MS', 'CURSOR_RESUME_CONNECTION_IDLE_MS', 'NODE_OPTIONS'] as const;

/**
 * The helper's whole environment; the runtime dir is the launcher's resolved one, so
 * both use one socket whatever their working directories. A fixed mmap threshold
 * (glibc's; others ignore it) hands the big buffers of a long record back to the
 * system when freed, instead of glibc raising its threshold and keeping them: 8 MiB
 * less resident after the load benchmark.
 */
function helperProcessEnv(env: NodeJS.ProcessEnv, paths: RuntimePaths): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { CURSOR_RESUME_RUNTIME_DIR: paths.dir, MALLOC_MMAP_THRESHOLD_: '65536' };
  for (const key of HELPER_ENV) if (env[key] !== undefined) out[key] = env[key];
  const options = out.NODE_OPTIONS === undefined ? undefined : withoutInspector(out.NODE_OPTIONS);
  if (options === undefined) delete out.NODE_OPTIONS;
  else out.NODE_OPTIONS = options;
  return out;
}

/** Node's inspector and debug flags (Node reads `_` as `-` in them); those that may take their value as the next word. */
const INSPECTOR_FLAG = /^--(?:inspect|debug)/;
const INSPECTOR_VALUE_NEXT = /^--(?:inspect[-_]port|debug[-_]port|inspect[-_]publish[-_]uid)$/;

/**
 * NODE_OPTIONS without the inspector's flags (undefined when nothing is left). A run is the
 * user's command and ends with it; the helper is detached and lives for hours, and an
 * inspector port on it would let any local user run code as its owner all that time.
 * Options with quotes are not split here as Node splits them: with an inspector flag among
 * them, none of them reaches the helper.
 */
function withoutInspector(options: string): string | undefined {
  if (!/--(?:inspect|debug)/.test(options)) return options;
  if (/["\\]/.test(options)) return undefined;
  const words = options.split(/\s+/).filter((word) => word !== '');
  const kept: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (!INSPECTOR_FLAG.test(word)) kept.push(word);
    else if (INSPECTOR_VALUE_NEXT.test(word)) i++;
  }
  return kept.length === 0 ? undefined : kept.join(' ');
}

/** How the launcher starts a helper (the benchmarks start one the same way to time its start). */
export function helperCommand(
  scriptPath: string,
  env: NodeJS.ProcessEnv,
  paths: RuntimePaths,
): { file: string; args: string[]; options: SpawnOptions } {
  // Detached in its own session with no stdio: it must not hold the caller's terminal or pipes.
  return {
    file: process.execPath,
    args: [scriptPath],
    options: { detached: true, stdio: 'ignore', cwd: '/', env: helperProcessEnv(env, paths) },
  };
}

export interface ConnectHelperOptions extends ClientOptions {
  /** Start a helper if none answers (and replace one of another version). */
  start: boolean;
  /**
   * When nothing answers at all: start nothing now and report 'deferred'. A new
   * helper's cache is empty, so a turn has nothing to look up: it starts the helper
   * when it first needs one, at its end with its record (handOffRecord), and then
   * does not wait for it.
   */
  defer?: boolean;
  /** Where CURSOR_RESUME_RUNTIME_DIR & co. come from, and the helper's environment (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** The helper program (default: dist/helper/helper-server.js beside this bundle). Tests point it elsewhere. */
  serverScript?: string | URL;
  /** How long to wait for a started helper to answer. */
  startTimeoutMs?: number;
  /** A helper's start held ready by this run (holdHelper): released instead of spawning one, if its shell is still there. */
  held?: HeldHelper | null;
  /** The uid that must own the runtime dir and the socket (default: ours). Tests inject another to stand for someone else's. */
  owners?: Owners;
  /** A turn's record on its way: the runtime dir must still be the one the turn began with (paths.ts, runtimeDirId). */
  runtimeDirId?: string;
}

interface Owners {
  dir?: number;
  socket?: number;
}

export type ConnectFailure =
  /** The runtime dir is unusable (symlink, foreign owner, path too long, ...). */
  | 'bad-runtime-dir'
  /** Nothing answers and `start` was false. */
  | 'not-running'
  /** A helper of another version answers and `start` was false, or another version keeps coming back. */
  | 'version-mismatch'
  | 'start-failed'
  /** A helper holds the socket but did not answer in time (stopped or wedged), and `start` was false: a run replaces it. */
  | 'stuck'
  /** A helper is there but refused us, did not stop when asked, or did not take the lower limits. */
  | 'unavailable'
  /** Nothing answered, and none was started (`defer`). */
  | 'deferred';

export type ConnectHelperResult =
  | {
      ok: true;
      client: HelperClient;
      server: HelloReply;
      paths: RuntimePaths;
      started: boolean;
      /** Whether the started helper took the socket of one that answered as another version, or of one that did not answer (stopped or stuck). */
      replaced: false | 'another-version' | 'stuck';
    }
  | { ok: false; code: ConnectFailure; reason: string; paths?: RuntimePaths };

type Attempt =
  | { kind: 'ok'; client: HelperClient; hello: HelloReply }
  | { kind: 'mismatch'; client: HelperClient; hello: HelloReply }
  | { kind: 'absent' }
  | { kind: 'error'; error: HelperError };

/**
 * Connects to the helper, starting or replacing it when `start` is set. A held start
 * it did not use (a helper answered, or none could be started) is let go, not left
 * waiting for the run's exit.
 */
export async function connectHelper(options: ConnectHelperOptions): Promise<ConnectHelperResult> {
  try {
    return await connect(options);
  } finally {
    options.held?.start.dismiss();
  }
}

async function connect(options: ConnectHelperOptions): Promise<ConnectHelperResult> {
  const env = options.env ?? process.env;
  let paths: RuntimePaths;
  try {
    paths = runtimePaths(env);
    // Checked before a folder is made again: the forgets noted in the one the turn began with are gone with it.
    if (options.runtimeDirId !== undefined && runtimeDirId(paths.dir) !== options.runtimeDirId)
      return { ok: false, code: 'unavailable', reason: replacedDirReason(paths.dir), paths };
    if (checkRuntimeDir(paths, { uid: options.owners?.dir }) === 'missing') {
      if (!options.start) return { ok: false, code: 'not-running', reason: `no helper is running (no runtime dir ${paths.dir})`, paths };
      ensureRuntimeDir(paths, { uid: options.owners?.dir });
    }
  } catch (error) {
    return { ok: false, code: 'bad-runtime-dir', reason: (error as Error).message };
  }

  // A helper starting with a turn's record: that record is the next turn's history.
  await handOffsDelivered(paths);
  let replaced: false | 'another-version' | 'stuck' = false;
  const first = await attempt(paths, options);
  if (first.kind === 'ok') return ready(first, paths, options, { started: false, replaced });
  // Where no helper could start, none is stopped or waited for: said at once (a start deferred to a hand-off would fail unseen).
  const cannotStart = (): ConnectHelperResult | undefined => {
    const lockProblem = lockRefusal(paths);
    return lockProblem === undefined ? undefined : { ok: false, code: 'start-failed', reason: lockProblem, paths };
  };
  if (first.kind === 'mismatch') {
    const refused = options.start ? cannotStart() : undefined;
    if (!options.start || refused) {
      first.client.close();
      return refused ?? { ok: false, code: 'version-mismatch', reason: mismatchReason(first.hello), paths };
    }
    const stopped = await stopAndWait(first.client, paths, options);
    if (!stopped)
      return { ok: false, code: 'unavailable', reason: `${mismatchReason(first.hello)}, and it did not stop when asked`, paths };
    replaced = 'another-version';
  } else if (first.kind === 'absent') {
    if (!options.start)
      return { ok: false, code: 'not-running', reason: `no helper is running (nothing answers at ${paths.socket})`, paths };
    const refused = cannotStart();
    if (refused) return refused;
    if (options.defer) return { ok: false, code: 'deferred', reason: `no helper is running (nothing answers at ${paths.socket})`, paths };
  } else if (first.error.code === 'timeout' && !options.start) {
    return { ok: false, code: 'stuck', reason: first.error.message, paths };
  } else if (first.error.code !== 'timeout') {
    // A helper that refuses us (too many connections, ...) or a socket we may not use: starting another would not help.
    return { ok: false, code: 'unavailable', reason: first.error.message, paths };
  } else {
    const refused = cannotStart();
    if (refused) return refused;
    // A wedged helper (timeout): a new one replaces it after probing it.
    replaced = 'stuck';
  }

  const scriptPath = serverScriptPath(options.serverScript);
  if (!fs.existsSync(scriptPath)) return { ok: false, code: 'start-failed', reason: missingProgram(scriptPath), paths };
  let exitCode: number | null | undefined;
  let spawnError: Error | undefined;
  let childPid: number | undefined;
  try {
    const command = helperCommand(scriptPath, env, paths);
    const child = options.held?.start.release() ?? spawn(command.file, command.args, command.options);
    childPid = child.pid;
    child.once('error', (error) => (spawnError = error));
    child.once('exit', (code) => (exitCode = code));
    child.unref();
  } catch (error) {
    return { ok: false, code: 'start-failed', reason: `cannot start the helper: ${(error as Error).message}`, paths };
  }

  const deadline = monotonicMs() + (options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
  let last: Attempt = first;
  for (;;) {
    await sleep(START_POLL_MS);
    // Whether our helper had exited before this attempt began: then an answer can no longer come from it.
    const exitedBefore = exitCode !== undefined;
    last = await attempt(paths, options);
    if (last.kind === 'ok') {
      // Another helper may answer: a stuck one that came back before ours took the socket, or one another run started.
      const ours = last.hello.pid === childPid;
      return ready(last, paths, options, { started: ours, replaced: ours || replaced === 'another-version' ? replaced : false });
    }
    if (last.kind === 'mismatch') {
      // Another installation started its own helper meanwhile; do not fight over the socket.
      last.client.close();
      return {
        ok: false,
        code: 'version-mismatch',
        reason: `${mismatchReason(last.hello)} (started by another installation just now)`,
        paths,
      };
    }
    if (last.kind === 'error' && last.error.code !== 'timeout')
      return { ok: false, code: 'unavailable', reason: last.error.message, paths };
    if (spawnError) return { ok: false, code: 'start-failed', reason: `cannot start the helper: ${spawnError.message}`, paths };
    if (exitedBefore && last.kind === 'absent') {
      // Status 0 is "another helper answers": one that is gone again, or that answers elsewhere.
      const why = exitCode === 0 ? 'found another helper answering, yet none answers now' : `exited with status ${exitCode}`;
      return {
        ok: false,
        code: 'start-failed',
        reason: `the helper ${why} while starting at ${paths.socket}; run \`CURSOR_RESUME_RUNTIME_DIR=${paths.dir} ${process.execPath} ${scriptPath}\` to see its message`,
        paths,
      };
    }
    if (monotonicMs() > deadline) break;
  }
  const why = last.kind === 'error' ? `: ${last.error.message}` : '';
  return {
    ok: false,
    code: 'start-failed',
    reason: `the helper did not answer within ${options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS} ms of starting${why}`,
    paths,
  };
}

export type HandOffResult = { ok: true; socket: string } | { ok: false; reason: string };

/** A helper's start held while the turn runs, named by the marker its hand-off will create. */
export interface HeldHelper {
  start: HeldStart;
  marker: string;
}

/** The shell that holds a helper's start. */
const SHELL = '/bin/sh';

/**
 * Forks a process that will become the helper once a record is handed to it (held-start.ts),
 * for a turn that found no helper: called just after cursor-agent is spawned, so that
 * neither its start nor the end of the turn pays the fork. Null when it cannot: the
 * hand-off then starts the helper itself.
 */
export function holdHelper(options: { env?: NodeJS.ProcessEnv; serverScript?: string | URL; shell?: string } = {}): HeldHelper | null {
  const env = options.env ?? process.env;
  const scriptPath = serverScriptPath(options.serverScript);
  let paths: RuntimePaths;
  try {
    paths = runtimePaths(env);
  } catch {
    return null;
  }
  const marker = newMarkerName();
  const start = HeldStart.hold(handOffCommand(scriptPath, env, paths, marker), options.shell ?? SHELL);
  return start && { start, marker };
}

/**
 * Starts a helper with a turn's record on its stdin (releasing `held`, or spawning one),
 * and does not wait for it: the helper delivers the record once it answers (to another
 * helper if one answers first). A marker tells other runs to wait for that delivery
 * (hand-off.ts). A held start not used (no record could be handed) is let go.
 */
export function handOffRecord(
  record: TurnRecord,
  options: { env?: NodeJS.ProcessEnv; serverScript?: string | URL; held?: HeldHelper | null; runtimeDirId?: string } = {},
): HandOffResult {
  try {
    return handOff(record, options);
  } finally {
    options.held?.start.dismiss();
  }
}

function handOff(
  record: TurnRecord,
  options: { env?: NodeJS.ProcessEnv; serverScript?: string | URL; held?: HeldHelper | null; runtimeDirId?: string } = {},
): HandOffResult {
  const env = options.env ?? process.env;
  const scriptPath = serverScriptPath(options.serverScript);
  if (!fs.existsSync(scriptPath)) return { ok: false, reason: missingProgram(scriptPath) };
  let paths: RuntimePaths;
  let marker: string;
  try {
    paths = runtimePaths(env);
    // The marks a line left there while the turn ran (forget-marks.ts) went with the folder the turn began with.
    if (options.runtimeDirId !== undefined && runtimeDirId(paths.dir) !== options.runtimeDirId)
      return { ok: false, reason: replacedDirReason(paths.dir) };
    ensureRuntimeDir(paths);
    // Before the helper can start, so that no run misses the record on its way.
    marker = createMarker(paths, options.held?.marker);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const input = JSON.stringify({ limits: envLimits(env), record } satisfies HandOff);
  const start = (): HandOffResult => {
    try {
      const command = handOffCommand(scriptPath, env, paths, marker);
      const child = spawn(command.file, command.args, command.options);
      child.once('error', () => removeMarker(paths, marker));
      // Before the helper has its record: it cannot have delivered it and removed the marker yet.
      notePid(paths, marker, child.pid, true);
      child.stdin!.on('error', () => {
        // A helper that exited before reading: its marker names a dead process, which no run waits for.
      });
      // Up to the buffer of Node's socket pair (some 200 KB) this is written at once; a longer record keeps the run until the helper reads it.
      child.stdin!.end(input);
      child.unref();
    } catch (error) {
      removeMarker(paths, marker);
      return { ok: false, reason: `cannot start the helper: ${(error as Error).message}` };
    }
    return { ok: true, socket: paths.socket };
  };
  const released = options.held?.start.release(input, start);
  if (!released) return start();
  notePid(paths, marker, released.pid);
  return { ok: true, socket: paths.socket };
}

/** A helper that reads a hand-off on its stdin and removes `marker` once it is delivered. */
function handOffCommand(scriptPath: string, env: NodeJS.ProcessEnv, paths: RuntimePaths, marker: string) {
  const command = helperCommand(scriptPath, env, paths);
  return {
    ...command,
    options: {
      ...command.options,
      env: { ...command.options.env, [HAND_OFF_MARKER_ENV]: marker },
      stdio: ['pipe', 'ignore', 'ignore'] satisfies SpawnOptions['stdio'],
    },
  };
}

/** Waits until no helper is on its way with a handed record: HAND_OFF_LIVE_MS at most, the longest a marker holds (hand-off.ts). */
async function handOffsDelivered(paths: RuntimePaths): Promise<void> {
  const deadline = monotonicMs() + HAND_OFF_LIVE_MS;
  while (handOffPending(paths) && monotonicMs() < deadline) await sleep(HAND_OFF_POLL_MS);
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
  // A helper on its way with a record is running, for `helper stop` and `inspect` alike.
  await handOffsDelivered(paths);
  const found = await attempt(paths, options);
  if (found.kind === 'absent') return { running: false, paths };
  if (found.kind === 'error') return { running: false, error: found.error.message, paths };
  // Looking changes nothing: not even the limits (a run or `helper start` lowers them).
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
  // "Stopped" means gone, not only off its socket: a script that checks the process after us must not find it.
  if (!(await exited(pid))) {
    return { ok: false, reason: `the helper (pid ${pid}) let go of its socket but has not exited; end it: kill ${pid}` };
  }
  return { ok: true, stopped: true, pid, version, paths: probe.paths };
}

/** Whether process `pid` is gone within STOP_TIMEOUT_MS. */
async function exited(pid: number): Promise<boolean> {
  const deadline = monotonicMs() + STOP_TIMEOUT_MS;
  for (let delay = 2; alive(pid); delay = Math.min(delay * 2, 50)) {
    if (monotonicMs() >= deadline) return false;
    await sleep(delay);
  }
  return true;
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
async function attempt(paths: RuntimePaths, options: ClientOptions & { owners?: Owners }): Promise<Attempt> {
  const refusal = socketRefusal(paths, { uid: options.owners?.socket });
  if (refusal !== undefined) return { kind: 'error', error: new HelperError('bad-socket', refusal) };
  let client: HelperClient;
  try {
    client = await HelperClient.connect(paths.socket, options);
  } catch (error) {
    const helperError = asHelperError(error);
    return helperError.code === 'not-running' ? { kind: 'absent' } : { kind: 'error', error: stuck(helperError, paths) };
  }
  try {
    const hello = await client.hello();
    return isSameVersion(hello) ? { kind: 'ok', client, hello } : { kind: 'mismatch', client, hello };
  } catch (error) {
    client.close();
    const helperError = asHelperError(error);
    // Connected, then closed at once: a helper on its way out. Treat it as gone.
    return helperError.code === 'closed' || helperError.code === 'shutting-down'
      ? { kind: 'absent' }
      : { kind: 'error', error: stuck(helperError, paths) };
  }
}

/** A timeout says where and what to do: a stopped (SIGSTOP) or wedged helper holds the socket. */
function stuck(error: HelperError, paths: RuntimePaths): HelperError {
  if (error.code !== 'timeout') return error;
  return new HelperError(
    'timeout',
    `${error.message}: the helper holding ${paths.socket} is stopped or stuck. \`cursor-resume helper start\` replaces it (or end the process listening on that socket)`,
  );
}

/**
 * A helper of our version answers. For a client that may start helpers (a run, not a
 * dry run) its limits are lowered to what the settings ask, and a helper can be
 * started again for a late record; a client that only reads changes nothing.
 */
async function ready(
  found: { client: HelperClient; hello: HelloReply },
  paths: RuntimePaths,
  options: ConnectHelperOptions,
  how: { started: boolean; replaced: false | 'another-version' | 'stuck' },
): Promise<ConnectHelperResult> {
  if (!options.start) return { ok: true, client: found.client, server: found.hello, paths, ...how };
  let hello: HelloReply;
  try {
    hello = await withLimits(found.client, found.hello, options.env ?? process.env);
  } catch (error) {
    found.client.close();
    return {
      ok: false,
      code: 'unavailable',
      reason: `the helper did not take the lower limits the settings ask for: ${(error as Error).message}`,
      paths,
    };
  }
  found.client.reviveWith(async () => {
    const again = await connectHelper({ ...options, start: true, defer: false, runtimeDirId: found.client.runtimeDirId });
    if (again.ok) again.client.close();
    return again.ok;
  });
  return { ok: true, client: found.client, server: hello, paths, ...how };
}

/**
 * Branches as they will be once a run has lowered the helper's limits to what the settings
 * ask (store.lower): a dry run or an explanation, which change nothing, still plan as that
 * run will. Lowering drops the expired branches, then the live ones past the lower count,
 * least recently used first (the list's order is most recently used first); a branch past
 * the lower lifetime is expired.
 */
export async function underSettings<T extends Branch>(
  client: HelperClient,
  branches: T[],
  hello: HelloReply | undefined,
  env: NodeJS.ProcessEnv,
): Promise<T[]> {
  const { ttlMs, maxEntries } = limitsBelow(envLimits(env), hello?.limits);
  if (ttlMs === undefined && maxEntries === undefined) return branches;
  let kept = branches.filter((b) => b.ttlLeftMs >= 0);
  if (maxEntries !== undefined && kept.length > 0) {
    const live = new Set((await client.list()).slice(0, maxEntries).map((b) => `${b.anchor}/${b.chatId}`));
    kept = kept.filter((b) => live.has(`${b.anchor}/${b.chatId}`));
  }
  const current = hello?.limits?.ttlMs;
  if (ttlMs === undefined || typeof current !== 'number') return kept;
  return kept.map((b) => ({ ...b, ttlLeftMs: b.ttlLeftMs - (current - ttlMs) }));
}

/**
 * The limits the settings ask for reach the environment through helperEnv(), and the
 * helper through a `limits` request as typed values: a new helper starts with the
 * seed's, and one that runs with higher ones (it started before `config set
 * ttlMinutes`) is lowered. Returns the hello with the limits now in force.
 */
async function withLimits(client: HelperClient, hello: HelloReply, env: NodeJS.ProcessEnv): Promise<HelloReply> {
  const asked = limitsBelow(envLimits(env), hello.limits);
  if (asked.ttlMs === undefined && asked.maxEntries === undefined) return hello;
  client.server = { ...hello, limits: await client.lowerLimits(asked) };
  return client.server;
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
  const deadline = monotonicMs() + STOP_TIMEOUT_MS;
  for (let delay = 5; monotonicMs() < deadline; delay = Math.min(delay * 2, 50)) {
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

function missingProgram(scriptPath: string): string {
  return `the helper program is missing at ${scriptPath}; reinstall cursor-resume (or run npm run build)`;
}

function mismatchReason(hello: HelloReply): string {
  return `the running helper (pid ${hello.pid}) is version ${hello.version}, protocol ${hello.protocol}; this is version ${VERSION}, protocol ${PROTOCOL_VERSION}`;
}

function asHelperError(error: unknown): HelperError {
  return error instanceof HelperError ? error : new HelperError('connect-failed', (error as Error).message);
}
