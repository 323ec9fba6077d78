// The store's own repair (`ralph repair` and `--fix`): what the writer would refuse about
// ralph.db, ralph.db.prev and the journal, and the restore that keeps every intact journal
// record, picks the best database (ralph.db when it is the checkpoint the journal names,
// else ralph.db.prev), saves the damaged files under .ralph/backup/ and says exactly what,
// if anything, was lost. It never applies projections itself: it leaves a ralph.db and a
// journal that a normal writer open accepts and replays.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Database, SqlJsStatic } from 'sql.js';
import { fileError, onFile, writeFileAtomic } from '../shared/fs';
import { DB_FILE, PREV_DB_FILE, dbIsPrev, readNextSum, sameSum } from './checkpoint';
import { StoreCorruptError } from './errors';
import { checkDatabaseSum, inspectDbBytes, journalDamageError, refuseLostDatabase, type DbFileFacts } from './history';
import {
  JOURNAL_FILE,
  crc32,
  encodeHeader,
  encodeRecord,
  headerOf,
  salvageRecords,
  scanJournal,
  type CheckpointHeader,
  type DbSum,
  type JournalDamage,
  type LocatedRecord,
} from './journal';
import { loadSqlJs } from './sqlDb';

export const BACKUP_DIR = 'backup';

/** One reason the writer would refuse these files. */
export interface StoreFileProblem {
  readonly kind: 'journal_damaged' | 'db_missing' | 'db_unreadable' | 'db_checksum' | 'db_older';
  readonly file: string;
  readonly message: string;
  readonly offset?: number;
}

export interface StoreFilesInspection {
  readonly journal: {
    readonly exists: boolean;
    readonly size: number;
    readonly records: number;
    readonly events: number;
    /** An unterminated last record a crash left: never acknowledged, dropped at the next open. */
    readonly tornBytes: number;
    readonly tornReason?: string;
    readonly damage?: JournalDamage;
    readonly header?: CheckpointHeader;
  };
  /** undefined: the file does not exist. */
  readonly db: DbFileFacts | undefined;
  readonly prev: DbFileFacts | undefined;
  readonly problems: readonly StoreFileProblem[];
}

function readIfExists(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('read', file, e);
  }
}

function problemOf(kind: StoreFileProblem['kind'], fn: () => void): StoreFileProblem | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    if (!(e instanceof StoreCorruptError)) throw e;
    return { kind, file: e.file, message: e.message, ...(e.offset !== undefined ? { offset: e.offset } : {}) };
  }
}

interface Files {
  readonly SQL: SqlJsStatic;
  readonly ralphDir: string;
  readonly journalBytes: Buffer | undefined;
  readonly dbBytes: Buffer | undefined;
  readonly prevBytes: Buffer | undefined;
}

function readFiles(SQL: SqlJsStatic, ralphDir: string): Files {
  return {
    SQL,
    ralphDir,
    journalBytes: readIfExists(path.join(ralphDir, JOURNAL_FILE)),
    dbBytes: readIfExists(path.join(ralphDir, DB_FILE)),
    prevBytes: readIfExists(path.join(ralphDir, PREV_DB_FILE)),
  };
}

function inspectFiles(f: Files): StoreFilesInspection {
  const journalPath = path.join(f.ralphDir, JOURNAL_FILE);
  const dbPath = path.join(f.ralphDir, DB_FILE);
  const scan = scanJournal(f.journalBytes ?? Buffer.alloc(0));
  const header = headerOf(scan.records);
  const db = inspectDbBytes(f.SQL, f.dbBytes);
  const prev = inspectDbBytes(f.SQL, f.prevBytes);
  const problems: StoreFileProblem[] = [];
  const add = (p: StoreFileProblem | undefined): void => void (p && problems.push(p));
  if (scan.damage) {
    const damage = scan.damage;
    add(
      problemOf('journal_damaged', () => {
        throw journalDamageError(journalPath, damage);
      }),
    );
  }
  if (!db || db.size === 0) {
    add(problemOf('db_missing', () => refuseLostDatabase(dbPath, db ? 'empty' : 'missing', header, prev)));
  } else if (!db.ok) {
    problems.push({ kind: 'db_unreadable', file: dbPath, message: `${dbPath}: ${db.error}` });
  } else {
    const dbBytes = f.dbBytes ?? Buffer.alloc(0);
    const prevSum = (): DbSum | undefined => (f.prevBytes ? { size: f.prevBytes.length, crc: crc32(f.prevBytes), upTo: '' } : undefined);
    // The writer's own test: a ralph.db that is ralph.db.prev (one inode; a copy with the same
    // bytes is another file) or the image ralph.db.next names is a checkpoint cut short.
    const found: DbSum = { size: dbBytes.length, crc: crc32(dbBytes), upTo: '' };
    const isPrev = (): boolean => dbIsPrev(f.ralphDir) || sameSum(readNextSum(f.ralphDir), found);
    add(problemOf('db_checksum', () => checkDatabaseSum(dbPath, dbBytes, header, prevSum, isPrev)));
    if (header && header.upTo !== '' && db.upTo < header.upTo && !dbHolds(f.SQL, dbBytes, header.upTo)) {
      problems.push({
        kind: 'db_older',
        file: dbPath,
        message: `${dbPath}: holds events only up to ${db.upTo || '(none)'}, but the journal says its last checkpoint held events up to ${header.upTo}`,
      });
    }
  }
  const events = scan.records.reduce((n, r) => n + r.events.length, 0);
  return {
    journal: {
      exists: f.journalBytes !== undefined,
      size: f.journalBytes?.length ?? 0,
      records: scan.records.length,
      events,
      tornBytes: scan.damage ? 0 : scan.tornBytes,
      ...(scan.tornReason && !scan.damage ? { tornReason: scan.tornReason } : {}),
      ...(scan.damage ? { damage: scan.damage } : {}),
      ...(header ? { header } : {}),
    },
    db,
    prev,
    problems,
  };
}

