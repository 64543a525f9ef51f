// Benchmark 5: the helper under load. A real helper process (the snapshot's
// dist/helper/helper-server.js, started the way a run starts it), 32 concurrent client
// connections each doing a resumed turn's lookup then record (the record adds the
// turn's two digests to the version the lookup returned) in a bounded loop; latency
// per request as the client sees it, and the bytes the helper reads and writes per
// turn. Then the helper's memory with its cache full of 64 branches of 10,000
// messages, after filling and after the load on them.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { HelperClient } from '../src/helper/client.js';
import { connectHelper } from '../src/helper/launcher.js';
import { MESSAGE_DIGEST_HEX } from '../src/cache/types.js';
import { rng } from './lib/content.js';
import type { BenchOutcome } from './lib/report.js';
import { msSince, round, summarize, type Summary } from './lib/stats.js';
import { Sandbox, type Snapshot } from './lib/world.js';

const CLIENTS = 32;
const ENTRIES = 64;

const anchorOf = (i: number): string => i.toString(16).padStart(32, 'a');
const digestsOf = (messages: number): string[] =>
  Array.from({ length: messages }, () => randomBytes(MESSAGE_DIGEST_HEX / 2).toString('hex'));

interface LoadResult {
  requests: number;
  /** The helper's own CPU time per request (µs): its cost, whatever the clients cost. */
  helperCpuUsPerRequest: number;
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
  };

  /** Each anchor's conversation as its client knows it: the digests of every message so far. */
  const conversations = new Map<number, string[]>();

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
      conversations.set(i, digests);
    }
  }

  /** Every client, at once: `iterations` resumed turns (lookup, then a record adding a user message and a reply) of its own anchors. */
  async function load(iterations: number): Promise<LoadResult> {
    const cpuBefore = procCpuMs(pid);
    const ioBefore = procIoBytes(pid);
    const lookups: number[] = [];
    const records: number[] = [];
    let refused = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; i < iterations; i++) {
          const index = c + CLIENTS * (i % (ENTRIES / CLIENTS));
          const anchor = anchorOf(index);
          const [user, answer] = digestsOf(2) as [string, string];
          const digests = [...conversations.get(index)!, user];
          let t = process.hrtime.bigint();
          const [branch] = await client.lookup(anchor, digests);
          lookups.push(msSince(t));
          if (branch?.matched !== branch?.knownCount) throw new Error(`load: the branch of ${anchor} no longer matches its conversation`);
          t = process.hrtime.bigint();
          const base = branch ? { version: branch.version, count: branch.knownCount } : null;
          const reply = await client.recordTurn({ ...fields, anchor, chatId: `chat-${index}`, digests, reply: answer, base });
          records.push(msSince(t));
          if (!reply.recorded) refused++;
          else conversations.set(index, [...digests, answer]);
        }
      }),
    );
    const seconds = msSince(started) / 1000;
    const requests = lookups.length + records.length;
    const helperCpuUsPerRequest = ((procCpuMs(pid) - cpuBefore) * 1000) / requests;
    const socketBytesPerTurn = (procIoBytes(pid) - ioBefore) / lookups.length;
    return {
      requests,
      helperCpuUsPerRequest,
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
   * Turn-shaped: every client runs turns the way a run does (connect, hello, lookup,
   * lease, the agent's time, record, close), 32 at once, the agent taking 10 to
   * `agentMs` ms (seeded, so runs drift apart as real ones do). Latency of each request,
   * as the run sees it.
   */
  async function turns(count: number, agentMs: number): Promise<Summary> {
    const random = rng(42);
    const latencies: number[] = [];
    const timed = async <T>(call: () => Promise<T>): Promise<T> => {
      const t = process.hrtime.bigint();
      const result = await call();
      latencies.push(msSince(t));
      return result;
    };
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; i < count; i++) {
          const index = c + CLIENTS * (i % (ENTRIES / CLIENTS));
          const anchor = anchorOf(index);
          const client = await timed(() => HelperClient.connect(socketPath));
          try {
            await timed(() => client.hello());
            const [user, answer] = digestsOf(2) as [string, string];
            const digests = [...conversations.get(index)!, user];
            const [branch] = await timed(() => client.lookup(anchor, digests));
            if (branch) await timed(() => client.lease(anchor, `chat-${index}`, branch.version));
            await new Promise((resolve) => setTimeout(resolve, 10 + random() * (agentMs - 10)));
            const base = branch ? { version: branch.version, count: branch.knownCount } : null;
            const reply = await timed(() =>
              client.recordTurn({ ...fields, anchor, chatId: `chat-${index}`, digests, reply: answer, base }),
            );
            if (reply.recorded) conversations.set(index, [...digests, answer]);
          } finally {
            client.close();
          }
        }
      }),
    );
    return summarize(latencies);
  }

  let typical: LoadResult;
  let turnShaped: Summary;
  let full: LoadResult;
  let memory: { rssKb: number; anonKb: number; fileKb: number; heapUsedKb: number; entries: number };
  let afterLoad: { rssKb: number; anonKb: number; fileKb: number; heapUsedKb: number };
  let idle: { rssKb: number; anonKb: number; fileKb: number };
  try {
    for (let c = 0; c < CLIENTS; c++) {
      const client = await HelperClient.connect(socketPath);
      await client.hello();
      clients.push(client);
    }
    const nothing = { rssKb: Number.NaN, anonKb: Number.NaN, fileKb: Number.NaN };
    idle = procMemory(pid) ?? { ...nothing, rssKb: (await clients[0]!.stats()).memory.rss / 1024 };
    // A typical branch: a long coding session of 200 messages. One pass to warm both sides' code, one measured.
    await fill(200);
    await load(Math.ceil(iterations / 3));
    typical = await load(iterations);
    turnShaped = await turns(options.quick ? 5 : 20, 50);
    // The cache full of the largest conversations: 64 branches of 10,000 messages each.
    await fill(10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stats = await clients[0]!.stats();
    memory = {
      ...(procMemory(pid) ?? { ...nothing, rssKb: stats.memory.rss / 1024 }),
      heapUsedKb: stats.memory.heapUsed / 1024,
      entries: stats.entries,
    };
    if (stats.entries !== ENTRIES) notes.push(`the helper holds ${stats.entries} entries, not ${ENTRIES}`);
    full = await load(fullIterations);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const loaded = await clients[0]!.stats();
    afterLoad = { ...(procMemory(pid) ?? { ...nothing, rssKb: loaded.memory.rss / 1024 }), heapUsedKb: loaded.memory.heapUsed / 1024 };
  } finally {
    for (const client of clients) client.close();
    await sandbox.stopHelper();
  }
  if (typical.refused + full.refused > 0) notes.push(`${typical.refused + full.refused} records were refused (conflicts)`);
  const mib = (kb: number): number => round(kb / 1024, 1);
  return {
    id: 'helper-load',
    title: '5. helper under load',
    rows: [
      {
        metric: `${CLIENTS} clients, 200-message branches: throughput`,
        value: `${Math.round(typical.throughput)} requests/s; helper CPU ${Math.round(typical.helperCpuUsPerRequest)} µs a request`,
      },
      {
        metric: `  latency p50 / p99 (${typical.requests} lookups + records)`,
        value: `${round(typical.all.p50, 2)} / ${round(typical.all.p99, 2)} ms`,
        goal: 'p99 < 2 ms',
        met: typical.all.p99 < 2,
      },
      { metric: '  helper socket bytes per resumed turn (lookup + record)', value: `${Math.round(typical.socketBytesPerTurn)} B` },
      {
        metric: `${CLIENTS} clients running turns (connect, hello, lookup, lease, 10-50 ms, record)`,
        value: `p50 / p99 ${round(turnShaped.p50, 2)} / ${round(turnShaped.p99, 2)} ms a request (${turnShaped.n} requests)`,
      },
      {
        metric: `${CLIENTS} clients, 10,000-message branches: throughput`,
        value: `${Math.round(full.throughput)} requests/s; helper CPU ${Math.round(full.helperCpuUsPerRequest)} µs a request`,
      },
      {
        metric: `  latency p50 / p99 (${full.requests} lookups + records)`,
        value: `${round(full.all.p50, 2)} / ${round(full.all.p99, 2)} ms`,
        goal: 'p99 < 2 ms',
        met: full.all.p99 < 2,
      },
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
        metric: `helper RSS after the load on them`,
        value: `${mib(afterLoad.rssKb)} MiB, ${mib(afterLoad.rssKb - idle.rssKb)} MiB above idle (private ${mib(afterLoad.anonKb)}; heap used ${mib(afterLoad.heapUsedKb)})`,
        goal: '≤ idle + 16 MiB and ≤ 64 MiB',
        met: afterLoad.rssKb - idle.rssKb <= 16 * 1024 && afterLoad.rssKb <= 64 * 1024,
      },
    ],
    data: {
      clients: CLIENTS,
      iterationsPerClient: iterations,
      fullIterationsPerClient: fullIterations,
      pid,
      typical,
      turnShaped,
      full,
      idle,
      memory,
      afterLoad,
    },
    notes,
  };
}
