// Benchmark 5: the helper under load. A real helper process (the snapshot's
// dist/helper/helper-server.js, started the way a run starts it), 32 concurrent client
// connections each doing a resumed turn's lookup then record (the record adds the
// turn's two digests to the version the lookup returned); latency per request as the
// client sees it, and the bytes the helper reads and writes per turn. Each client does
// per request only what the wire needs: what a run computes once per turn in its own
// process (its transcript's digests, the prefix hash the lookup is checked against) is
// kept here as it grows, not recomputed by 32 clients in one process. Two shapes of
// load: a closed loop (each client sends its next request as soon as the last one is
// answered: throughput, and latency that is mostly queueing) and an open one (turns
// started at a stated rate whatever the answers: latency of a helper that is not
// saturated). Then the helper's memory with its cache full of 64 branches of 10,000
// messages, after filling and after the load on them.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { HelperClient } from '../src/helper/client.js';
import { connectHelper } from '../src/helper/launcher.js';
import { PREFIX_HEX } from '../src/cache/known.js';
import { MESSAGE_DIGEST_HEX } from '../src/cache/types.js';
import type { Branch } from '../src/cache/types.js';
import { rng } from './lib/content.js';
import type { BenchOutcome } from './lib/report.js';
import { msSince, round, summarize, type Summary } from './lib/stats.js';
import { Sandbox, type Snapshot } from './lib/world.js';
import { monotonicMs } from '../src/monotonic.js';

const CLIENTS = 32;
const ENTRIES = 64;
/** Open loop: each client starts a turn (lookup, record) this often on average (exponential gaps). */
const OPEN_TURN_MS = 50;
/** The helper gives back a burst's garbage half a second after its last request: memory is read after this. */
const SETTLE_MS = 1500;

const anchorOf = (i: number): string => i.toString(16).padStart(32, 'a');
const digestsOf = (messages: number): string[] =>
  Array.from({ length: messages }, () => randomBytes(MESSAGE_DIGEST_HEX / 2).toString('hex'));

/** What a run knows of its conversation when a turn starts: how many messages, the SHA-256 state over their digests, and the last digest (its copy of the reply, the same here). */
interface Conversation {
  count: number;
  hash: Hash;
  last: string;
}

/** Times one request of a turn. */
type Timed = <T>(op: 'lookup' | 'record', call: () => Promise<T>) => Promise<T>;

interface Memory {
  rssKb: number;
  anonKb: number;
  fileKb: number;
  heapUsedKb: number;
}

interface LoadResult {
  requests: number;
  /** The helper's own CPU time per request (µs): its cost, whatever the clients cost. */
  helperCpuUsPerRequest: number;
  /** The CPU time of this process, the 32 clients', per request (µs). */
  clientsCpuUsPerRequest: number;
  seconds: number;
  throughput: number;
  lookup: Summary;
  record: Summary;
  all: Summary;
  refused: number;
  /** Bytes the helper read and wrote on its sockets per turn (lookup + record). */
  socketBytesPerTurn: number;
}

/** Bytes a process has read and written through read()/write() (sockets included), from /proc (Linux); NaN elsewhere. */
function procIoBytes(pid: number): number {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(io)?.[1] ?? Number.NaN);
    return field('rchar') + field('wchar');
  } catch {
    return Number.NaN;
  }
}

/** Memory of a process from /proc (Linux), in KiB: resident, and resident split into private (anon) and file-backed. */
function procMemory(pid: number): { rssKb: number; anonKb: number; fileKb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssKb: field('VmRSS'), anonKb: field('RssAnon'), fileKb: field('RssFile') };
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used, in ms, from /proc (Linux); NaN elsewhere. */
function procCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms (USER_HZ 100)
  } catch {
    return Number.NaN;
  }
}

/**
 * A full collection of this process's own heap, before a measured loop. The 32 clients
 * share one heap, and the garbage of the phase before (filling, the last loop) collected
 * in the middle of a measurement stalled every client at once (a 28 ms mark-compact, 6 to
 * 12 ms scavenges under load): latency of the load generator, not of the helper.
 */
function collectOwnGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

