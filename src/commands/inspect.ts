// `cursor-resume inspect`: what the helper holds, as a table; and
// `cursor-resume inspect --transcript FILE`: why a run would decide what it
// decides for that transcript, step by step. The second goes through the same
// analyzeTurn/planTurn as a run, with the same cache lookup (through a running
// helper, starting none) and the same chat-store check, so it cannot disagree.
// Message text shown comes only from the given transcript: the cache has none.
import type { Command } from 'commander';
import { handsOver } from '../agent/argv.js';
import { CliError, UsageError } from '../errors.js';
import { escapeControls } from '../escape.js';
import type { MatchedBranch } from '../cache/types.js';
import { describeResume, resolveSettings, type Resolved } from '../config.js';
import { findingEnv, sayIgnoredEnvLimits } from '../turn/helper-env.js';
import { isSameVersion, PATIENT } from '../helper/client.js';
import { probeHelper } from '../helper/launcher.js';
import type { BranchSummary } from '../helper/protocol.js';
import { viewCache, type CacheView } from '../turn/cache-view.js';
import { analyzeTurn, dryRunView, planTurn, runApiKey, type Plan } from '../turn/plan.js';
import { ago, bytes, fields, left, paint, preview, printJson, quoted, shellQuote, shortIds, shortPath, table } from '../present.js';
import { plural } from '../plural.js';
import type { Analysis, BranchCheck } from '../resume/decide.js';
import { REASONS } from '../resume/reasons.js';
import { readOpencodeText, renderOpencodeMessage } from '../transcript/opencode-text.js';
import type { Conversation, Message } from '../transcript/types.js';
import { goneChats, localContextFor, parseFrom, readSource, runLine, type WorkspaceSource } from '../turn/input.js';

interface InspectOptions {
  transcript?: string;
  model?: string;
  workspace?: string;
  json?: boolean;
}

export function addInspectCommand(program: Command): Command {
  return program
    .command('inspect')
    .description("list the helper's cache entries, or explain the decision for a transcript without running anything")
    .argument('[run-line...]', 'with --transcript, after "--": the rest of the run line to explain (cursor-agent flags)')
    .option('--transcript <file>', 'explain the decision for this transcript ("-" reads stdin)')
    .option('--model <model>', "as on a run line: wins over the transcript's model")
    .option('--workspace <path>', "as on a run line: wins over the transcript's workspace (default: the current directory)")
    .option('--json', 'print one JSON object (no colour)')
    .addHelpText(
      'after',
      `
Without --transcript: one row per cached branch (a Cursor chat of a conversation): anchor, workspace,
model, chat ID, which branch of its anchor (when a conversation has more than one), turns, messages
known, time since its last turn (IDLE), time left, last outcome, prompt bytes saved so far (with
--json, ageMs is the time since the last turn,
updatedAt, not since createdAt). Nothing is started: with no helper running it says so (exit 0). The
cache holds hashes, IDs, counts and times, never message text.

With --transcript: the decision a run would make for that transcript, step by step: how it was read
(a prompt in the OpenCode plugin's layout block by block, each frame or message with its role, size and
first words; for other plain text, why it is not in that layout), resume on or off and why, side call or not, the anchor and what went into it, the branches found (looked up through a
running helper; with none, or one that does not answer, which a run replaces, the cache is empty),
expiry, tool fingerprint, prefix proof, delta size against the full prompt, and the decision with its
reason code. Runs nothing and changes nothing (its lookup leaves the entries' order, expiry and the
helper's limits as they were; the helper takes any forget marks first, as before a run's lookup), yet
plans as the next run will: a chat older than the lifetime the settings ask for is expired, and one
past the count of entries they ask for (least recently used first) is gone. Set CURSOR_RESUME_ENABLED
(or CURSOR_ACP_SESSION_RESUME) as the run you are explaining has it.

Exit status: 0; 1 when, without --transcript, the helper cannot be reached or answers badly, or the
runtimeDir setting cannot be used (with --transcript, a folder that cannot be used is part of
the explanation: reason no-cache, as a run would get, and exit 0); 2 for a bad command line, and with
--transcript for a bad transcript or setting (a runtimeDir that is not an absolute path, or too long for
the socket, included; without it, a setting not allowed is ignored with a warning, as a run ignores it).

Examples:
  cursor-resume inspect
  cursor-resume inspect --json | jq '.entries[] | {anchor, chatId, turns}'
  CURSOR_RESUME_ENABLED=1 cursor-resume inspect --transcript body.json
  CURSOR_RESUME_ENABLED=1 cursor-resume inspect --transcript - --model gpt-5 < body.json
  cursor-resume inspect --transcript body.json --json -- --print --output-format stream-json --force`,
    )
    .action(async (rest: string[], options: InspectOptions) => {
      if (options.transcript === undefined) {
        if (rest.length > 0 || options.model !== undefined || options.workspace !== undefined) {
          throw new UsageError(
            'a run line, --model and --workspace go with --transcript FILE: cursor-resume inspect --transcript body.json --model gpt-5',
          );
        }
        await listEntries(options.json === true);
        return;
      }
      // Explaining a decision needs the settings a run would use (and refuses a config file a run refuses).
      const resolved = resolveSettings(process.env, {});
      sayIgnoredEnvLimits();
      await explain(options.transcript, options, rest, resolved);
    });
}

