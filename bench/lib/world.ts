// The benchmarks' private world: a snapshot of the built program (so an `npm run
// build` elsewhere cannot swap files under a running benchmark), sandboxes with
// their own helper runtime dir and Cursor config dir, and a process runner that
// times a child from spawn to exit.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { stopHelper } from '../../src/helper/launcher.js';
import { msSince } from './stats.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Snapshot {
  dir: string;
  /** bin/cursor-resume.js inside the snapshot. */
  bin: string;
  standIn: string;
  helperServer: string;
  /** The timestamping agent of the streaming benchmark. */
  stampAgent: string;
  /**
   * A --require hook that writes the process's peak RSS (KiB) and CPU time (user + system, µs) to
   * $BENCH_RSS_FILE at exit, as "rss cpu". CommonJS, as a run line is: an --import hook would start
   * Node's ES module loader, which a run never does, and count its memory in the figure.
   */
  rssHook: string;
  /** Benchmark 2's floor turn and the line-echo server it talks to, CommonJS as a run line is (bench/agents/). */
  floorTurn: string;
  lineEcho: string;
}

const REQUIRED = ['bin/cursor-resume.js', 'dist/stand-in/cursor-agent.js'];
/** Where the helper program is, newest layout first (so the benchmarks also run against older builds). */
const HELPER_PROGRAMS = ['dist/helper/helper-server.js', 'dist/helper-server.js'];

/**
 * Copies bin/ and dist/ of `checkout` (this checkout, or another built one: a baseline
 * measured by the same benchmarks) to a temp dir, retrying while a concurrent build rewrites dist/.
 */
export async function makeSnapshot(checkout: string = ROOT): Promise<Snapshot> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'crb-')));
  for (let tries = 1; ; tries++) {
    try {
      rmSync(join(dir, 'dist'), { recursive: true, force: true });
      cpSync(join(checkout, 'bin'), join(dir, 'bin'), { recursive: true });
      cpSync(join(checkout, 'dist'), join(dir, 'dist'), { recursive: true });
      const missing = REQUIRED.filter((f) => !existsSync(join(dir, f)));
      if (!HELPER_PROGRAMS.some((f) => existsSync(join(dir, f)))) missing.push(HELPER_PROGRAMS[0]!);
      if (missing.length === 0) break;
      throw new Error(`incomplete dist/ (run npm run build): missing ${missing.join(', ')}`);
    } catch (error) {
      if (tries >= 10) throw error;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  const agents = join(dir, 'agents');
  mkdirSync(agents);
  const stampAgent = join(agents, 'stamp-agent.js');
  await build({
    entryPoints: [join(ROOT, 'bench/agents/stamp-agent.ts')],
    outfile: stampAgent,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
    banner: { js: '#!/usr/bin/env node' },
  });
  chmodSync(stampAgent, 0o755);
  const [floorTurn, lineEcho] = ['floor-turn', 'line-echo'].map((name) => join(agents, `${name}.cjs`));
  await build({
    entryPoints: { 'floor-turn': join(ROOT, 'bench/agents/floor-turn.ts'), 'line-echo': join(ROOT, 'bench/agents/line-echo.ts') },
    outdir: agents,
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
  });
  const rssHook = join(agents, 'rss-hook.cjs');
  writeFileSync(
    rssHook,
    "const { writeFileSync } = require('node:fs');\n" +
      "process.on('exit', () => { const u = process.resourceUsage(); if (process.env.BENCH_RSS_FILE) writeFileSync(process.env.BENCH_RSS_FILE, `${u.maxRSS} ${u.userCPUTime + u.systemCPUTime}`); });\n",
  );
  return {
    dir,
    bin: join(dir, 'bin/cursor-resume.js'),
    standIn: join(dir, 'dist/stand-in/cursor-agent.js'),
    helperServer: join(
      dir,
      HELPER_PROGRAMS.find((f) => existsSync(join(dir, f)))!,
    ),
    stampAgent,
    rssHook,
    floorTurn: floorTurn!,
    lineEcho: lineEcho!,
  };
}

/** One private world: runtime dir (helper), config home, Cursor config dir, workspace. */
export class Sandbox {
  readonly dir: string;
  readonly workspace: string;
  readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly snapshot: Snapshot,
    name: string,
    extra: NodeJS.ProcessEnv = {},
  ) {
    this.dir = join(snapshot.dir, name);
    this.workspace = join(this.dir, 'ws');
    mkdirSync(this.workspace, { recursive: true });
    this.env = {
      PATH: process.env.PATH,
      HOME: this.dir,
      XDG_CONFIG_HOME: join(this.dir, '.config'),
      XDG_RUNTIME_DIR: '',
      CURSOR_RESUME_RUNTIME_DIR: join(this.dir, 'run'),
      CURSOR_CONFIG_DIR: join(this.dir, '.cursor'),
      CURSOR_RESUME_AGENT: snapshot.standIn,
      ...extra,
    };
    SANDBOXES.add(this);
  }

  /** Stops this sandbox's helper, if one runs. */
  async stopHelper(): Promise<void> {
    const result = await stopHelper({ env: this.env });
    if (!result.ok) throw new Error(`could not stop the helper of ${this.dir}: ${result.reason}`);
  }
}

const SANDBOXES = new Set<Sandbox>();

/** Stops every helper any sandbox may have started; called once at the end, whatever happened. */
export async function stopAllHelpers(): Promise<void> {
  for (const sandbox of SANDBOXES) {
    try {
      await sandbox.stopHelper();
    } catch (error) {
      process.stderr.write(`bench: ${(error as Error).message}\n`);
    }
  }
  SANDBOXES.clear();
}

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit (all stdio closed). */
  ms: number;
  /** Wall time from spawn to the first byte read from its stdout (null: it wrote nothing). */
  firstByteMs: number | null;
}

export interface RunOptions {
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called with each stdout chunk as it arrives, with the hrtime it arrived at. */
  onStdout?: (chunk: Buffer, at: bigint) => void;
  /** SIGTERM the program once its stdout so far matches, as OpenCode's plugin does at a tool call. */
  stopAt?: RegExp;
}

/** Runs a program to its end, timing it from just before spawn to 'close'. */
export function runProcess(file: string, args: ReadonlyArray<string>, options: RunOptions = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, args, { env: options.env ?? process.env, cwd: options.cwd ?? ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let firstByteMs: number | null = null;
    let stopped = false;
    child.stdout.on('data', (chunk: Buffer) => {
      firstByteMs ??= msSince(started);
      if (options.onStdout) options.onStdout(chunk, process.hrtime.bigint());
      out.push(chunk);
      if (options.stopAt && !stopped && options.stopAt.test(Buffer.concat(out).toString('utf8'))) {
        stopped = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const ms = msSince(started);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), ms, firstByteMs });
    });
    child.stdin.on('error', () => {
      /* a program may exit without reading all of its stdin */
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Runs the snapshot's cursor-resume with node (as the bin's shebang would). */
export function runCli(snapshot: Snapshot, args: ReadonlyArray<string>, options: RunOptions = {}): Promise<ProcessResult> {
  return runProcess(process.execPath, [snapshot.bin, ...args], options);
}

export function expectOk(what: string, result: ProcessResult): ProcessResult {
  if (result.code !== 0) {
    throw new Error(`${what} exited with ${result.code ?? result.signal}:\n${result.stderr.slice(-2000)}`);
  }
  return result;
}