export async function helperLoadBench(snapshot: Snapshot, options: { quick: boolean }): Promise<BenchOutcome> {
  const iterations = options.quick ? 20 : 150;
  const fullIterations = options.quick ? 10 : 100;
  const sandbox = new Sandbox(snapshot, 'helper-load');
  const notes: string[] = [];
  const connected = await connectHelper({ start: true, env: sandbox.env, serverScript: snapshot.helperServer });
  if (!connected.ok) throw new Error(`cannot start a helper: ${connected.reason}`);
  const pid = connected.server.pid;
  const socketPath = connected.paths.socket;
  connected.client.close();
  const clients: HelperClient[] = [];
  const fields = {
    toolsFingerprint: 'f'.repeat(32),
    workspace: sandbox.workspace,
    model: 'gpt-5',
    savedBytes: 1000,
    outcome: 'success' as const,
    // Nothing here forgets every chat, which is all the helper compares it with.
    startedAt: monotonicMs(),
  };

  /** Each anchor's conversation as its run knows it: how many messages, and the SHA-256 state over their digests. */
  const conversations = new Map<number, Conversation>();

  /** Fills the cache: ENTRIES branches (each client owns ENTRIES / CLIENTS anchors) knowing `messages` messages. */
  async function fill(messages: number): Promise<void> {
    for (let i = 0; i < ENTRIES; i++) {
      const digests = digestsOf(messages);
      const reply = await clients[i % CLIENTS]!.recordTurn({
        ...fields,
        anchor: anchorOf(i),
        chatId: `chat-${i}`,
        digests: digests.slice(0, -1),
        reply: digests.at(-1)!,
        base: null,
      });
      if (!reply.recorded) throw new Error(`fill: ${reply.message}`);
      conversations.set(i, {
        count: messages,
        hash: createHash('sha256').update(Buffer.from(digests.join(''), 'hex')),
        last: digests.at(-1)!,
      });
    }
  }

  /**
   * One resumed turn of anchor `index`: a lookup whose branch must be the conversation
   * (its count and prefix hash), `between` (a lease, the agent's time), then a record
   * of the turn's user message and reply on the version looked up. `timed` times each
   * request. False when the record was refused.
   */
  async function turn(client: HelperClient, index: number, timed: Timed, between?: (branch: Branch) => Promise<void>): Promise<boolean> {
    const anchor = anchorOf(index);
    const chatId = `chat-${index}`;
    const conversation = conversations.get(index)!;
    const prefix = conversation.hash.copy().digest('hex').slice(0, PREFIX_HEX);
    const { branches } = await timed('lookup', () => client.request('lookup', { anchor }));
    const branch = branches[0];
    if (!branch || branch.knownCount !== conversation.count || branch.prefix !== prefix) {
      throw new Error(`load: the branch of ${anchor} no longer matches its conversation`);
    }
    await between?.(branch);
    const added = randomBytes(MESSAGE_DIGEST_HEX); // two digests: the user's message and the reply
    const base = { version: branch.version, count: branch.knownCount, prefix, last: conversation.last };
    const reply = await timed('record', () => client.record({ ...fields, anchor, chatId, base, added: added.toString('hex') }));
    if (!reply.recorded) return false;
    conversation.count += 2;
    conversation.hash.update(added);
    conversation.last = added.subarray(-MESSAGE_DIGEST_HEX / 2).toString('hex');
    return true;
  }

  /** Closed loop: every client at once, `iterations` turns of its own anchors, each request sent as soon as the last was answered. */
  async function load(iterations: number): Promise<LoadResult> {
    collectOwnGarbage();
    const cpuBefore = procCpuMs(pid);
    const clientsBefore = process.cpuUsage();
    const ioBefore = procIoBytes(pid);
    const latencies = { lookup: [] as number[], record: [] as number[] };
    const timed: Timed = async (op, call) => {
      const t = process.hrtime.bigint();
      const result = await call();
      latencies[op].push(msSince(t));
      return result;
    };
    let refused = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; i < iterations; i++) {
          if (!(await turn(client, c + CLIENTS * (i % (ENTRIES / CLIENTS)), timed))) refused++;
        }
      }),
    );
    const seconds = msSince(started) / 1000;
    const { lookup: lookups, record: records } = latencies;
    const requests = lookups.length + records.length;
    const helperCpuUsPerRequest = ((procCpuMs(pid) - cpuBefore) * 1000) / requests;
    const clientsCpu = process.cpuUsage(clientsBefore);
    const clientsCpuUsPerRequest = (clientsCpu.user + clientsCpu.system) / requests;
    const socketBytesPerTurn = (procIoBytes(pid) - ioBefore) / lookups.length;
    return {
      requests,
      helperCpuUsPerRequest,
      clientsCpuUsPerRequest,
      seconds,
      throughput: requests / seconds,
      lookup: summarize(lookups),
      record: summarize(records),
      all: summarize([...lookups, ...records]),
      refused,
      socketBytesPerTurn,
    };
  }

  /**
   * Open loop: each client starts a turn every OPEN_TURN_MS on average (exponential
   * gaps, seeded), whether or not the helper kept up. A lookup sent late because this
   * client's previous turn was still waiting on the helper counts from when it was due,
   * so a helper falling behind shows in it rather than slowing the load down. Otherwise
   * it counts from when it was sent: Node's timers wake up to a millisecond early or late,
   * and later still when this process is busy with its other clients, and none of that is
   * the helper's. `fromDue` is every lookup counted from its due time, as this benchmark
   * counted before.
   */
  async function openLoad(turnsPerClient: number): Promise<{ latency: Summary; fromDue: Summary }> {
    collectOwnGarbage();
    const random = rng(7);
    const latencies: number[] = [];
    const fromDue: number[] = [];
    const started = performance.now();
    await Promise.all(
      clients.map(async (client, c) => {
        let due = started;
        let free = started;
        for (let i = 0; i < turnsPerClient; i++) {
          due += -Math.log(1 - random()) * OPEN_TURN_MS;
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          const held = free > due;
          const timed: Timed = async (op, call) => {
            const sent = performance.now();
            const result = await call();
            const done = performance.now();
            latencies.push(done - (op === 'lookup' && held ? due : sent));
            fromDue.push(done - (op === 'lookup' ? due : sent));
            return result;
          };
          await turn(client, c + CLIENTS * (i % (ENTRIES / CLIENTS)), timed);
          free = performance.now();
        }
      }),
    );
    return { latency: summarize(latencies), fromDue: summarize(fromDue) };
  }

  /**
   * Turn-shaped: every client runs turns the way a run does (connect, hello, lookup,
   * lease, the agent's time, record, close), 32 at once, the agent taking 10 to
   * `agentMs` ms (seeded, so runs drift apart as real ones do). Latency of each request,
   * as the run sees it.
   */
  async function turns(count: number, agentMs: number): Promise<Summary> {
    const random = rng(42);
    const latencies: number[] = [];
    const timed = async <T>(_op: string, call: () => Promise<T>): Promise<T> => {
      const t = process.hrtime.bigint();
      const result = await call();
      latencies.push(msSince(t));
      return result;
    };
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; i < count; i++) {
          const index = c + CLIENTS * (i % (ENTRIES / CLIENTS));
          const client = await timed('connect', () => HelperClient.connect(socketPath));
          try {
            await timed('hello', () => client.hello());
            await turn(client, index, timed, async (branch) => {
              await timed('lease', () => client.lease(branch.anchor, branch.chatId, branch.version));
              await sleep(10 + random() * (agentMs - 10));
            });
          } finally {
            client.close();
          }
        }
      }),
    );
    return summarize(latencies);
  }

  let typical: LoadResult;
  let typicalOpen: { latency: Summary; fromDue: Summary };
  let turnShaped: Summary;
  let full: LoadResult;
  let fullOpen: { latency: Summary; fromDue: Summary };
  let memory: Memory & { entries: number };
  let rightAfterLoad: Memory;
  let afterLoad: Memory;
  let idle: Memory;
  const openTurns = options.quick ? 10 : 60;
  try {
    for (let c = 0; c < CLIENTS; c++) {
      const client = await HelperClient.connect(socketPath);
      await client.hello();
      clients.push(client);
    }
    /** The helper's memory now, from /proc (its own figure where there is none). */
    const measure = async (): Promise<Memory> => {
      const stats = await clients[0]!.stats();
      const proc = procMemory(pid) ?? { rssKb: stats.memory.rss / 1024, anonKb: Number.NaN, fileKb: Number.NaN };
      return { ...proc, heapUsedKb: stats.memory.heapUsed / 1024 };
    };
    idle = await measure();
    // A typical branch: a long coding session of 200 messages. One pass to warm both sides' code, one measured.
    await fill(200);
    await load(Math.ceil(iterations / 3));
    typical = await load(iterations);
    typicalOpen = await openLoad(openTurns);
    turnShaped = await turns(options.quick ? 5 : 20, 50);
    // The cache full of the largest conversations: 64 branches of 10,000 messages each.
    await fill(10_000);
    await sleep(SETTLE_MS);
    const { entries } = await clients[0]!.stats();
    memory = { ...(await measure()), entries };
    if (entries !== ENTRIES) notes.push(`the helper holds ${entries} entries, not ${ENTRIES}`);
    full = await load(fullIterations);
    fullOpen = await openLoad(openTurns);
    await sleep(300);
    rightAfterLoad = await measure();
    await sleep(SETTLE_MS - 300);
    afterLoad = await measure();
  } finally {
    for (const client of clients) client.close();
    await sandbox.stopHelper();
  }
  if (typical.refused + full.refused > 0) notes.push(`${typical.refused + full.refused} records were refused (conflicts)`);
  const mib = (kb: number): number => round(kb / 1024, 1);
  const ms = (summary: Summary): string => `${round(summary.p50, 2)} / ${round(summary.p99, 2)} ms`;
  const openRate = Math.round((CLIENTS * 2 * 1000) / OPEN_TURN_MS);
  const closedRows = (branches: string, result: LoadResult) => [
    {
      metric: `${CLIENTS} clients, ${branches} branches, closed loop: throughput`,
      value: `${Math.round(result.throughput)} requests/s; CPU a request: helper ${Math.round(result.helperCpuUsPerRequest)} µs, the clients' process ${Math.round(result.clientsCpuUsPerRequest)} µs`,
    },
    {
      metric: `  closed loop p50 / p99 (${result.requests} lookups + records; mostly queueing)`,
      value: ms(result.all),
      goal: 'p99 < 2 ms',
      met: result.all.p99 < 2,
    },
  ];
  const openRows = ({ latency, fromDue }: { latency: Summary; fromDue: Summary }) => ({
    metric: `  open loop, ${openRate} requests/s (a turn every ${OPEN_TURN_MS} ms a client): p50 / p99`,
    value: `${ms(latency)} (${latency.n} requests; every lookup counted from its due time: ${ms(fromDue)})`,
    goal: 'p99 < 2 ms',
    met: latency.p99 < 2,
  });
  return {
    id: 'helper-load',
    title: '5. helper under load',
    rows: [
      ...closedRows('200-message', typical),
      openRows(typicalOpen),
      { metric: '  helper socket bytes per resumed turn (lookup + record)', value: `${Math.round(typical.socketBytesPerTurn)} B` },
      {
        metric: `${CLIENTS} clients running turns (connect, hello, lookup, lease, 10-50 ms, record)`,
        value: `p50 / p99 ${ms(turnShaped)} a request (${turnShaped.n} requests)`,
      },
      ...closedRows('10,000-message', full),
      openRows(fullOpen),
      {
        metric: '  helper socket bytes per resumed turn (lookup + record, a two-message delta)',
        value: `${Math.round(full.socketBytesPerTurn)} B`,
        goal: '≤ 4 KB',
        met: full.socketBytesPerTurn <= 4096,
      },
      {
        metric: 'helper RSS, idle',
        value: `${mib(idle.rssKb)} MiB (private ${mib(idle.anonKb)}, Node binary and libraries ${mib(idle.fileKb)})`,
      },
      {
        metric: `helper RSS, ${memory.entries} entries of 10,000 messages`,
        value: `${mib(memory.rssKb)} MiB (private ${mib(memory.anonKb)}, Node binary and libraries ${mib(memory.fileKb)}; heap used ${mib(memory.heapUsedKb)})`,
      },
      {
        metric: `helper RSS ${SETTLE_MS / 1000} s after the load on them`,
        value: `${mib(afterLoad.rssKb)} MiB, ${mib(afterLoad.rssKb - idle.rssKb)} MiB above idle (private ${mib(afterLoad.anonKb)}; heap used ${mib(afterLoad.heapUsedKb)}); 0.3 s after: ${mib(rightAfterLoad.rssKb)} MiB`,
        goal: '≤ idle + 16 MiB and ≤ 64 MiB',
        met: afterLoad.rssKb - idle.rssKb <= 16 * 1024 && afterLoad.rssKb <= 64 * 1024,
      },
    ],
    data: {
      clients: CLIENTS,
      iterationsPerClient: iterations,
      fullIterationsPerClient: fullIterations,
      openTurnsPerClient: openTurns,
      openTurnMs: OPEN_TURN_MS,
      pid,
      typical,
      typicalOpen,
      turnShaped,
      full,
      fullOpen,
      idle,
      memory,
      rightAfterLoad,
      afterLoad,
    },
    notes,
  };
}