// ---- the table ----------------------------------------------------------------

async function listEntries(json: boolean): Promise<void> {
  const probe = await probeHelper({ env: findingEnv(), ...PATIENT });
  if (!probe.running) {
    if ('error' in probe) {
      throw new CliError(`cannot reach the helper: ${probe.error}`);
    }
    if (json) printJson({ running: false, socketPath: probe.paths.socket, entries: [] });
    else
      process.stdout.write(
        `no helper running (socket ${probe.paths.socket}): nothing is cached.\nA run with resume on (CURSOR_RESUME_ENABLED=1) starts one.\n`,
      );
    return;
  }
  let branches: BranchSummary[];
  try {
    branches = await probe.client.list();
  } catch (error) {
    throw new CliError(
      `the helper (pid ${probe.hello.pid}, version ${probe.hello.version}) did not list its entries: ${(error as Error).message}`,
    );
  } finally {
    probe.client.close();
  }
  const now = Date.now();
  const ordered = groupByAnchor(branches);
  const counts = new Map<string, number>();
  for (const b of branches) counts.set(b.anchor, (counts.get(b.anchor) ?? 0) + 1);
  const { pid, version, limits } = probe.hello;

  if (json) {
    printJson({
      running: true,
      pid,
      version,
      current: isSameVersion(probe.hello),
      socketPath: probe.paths.socket,
      limits: { ttlMs: limits.ttlMs, maxEntries: limits.maxEntries },
      entries: ordered.map((b) => ({
        anchor: b.anchor,
        chatId: b.chatId,
        workspace: b.workspace,
        model: b.model,
        branches: counts.get(b.anchor),
        turns: b.turns,
        knownCount: b.knownCount,
        createdAt: new Date(b.createdAt).toISOString(),
        updatedAt: new Date(b.updatedAt).toISOString(),
        ageMs: Math.max(0, now - b.updatedAt),
        ttlLeftMs: Math.max(0, Math.round(b.ttlLeftMs)),
        lastOutcome: b.lastOutcome,
        state: b.state,
        leased: b.leased,
        version: b.version,
        bytesSaved: b.bytesSaved,
        toolsFingerprint: b.toolsFingerprint,
      })),
    });
    return;
  }

  const c = paint();
  const helperLine = `helper pid ${pid}, version ${version}${isSameVersion(probe.hello) ? '' : c.yellow(' (another version: the next run replaces it)')}`;
  if (ordered.length === 0) {
    process.stdout.write(`no cached entries (${helperLine}).\n`);
    return;
  }
  const anchors = shortIds(
    ordered.map((b) => b.anchor),
    7,
  );
  const chats = shortIds(
    ordered.map((b) => b.chatId),
    8,
  );
  const index = new Map<string, number>();
  // Which branch of its conversation a row is: a column only when some conversation has more than one.
  const branched = [...counts.values()].some((n) => n > 1);
  const rows = ordered.map((b) => {
    const n = (index.get(b.anchor) ?? 0) + 1;
    index.set(b.anchor, n);
    const outcome = b.lastOutcome === 'success' ? c.green(b.lastOutcome) : c.yellow(b.lastOutcome);
    const notes = [b.state === 'unknown' ? 'history unknown' : '', b.leased ? 'running now' : ''].filter(Boolean);
    return [
      c.yellow(anchors.get(b.anchor)!),
      // The helper's record of a transcript's workspace and model: no C0 controls, but C1 and bidi ones may be there.
      shortPath(escapeControls(b.workspace), process.env.HOME, 32),
      b.model === '' ? c.dim('default') : escapeControls(b.model),
      chats.get(b.chatId)!,
      ...(branched ? [`${n}/${counts.get(b.anchor)}`] : []),
      String(b.turns),
      String(b.knownCount),
      // Short cells under their headers: the table fits 80 columns for a short workspace.
      ago(now - b.updatedAt).replace(/^just now$/, 'now'),
      b.ttlLeftMs <= 0 ? c.red('expired') : left(b.ttlLeftMs).replace(/ left$/, ''),
      notes.length > 0 ? `${outcome} (${notes.join(', ')})` : outcome,
      bytes(b.bytesSaved),
    ];
  });
  const columns = [
    { header: 'ANCHOR' },
    { header: 'WORKSPACE' },
    { header: 'MODEL' },
    { header: 'CHAT' },
    ...(branched ? [{ header: 'BRANCH', align: 'right' as const }] : []),
    { header: 'TURNS', align: 'right' as const },
    { header: 'KNOWN', align: 'right' as const },
    { header: 'IDLE' },
    { header: 'LEFT' },
    { header: 'OUTCOME' },
    { header: 'SAVED', align: 'right' as const },
  ];
  const saved = ordered.reduce((sum, b) => sum + b.bytesSaved, 0);
  process.stdout.write(table(columns, rows, (h) => c.bold(h)));
  process.stdout.write(
    c.dim(
      `${plural(ordered.length, 'branch', 'branches')} of ${plural(counts.size, 'conversation')} (${ordered.length} of ${limits.maxEntries} entries), ` +
        `${bytes(saved)} of prompt saved;\n${helperLine}\n`,
    ),
  );
}

