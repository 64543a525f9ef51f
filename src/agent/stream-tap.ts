// Reads cursor-agent's stream-json as it passes by, never changing it: the chat ID,
// the result, cursor's reply (for the prefix proof of the next turn), and signs of
// trouble. Memory stays flat whatever the agent prints: only one line is held at a
// time, and a line longer than the cap is skipped rather than buffered.
import { isJsonObject } from '../json-object.js';
import { BridgeFollower, type BridgeOffer } from '../resume/bridge-calls.js';
import type { ReplyToolCall } from '../resume/digests.js';

/** Lines longer than this are passed through but not parsed. */
export const MAX_TAP_LINE = 8 * 1024 * 1024;

/**
 * Tool calls kept for the reply's digest. Past this many the reply cannot be matched
 * later anyway (the digest then differs and the next turn starts fresh), and memory stays flat.
 */
export const MAX_TAP_TOOL_CALLS = 10_000;

/**
 * Reply text followed for a turn that ends at its tool calls (the caller then sends
 * that text back in its next request). Past this the text is not followed, and such
 * a turn is not recorded.
 */
export const MAX_TAP_REPLY_TEXT = 16 * 1024 * 1024;

type Json = Record<string, unknown>;

/** cursor-agent's tool kinds: `function` carries a name; `readToolCall` and the like name themselves. */
function toolName(toolCall: unknown): string {
  if (!isJsonObject(toolCall)) return 'unknown';
  const fn = toolCall.function;
  if (isJsonObject(fn) && typeof fn.name === 'string') return fn.name;
  const kind = Object.keys(toolCall)[0] ?? 'unknown';
  return kind.endsWith('ToolCall') ? kind.slice(0, -'ToolCall'.length) : kind;
}

/**
 * A call of Cursor's own tools (`readToolCall`, `shellToolCall`, ...: those the OpenCode plugin
 * takes for its own): the chat holds the turn up to such a call once it has started. Of a
 * `function` or MCP call, which cursor-agent runs itself, that is not known before it completes.
 */
function heldAtStart(toolCall: unknown): boolean {
  if (!isJsonObject(toolCall)) return false;
  const kind = Object.keys(toolCall)[0];
  return kind !== undefined && kind !== 'mcpToolCall' && kind.endsWith('ToolCall');
}

/**
 * Cursor's reply so far as the caller sees it: the text streamed and the tool_call events,
 * or for a bridge envelope the plugin's calls and no text (it never shows the envelope).
 * The text is undefined once too long to follow.
 */
export function callerReply(tap: {
  replyText: string | undefined;
  toolCalls: ReadonlyArray<ReplyToolCall>;
  bridgeCalls?: ReadonlyArray<ReplyToolCall> | undefined;
}): {
  text: string | undefined;
  calls: ReadonlyArray<ReplyToolCall>;
} {
  if (tap.bridgeCalls === undefined) return { text: tap.replyText, calls: tap.toolCalls };
  return { text: tap.replyText === undefined ? undefined : '', calls: tap.bridgeCalls };
}

/**
 * The reply shows calls a caller may end the run at, the chat holding the turn up to them: the
 * tool-loop handover (after-run.ts) and the early record made at the first call (run-agent.ts).
 */
export const endsAtHeldCalls = (tap: Parameters<typeof callerReply>[0] & { unheldCall: boolean }): boolean =>
  callerReply(tap).calls.length > 0 && !tap.unheldCall;

export class StreamTap {
  /** The first session_id seen. */
  sessionId: unknown = undefined;
  /** A later event named another session_id, or one was not a string. */
  sessionChanged = false;
  oversizedLines = 0;
  /** The model began answering (anything after init): the chat has changed. */
  answerStarted = false;
  results = 0;
  isError = false;
  /** The last result event's text and its raw line (what `--output-format json` prints). */
  resultText: string | undefined = undefined;
  resultLine: string | undefined = undefined;
  readonly toolCalls: ReplyToolCall[] = [];
  /**
   * The stream went on past its tool calls (a call completed, more text): cursor-agent ran
   * a tool itself or answered on, so its chat no longer ends at those calls.
   */
  pastCalls = false;
  /** A call started that its chat is not known to hold before it completes (heldAtStart): a run ended there is no handover. */
  unheldCall = false;
  /** Cursor's reply text as it streamed (what a caller that stops at a tool call has seen); undefined past MAX_TAP_REPLY_TEXT. */
  replyText: string | undefined = '';
  /**
   * The calls the OpenCode plugin makes of a reply that is a bridge envelope (bridge-calls.ts),
   * from the delta that completed it: the plugin ends the run there, as at a tool call.
   */
  bridgeCalls: ReadonlyArray<ReplyToolCall> | undefined = undefined;

