// The append-only event journal (.ralph/ralph.events.journal): one line per committed
// command, `<crc32 hex> <json>\n`, so a torn or garbled tail is detected and ignored.
// The appender gives each command one fsync and lets a burst share it (group commit).
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { z } from 'zod';
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

/** CRC-32 (IEEE), as zlib computes it. */
export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = (CRC_TABLE[(c ^ (buf[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const storedEventSchema = z.object({
  event_id: z.string().min(1),
  ts: z.string(),
  run_id: z.string(),
  entity_type: z.string(),
  entity_id: z.string(),
  event_type: z.string(),
  actor: z.string(),
  payload: z.record(z.string(), z.unknown()),
});
const recordSchema = z.object({ v: z.literal(1), events: z.array(storedEventSchema), upTo: z.string().optional() });

export interface JournalRecord {
  readonly events: StoredEvent[];
  /**
   * Only in the header a checkpoint writes when it trims the journal: the largest event id
   * in the ralph.db it just wrote. An observer that has seen that id needs no reload.
   */
  readonly upTo?: string;
}

export function encodeRecord(events: readonly StoredEvent[], upTo?: string): Buffer {
  const body = Buffer.from(JSON.stringify(upTo === undefined ? { v: 1, events } : { v: 1, events, upTo }), 'utf8');
  const head = Buffer.from(`${crc32(body).toString(16).padStart(8, '0')} `, 'latin1');
  return Buffer.concat([head, body, Buffer.from('\n', 'latin1')]);
}

export interface JournalScan {
  readonly records: JournalRecord[];
  /** Byte offset just past the last valid record (where the next read or append starts). */
  readonly validEnd: number;
  /** Bytes after validEnd that do not form a valid record: a torn or garbled tail. */
  readonly tornBytes: number;
  /** Why scanning stopped early, when it did. */
  readonly tornReason?: string;
}

const NEWLINE = 0x0a;
const SPACE = 0x20;

/** Parses records from `buf` (the journal's bytes from `baseOffset`), stopping at the first invalid one. */
export function scanJournal(buf: Uint8Array, baseOffset = 0): JournalScan {
  const records: JournalRecord[] = [];
  let pos = 0;
  let tornReason: string | undefined;
  while (pos < buf.length) {
    const nl = buf.indexOf(NEWLINE, pos);
    if (nl < 0) {
      tornReason = 'incomplete last record';
      break;
    }
    if (nl - pos < 10 || buf[pos + 8] !== SPACE) {
      tornReason = `malformed record header at byte ${baseOffset + pos}`;
      break;
    }
    const want = Number.parseInt(Buffer.from(buf.subarray(pos, pos + 8)).toString('latin1'), 16);
    if (!Number.isFinite(want) || crc32(buf, pos + 9, nl) !== want) {
      tornReason = `checksum mismatch at byte ${baseOffset + pos}`;
      break;
    }
    let parsed: z.infer<typeof recordSchema>;
    try {
      parsed = recordSchema.parse(JSON.parse(Buffer.from(buf.subarray(pos + 9, nl)).toString('utf8')));
    } catch (e) {
      tornReason = `invalid record at byte ${baseOffset + pos}: ${(e as Error).message.split('\n')[0] ?? ''}`;
      break;
    }
    records.push(
      parsed.upTo === undefined
        ? { events: parsed.events as StoredEvent[] }
        : { events: parsed.events as StoredEvent[], upTo: parsed.upTo },
    );
    pos = nl + 1;
  }
  return {
    records,
    validEnd: baseOffset + pos,
    tornBytes: buf.length - pos,
    ...(tornReason ? { tornReason } : {}),
  };
}

/** Reads the journal from `offset`; a missing file reads as empty. */
export function readJournalSync(file: string, offset = 0): JournalScan & { readonly ino: number; readonly size: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { ...scanJournal(new Uint8Array(0), 0), ino: 0, size: 0 };
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    const start = offset <= st.size ? offset : 0;
    const len = st.size - start;
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const n = fs.readSync(fd, buf, got, len - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return { ...scanJournal(buf.subarray(0, got), start), ino: st.ino, size: st.size };
  } finally {
    fs.closeSync(fd);
  }
}

interface PendingWrite {
  readonly buf: Buffer;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
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

  private constructor(
    private readonly file: string,
    private readonly guard: (() => void) | undefined,
  ) {}

  /** `guard` runs before each batch is written and vetoes it by throwing (e.g. lock lost). */
  static async open(file: string, size: number, guard?: () => void): Promise<JournalAppender> {
    const j = new JournalAppender(file, guard);
    j.handle = await fsp.open(file, 'a');
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

  /** Replaces the journal's file (after a trim) and continues appending to it. */
  async reopen(size: number): Promise<void> {
    await this.handle?.close();
    this.handle = await fsp.open(this.file, 'a');
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
    try {
      if (!this.handle) throw new Error(`journal ${this.file} is closed`);
      this.guard?.();
      const buf = batch.length === 1 ? (batch[0] as PendingWrite).buf : Buffer.concat(batch.map((p) => p.buf));
      let off = 0;
      while (off < buf.length) {
        const { bytesWritten } = await this.handle.write(buf, off, buf.length - off);
        off += bytesWritten;
      }
      await this.handle.datasync();
      this.syncs += 1;
      this.bytes += buf.length;
      for (const p of batch) p.resolve();
    } catch (e) {
      for (const p of batch) p.reject(e);
    }
  }
}