/** Conversations with their most recent first, and each one's branches most recent first. */
function groupByAnchor(branches: BranchSummary[]): BranchSummary[] {
  const latest = new Map<string, number>();
  for (const b of branches) latest.set(b.anchor, Math.max(latest.get(b.anchor) ?? 0, b.updatedAt));
  return [...branches].sort(
    (a, b) =>
      latest.get(b.anchor)! - latest.get(a.anchor)! ||
      a.anchor.localeCompare(b.anchor) ||
      b.updatedAt - a.updatedAt ||
      b.version - a.version,
  );
}

// ---- the explanation ------------------------------------------------------------

async function explain(file: string, options: InspectOptions, rest: string[], resolved: Resolved): Promise<void> {
  const { settings } = resolved;
  const caller = runLine(options, rest);
  // A run line with a word (a prompt or a subcommand) or --version reads no transcript: a run hands it
  // all to cursor-agent; with --help alone it prints help. Either way there is no decision to explain.
  if (handsOver(caller) || caller.help) {
    const what = caller.positionals[0] ?? (caller.version ? '--version' : '--help');
    throw new UsageError(
      `inspect --transcript: the run line has ${JSON.stringify(what)}; with a prompt word, a subcommand, --version or --help a run reads no transcript (it hands the line to cursor-agent, or prints help). Give only flags after "--": cursor-resume inspect --transcript body.json -- --print --force`,
    );
  }
  const conversation = parseFrom(await readSource(file), file);
  const { context, given, workspaceFrom } = localContextFor(conversation, caller, settings, process.env);
  const analysis = analyzeTurn(conversation, context);

  // The very lookup a dry run makes: read-only, starting nothing.
  const cache = await viewCache(analysis, context, { mode: 'peek', runtimeDirIgnored: false });
  // As a run does: chats gone from Cursor's store are not resumed.
  const missing = goneChats(context, given, cache.branches);
  const plan = planTurn(analysis, context, { branches: cache.branches, missingChats: missing });
  const view = explanation(
    file,
    analysis,
    {
      workspaceFrom,
      modelFlag: caller.model !== undefined,
      callerResume: caller.callerResume,
      apiKeyFrom: runApiKey(context)?.from ?? null,
      endpoint: caller.endpoint ?? null,
    },
    describeResume(resolved, process.env),
    cache,
    plan,
    missing,
  );
  if (options.json) printJson(view);
  else process.stdout.write(render(view));
}