  /** Null when no bridge is offered, or once the reply can no longer be followed (a line it could not read). */
  private bridge: BridgeFollower | null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipping = false;
  private sessionListener: ((id: unknown) => void) | undefined;

  /**
   * `maxLine`: lines longer than this are skipped, not parsed (see MAX_TAP_LINE).
   * `partial`: the run streams partial output (--stream-partial-output), whose assistant
   * events are deltas (`timestamp_ms` alone) and flushes that repeat them (the rest).
   * `bridge`: the envelopes the caller, the OpenCode plugin, turns into calls.
   */
  constructor(
    private readonly maxLine: number = MAX_TAP_LINE,
    private readonly partial: boolean = false,
    bridge: BridgeOffer | null = null,
  ) {
    this.bridge = bridge && new BridgeFollower(bridge);
  }

  /** Called once, with the first session_id the stream shows (never, if it shows none). */
  onSession(listener: (id: unknown) => void): void {
    this.sessionListener = listener;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl));
      this.finishLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  end(): void {
    if (this.pendingBytes > 0 || this.skipping) this.finishLine();
  }

  private take(part: Buffer): void {
    if (this.skipping) return;
    if (this.pendingBytes + part.length > this.maxLine) {
      this.skipping = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    // Copy: the chunk's memory belongs to the stream.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  private finishLine(): void {
    const skipped = this.skipping;
    const line = skipped ? undefined : Buffer.concat(this.pending, this.pendingBytes).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    this.skipping = false;
    if (skipped) {
      this.oversizedLines++;
      // Unread, it may have been a completed call or more text: the reply is no longer known to end at its calls.
      if (this.toolCalls.length > 0 || this.bridgeCalls) this.pastCalls = true;
      this.replyText = undefined;
      this.bridge = null;
      return;
    }
    this.parse(line!);
  }

  private parse(line: string): void {
    if (line.trim() === '') return;
    let event: unknown;
    // A line that is not a JSON object (cursor-agent's log lines among them) passes on unread.
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    if (!isJsonObject(event)) return;
    if ('session_id' in event) this.noteSession(event.session_id);
    switch (event.type) {
      case 'system':
        return;
      case 'result':
        this.answerStarted = true;
        this.results++;
        this.isError ||= event.is_error === true || event.subtype === 'error';
        this.resultText = typeof event.result === 'string' ? event.result : undefined;
        this.resultLine = line;
        return;
      case 'tool_call':
        this.answerStarted = true;
        if (this.bridgeCalls) this.pastCalls = true;
        else if (event.subtype === 'started' && typeof event.call_id === 'string' && this.toolCalls.length < MAX_TAP_TOOL_CALLS) {
          this.toolCalls.push({ id: event.call_id, name: toolName(event.tool_call) });
          if (!heldAtStart(event.tool_call)) this.unheldCall = true;
        } else if (this.toolCalls.length > 0) this.pastCalls = true;
        return;
      case 'assistant':
        this.answerStarted = true;
        if (this.toolCalls.length > 0) this.pastCalls = true;
        this.followReply(event);
        return;
      default:
        this.answerStarted = true;
        if (this.toolCalls.length > 0 || this.bridgeCalls) this.pastCalls = true;
    }
  }

  private followReply(event: Json): void {
    if (this.replyText === undefined) return;
    if (this.partial && !('timestamp_ms' in event && !('model_call_id' in event))) return;
    const message = event.message;
    const content = isJsonObject(message) ? message.content : undefined;
    if (!Array.isArray(content)) return;
    // The event's own text first: reading back from the whole reply (a rope of every delta) would flatten it each time.
    let added = '';
    for (const part of content) {
      if (isJsonObject(part) && part.type === 'text' && typeof part.text === 'string') added += part.text;
    }
    this.replyText += added;
    if (this.replyText.length > MAX_TAP_REPLY_TEXT) {
      // What follows is no longer read: text after an envelope would go unseen.
      if (this.bridgeCalls) this.pastCalls = true;
      this.replyText = undefined;
    } else if (this.bridge && this.toolCalls.length === 0) this.followBridge(added);
  }

  /** As the plugin reads its bridge: the delta that completes an envelope makes the calls; any text after it goes past them. */
  private followBridge(delta: string): void {
    if (!this.bridgeCalls) this.bridgeCalls = this.bridge!.push(delta, this.replyText!);
    else if (delta.trim() !== '') this.pastCalls = true;
  }

  private noteSession(id: unknown): void {
    if (typeof id !== 'string') this.sessionChanged = true;
    if (this.sessionId === undefined) {
      this.sessionId = id;
      const listener = this.sessionListener;
      this.sessionListener = undefined;
      listener?.(id);
    } else if (id !== this.sessionId) this.sessionChanged = true;
  }
}
