// A turn's record handed to the helper its run starts as it ends, so that the run
// need not wait for that start: the record goes on the new helper's stdin, and a
// marker in the runtime dir says a helper is on its way with it. Until the helper
// has delivered it (and removed the marker) a run or a look at the cache waits for
// that helper, so the next turn finds the record, however soon it comes.
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Limits } from '../cache/limits.js';
import { alive } from './alive.js';
import { HelperClient, isSameVersion, type TurnRecord } from './client.js';
import { limitsBelow } from './limits-below.js';
import { MARKER_PREFIX, type RuntimePaths } from './paths.js';

/** What a run hands to the helper it starts on its stdin: the limits its settings ask for, and the record of its turn. */
export interface HandOff {
  limits: Partial<Limits>;
  record: TurnRecord;
}

/**
 * The helper's environment variable naming its marker. Not in the stdin payload: a run
 * killed while writing a long record leaves half a text, and the marker must go all the same.
 */
export const HAND_OFF_MARKER_ENV = 'CURSOR_RESUME_HAND_OFF';
/**
 * A marker that does not name its helper's process yet (the run was killed between
 * creating it and starting the helper) is waited for this long: left over after that.
 */
export const HAND_OFF_STALE_MS = 2_000;
/**
 * A marker whose helper is alive is waited for this long at most. A helper starts in
 * some 50 ms, but on a loaded machine Node's start alone can take seconds, and a turn
 * that stops waiting for the record runs fresh, re-sending the whole conversation.
 */
export const HAND_OFF_LIVE_MS = 10_000;
/** How far ahead of the clock a marker's time may be before it counts as dated in the future. */
const FUTURE_SLACK_MS = 1_000;

/** A marker's name, chosen when a helper's start is held (its environment names it) and created only at the hand-off. */
export function newMarkerName(): string {
  return `${MARKER_PREFIX}${randomUUID()}`;
}

/** Creates a marker, before the helper is started, so no run can miss the record on its way. */
export function createMarker(paths: RuntimePaths, name: string = newMarkerName()): string {
  fs.writeFileSync(path.join(paths.dir, name), '', { flag: 'wx', mode: 0o600 });
  return name;
}

/**
 * Names the helper's process in its marker, once started. A marker already removed
 * stays removed (its record delivered), unless `create`: a helper started in place of
 * one that died before reading has the marker back, since a run may have dropped it.
 */
export function notePid(paths: RuntimePaths, marker: string, pid: number | undefined, create = false): void {
  if (pid === undefined) return;
  let fd: number;
  try {
    // Never through a link someone left under its name: the pid would overwrite the file it leads to.
    const { O_RDWR, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    fd = fs.openSync(path.join(paths.dir, marker), O_RDWR | O_NOFOLLOW | O_NONBLOCK | (create ? O_CREAT : 0), 0o600);
  } catch {
    return; // delivered already, or the dir is gone: nothing to wait for either way
  }
  try {
    // Only a plain file of ours with one name: a hard link planted there would carry the write elsewhere.
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.nlink !== 1 || stat.uid !== process.getuid?.()) return;
    // A helper started in place of one that could not read names the new one.
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, String(pid), 0);
  } catch {
    // A marker without a pid is waited for as one whose helper is not known yet.
  } finally {
    fs.closeSync(fd);
  }
}

export function removeMarker(paths: RuntimePaths, marker: string): void {
  // Only a marker's own name: it comes from the environment the run gave the helper, yet a path must not escape the dir.
  if (!marker.startsWith(MARKER_PREFIX) || marker.includes('/')) return;
  fs.rmSync(path.join(paths.dir, marker), { force: true });
}

/**
 * Whether a helper is on its way with a handed record: a marker whose helper is alive
 * and younger than HAND_OFF_LIVE_MS, or one naming no process yet and younger than
 * HAND_OFF_STALE_MS. Removes the others (their helper died before delivering, or is
 * wedged), and ones dated in the future (the clock went back), which would otherwise
 * hold every run until the clock caught up.
 */
export function handOffPending(paths: RuntimePaths): boolean {
  let names: string[];
  try {
    names = fs.readdirSync(paths.dir);
  } catch {
    return false;
  }
  let pending = false;
  for (const name of names) {
    if (!name.startsWith(MARKER_PREFIX)) continue;
    const file = path.join(paths.dir, name);
    try {
      const marker = readMarker(file);
      const age = marker?.ageMs ?? 0;
      const pid = marker?.pid ?? 0;
      const waiting = Number.isSafeInteger(pid) && pid > 0 ? alive(pid) && age < HAND_OFF_LIVE_MS : age < HAND_OFF_STALE_MS;
      // A marker made this very millisecond may show a time ahead of Date.now(), which drops the fraction.
      if (marker !== null && age > -FUTURE_SLACK_MS && waiting) pending = true;
      else fs.rmSync(file, { force: true });
    } catch (error) {
      // A symbolic link is no marker of ours: removed unread. Anything else: removed meanwhile (delivered).
      if ((error as NodeJS.ErrnoException).code === 'ELOOP') removeQuietly(file);
    }
  }
  return pending;
}

/** A marker holds a pid at most: anything longer is not one of ours. */
const MARKER_MAX_BYTES = 32;

/**
 * A marker's age and the pid it names (NaN or 0: none yet); null for what is no plain file.
 * Opened without following a link and without blocking, and read up to MARKER_MAX_BYTES: someone
 * who could write in the runtime dir while it was open to others may have left a FIFO (every run
 * would wait on it for ever) or a link to /dev/zero (read without end) under a marker's name.
 * Throws ELOOP for a link, ENOENT for a marker removed meanwhile.
 */
function readMarker(file: string): { ageMs: number; pid: number } | null {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return null;
    const buffer = Buffer.alloc(MARKER_MAX_BYTES);
    const text = buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, MARKER_MAX_BYTES, 0));
    return { ageMs: Date.now() - stat.mtimeMs, pid: Number(text) };
  } finally {
    fs.closeSync(fd);
  }
}

function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Not ours to remove: it is not read either way.
  }
}

/** Reads a hand-off from the text a run wrote to the helper's stdin; undefined for anything else. */
export function parseHandOff(text: string): HandOff | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { limits, record } = value as Partial<HandOff>;
  if (typeof limits !== 'object' || limits === null || typeof record !== 'object' || record === null) return undefined;
  // The record itself is checked by the helper as any request is.
  return { limits, record };
}

/**
 * What a helper started with a hand-off does once a helper answers (itself, or one
 * that won the start): lowers the limits as the run would have, then records.
 * Throws what went wrong; the run that handed it is gone, so nobody hears it.
 */
export async function deliverHandOff(handOff: HandOff, paths: RuntimePaths): Promise<void> {
  const client = await HelperClient.connect(paths.socket);
  try {
    const hello = await client.hello();
    // Another version won the start: our record is not in its words.
    if (!isSameVersion(hello)) throw new Error(`the helper answering is version ${hello.version}, protocol ${hello.protocol}`);
    const asked = limitsBelow(handOff.limits, hello.limits);
    if (asked.ttlMs !== undefined || asked.maxEntries !== undefined) await client.lowerLimits(asked);
    const reply = await client.recordTurn(handOff.record);
    if (!reply.recorded) throw new Error(reply.message);
  } finally {
    client.close();
  }
}
