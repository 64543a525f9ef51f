// `cursor-resume simulate FILE...`: a conversation's turns, in order, through the
// decision engine a run uses (analyzeTurn + planTurn), with a private in-memory
// BranchStore and a scripted agent. No helper, no cursor-agent, no account, no
// file written: a CI job can reproduce what a real sequence of runs decides.
//
// The scripted agent: cursor's reply to turn N is the assistant message that the
// next later transcript of the same conversation (the same anchor, beginning with
// turn N's messages) carries right after turn N's messages. Side calls (a title
// request) and other conversations in between are skipped, as they are on real
// runs: they never touch this conversation's chat. The same transcript sent again
// is a retry: the reply a later transcript carries is the retry's, not the earlier
// turn's. A turn whose reply is unknown (no later transcript continues it, the one
// that does carries no reply, or a retry of it comes first) is treated as a run
// whose cursor-agent gave no usable reply: nothing is recorded, and a branch it
// resumed stays as it was. That is what a real run does, and the
// only safe reading: a transcript without cursor's reply is either a retry after
// a failure (the chat never got the message) or has lost the reply.
import type { Command } from 'commander';
import { CliError, UsageError } from '../errors.js';
import { pack } from '../cache/known.js';
import { BranchStore } from '../cache/store.js';
import { describeResume, resolveSettings, type Settings } from '../config.js';
import { limitsFor, sayIgnoredEnvLimits } from '../turn/helper-env.js';
import { analyzeTurn, cacheUse, planTurn, type Plan } from '../turn/plan.js';
import { knownAfter, recordFor } from '../turn/record.js';
import { recordBase } from '../helper/client.js';
import { bytes, paint, printJson, table } from '../present.js';
import { plural } from '../plural.js';
import type { Analysis, DecisionKind } from '../resume/decide.js';
import { firstContinuations } from '../resume/prefix.js';
import { REASONS, type Reason } from '../resume/reasons.js';
import { cheapJson } from '../transcript/parse.js';
import { TranscriptError } from '../transcript/errors.js';
import type { Conversation, Message } from '../transcript/types.js';
import { contextFor, decodeFrom, parseFrom, readSource, runLine } from '../turn/input.js';

/** Exit status when the decisions differ from --expect. */
export const EXIT_EXPECT_FAILED = 1;
const DECISIONS: ReadonlyArray<DecisionKind> = ['fresh', 'resume-delta', 'resume-full'];
const HOLDER = 'simulate';

interface SimulateOptions {
  json?: boolean;
  expect?: string;
  resumeOn?: boolean;
  model?: string;
  workspace?: string;
  gap?: string;
}

interface Turn {
  source: string;
  conversation: Conversation;
}

interface Expected {
  decision: DecisionKind;
  reason?: Reason;
}