const textOf = (m: Message | undefined): string =>
  m
    ? m.parts
        .map((p) =>
          p.type === 'text'
            ? p.text
            : p.type === 'file'
              ? `[file ${p.mediaType}]`
              : p.type === 'tool-call'
                ? `[tool call ${p.name}]`
                : p.type === 'tool-result'
                  ? `[tool result ${p.name}]`
                  : '',
        )
        .filter(Boolean)
        .join(' ')
    : '';

function explanation(
  source: string,
  analysis: Analysis,
  line: {
    workspaceFrom: WorkspaceSource;
    modelFlag: boolean;
    callerResume: boolean;
    apiKeyFrom: 'flag' | 'environment' | null;
    endpoint: string | null;
  },
  resume: { enabled: boolean; from: string; why: string },
  cache: CacheView,
  plan: Plan,
  missing: ReadonlySet<string>,
) {
  const { conversation } = analysis;
  const branches = new Map((cache.branches ?? []).map((b) => [b.chatId, b]));
  return {
    transcript: {
      source: source === '-' ? 'stdin' : source,
      shape: conversation.shape,
      messages: conversation.messages.length,
      tools: conversation.tools.length,
      ...readingView(conversation),
    },
    resume,
    callerResume: line.callerResume,
    sideCall: analysis.sideCall,
    anchor: {
      value: analysis.anchor,
      workspace: analysis.workspace,
      workspaceFrom: line.workspaceFrom,
      model: analysis.model,
      modelFrom: line.modelFlag ? 'flag' : conversation.model !== undefined ? 'transcript' : 'default',
      sessionId: conversation.sessionId ?? null,
      // Never the key itself: where it came from, and the endpoint.
      account: { apiKeyFrom: line.apiKeyFrom, endpoint: line.endpoint },
      opener:
        analysis.opener < 0
          ? null
          : {
              index: analysis.opener,
              role: 'user',
              preview: preview(textOf(conversation.messages[analysis.opener])),
              digest: analysis.digests[analysis.opener],
            },
    },
    tools: {
      count: conversation.tools.length,
      fingerprint: analysis.toolsFingerprint,
      // The OpenCode plugin's prompt has its tools as one block of text, fingerprinted as it is written.
      ...(conversation.layout ? { blockBytes: layoutToolsBytes(conversation) } : {}),
    },
    cache: { state: cache.state, note: cache.note, branchesFound: cache.branches === null ? null : cache.branches.length },
    branches: plan.checks.map((check) => branchView(check, branches.get(check.chatId), analysis, missing)),
    prompt: { bytes: plan.promptBytes, fullBytes: plan.fullPromptBytes(), savedBytes: plan.fullPromptBytes() - plan.promptBytes },
    decision: {
      decision: plan.decision,
      reason: plan.reason,
      detail: plan.detail,
      chatId: plan.chatId,
      record: plan.record,
      argv: plan.argv,
    },
    plan: dryRunView(plan),
  };
}

type Explanation = ReturnType<typeof explanation>;

const layoutToolsBytes = (conversation: Conversation): number | null => {
  const block = conversation.layout?.find((b) => 'frame' in b && b.frame === 'tools');
  return block && 'frame' in block ? Buffer.byteLength(block.text) : null;
};

/**
 * How a flattened prompt was read: each block of the OpenCode plugin's layout (a
 * frame, or a message with its role), or why plain text is not in that layout.
 */