function dbHolds(SQL: SqlJsStatic, data: Uint8Array, eventId: string): boolean {
  const db = new SQL.Database(data);
  try {
    return (db.exec('SELECT 1 FROM events WHERE event_id = ?', [eventId])[0]?.values.length ?? 0) > 0;
  } finally {
    db.close();
  }
}

/** What the writer would refuse about the store's files, read only. */
export async function inspectStoreFiles(ralphDir: string): Promise<StoreFilesInspection> {
  return inspectFiles(readFiles(await loadSqlJs(), ralphDir));
}

/** What became of one stretch of damaged journal bytes. */
export interface DamagedRecordOutcome {
  readonly offset: number;
  readonly length: number;
  /**
   * recovered: its events are in the restored database; lost: they are not; no-record: the
   * bytes held no record; torn: an unterminated last record (a write cut short, never
   * acknowledged to anyone); header: the checkpoint header, which holds no events.
   */
  readonly verdict: 'recovered' | 'lost' | 'no-record' | 'torn' | 'header';
  /** Event ids legible in the damaged bytes (possibly mangled by the damage). */
  readonly eventIds: readonly string[];
}

export interface StoreRestoreReport {
  readonly problems: readonly StoreFileProblem[];
  /** Where copies of the files as found were saved, relative to the project (.ralph/backup/…). */
  readonly backupDir: string;
  readonly backedUp: readonly string[];
  /** The database the store continues from. */
  readonly base: 'ralph.db' | 'ralph.db.prev' | 'none';
  readonly baseUpTo: string;
  readonly keptRecords: number;
  readonly keptEvents: number;
  readonly damaged: readonly DamagedRecordOutcome[];
  /** Event ids known lost (legible in damaged bytes, or named by the journal's header). */
  readonly lostEventIds: readonly string[];
  /** True when some lost bytes held events whose number cannot be read. */
  readonly lostUnknown: boolean;
  /** One sentence per fact, for `ralph repair` and the incident event. */
  readonly summary: readonly string[];
}

function trusted(facts: DbFileFacts | undefined, sums: readonly (DbSum | undefined)[]): boolean {
  return facts?.ok === true && sums.some((s) => sameSum(s, { size: facts.size, crc: facts.crc, upTo: '' }));
}

function maxId(r: LocatedRecord): string {
  return r.record.events.reduce((m, e) => (e.event_id > m ? e.event_id : m), '');
}

function minId(r: LocatedRecord): string | undefined {
  return r.record.events.reduce<string | undefined>((m, e) => (m === undefined || e.event_id < m ? e.event_id : m), undefined);
}

/**
 * Restores the store's files so a writer opens them without losing anything it can keep.
 * Does nothing (and returns undefined) when the writer would accept the files as they are.
 * The caller must hold no store open; the writer lock keeps others out only while a
 * writer runs, so `ralph repair` checks that no live writer exists first.
 */
