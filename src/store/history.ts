// What ralph.db must hold, judged from the history around it: the journal's checkpoint
// header (the size, checksum and last event of the ralph.db it followed) and ralph.db.prev.
// A writer that finds less refuses to open instead of starting an empty or older store.
import * as path from 'node:path';
import type { SqlJsStatic } from 'sql.js';
import { StoreCorruptError } from './errors';
import { crc32, type CheckpointHeader, type DbSum, type JournalDamage } from './journal';
import { PREV_DB_FILE, sameSum } from './checkpoint';

const REPAIR_HINT = 'Run `ralph repair --fix`';

/** What one database file is, read without the store: its events' extent, or why it cannot be read. */
export type DbFileFacts =
  | { readonly ok: true; readonly size: number; readonly crc: number; readonly events: number; readonly upTo: string }
  | { readonly ok: false; readonly size: number; readonly error: string };

export function inspectDbBytes(SQL: SqlJsStatic, data: Uint8Array | undefined): DbFileFacts | undefined {
  if (data === undefined) return undefined;
  if (data.length === 0) return { ok: false, size: 0, error: 'empty (0 bytes)' };
  let db;
  try {
    db = new SQL.Database(data);
  } catch (e) {
    return { ok: false, size: data.length, error: `cannot be opened as SQLite: ${(e as Error).message}` };
  }
  try {
    const check = db.exec('PRAGMA quick_check')[0]?.values.map((r) => String(r[0])) ?? [];
    if (check.length !== 1 || check[0] !== 'ok')
      return { ok: false, size: data.length, error: `fails SQLite's quick_check: ${check.slice(0, 3).join('; ')}` };
    const row = db.exec('SELECT count(*), max(event_id) FROM events')[0]?.values[0];
    return { ok: true, size: data.length, crc: crc32(data), events: Number(row?.[0] ?? 0), upTo: String(row?.[1] ?? '') };
  } catch (e) {
    return { ok: false, size: data.length, error: `is not a readable Ralph database: ${(e as Error).message}` };
  } finally {
    db.close();
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** The writer's refusal of a damaged journal: the file, the byte offset, what would be lost. */
export function journalDamageError(journalPath: string, damage: JournalDamage): StoreCorruptError {
  const after =
    damage.intactAfter > 0
      ? `, and ${damage.intactAfter} intact record(s) with ${damage.eventsAfter} event(s) follow it; Ralph will not drop them by taking it for a torn tail`
      : '; it is complete, so it is not a torn tail from a crash';
  return new StoreCorruptError(
    journalPath,
    `the record at byte ${damage.offset} is damaged (${damage.reason})${after}. ${REPAIR_HINT}: it keeps every intact ` +
      `record, saves the damaged journal under .ralph/backup/, records an incident and says what, if anything, was lost.`,
    damage.offset,
  );
}

/**
 * Refuses a missing or empty ralph.db when history proves it held events: a checkpoint
 * header naming events, or a ralph.db.prev holding some. Returns quietly when nothing says
 * the store ever had events (a new store, or one whose journal alone holds its history).
 */
export function refuseLostDatabase(
  dbPath: string,
  state: 'missing' | 'empty',
  header: CheckpointHeader | undefined,
  prev: DbFileFacts | undefined,
): void {
  const fromHeader = header !== undefined && header.upTo !== '' ? header.upTo : undefined;
  const fromPrev = prev?.ok && prev.events > 0 ? prev.upTo : undefined;
  if (fromHeader === undefined && fromPrev === undefined) return;
  const knew = fromHeader
    ? `the journal's checkpoint header says it held events up to ${fromHeader}`
    : `${PREV_DB_FILE}, the checkpoint before it, holds ${prev?.ok ? prev.events : 0} event(s) up to ${fromPrev}`;
  const restore = prev?.ok
    ? `${REPAIR_HINT} to restore it from ${PREV_DB_FILE} (events up to ${prev.upTo || '(none)'}) and the journal`
    : `${REPAIR_HINT}; no intact ${PREV_DB_FILE} is there to restore from${prev ? ` (${PREV_DB_FILE} ${prev.error})` : ''}`;
  throw new StoreCorruptError(
    dbPath,
    `is ${state === 'missing' ? 'missing' : 'empty (0 bytes)'}, but ${knew}. Ralph will not start an empty store over that history. ${restore}.`,
  );
}

/**
 * Checks ralph.db's bytes against the checksum its last checkpoint recorded: 'matches', or
 * 'interrupted' for a checkpoint cut short before it trimmed the journal (the writer then
 * finishes that step, so the header describes ralph.db again). Accepted as interrupted:
 * - ralph.db.prev is the ralph.db the header describes: ralph.db was renamed into place;
 * - ralph.db.prev is ralph.db itself (one inode): a checkpoint kept ralph.db as ralph.db.prev
 *   and died before writing its image, after an earlier checkpoint had been cut short (the
 *   journal still holds every record since the ralph.db.prev before that one).
 * The caller still refuses a ralph.db that lacks the header's last event (refuseOlderDatabase).
 */
export function checkDatabaseSum(
  dbPath: string,
  data: Uint8Array,
  header: CheckpointHeader | undefined,
  prevSum: () => DbSum | undefined,
  isPrev: () => boolean,
): 'matches' | 'interrupted' {
  const want = header?.db;
  if (!want) return 'matches';
  const found: DbSum = { size: data.length, crc: crc32(data), upTo: '' };
  if (sameSum(found, want)) return 'matches';
  if (sameSum(prevSum(), want) || isPrev()) return 'interrupted';
  throw new StoreCorruptError(
    dbPath,
    `does not match the checksum its last checkpoint recorded (${want.size} bytes, crc32 ${hex(want.crc)}; found ${found.size} bytes, ` +
      `crc32 ${hex(found.crc)}): it was damaged or changed outside Ralph. ${REPAIR_HINT} to restore it from ${PREV_DB_FILE} and ` +
      `the journal (the damaged copy is kept under .ralph/backup/).`,
  );
}

/** Refuses a ralph.db older than the checkpoint the journal follows (restored from an old copy, or rolled back). */
export function refuseOlderDatabase(
  dbPath: string,
  header: CheckpointHeader | undefined,
  has: (eventId: string) => boolean,
  maxId: string,
): void {
  if (header === undefined || header.upTo === '' || has(header.upTo)) return;
  throw new StoreCorruptError(
    dbPath,
    `holds events only up to ${maxId || '(none)'}, but the journal says its last checkpoint held events up to ${header.upTo}: ` +
      `it is an older copy, and the events in between would be lost. ${REPAIR_HINT} to restore it from ${PREV_DB_FILE} and the ` +
      `journal, or delete ${path.join(path.dirname(dbPath), 'ralph.events.journal')} and ${PREV_DB_FILE} if the older copy is what you want.`,
  );
}