function readingView(conversation: Conversation) {
  if (conversation.shape === 'text') {
    const reading = readOpencodeText(conversation.text ?? '');
    return { layout: null, notLayout: 'why' in reading ? reading.why : null };
  }
  if (!conversation.layout) return { layout: null, notLayout: null };
  const layout = conversation.layout.map((b) => {
    if ('frame' in b) return { frame: b.frame, bytes: Buffer.byteLength(b.text), preview: preview(b.text) };
    const message = conversation.messages[b.message]!;
    const block = renderOpencodeMessage(message);
    return { message: b.message, role: message.role, bytes: Buffer.byteLength(block), preview: preview(block) };
  });
  return { layout, notLayout: null };
}

function branchView(check: BranchCheck, branch: MatchedBranch | undefined, analysis: Analysis, missing: ReadonlySet<string>) {
  const { proof } = check;
  const at = proof.matched;
  const message = analysis.conversation.messages[at];
  return {
    chatId: check.chatId,
    version: check.version,
    turns: branch?.turns ?? null,
    verdict: check.verdict,
    detail: check.detail,
    ttlLeftMs: branch === undefined ? null : Math.max(0, Math.round(branch.ttlLeftMs)),
    expired: branch !== undefined && branch.ttlLeftMs <= 0,
    toolsMatch: branch?.toolsFingerprint === analysis.toolsFingerprint,
    prefix: {
      known: proof.known,
      matched: proof.matched,
      verdict: proof.verdict,
      divergedAt: proof.verdict === 'diverged' && message ? { index: at, role: message.role, preview: preview(textOf(message)) } : null,
    },
    state: branch?.state ?? null,
    leased: branch?.leased ?? false,
    chatMissing: missing.has(check.chatId),
    deltaBytes: check.delta === undefined ? null : Buffer.byteLength(check.delta),
  };
}

