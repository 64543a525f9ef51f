// One measurement of benchmark 4 in a fresh process (cold JIT, its own peak RSS),
// through the real modules in the order a run calls them:
//   node --import tsx bench/scale-worker.ts <transcript.json> <known.txt>
// Prints one JSON line. Not part of the run path; only the benchmark starts it.
import { readFileSync } from 'node:fs';
import { parseCallerArgs } from '../src/agent/argv.js';
import { resolveWorkspace } from '../src/agent/workspace.js';
import { knownPrefixHash, pack, prefixHash } from '../src/cache/known.js';
import type { MatchedBranch } from '../src/cache/types.js';
import { resolveSettings } from '../src/config.js';
import { analyzeTurn, planTurn, type TurnContext } from '../src/turn/plan.js';
import { messageDigest } from '../src/resume/digests.js';
import { parseTranscript } from '../src/transcript/parse.js';
import { STREAM_ARGS } from './lib/conversation.js';

const [transcriptFile, knownFile] = process.argv.slice(2);
if (!transcriptFile || !knownFile) throw new Error('usage: scale-worker.ts <transcript.json> <known.txt>');
const known = readFileSync(knownFile, 'utf8');
const knownCount = known.length / 32;
const knownPrefix = prefixHash(Buffer.from(known, 'hex'), knownCount);
const rssBeforeKb = process.resourceUsage().maxRSS;
const now = (): number => performance.now();

const t0 = now();
const bytes = readFileSync(transcriptFile);
const t1 = now();
const conversation = parseTranscript(bytes);
const t2 = now();
// Our own switch: with the plugin's on, a prompt in its layout is never proven (plugin-resumes).
const env = { CURSOR_RESUME_ENABLED: '1' };
const context: TurnContext = {
  caller: parseCallerArgs(STREAM_ARGS),
  settings: resolveSettings(env, {}, {}).settings,
  env,
  workspace: resolveWorkspace(conversation.workspace ?? '.'),
};
const analysis = analyzeTurn(conversation, context);
const t3 = now();
// What the client does with a lookup's branch: its own prefix hash at the branch's count (the last message as cursor's reply), compared.
const matched =
  knownPrefixHash(pack(analysis.digests), knownCount, analysis.replyDigestAt(knownCount - 1)) === knownPrefix ? knownCount : 0;
const branch: MatchedBranch = {
  anchor: analysis.anchor!,
  chatId: 'bench-chat',
  toolsFingerprint: analysis.toolsFingerprint,
  workspace: analysis.workspace,
  model: analysis.model,
  knownCount,
  prefix: knownPrefix,
  matched,
  bytesSaved: 0,
  version: 1,
  turns: 1,
  state: 'ok',
  lastOutcome: 'success',
  createdAt: Date.now(),
  updatedAt: Date.now(),
  ttlLeftMs: 3_600_000,
  leased: false,
};
const plan = planTurn(analysis, context, { branches: [branch], missingChats: new Set() });
const t4 = now();
const peakRssKb = process.resourceUsage().maxRSS;
// Hashing alone, for the breakdown: a second pass over the same messages (warm, so a lower bound).
const t5 = now();
conversation.messages.map(messageDigest);
const hashWarmMs = now() - t5;

process.stdout.write(
  `${JSON.stringify({
    messages: conversation.messages.length,
    bytes: bytes.length,
    readMs: t1 - t0,
    parseMs: t2 - t1,
    analyzeMs: t3 - t2,
    decideMs: t4 - t3,
    totalMs: t4 - t1,
    hashWarmMs,
    decision: plan.decision,
    promptBytes: plan.promptBytes,
    rssBeforeKb,
    peakRssKb,
  })}\n`,
);
