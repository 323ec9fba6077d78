// Over 400 lines because the journal's format, appender, reader and repair share one record grammar and its crash rules.
// The append-only event journal (.ralph/ralph.events.journal): one line per committed
// command, `<crc32 hex> <json>\n`. A crash mid-write leaves an unterminated last line (a
// torn tail, dropped quietly: nobody was told it was recorded); a complete line that fails
// its checksum is damage, and the records after it are never dropped for it. The appender
// gives each command one fsync and lets a burst share it (group commit).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { z } from 'zod';
import { fileError, onFile, onFileAsync } from '../shared/fs';
import type { StoredEvent } from './types';

export const JOURNAL_FILE = 'ralph.events.journal';

const CRC_TABLE = ((): Uint32Array => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/**
 * From this many bytes on, zlib.crc32 (native, Node >= 20.15: a 16 MB ralph.db in ~10 ms
 * instead of ~100) is worth loading node:zlib for; a journal record, a few hundred bytes, is
 * summed here, and a short `ralph` call that writes one never loads zlib.
 */
const NATIVE_CRC_FROM = 64 * 1024;
let nativeCrc: ((data: Uint8Array) => number) | null | undefined;

function loadNativeCrc(): ((data: Uint8Array) => number) | null {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  nativeCrc ??= (require('node:zlib') as { crc32?: (data: Uint8Array) => number }).crc32 ?? null;
  return nativeCrc;
}

/** CRC-32 (IEEE), as zlib computes it. */
export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  const native = end - start >= NATIVE_CRC_FROM ? loadNativeCrc() : null;
  if (native) return native(start === 0 && end === buf.length ? buf : buf.subarray(start, end)) >>> 0;
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = (CRC_TABLE[(c ^ (buf[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// The record's shape, checked by hand on every read (recordOf below) and by zod only to word
// the error of a record that fails that check: a journal is parsed on every open, and zod's
// parse was a tenth of `ralph status`'s CPU time. Both accept exactly the same records.
export const journalRecordSchema = (): z.ZodType => {
  const storedEvent = z.object({
    event_id: z.string().min(1),
    ts: z.string(),
    run_id: z.string(),
    entity_type: z.string(),
    entity_id: z.string(),
    event_type: z.string(),
    actor: z.string(),
    payload: z.record(z.string(), z.unknown()),
  });
  const sum = z.object({ size: z.number().int().min(0), crc: z.number().int().min(0), upTo: z.string() });
  return z.object({
    v: z.literal(1),
    events: z.array(storedEvent),
    upTo: z.string().optional(),
    db: sum.optional(),
    prev: sum.optional(),
    covered: z.number().int().min(0).optional(),
    coveredCrc: z.number().int().min(0).optional(),
    coveredLast: z.string().min(1).optional(),
  });
};

type Json = Record<string, unknown>;

function isPlainObject(x: unknown): x is Json {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  return proto === Object.prototype || proto === null;
}

const EVENT_FIELDS = ['ts', 'run_id', 'entity_type', 'entity_id', 'event_type', 'actor'] as const;

/** One journal event with the known fields only (unknown ones are dropped, as zod's object does). */
function eventOf(x: unknown): StoredEvent | undefined {
  if (!isPlainObject(x) || typeof x['event_id'] !== 'string' || x['event_id'] === '' || !isPlainObject(x['payload'])) return undefined;
  for (const f of EVENT_FIELDS) if (typeof x[f] !== 'string') return undefined;
  return {
    event_id: x['event_id'],
    ts: x['ts'] as string,
    run_id: x['run_id'] as string,
    entity_type: x['entity_type'] as string,
    entity_id: x['entity_id'] as string,
    event_type: x['event_type'] as string,
    actor: x['actor'] as string,
    payload: x['payload'],
  };
}

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/** A checkpoint's sum, `null` when malformed, `undefined` when absent. */
function sumOf(x: unknown): DbSum | null | undefined {
  if (x === undefined) return undefined;
  if (!isPlainObject(x) || !isCount(x['size']) || !isCount(x['crc']) || typeof x['upTo'] !== 'string') return null;
  return { size: x['size'], crc: x['crc'], upTo: x['upTo'] };
}

/** The record a parsed line holds, or undefined when it is not one (exported for its tests). */
export function recordOf(x: unknown): JournalRecord | undefined {
  if (!isPlainObject(x) || x['v'] !== 1 || !Array.isArray(x['events'])) return undefined;
  const upTo = x['upTo'];
  if (upTo !== undefined && typeof upTo !== 'string') return undefined;
  const db = sumOf(x['db']);
  const prev = sumOf(x['prev']);
  if (db === null || prev === null) return undefined;
  const covered = x['covered'];
  if (covered !== undefined && !isCount(covered)) return undefined;
  const coveredCrc = x['coveredCrc'];
  if (coveredCrc !== undefined && !isCount(coveredCrc)) return undefined;
  const coveredLast = x['coveredLast'];
  if (coveredLast !== undefined && (typeof coveredLast !== 'string' || coveredLast === '')) return undefined;
  const events: StoredEvent[] = [];
  for (const raw of x['events'] as unknown[]) {
    const e = eventOf(raw);
    if (e === undefined) return undefined;
    events.push(e);
  }
  return {
    events,
    ...(upTo !== undefined ? { upTo } : {}),
    ...(db ? { db } : {}),
    ...(prev ? { prev } : {}),
    ...(covered !== undefined ? { covered } : {}),
    ...(coveredCrc !== undefined ? { coveredCrc } : {}),
    ...(coveredLast !== undefined ? { coveredLast } : {}),
  };
}

/** Size and CRC-32 of a ralph.db a checkpoint wrote, and the last event id it holds. */
export interface DbSum {
  readonly size: number;
  readonly crc: number;
  readonly upTo: string;
}

export interface JournalRecord {
  readonly events: StoredEvent[];
  /**
   * Only in the header a checkpoint writes when it trims the journal: the largest event id
   * in the ralph.db it just wrote. An observer that has seen that id needs no reload.
   */
  readonly upTo?: string;
  /** Header only: the ralph.db that checkpoint wrote (absent in journals of older Ralphs). */
  readonly db?: DbSum;
  /** Header only: the ralph.db it replaced, kept as ralph.db.prev. */
  readonly prev?: DbSum;
  /** Header only: how many bytes of records after it that ralph.db holds (see CheckpointHeader). */
  readonly covered?: number;
  /** Header only: the CRC-32 of those bytes (see CheckpointHeader). */
  readonly coveredCrc?: number;
  /** Header only: the id of the last event in those bytes (see CheckpointHeader). */
  readonly coveredLast?: string;
}

/** The first record of a trimmed journal: what ralph.db and ralph.db.prev held. */
export interface CheckpointHeader {
  readonly upTo: string;
  readonly db?: DbSum;
  readonly prev?: DbSum;
  /**
   * The bytes of records right after the header whose events ralph.db holds (the journal
   * keeps them for ralph.db.prev). An open whose database holds the last of them checks
   * their checksums but does not parse them: at 100k events that parse was half of an
   * observer's open. A record there whose checksum holds is taken as Ralph wrote it;
   * `ralph repair` parses every record.
   */
  readonly covered?: number;
  /**
   * The CRC-32 of those `covered` bytes as the checkpoint kept them: one sum checks them all
   * at an open, instead of one per record (at 100k one-event records, most of a cold open).
   * Only when it fails are the records checked one by one, which finds the damage. Absent in
   * headers of older Ralphs and of interrupted checkpoints finished at open.
   */
  readonly coveredCrc?: number;
  /**
   * The id of the last event in those bytes, read once by the checkpoint: an open whose
   * database holds it skips them without parsing even their last record (a bulk append's
   * record of a thousand events was a third of an observer's cold open). Trusted only with
   * `coveredCrc` holding; absent when the last covered record has no event.
   */
  readonly coveredLast?: string;
}

function frame(body: Buffer): Buffer {
  const head = Buffer.from(`${crc32(body).toString(16).padStart(8, '0')} `, 'latin1');
  return Buffer.concat([head, body, Buffer.from('\n', 'latin1')]);
}

export function encodeRecord(events: readonly StoredEvent[], upTo?: string): Buffer {
  return frame(Buffer.from(JSON.stringify(upTo === undefined ? { v: 1, events } : { v: 1, events, upTo }), 'utf8'));
}

export function encodeHeader(h: CheckpointHeader): Buffer {
  return frame(Buffer.from(JSON.stringify({ v: 1, events: [], ...h }), 'utf8'));
}

/** The checkpoint header, when the journal starts with one. */
export function headerOf(records: readonly JournalRecord[]): CheckpointHeader | undefined {
  const first = records[0];
  if (first?.upTo === undefined || first.events.length > 0) return undefined;
  return {
    upTo: first.upTo,
    ...(first.db ? { db: first.db } : {}),
    ...(first.prev ? { prev: first.prev } : {}),
    ...(first.covered !== undefined ? { covered: first.covered } : {}),
    ...(first.coveredCrc !== undefined ? { coveredCrc: first.coveredCrc } : {}),
    ...(first.coveredLast !== undefined ? { coveredLast: first.coveredLast } : {}),
  };
}

/** A complete (newline-terminated) record that fails its checksum or its schema. */
export interface JournalDamage {
  /** Byte offset of the damaged record in the file. */
  readonly offset: number;
  readonly reason: string;
  /** Intact records after it: a torn tail is never followed by any. */
  readonly intactAfter: number;
  readonly eventsAfter: number;
}

export interface JournalScan {
  /** The valid records before the first invalid byte. */
  readonly records: JournalRecord[];
  /** Byte offset just past the last valid record (where the next read or append starts). */
  readonly validEnd: number;
  /** Bytes after validEnd that are not a valid record (a torn tail, or damage and what follows it). */
  readonly tornBytes: number;
  /** Why scanning stopped early, when it did. */
  readonly tornReason?: string;
  /** Set when scanning stopped at damage rather than at a torn tail. */
  readonly damage?: JournalDamage;
  /** The last record is complete but its final newline is missing (writer open only: it adds one). */
  readonly unterminated?: boolean;
  /** File offset just past the checkpoint header, when the scan started at one (else where it started). */
  readonly headerEnd: number;
  /**
   * Only with `skipCovered`: the records right after the header that ralph.db holds, whose
   * checksums were checked but which were not parsed (they are not in `records`), the id of
   * their last event (a database holding it holds them all: every database is a prefix of
   * the journal's order), and the scan that parses them all, for an open whose database
   * lacks it.
   */
  readonly skipped?: { readonly lastId: string; readonly full: () => JournalScan };
}

const NEWLINE = 0x0a;
const SPACE = 0x20;

type Parsed = { ok: true; record: JournalRecord } | { ok: false; reason: string };

/** The 8 lowercase hex digits at buf[start], or -1 (read by hand: opens check thousands). */
function hex8(buf: Uint8Array, start: number): number {
  let v = 0;
  for (let i = start; i < start + 8; i++) {
    const c = buf[i] ?? 0;
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** Why the record in buf[start, end) fails its frame or checksum, or undefined when both hold. */
function frameFault(buf: Uint8Array, start: number, end: number, at: number): string | undefined {
  if (end - start < 10 || buf[start + 8] !== SPACE) return `malformed record header at byte ${at}`;
  const want = hex8(buf, start);
  if (want < 0 || crc32(buf, start + 9, end) !== want) return `checksum mismatch at byte ${at}`;
  return undefined;
}

/** Parses the record in buf[start, end) (end excludes its newline); `at` is its file offset. */
function parseRecord(buf: Uint8Array, start: number, end: number, at: number): Parsed {
  const fault = frameFault(buf, start, end, at);
  if (fault !== undefined) return { ok: false, reason: fault };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(buf.subarray(start + 9, end)).toString('utf8'));
  } catch (e) {
    return { ok: false, reason: `invalid record at byte ${at}: ${(e as Error).message.split('\n')[0] ?? ''}` };
  }
  const record = recordOf(json);
  if (record === undefined) {
    const issue = journalRecordSchema().safeParse(json).error?.issues[0];
    const why = issue ? `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}` : 'not a journal record';
    return { ok: false, reason: `invalid record at byte ${at}: ${why}` };
  }
  return { ok: true, record };
}

/** The id of the last event of the record in buf[start, end), or undefined when it has none or is not a record. */
function lastEventId(buf: Uint8Array, start: number, end: number): string | undefined {
  const r = parseRecord(buf, start, end, start);
  return r.ok ? r.record.events[r.record.events.length - 1]?.event_id : undefined;
}

/** The id of the last event of the last record in buf[0, end) (`end` just past its newline). */
export function lastRecordEventId(buf: Uint8Array, end: number): string | undefined {
  if (end <= 0 || buf[end - 1] !== NEWLINE) return undefined;
  const start = end >= 2 ? buf.lastIndexOf(NEWLINE, end - 2) + 1 : 0;
  return lastEventId(buf, start, end - 1);
}

export interface ScanOptions {
  /**
   * Take a complete last record whose newline is missing as valid (a write cut one byte
   * short, or a damaged newline). Only the writer's open uses it, and it then adds the
   * newline; an observer waits for the writer to finish the line.
   */
  readonly acceptUnterminated?: boolean;
  /** Check but do not parse the records the header says ralph.db holds (JournalScan.skipped). */
  readonly skipCovered?: boolean;
}

/**
 * The whole records from buf[pos] that exactly fill the header's `covered` bytes, each with
 * its checksum holding, and where the last one starts; undefined when they do not (a
 * checksum fails, or the file ends or a record straddles the count: a journal cut short or
 * changed outside Ralph). The full scan then decides.
 */
function coveredRecords(buf: Uint8Array, pos: number, covered: number): { end: number; lastStart: number } | undefined {
  const to = pos + covered;
  if (to > buf.length) return undefined;
  let at = pos;
  let lastStart = pos;
  while (at < to) {
    const nl = buf.indexOf(NEWLINE, at);
    if (nl < 0 || nl >= to) return undefined;
    if (frameFault(buf, at, nl, 0) !== undefined) return undefined;
    lastStart = at;
    at = nl + 1;
  }
  return { end: at, lastStart };
}

/**
 * The same as coveredRecords from the header's one sum over the covered bytes: they are the
 * bytes the checkpoint kept, whole records ending in a newline; undefined when the sum does
 * not hold (coveredRecords then looks record by record).
 */
function coveredBySum(buf: Uint8Array, pos: number, covered: number, sum: number): { end: number; lastStart: number } | undefined {
  const to = pos + covered;
  if (to > buf.length || buf[to - 1] !== NEWLINE || crc32(buf, pos, to) !== sum) return undefined;
  return { end: to, lastStart: Math.max(pos, buf.lastIndexOf(NEWLINE, to - 2) + 1) };
}

/** Parses records from `buf` (the journal's bytes from `baseOffset`), stopping at the first invalid one. */
export function scanJournal(buf: Uint8Array, baseOffset = 0, options: ScanOptions = {}): JournalScan {
  const records: JournalRecord[] = [];
  let pos = 0;
  let headerEnd = baseOffset;
  let skipped: JournalScan['skipped'];
  const done = (rest: Omit<JournalScan, 'records' | 'headerEnd'>): JournalScan => ({
    records,
    headerEnd,
    ...(skipped ? { skipped } : {}),
    ...rest,
  });
  while (pos < buf.length) {
    const nl = buf.indexOf(NEWLINE, pos);
    if (nl < 0) {
      if (options.acceptUnterminated) {
        const last = parseRecord(buf, pos, buf.length, baseOffset + pos);
        if (last.ok) {
          records.push(last.record);
          if (records.length === 1 && headerOf(records)) headerEnd = baseOffset + buf.length;
          return done({ validEnd: baseOffset + buf.length, tornBytes: 0, unterminated: true });
        }
      }
      return done({ validEnd: baseOffset + pos, tornBytes: buf.length - pos, tornReason: 'incomplete last record' });
    }
    const r = parseRecord(buf, pos, nl, baseOffset + pos);
    if (!r.ok) {
      // A complete line never comes from a write cut short (it ends at the newline), so this
      // is damage: count what an open that took it for a torn tail would have thrown away.
      const after = salvageRecords(buf.subarray(pos + 1), baseOffset + pos + 1).records;
      return done({
        validEnd: baseOffset + pos,
        tornBytes: buf.length - pos,
        tornReason: r.reason,
        damage: {
          offset: baseOffset + pos,
          reason: r.reason,
          intactAfter: after.length,
          eventsAfter: after.reduce((n, x) => n + x.record.events.length, 0),
        },
      });
    }
    records.push(r.record);
    pos = nl + 1;
    if (records.length === 1 && headerOf(records)) {
      headerEnd = baseOffset + pos;
      const covered = r.record.covered ?? 0;
      if (options.skipCovered && covered > 0) {
        const full = (): JournalScan => scanJournal(buf, baseOffset, { ...options, skipCovered: false });
        const sum = r.record.coveredCrc;
        const bySum = sum !== undefined ? coveredBySum(buf, pos, covered, sum) : undefined;
        const c = bySum ?? coveredRecords(buf, pos, covered);
        if (c === undefined) return full();
        // The header's word for the last id only when its sum vouches for the bytes it describes.
        const lastId = (bySum ? r.record.coveredLast : undefined) ?? lastEventId(buf, c.lastStart, c.end - 1);
        if (lastId === undefined) return full();
        skipped = { lastId, full };
        pos = c.end;
      }
    }
  }
  return done({ validEnd: baseOffset + pos, tornBytes: 0 });
}

/** One intact record found by salvageRecords, with where it lies in the file. */
export interface LocatedRecord {
  readonly offset: number;
  /** Bytes including its newline (or excluding it, when the newline itself was damaged). */
  readonly length: number;
  readonly record: JournalRecord;
}

/** A stretch of bytes no intact record covers. */
export interface DamagedRange {
  readonly offset: number;
  readonly length: number;
  /** Event ids still legible in the damaged bytes (they may be mangled; a hint, not a fact). */
  readonly legibleIds: string[];
}

const RECORD_START = /[0-9a-f]{8} \{"v":1,/g;
const EVENT_ID = /"event_id":"([^"\\]{1,200})"/g;

/**
 * Every record whose checksum holds, wherever it lies: records start at the beginning, after
 * a newline, or wherever a record prefix (`<crc> {"v":1,`) appears (the newline before it may
 * be the damaged byte), and end at a newline or just before the next record's start.
 */
export function salvageRecords(buf: Uint8Array, baseOffset = 0): { records: LocatedRecord[]; damaged: DamagedRange[] } {
  const text = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('latin1');
  const starts = new Set<number>([0]);
  for (let i = text.indexOf('\n'); i >= 0 && i + 1 < text.length; i = text.indexOf('\n', i + 1)) starts.add(i + 1);
  for (const m of text.matchAll(RECORD_START)) starts.add(m.index);
  const sorted = [...starts].filter((s) => s < buf.length).sort((a, b) => a - b);
  const records: LocatedRecord[] = [];
  let covered = 0;
  for (let i = 0; i < sorted.length; i++) {
    const s = sorted[i] as number;
    if (s < covered) continue;
    // Candidate ends: the next newline, and the byte before each of the next few starts.
    const ends = new Set<number>();
    const nl = text.indexOf('\n', s);
    ends.add(nl < 0 ? buf.length : nl);
    for (let j = i + 1; j < Math.min(sorted.length, i + 4); j++) ends.add((sorted[j] as number) - 1);
    ends.add(buf.length);
    for (const e of [...ends].filter((x) => x > s).sort((a, b) => a - b)) {
      const r = parseRecord(buf, s, e, baseOffset + s);
      if (!r.ok) continue;
      const length = e < buf.length ? e - s + 1 : e - s;
      records.push({ offset: baseOffset + s, length, record: r.record });
      covered = s + length;
      break;
    }
  }
  const damaged: DamagedRange[] = [];
  let at = 0;
  for (const r of [...records, { offset: baseOffset + buf.length, length: 0 }]) {
    const start = r.offset - baseOffset;
    if (start > at) {
      const bytes = text.slice(at, start);
      damaged.push({ offset: baseOffset + at, length: start - at, legibleIds: [...bytes.matchAll(EVENT_ID)].map((m) => m[1] as string) });
    }
    at = start + r.length;
  }
  return { records, damaged };
}

/** A scan of the journal file, with the file's inode and size as read. */
export type JournalRead = JournalScan & { readonly ino: number; readonly size: number };

/** Reads the journal from `offset`; a missing file reads as empty. */
export function readJournalSync(file: string, offset = 0, options: ScanOptions = {}): JournalRead {
  const data = readFileFrom(file, offset);
  if (!data) return { ...scanJournal(new Uint8Array(0), 0), ino: 0, size: 0 };
  return { ...scanJournal(data.buf, data.start, options), ino: data.ino, size: data.size };
}

/** The file's bytes from `offset` (from 0 when the file is now shorter), or undefined when it does not exist. */
export function readFileFrom(file: string, offset = 0): { buf: Buffer; start: number; ino: number; size: number } | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError('open', file, e);
  }
  try {
    const st = onFile('stat', file, () => fs.fstatSync(fd));
    const start = offset <= st.size ? offset : 0;
    const len = st.size - start;
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = onFile('read', file, () => fs.readSync(fd, buf, got, len - got, start + got));
      if (n === 0) break;
      got += n;
    }
    return { buf: buf.subarray(0, got), start, ino: st.ino, size: st.size };
  } finally {
    fs.closeSync(fd);
  }
}

interface PendingWrite {
  readonly buf: Buffer;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

/** A batch could not be made durable. `recorded` says whether its bytes may still be in the journal. */
export class JournalWriteError extends Error {
  override readonly name = 'JournalWriteError';
  constructor(
    override readonly cause: Error,
    /** 'no': the journal was cut back to before the batch; 'unknown': cutting it back failed too. */
    readonly recorded: 'no' | 'unknown',
  ) {
    super(cause.message);
  }
}

/**
 * Appends records with group commit: records queued in the same tick (and those queued
 * while an fsync is in flight) are written together and share one fdatasync. Every
 * operation on the file runs on one serial chain, so a trim never races an append.
 */
export class JournalAppender {
  private handle: fsp.FileHandle | undefined;
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private bytes = 0;
  private syncs = 0;
  /** The first write that failed: nothing appended after it may be taken as durable. */
  private broken: Error | undefined;

  private constructor(
    private readonly file: string,
    private readonly guard: (() => void) | undefined,
  ) {}

  /** `guard` runs before each batch is written and vetoes it by throwing (e.g. lock lost). */
  static async open(file: string, size: number, guard?: () => void): Promise<JournalAppender> {
    const j = new JournalAppender(file, guard);
    j.handle = await onFileAsync('open', file, () => fsp.open(file, 'a'));
    j.bytes = size;
    return j;
  }

  /** Bytes in the journal as far as this appender knows (written and synced). */
  get size(): number {
    return this.bytes;
  }

  get fsyncs(): number {
    return this.syncs;
  }

  /** Raw fd, for the synchronous exit path only. */
  get fd(): number | undefined {
    return this.handle?.fd;
  }

  append(buf: Buffer): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ buf, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          void this.exclusive(() => this.flush());
        });
      }
    });
  }

  /** Runs `fn` when no append or other exclusive operation is in flight. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn);
    this.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Runs `fn` once every record appended so far is written and synced and none is in flight,
   * so `size` then ends exactly after the last record appended before it; throws the error of
   * a write that failed instead. `fn` must be synchronous to keep that true.
   */
  drained<T>(fn: () => T): Promise<T> {
    return this.exclusive(async () => {
      while (this.pending.length > 0) await this.flush();
      if (this.broken) throw this.broken;
      return fn();
    });
  }

  /** Replaces the journal's file (after a trim) and continues appending to it. */
  async reopen(size: number): Promise<void> {
    await this.handle?.close();
    this.handle = await onFileAsync('open', this.file, () => fsp.open(this.file, 'a'));
    this.bytes = size;
  }

  async close(): Promise<void> {
    await this.exclusive(async () => {
      await this.flush();
      await this.handle?.close();
      this.handle = undefined;
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const handle = this.handle;
    try {
      if (!handle) throw new Error(`journal ${this.file} is closed`);
      this.guard?.();
    } catch (e) {
      for (const p of batch) p.reject(e);
      return;
    }
    const buf = batch.length === 1 ? (batch[0] as PendingWrite).buf : Buffer.concat(batch.map((p) => p.buf));
    try {
      let off = 0;
      while (off < buf.length) {
        try {
          off += (await handle.write(buf, off, buf.length - off)).bytesWritten;
        } catch (e) {
          throw fileError('write', this.file, e);
        }
      }
      await onFileAsync('fsync', this.file, () => handle.datasync());
    } catch (e) {
      // Nobody is told these records are durable, so none of them may survive: a retry of
      // the command must not find its first attempt in the journal at the next open.
      const error = new JournalWriteError(e as Error, await this.cutBack(handle));
      this.broken ??= error;
      for (const p of batch) p.reject(error);
      return;
    }
    this.syncs += 1;
    this.bytes += buf.length;
    for (const p of batch) p.resolve();
  }

  private async cutBack(handle: fsp.FileHandle): Promise<'no' | 'unknown'> {
    try {
      await handle.truncate(this.bytes);
    } catch {
      return 'unknown';
    }
    // Once truncated, no later open sees the batch; making the cut itself durable is best
    // effort (a device failing fsync may keep failing it).
    await handle.datasync().catch(() => undefined);
    return 'no';
  }
}