export function addSimulateCommand(program: Command): Command {
  return program
    .command('simulate')
    .description('run a sequence of transcripts through the decision engine, with a private cache and a scripted agent')
    .argument('<file...>', 'transcripts in turn order; a .jsonl or .ndjson file (or "-" for stdin) holds one per line')
    .option(
      '--expect <decisions>',
      'comma-separated decisions to expect, one per turn; each may name its reason: fresh:no-entry,resume-delta',
    )
    .option('--resume-on', 'simulate with resume on, whatever the resume setting says')
    .option('--model <model>', 'as on a run line, for every turn')
    .option('--workspace <path>', 'as on a run line, for every turn')
    .option('--gap <minutes>', 'minutes that pass between turns (to see entries expire; at most 525600, a year)', '0')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Each transcript is one turn, planned exactly as a run plans it (the same analysis, decision, prompt and
argv), against an in-memory cache that lives for this command only. cursor's reply to turn N is the
assistant message that the next later transcript of the same conversation (same anchor, beginning with
turn N's messages) carries right after them; side calls and other conversations in between are
skipped. That reply is recorded as a run records a successful turn (the chat IDs are sim-1, sim-2,
...). The same transcript given again (before one continues it) is a retry: the reply is the retry's,
and the earlier turn has none. A turn with no such reply (none continues it, a retry after a failure,
or one retried) is not recorded, as a run whose cursor-agent gave no reply.

Resume follows the resume setting (CURSOR_RESUME_ENABLED, else config set resume, else
CURSOR_ACP_SESSION_RESUME), as a run
does (off: every turn is fresh); --resume-on turns it on. With CURSOR_ACP_SESSION_RESUME on, prompts in OpenCode's
plugin layout are never resumed (plugin-resumes), --resume-on or not, as in a run. The config file's settings apply
(side-call patterns, unsafeDelta, ttlMinutes, maxEntries).
No helper is started, nothing is run, nothing is written.

Exit status: 0; 1 when --expect is given and the decisions differ (the first difference is named on
stderr); 2 for a bad command line, a transcript that cannot be read, a setting not
allowed, or a config file that is broken or cannot be read.

Examples:
  cursor-resume simulate --resume-on turn1.json turn2.json turn3.json
  CURSOR_RESUME_ENABLED=1 cursor-resume simulate --expect fresh,resume-delta,resume-delta turn*.json
  cursor-resume simulate --resume-on --json conversation.jsonl | jq '.turns[] | [.decision, .reason]'
  cursor-resume simulate --resume-on --gap 61 --expect fresh,fresh:expired a.json b.json`,
    )
    .action(async (files: string[], options: SimulateOptions) => {
      const expected = options.expect === undefined ? undefined : parseExpect(options.expect);
      const gapMs = parseGap(options.gap ?? '0');
      // --resume-on counts as a run-line flag would: it wins over every other source.
      const resolved = resolveSettings(process.env, options.resumeOn ? { resume: true } : {});
      const { settings } = resolved;
      sayIgnoredEnvLimits();
      const turns = await loadTurns(files);
      const results = simulate(turns, options, settings, process.env, gapMs);
      const difference = expected === undefined ? null : firstDifference(expected, results);
      const enabled = settings.resume;

      if (options.json) {
        printJson({
          resume: { enabled, from: options.resumeOn ? '--resume-on' : describeResume(resolved, process.env).from },
          turns: results,
          totals: totals(results),
          ...(expected === undefined
            ? {}
            : { expect: { ok: difference === null, expected: expected.map(showExpected), firstDifference: difference } }),
        });
      } else {
        process.stdout.write(render(results, enabled));
        // A check that passes says so: silence would look the same as no check.
        if (expected !== undefined && difference === null) process.stdout.write(`expected decisions: all ${expected.length} match\n`);
      }
      if (difference !== null) throw new CliError(difference.message, EXIT_EXPECT_FAILED);
    });
}

function parseExpect(text: string): Expected[] {
  const items = text.split(',').map((s) => s.trim());
  return items.map((item) => {
    const [decision, reason, extra] = item.split(':');
    if (!DECISIONS.includes(decision as DecisionKind) || extra !== undefined) {
      throw new UsageError(
        `--expect: ${JSON.stringify(item)} is not a decision; use ${DECISIONS.join(', ')}, each optionally followed by :reason (fresh:no-entry)`,
      );
    }
    if (reason !== undefined && !Object.hasOwn(REASONS, reason)) {
      throw new UsageError(`--expect: ${JSON.stringify(reason)} is not a reason code; the codes are ${Object.keys(REASONS).join(', ')}`);
    }
    return reason === undefined ? { decision: decision as DecisionKind } : { decision: decision as DecisionKind, reason: reason as Reason };
  });
}

/** A year: any gap longer than the cache's lifetime (an hour at most) expires alike. */
const MAX_GAP_MINUTES = 525_600;

function parseGap(text: string): number {
  const minutes = Number(text);
  if (text.trim() === '' || !Number.isFinite(minutes) || minutes < 0)
    throw new UsageError(`--gap: ${JSON.stringify(text)} is not a number of minutes (0 or more)`);
  // Gaps add up turn by turn: past Infinity, an age is Infinity - Infinity, NaN, which never expires a chat.
  if (minutes > MAX_GAP_MINUTES)
    throw new UsageError(
      `--gap: ${JSON.stringify(text)} is over a year (${MAX_GAP_MINUTES} minutes); any gap over the cache's lifetime expires alike`,
    );
  return minutes * 60_000;
}