export async function restoreStoreFiles(ralphDir: string, now: Date = new Date()): Promise<StoreRestoreReport | undefined> {
  const SQL = await loadSqlJs();
  const files = readFiles(SQL, ralphDir);
  const insp = inspectFiles(files);
  if (insp.problems.length === 0) return undefined;
  const dbPath = path.join(ralphDir, DB_FILE);
  const journalPath = path.join(ralphDir, JOURNAL_FILE);
  const projectRel = (p: string): string => path.relative(path.dirname(ralphDir), p);

  // 1. Copies of everything as found, before anything is rewritten.
  const backupDir = path.join(ralphDir, BACKUP_DIR, `${now.toISOString().replace(/[:.]/g, '-')}-store`);
  const backedUp: string[] = [];
  for (const [name, bytes] of [
    [JOURNAL_FILE, files.journalBytes],
    [DB_FILE, files.dbBytes],
    [PREV_DB_FILE, files.prevBytes],
  ] as const) {
    if (bytes === undefined) continue;
    await writeFileAtomic(path.join(backupDir, name), bytes, { mkdir: true });
    backedUp.push(name);
  }

  // 2. The database to continue from.
  const header = insp.journal.header;
  const dbTrusted = insp.db?.ok === true && !insp.problems.some((p) => p.kind === 'db_checksum' || p.kind === 'db_older');
  const prevTrusted = trusted(insp.prev, [header?.prev, header?.db]);
  let base: StoreRestoreReport['base'];
  let baseBytes: Uint8Array | undefined;
  if (dbTrusted) [base, baseBytes] = ['ralph.db', files.dbBytes];
  else if (insp.prev?.ok && (prevTrusted || !insp.db?.ok || insp.problems.some((p) => p.kind === 'db_older')))
    [base, baseBytes] = ['ralph.db.prev', files.prevBytes];
  else if (insp.db?.ok) [base, baseBytes] = ['ralph.db', files.dbBytes];
  else if (insp.prev?.ok) [base, baseBytes] = ['ralph.db.prev', files.prevBytes];
  else [base, baseBytes] = ['none', undefined];

  // 3. Every intact journal record, in file order.
  const salvage = salvageRecords(files.journalBytes ?? Buffer.alloc(0));
  const eventRecords = salvage.records.filter((r) => r.record.events.length > 0);
  const salvagedIds = new Set(eventRecords.flatMap((r) => r.record.events.map((e) => e.event_id)));

  const baseDb: Database | undefined = baseBytes ? new SQL.Database(baseBytes) : undefined;
  try {
    const has = (id: string): boolean => (baseDb?.exec('SELECT 1 FROM events WHERE event_id = ?', [id])[0]?.values.length ?? 0) > 0;
    const baseUpTo = String(baseDb?.exec('SELECT max(event_id) FROM events')[0]?.values[0]?.[0] ?? '');
    const hasBetween = (lo: string, hi: string | undefined): boolean =>
      (baseDb?.exec(
        hi === undefined
          ? 'SELECT 1 FROM events WHERE event_id > ? LIMIT 1'
          : 'SELECT 1 FROM events WHERE event_id > ? AND event_id < ? LIMIT 1',
        hi === undefined ? [lo] : [lo, hi],
      )[0]?.values.length ?? 0) > 0;

    // 4. What each damaged stretch held, and whether the restored store still has it.
    const damaged: DamagedRecordOutcome[] = salvage.damaged.map((d) => {
      const bytes = (files.journalBytes ?? Buffer.alloc(0)).subarray(d.offset, d.offset + d.length).toString('latin1');
      const before = eventRecords.filter((r) => r.offset < d.offset);
      const after = eventRecords.filter((r) => r.offset > d.offset);
      // The damaged record's ids lie above the last intact one before it; with none before
      // it, above what ralph.db.prev held (the journal keeps every record since then).
      const lastBefore = before.length ? maxId(before[before.length - 1] as LocatedRecord) : header?.prev?.upTo;
      const firstAfter = after.length ? minId(after[0] as LocatedRecord) : undefined;
      const looksLikeRecord = d.legibleIds.length > 0 || /\{"v":1|"events":\[|"event_id"/.test(bytes);
      if (!looksLikeRecord) return { offset: d.offset, length: d.length, verdict: 'no-record', eventIds: [] };
      if (d.offset === 0 && d.legibleIds.length === 0 && /"events":\[\]/.test(bytes))
        return { offset: d.offset, length: d.length, verdict: 'header', eventIds: [] };
      const atEnd = d.offset + d.length === (files.journalBytes?.length ?? 0);
      if (atEnd && !bytes.includes('\n')) return { offset: d.offset, length: d.length, verdict: 'torn', eventIds: d.legibleIds };
      // ralph.db is a prefix of the event sequence: holding anything after the damaged record
      // (or every id legible in it) means it holds the record's events too.
      const covered =
        (firstAfter !== undefined && baseUpTo >= firstAfter) ||
        (lastBefore !== undefined && hasBetween(lastBefore, firstAfter)) ||
        (d.legibleIds.length > 0 && d.legibleIds.every((id) => has(id) || salvagedIds.has(id)));
      return { offset: d.offset, length: d.length, verdict: covered ? 'recovered' : 'lost', eventIds: d.legibleIds };
    });
    const lostEventIds = new Set(
      damaged.filter((d) => d.verdict === 'lost').flatMap((d) => d.eventIds.filter((id) => !has(id) && !salvagedIds.has(id))),
    );
    let lostUnknown = damaged.some((d) => d.verdict === 'lost' && d.eventIds.length === 0);
    // The last events ralph.db and ralph.db.prev were known to hold: any the restored store
    // lacks were held only by a database that is gone.
    const known = [header?.upTo, header?.db?.upTo, header?.prev?.upTo].filter((id): id is string => id !== undefined && id !== '');
    const knownLost = [...new Set(known)].filter((id) => !has(id) && !salvagedIds.has(id)).sort();
    const knownUpTo = knownLost[knownLost.length - 1] ?? '';
    const lostBeyondBase = knownLost.length > 0;
    if (lostBeyondBase) {
      for (const id of knownLost) lostEventIds.add(id);
      lostUnknown = true;
    }

    // 5. The files a writer will accept: the chosen database, and a journal whose header
    // describes it, followed by every intact record (the writer replays what it lacks).
    if (base === 'ralph.db.prev' && baseBytes) await writeFileAtomic(dbPath, baseBytes);
    if (base === 'none' && files.dbBytes !== undefined) onFile('remove', dbPath, () => fs.rmSync(dbPath, { force: true }));
    const head = baseBytes ? [encodeHeader({ upTo: baseUpTo, db: { size: baseBytes.length, crc: crc32(baseBytes), upTo: baseUpTo } })] : [];
    await writeFileAtomic(journalPath, Buffer.concat([...head, ...eventRecords.map((r) => encodeRecord(r.record.events))]));
    if (base === 'none' && files.prevBytes !== undefined && !insp.prev?.ok) {
      // An unreadable ralph.db.prev would otherwise stand for history at the next open.
      onFile('remove', path.join(ralphDir, PREV_DB_FILE), () => fs.rmSync(path.join(ralphDir, PREV_DB_FILE), { force: true }));
    }

    const keptEvents = eventRecords.reduce((n, r) => n + r.record.events.length, 0);
    const summary: string[] = [
      `saved the files as found to ${projectRel(backupDir)}/ (${backedUp.join(', ')})`,
      base === 'ralph.db'
        ? `kept ralph.db (events up to ${baseUpTo || '(none)'})`
        : base === 'ralph.db.prev'
          ? `restored ralph.db from ralph.db.prev (events up to ${baseUpTo || '(none)'})`
          : 'no intact database was left: the store is rebuilt from the journal alone',
      `kept ${eventRecords.length} intact journal record(s) with ${keptEvents} event(s); the next open replays those ralph.db lacks`,
    ];
    for (const d of damaged) {
      const where = `journal bytes ${d.offset}–${d.offset + d.length - 1}`;
      if (d.verdict === 'no-record') summary.push(`${where} held no record (junk); nothing was in them`);
      else if (d.verdict === 'header')
        summary.push(`${where} were the damaged checkpoint header (it holds no events); a new one describes the restored ralph.db`);
      else if (d.verdict === 'torn') summary.push(`${where} were a torn tail (a write cut short, never acknowledged); dropped`);
      else if (d.verdict === 'recovered')
        summary.push(`${where} were damaged; their events are in the restored ralph.db, so nothing is lost`);
      else
        summary.push(
          d.eventIds.length
            ? `${where} were damaged: LOST ${d.eventIds.length} event(s) (${d.eventIds.join(', ')} as far as legible)`
            : `${where} were damaged: LOST the events in them (unreadable, so their number is unknown)`,
        );
    }
    if (lostBeyondBase)
      summary.push(`LOST the events after ${baseUpTo || '(the start)'} up to ${knownUpTo}: only the damaged ralph.db held them`);
    if (lostEventIds.size === 0 && !lostUnknown) summary.push('nothing was lost');
    return {
      problems: insp.problems,
      backupDir: projectRel(backupDir),
      backedUp,
      base,
      baseUpTo,
      keptRecords: eventRecords.length,
      keptEvents,
      damaged,
      lostEventIds: [...lostEventIds],
      lostUnknown,
      summary,
    };
  } finally {
    baseDb?.close();
  }
}