function render(view: Explanation): string {
  const c = paint();
  const good = (t: string) => c.green(t);
  const bad = (t: string) => c.yellow(t);
  const { transcript, resume, anchor, decision } = view;
  // One column of labels for the whole explanation; details indented under their step.
  const rows: Array<readonly [string, string]> = [];
  const step = (label: string, value: string) => rows.push([c.bold(label), value]);
  const sub = (label: string, value: string) => rows.push([`  ${c.dim(label)}`, value]);

  const frames = transcript.layout?.filter((b) => 'frame' in b).length;
  const counted = frames === undefined ? plural(transcript.tools, 'tool') : plural(frames, 'frame block');
  step(
    'transcript',
    `${transcript.source}: ${transcript.shape === 'text' ? 'plain text' : transcript.shape}, ${plural(transcript.messages, 'message')}, ${counted}`,
  );
  if (transcript.notLayout !== null) sub('layout', `not the OpenCode plugin's: ${transcript.notLayout}`);
  for (const [i, b] of (transcript.layout ?? []).entries()) {
    sub(
      `block ${i + 1}`,
      'frame' in b
        ? c.dim(`frame ${b.frame}, ${bytes(b.bytes)}: ${quoted(b.preview)}`)
        : `message ${b.message + 1} (${b.role}), ${bytes(b.bytes)}: ${quoted(b.preview)}`,
    );
  }
  step('resume', resume.enabled ? `${good('on')}: ${resume.why}` : `${bad('off')}: ${resume.why}`);
  step(
    'caller chat',
    view.callerResume
      ? bad('yes: --resume or --continue on the run line; its line passed on as it is, and a run forgets what the cache held of that chat')
      : 'no',
  );
  step(
    'side call',
    view.sideCall ? bad(`yes: matched /${view.sideCall.pattern}/ at the start of the first ${view.sideCall.role} message`) : 'no',
  );
  step('anchor', anchor.value ?? bad(transcript.shape === 'text' ? 'none: plain text is never anchored' : 'none: no real user message'));
  // The transcript's words and fields: none of their controls reaches the terminal as it is.
  sub(
    'workspace',
    `${escapeControls(anchor.workspace)} (${anchor.workspaceFrom === 'flag' ? 'from --workspace' : `from the ${anchor.workspaceFrom}`})`,
  );
  sub(
    'model',
    `${anchor.model === '' ? "cursor-agent's default" : escapeControls(anchor.model)} (${anchor.modelFrom === 'flag' ? 'from --model' : anchor.modelFrom === 'transcript' ? 'from the transcript' : 'none given'})`,
  );
  sub('session', anchor.sessionId === null ? 'none' : escapeControls(anchor.sessionId));
  const { apiKeyFrom, endpoint } = anchor.account;
  const key =
    apiKeyFrom === 'flag' ? 'the API key from --api-key' : apiKeyFrom === 'environment' ? 'the API key from CURSOR_API_KEY' : 'the login';
  sub('account', `${key}${endpoint === null ? '' : `, endpoint ${endpoint}`}`);
  sub('opener', anchor.opener ? `message ${anchor.opener.index + 1} (user): ${quoted(anchor.opener.preview)}` : 'none');
  const { tools } = view;
  const toolsText =
    tools.blockBytes === undefined
      ? plural(tools.count, 'tool')
      : tools.blockBytes === null
        ? 'no tools block'
        : `the tools block (${bytes(tools.blockBytes)})`;
  step('tools', `${toolsText}, fingerprint ${tools.fingerprint.slice(0, 12)}`);
  step('cache', view.cache.note);
  for (const b of view.branches) {
    step('branch', `chat ${b.chatId} (version ${b.version}${b.turns === null ? '' : `, ${plural(b.turns, 'turn')}`})`);
    sub('expiry', b.expired ? bad('expired') : b.ttlLeftMs === null ? '?' : left(b.ttlLeftMs));
    sub('tools', b.toolsMatch ? good('same fingerprint') : bad('changed since the chat began'));
    sub('prefix', proofText(b, good, bad));
    sub(
      'state',
      `${b.state === 'unknown' ? bad('history unknown') : 'ok'}${b.leased ? bad(', a run is using it now') : ''}${b.chatMissing ? bad(", gone from Cursor's chat store") : ''}`,
    );
    sub('verdict', `${b.verdict === 'delta' ? good(b.verdict) : bad(b.verdict)}: ${b.detail}`);
    if (b.deltaBytes !== null) sub('delta', bytes(b.deltaBytes));
  }
  const saved = view.prompt.fullBytes > 0 ? Math.round((view.prompt.savedBytes / view.prompt.fullBytes) * 100) : 0;
  step(
    'prompt',
    `${bytes(view.prompt.bytes)} of ${bytes(view.prompt.fullBytes)} full${view.prompt.savedBytes > 0 ? ` (${saved}% saved)` : ''}`,
  );
  step(
    'decision',
    `${c.bold(decision.decision === 'fresh' ? bad(decision.decision) : good(decision.decision))} (${decision.reason}): ${decision.detail}`,
  );
  if (decision.detail !== REASONS[decision.reason]) sub('reason', REASONS[decision.reason]);
  sub(
    'chat',
    decision.chatId ??
      (decision.reason === 'caller-resume'
        ? "the caller's, as its --resume or --continue names it; not recorded"
        : decision.record
          ? 'a new chat (its ID is recorded after the turn)'
          : 'a new chat, not recorded'),
  );
  sub('argv', escapeControls(shellQuote(decision.argv)) || '(none)');
  return fields(rows);
}

function proofText(b: ReturnType<typeof branchView>, good: (t: string) => string, bad: (t: string) => string): string {
  const { known, matched, verdict, divergedAt } = b.prefix;
  switch (verdict) {
    case 'holds':
      return good(`all ${known} known messages match; the rest is new`);
    case 'nothing-new':
      return bad(`all ${known} known messages match, and nothing follows them`);
    case 'shorter':
      return bad(`the transcript ends after ${matched} of the ${known} known messages`);
    case 'diverged':
      return bad(
        divergedAt
          ? `${matched} of ${known} known messages match; message ${divergedAt.index + 1} (${divergedAt.role}) differs: ${quoted(divergedAt.preview)}`
          : `${matched} of ${known} known messages match`,
      );
  }
}