/** The names of files that hold one transcript per line (JSON Lines goes by both). */
const JSON_LINES = /\.(jsonl|ndjson)$/;

/** Every turn of every file, in order. A .jsonl or .ndjson file (and stdin) holds one transcript per non-blank line. */
async function loadTurns(files: string[]): Promise<Turn[]> {
  if (files.filter((f) => f === '-').length > 1) throw new UsageError('"-" (stdin) can be given once');
  const turns: Turn[] = [];
  for (const file of files) {
    const data = await readSource(file);
    if (file !== '-' && !JSON_LINES.test(file)) {
      turns.push({ source: file, conversation: parseOne(data, file) });
      continue;
    }
    const label = file === '-' ? 'stdin' : file;
    const before = turns.length;
    decodeFrom(data, label)
      .split('\n')
      .forEach((line, i) => {
        if (line.trim() !== '') turns.push({ source: `${label}:${i + 1}`, conversation: parseFrom(line, `${label}:${i + 1}`) });
      });
    // Named, so meant to hold turns: one that holds none is a mistake, not a source to pass over.
    if (turns.length === before)
      throw new UsageError(`no transcripts ${file === '-' ? 'on stdin' : `in ${file}`} (one a line, blank lines aside)`);
  }
  return turns;
}

/**
 * One transcript from a file with any other name. When it is no JSON because a second
 * JSON object follows the first on the next line, the useful next step is the file's
 * name, not the JSON error. Only its first lines are looked at, each size-checked as a
 * transcript is: the file may be huge.
 */
function parseOne(data: Buffer, file: string): Conversation {
  try {
    return parseFrom(data, file);
  } catch (error) {
    if (error instanceof TranscriptError && error.message.includes('not valid JSON') && startsAsJsonLines(data)) {
      throw new UsageError(
        `${file} looks like JSON Lines (a JSON object per line): name it .jsonl (or .ndjson) to simulate one turn per line`,
      );
    }
    throw error;
  }
}

function startsAsJsonLines(data: Buffer): boolean {
  const lines: string[] = [];
  for (let start = 0; lines.length < 2 && start < data.length;) {
    const end = data.indexOf(0x0a, start);
    const line = data.toString('utf8', start, end < 0 ? data.length : end);
    if (line.trim() !== '') lines.push(line);
    start = end < 0 ? data.length : end + 1;
  }
  return lines.length === 2 && lines.every(isJsonObject);
}

function isJsonObject(text: string): boolean {
  const json = cheapJson(text);
  return json !== undefined && typeof json.value === 'object' && json.value !== null && !Array.isArray(json.value);
}

/**
 * Where a scripted cursor's reply to turn `i` comes from: the first later turn of
 * the same conversation (the same anchor, its messages beginning with turn i's),
 * and the message it carries right after them when that is cursor's. Another
 * conversation, or a side call (its first system or user message is not turn
 * i's), fails that test and is skipped. The same transcript sent again before any
 * later turn continues it is a retry: the reply a later transcript carries is the
 * retry's, so turn i has none (`retriedBy`), as a run that failed. `continuedBy` is
 * null when no later turn continues this one. `continuations`: firstContinuations
 * over every turn's digests as asReplies gives them; `repeats`: firstRepeats over the same.
 */
function scriptedReply(
  analyses: ReadonlyArray<Analysis>,
  continuations: ReadonlyArray<number | null>,
  repeats: ReadonlyArray<number | null>,
  i: number,
): { continuedBy: number | null; retriedBy: number | null; reply: Message | undefined } {
  const continuedBy = continuations[i]!;
  const repeatedBy = repeats[i]!;
  if (repeatedBy !== null && (continuedBy === null || repeatedBy < continuedBy))
    return { continuedBy: null, retriedBy: repeatedBy, reply: undefined };
  if (continuedBy === null) return { continuedBy, retriedBy: null, reply: undefined };
  const message = analyses[continuedBy]!.conversation.messages[analyses[i]!.digests.length];
  return { continuedBy, retriedBy: null, reply: message?.role === 'assistant' ? message : undefined };
}

/**
 * For each turn, the first later turn of the same anchor that is the same transcript again
 * (the same digests), or null. One pass, keyed by anchor and digests: linear in their total length.
 */
