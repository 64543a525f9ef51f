// The launcher's whole job: refuses a cursor-resume started by itself (src/self-call.ts),
// hands a run line that is cursor-agent's whole straight to it (src/handover.ts), and
// otherwise loads the CLI bundle (dist/cli.cjs) with the V8 code cache the build made of it
// (dist/cli.cjs.cache): a turn then skips compiling most of its own code, about 10 ms
// of every run (BENCHMARKS.md). The cache is taken only whole and for the exact bytes
// it was made from, under the Node that made it (it opens with the SHA-256 of that Node,
// of cli.cjs and of itself: V8 checks only the source's length and its own version's
// numbers, and a damaged cache or one from another Node can crash it), and only where V8
// accepts it (the same flags); anywhere else cli.cjs is compiled as usual. Nothing here
// writes a file: the build makes the cache (scripts/code-cache.mjs).
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { EXIT_USAGE } from './errors.js';
import { handOver } from './handover.js';
import { builtin } from './lazy-builtin.js';
import { isSelfCall, markChildren, SELF_CALL_MESSAGE } from './self-call.js';

const DIST = path.dirname(fileURLToPath(import.meta.url));
export const CLI_FILE = path.join(DIST, 'cli.cjs');
export const CACHE_FILE = `${CLI_FILE}.cache`;
const DIGEST_BYTES = 32;

/**
 * What the function cli.cjs is takes, in order: the build writes cli.cjs as that function
 * (scripts/build.mjs), so a run compiles the file's text as it is, not a copy with the
 * wrapper joined on (a second 250 KB string, and its pages). The bundle's dynamic imports
 * (of program.js beside it) are calls to __importBeside, made by the build: an import()
 * compiled by vm needs an experimental loader hook, and with a code cache Node 20 loses even that.
 */
export const CLI_PARAMETERS = ['exports', 'require', 'module', '__filename', '__dirname', '__importBeside'] as const;

/**
 * The Node that makes or reads the cache. V8 takes a cache made by any build of its own version
 * (it checks the numbers, 11.3.244.8 in every Node 20, not Node's patches on them, "-node.25"
 * in 20.10.0, "-node.38" in 20.20.2), and runs the bytecode: Node 20.10.0 took the cache
 * Node 20.20.2 made and died of SIGSEGV on every run. So the digest covers the Node too.
 */
const runtime = (): string => `${process.version} ${process.platform} ${process.arch} ${JSON.stringify(process.versions)}`;

/** The hash that opens the cache file, fed with the Node and cli.cjs's bytes: V8's data that follows goes in next. */
const sourceHash = (source: Buffer) =>
  builtin<typeof import('node:crypto')>('node:crypto').createHash('sha256').update(runtime()).update(source);

/** What opens the cache file: the digest of the Node that made it, of cli.cjs (its bytes) and of V8's data that follows. */
export const cacheDigest = (source: Buffer, data: Buffer): Buffer => sourceHash(source).update(data).digest();

/** What became of the code cache: used, refused by V8 (other flags), made by another Node or of other bytes or damaged, or not there. */
export type CacheUse = 'used' | 'rejected' | 'mismatch' | 'absent' | 'off';

/** The file's bytes read into `buffer` from its start, as readFileSync reads them: up to the size it had when opened. */
function readInto(fd: number, buffer: Buffer): Buffer {
  const size = fstatSync(fd).size;
  let filled = 0;
  while (filled < size) {
    const n = readSync(fd, buffer, filled, size - filled, filled);
    if (n === 0) break;
    filled += n;
  }
  return buffer.subarray(0, filled);
}

const openOrNull = (file: string): number | null => {
  try {
    return openSync(file, 'r');
  } catch {
    return null;
  }
};

/**
 * cli.cjs's text, and the cache's data when it was made of exactly these bytes. The two
 * files (about 250 and 280 KB) are read into one buffer, the cache over the source once
 * that is decoded and hashed: a second buffer would be that many more fresh pages to fault
 * in on every run. The source is hashed as the bytes it was read as: hashing the decoded
 * text would encode all of it back into a buffer as large.
 */
function readCli(useCache: boolean): { text: string; data?: Buffer; use: CacheUse } {
  const sourceFd = openSync(CLI_FILE, 'r');
  const cacheFd = useCache ? openOrNull(CACHE_FILE) : null;
  try {
    const buffer = Buffer.allocUnsafeSlow(Math.max(fstatSync(sourceFd).size, cacheFd === null ? 0 : fstatSync(cacheFd).size));
    const source = readInto(sourceFd, buffer);
    const text = source.toString('utf8');
    if (cacheFd === null) return { text, use: useCache ? 'absent' : 'off' };
    const hash = sourceHash(source);
    let cache: Buffer;
    try {
      cache = readInto(cacheFd, buffer);
    } catch {
      return { text, use: 'absent' };
    }
    const data = cache.subarray(DIGEST_BYTES);
    return cache.subarray(0, DIGEST_BYTES).equals(hash.update(data).digest()) ? { text, data, use: 'used' } : { text, use: 'mismatch' };
  } finally {
    closeSync(sourceFd);
    if (cacheFd !== null) closeSync(cacheFd);
  }
}

/** Compiles and runs cli.cjs as CommonJS would; the script is returned so the build can take its cache. */
export function startCli(options: { useCache: boolean } = { useCache: true }): { script: vm.Script; cache: CacheUse } {
  const { text, data, use } = readCli(options.useCache);
  const script = new vm.Script(text, { filename: CLI_FILE, ...(data ? { cachedData: data } : {}) });
  const cli = new Module(CLI_FILE);
  cli.filename = CLI_FILE;
  const importBeside = (specifier: string): Promise<unknown> => import(pathToFileURL(path.join(DIST, specifier)).href);
  script.runInThisContext()(cli.exports, Module.createRequire(CLI_FILE), cli, CLI_FILE, DIST, importBeside);
  return { script, cache: use === 'used' && script.cachedDataRejected ? 'rejected' : use };
}

/** What bin/cursor-resume.js runs. */
export function launch(): void {
  if (isSelfCall(process.env, process.ppid)) {
    process.stderr.write(`cursor-resume: ${SELF_CALL_MESSAGE}\n`);
    process.exitCode = EXIT_USAGE;
    return;
  }
  markChildren(process.env, process.pid);
  void handOver(process.argv.slice(2), process.env).then((code) => {
    if (code === undefined) startCli();
    else process.exitCode = code;
  });
}