function firstRepeats(sequences: ReadonlyArray<{ anchor: string | null; digests: ReadonlyArray<string> }>): Array<number | null> {
  const found: Array<number | null> = sequences.map(() => null);
  const latest = new Map<string, number>();
  sequences.forEach(({ anchor, digests }, j) => {
    if (anchor === null) return;
    const key = `${anchor}:${digests.join(',')}`;
    const earlier = latest.get(key);
    if (earlier !== undefined) found[earlier] = j;
    latest.set(key, j);
  });
  return found;
}

/**
 * A turn's digests with each assistant message's as a reply (digests.ts): a later turn continues
 * this one when it begins with these. Whether it holds cursor's earlier replies exactly as this
 * turn sent them along is the engine's to judge (diverged), as a run records a turn whatever the
 * next one holds.
 */
const asReplies = (analysis: Analysis): string[] =>
  analysis.digests.map((d, k) => (analysis.conversation.messages[k]!.role === 'assistant' ? analysis.replyDigestAt(k) : d));

interface TurnResult {
  turn: number;
  source: string;
  decision: DecisionKind;
  reason: Reason;
  detail: string;
  anchor: string | null;
  chatId: string | null;
  promptBytes: number;
  fullPromptBytes: number;
  recorded: boolean;
  note: string;
  argv: string[];
  prompt: string;
}

function simulate(turns: Turn[], options: SimulateOptions, settings: Settings, env: NodeJS.ProcessEnv, gapMs: number): TurnResult[] {
  // The limits a helper started by a run would have (config file, lowered by the environment).
  let now = 0;
  const started = Date.now();
  const store = new BranchStore({
    ...limitsFor(settings, env),
    clock: () => now,
    wallClock: () => started + now,
  });
  const caller = runLine(options);
  let chats = 0;
  // Every turn analysed up front (pure): a turn's reply is found in a later one.
  const analysed = turns.map((turn) => {
    const { context } = contextFor(turn.conversation, caller, settings, env);
    return { context, analysis: analyzeTurn(turn.conversation, context) };
  });
  const analyses = analysed.map((a) => a.analysis);
  const sequences = analyses.map((a) => ({ anchor: a.anchor, digests: asReplies(a) }));
  const continuations = firstContinuations(sequences);
  const repeats = firstRepeats(sequences);
  return turns.map((turn, i): TurnResult => {
    if (i > 0) now += gapMs;
    const { context, analysis } = analysed[i]!;
    const packed = pack(analysis.digests);
    const use = cacheUse(analysis, context);
    const branches = use.asked
      ? store.lookup(use.anchor).map((b) => ({ ...b, matched: store.matchedBy(b.anchor, b.chatId, analysis, packed) }))
      : [];
    const plan: Plan = planTurn(analysis, context, { branches });
    // As a run does: lease the chat before using it. One turn at a time, so it is always granted.
    if (plan.decision !== 'fresh') store.lease(plan.anchor, plan.chatId, plan.baseVersion, HOLDER);
    const { continuedBy, retriedBy, reply } = scriptedReply(analyses, continuations, repeats, i);
    let chatId = plan.chatId;
    let recorded = false;
    let note: string;
    if (!plan.record || plan.anchor === null) {
      note = 'not recorded: this turn never touches the cache';
    } else if (!reply) {
      store.release(HOLDER);
      note =
        retriedBy !== null
          ? `not recorded: turn ${retriedBy + 1} sends the same transcript again (a retry: this turn's reply never reached the caller)`
          : continuedBy !== null
            ? `not recorded: the next transcript of this conversation (turn ${continuedBy + 1}) carries no reply to this turn`
            : i === turns.length - 1
              ? 'not recorded: the last turn (no later transcript carries its reply)'
              : 'not recorded: no later transcript continues this conversation';
    } else {
      chatId = plan.decision === 'fresh' ? `sim-${++chats}` : plan.chatId;
      // Exactly what a run records: every message's digest, then cursor's reply.
      const text = reply.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join(' ');
      const calls = reply.parts.flatMap((p) => (p.type === 'tool-call' ? [{ id: p.id, name: p.name }] : []));
      // Exactly what a run records, put into the store as the client puts it on the wire.
      const {
        digests,
        reply: replyDigest,
        base,
        ...fields
      } = recordFor({ ...plan, anchor: plan.anchor }, analysis, chatId, { text, calls }, now);
      const result = store.record(
        {
          ...fields,
          base: base && recordBase(digests, base),
          added: pack([...digests.slice(base?.count ?? 0), replyDigest]),
        },
        HOLDER,
      );
      recorded = result.recorded;
      note = result.recorded ? `recorded: chat ${chatId} knows ${knownAfter(analysis)} messages` : `not recorded: ${result.message}`;
    }
    return {
      turn: i + 1,
      source: turn.source,
      decision: plan.decision,
      reason: plan.reason,
      detail: plan.detail,
      anchor: plan.anchor,
      chatId,
      promptBytes: plan.promptBytes,
      fullPromptBytes: plan.fullPromptBytes(),
      recorded,
      note,
      argv: plan.argv,
      prompt: plan.prompt,
    };
  });
}

function totals(results: TurnResult[]) {
  const decisions: Record<DecisionKind, number> = { fresh: 0, 'resume-delta': 0, 'resume-full': 0 };
  for (const r of results) decisions[r.decision]++;
  const promptBytes = results.reduce((s, r) => s + r.promptBytes, 0);
  const fullPromptBytes = results.reduce((s, r) => s + r.fullPromptBytes, 0);
  return { turns: results.length, decisions, promptBytes, fullPromptBytes, savedBytes: fullPromptBytes - promptBytes };
}

const showExpected = (e: Expected): string => (e.reason ? `${e.decision}:${e.reason}` : e.decision);

function firstDifference(expected: Expected[], results: TurnResult[]) {
  for (let i = 0; i < Math.max(expected.length, results.length); i++) {
    const want = expected[i];
    const got = results[i];
    if (want === undefined || got === undefined) {
      return {
        turn: i + 1,
        expected: want ? showExpected(want) : null,
        actual: got ? `${got.decision}:${got.reason}` : null,
        message: `--expect names ${plural(expected.length, 'decision')} but there ${results.length === 1 ? 'is' : 'are'} ${plural(results.length, 'turn')}`,
      };
    }
    if (want.decision !== got.decision || (want.reason !== undefined && want.reason !== got.reason)) {
      return {
        turn: i + 1,
        expected: showExpected(want),
        actual: `${got.decision}:${got.reason}`,
        message: `turn ${i + 1} (${got.source}): expected ${showExpected(want)}, got ${got.decision} (${got.reason}: ${got.detail})`,
      };
    }
  }
  return null;
}

function render(results: TurnResult[], enabled: boolean): string {
  const c = paint();
  const rows = results.map((r) => [
    String(r.turn),
    r.source,
    r.decision === 'fresh' ? c.yellow(r.decision) : c.green(r.decision),
    r.reason,
    r.chatId ?? c.dim('-'),
    bytes(r.promptBytes),
    bytes(r.fullPromptBytes),
    c.dim(r.detail),
  ]);
  const out = table(
    [
      { header: 'TURN', align: 'right' },
      { header: 'TRANSCRIPT' },
      { header: 'DECISION' },
      { header: 'REASON' },
      { header: 'CHAT' },
      { header: 'PROMPT', align: 'right' },
      { header: 'FULL', align: 'right' },
      { header: 'WHY' },
    ],
    rows,
    (h) => c.bold(h),
  );
  const t = totals(results);
  const counts = DECISIONS.filter((d) => t.decisions[d] > 0)
    .map((d) => `${t.decisions[d]} ${d}`)
    .join(', ');
  const saved = t.fullPromptBytes > 0 ? Math.round((t.savedBytes / t.fullPromptBytes) * 100) : 0;
  let summary = `${plural(t.turns, 'turn')}: ${counts}; sent ${bytes(t.promptBytes)} of ${bytes(t.fullPromptBytes)} full (${saved}% saved)\n`;
  if (!enabled) summary += c.yellow('resume is off: every turn is fresh; set CURSOR_RESUME_ENABLED=1, or pass --resume-on\n');
  return out + summary;
}
