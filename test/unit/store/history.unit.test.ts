// The store never starts empty or older when history existed, never drops intact journal
// records for a damaged one, and the store's restore keeps all it can and says what it lost.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOURNAL_FILE, encodeHeader, headerOf, readJournalSync } from '../../../src/store/journal';
import { restoreStoreFiles, inspectStoreFiles } from '../../../src/store/salvage';
import { PREV_DB_FILE, openStore } from '../../../src/store/sqlJsStore';
import type { EventStore, NewEvent, StoredEvent } from '../../../src/store/types';
import { counterProjection, counterRows } from './counterProjection';

function tmpRalph(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-hist-')), '.ralph');
}

function ev(entity_id: string): NewEvent {
  return { entity_type: 'task', entity_id, event_type: 'task.touched', actor: 'test', payload: { note: `about ${entity_id}` } };
}

const NEVER = 3_600_000;

async function open(dir: string, mode: 'writer' | 'observer' = 'writer'): Promise<EventStore> {
  return openStore({ ralphDir: dir, mode, projections: [counterProjection()], checkpointDebounceMs: NEVER });
}

/** The .ralph files as they are now, copied elsewhere (what a kill -9 leaves, without the lock). */
function snapshotAsCrashed(from: string): string {
  const to = tmpRalph();
  fs.mkdirSync(to, { recursive: true });
  for (const f of fs.readdirSync(from)) {
    const p = path.join(from, f);
    if (fs.statSync(p).isFile()) fs.copyFileSync(p, path.join(to, f));
  }
  return to;
}

/** A store with `checkpointed` events in two checkpoints (so ralph.db.prev exists) and `tail` only in the journal. */
async function history(checkpointed: number, tail: number): Promise<{ dir: string; all: StoredEvent[] }> {
  const live = tmpRalph();
  const w = await open(live);
  const all: StoredEvent[] = [];
  try {
    for (let i = 0; i < checkpointed; i++) {
      all.push(...(await w.append([ev(`C${i}`)])));
      if (i === Math.floor(checkpointed / 2)) await w.checkpoint();
    }
    await w.checkpoint();
    for (let i = 0; i < tail; i++) all.push(...(await w.append([ev(`J${i}`)])));
    return { dir: snapshotAsCrashed(live), all };
  } finally {
    await w.close();
  }
}

async function refused(dir: string, mode: 'writer' | 'observer', pattern: RegExp): Promise<Error> {
  let err: Error | undefined;
  await assert.rejects(open(dir, mode), (e: Error) => {
    err = e;
    assert.equal(e.name, 'StoreCorruptError', e.message);
    assert.match(e.message, pattern);
    return true;
  });
  assert.ok(!fs.existsSync(path.join(dir, 'locks', 'writer.lock')), 'no lock left behind');
  return err as Error;
}

async function eventIds(dir: string): Promise<string[]> {
  const s = await open(dir);
  try {
    return s.events().map((e) => e.event_id);
  } finally {
    await s.close();
  }
}

describe('store history: damaged journal', () => {
  it('given one flipped byte in the first of three journal records, then the writer and observers refuse, naming the file and the byte offset, and change nothing', async () => {
    const { dir } = await history(2, 3);
    const jp = path.join(dir, JOURNAL_FILE);
    const firstRecord = readJournalSync(jp).headerEnd;
    const bytes = fs.readFileSync(jp);
    const nl = bytes.indexOf(0x0a, firstRecord);
    const target = firstRecord + Math.floor((nl - firstRecord) / 2);
    bytes[target] = (bytes[target] ?? 0) ^ 0x01;
    fs.writeFileSync(jp, bytes);
    const before = fs.readFileSync(jp);
    const e = await refused(dir, 'writer', new RegExp(`ralph\\.events\\.journal: the record at byte ${firstRecord} is damaged`));
    assert.match(e.message, /intact record\(s\) with \d+ event\(s\) follow it/);
    assert.match(e.message, /ralph repair --fix/);
    await refused(dir, 'observer', /is damaged/);
    assert.deepEqual(fs.readFileSync(jp), before, 'the journal was not cut');
  });

  it('given a torn tail (a record cut short), then the writer opens and drops it quietly', async () => {
    const { dir, all } = await history(2, 2);
    const jp = path.join(dir, JOURNAL_FILE);
    const bytes = fs.readFileSync(jp);
    fs.writeFileSync(jp, bytes.subarray(0, bytes.length - 7));
    const ids = await eventIds(dir);
    assert.deepEqual(
      ids,
      all.slice(0, -1).map((e) => e.event_id),
      'only the cut record is gone (it was never acknowledged)',
    );
  });

  it('given the damaged journal, then restoreStoreFiles keeps every intact record, backs it up, says nothing was lost when ralph.db holds the damaged record', async () => {
    const { dir, all } = await history(4, 2);
    const jp = path.join(dir, JOURNAL_FILE);
    const bytes = fs.readFileSync(jp);
    // damage the first record after the header: ralph.db (the last checkpoint) holds its events
    const start = readJournalSync(jp).headerEnd;
    bytes[start + 40] = (bytes[start + 40] ?? 0) ^ 0x08;
    fs.writeFileSync(jp, bytes);
    const r = await restoreStoreFiles(dir, new Date('2026-12-01T10:00:00.000Z'));
    assert.ok(r);
    assert.equal(r.base, 'ralph.db');
    assert.deepEqual(r.lostEventIds, []);
    assert.equal(r.lostUnknown, false);
    assert.deepEqual(
      r.damaged.map((d) => d.verdict),
      ['recovered'],
    );
    assert.ok(r.summary.includes('nothing was lost'), r.summary.join('\n'));
    assert.deepEqual(fs.readFileSync(path.join(dir, 'backup', '2026-12-01T10-00-00-000Z-store', JOURNAL_FILE)), bytes);
    assert.deepEqual(
      await eventIds(dir),
      all.map((e) => e.event_id),
    );
  });

  it('given damage in a record only the journal held, then the restore keeps the rest and names the lost event', async () => {
    const { dir, all } = await history(2, 3);
    const jp = path.join(dir, JOURNAL_FILE);
    const bytes = fs.readFileSync(jp);
    // the last record: its event is in no database
    const lastStart = bytes.lastIndexOf(0x0a, bytes.length - 2) + 1;
    bytes[bytes.length - 10] = (bytes[bytes.length - 10] ?? 0) ^ 0x02;
    fs.writeFileSync(jp, bytes);
    await refused(dir, 'writer', new RegExp(`the record at byte ${lastStart} is damaged .*it is complete, so it is not a torn tail`));
    const r = await restoreStoreFiles(dir);
    assert.ok(r);
    const lost = all[all.length - 1]?.event_id as string;
    assert.deepEqual(r.lostEventIds, [lost]);
    assert.ok(
      r.summary.some((l) => l.includes(`LOST 1 event(s) (${lost}`)),
      r.summary.join('\n'),
    );
    assert.deepEqual(
      await eventIds(dir),
      all.slice(0, -1).map((e) => e.event_id),
    );
  });
});

describe('store history: missing, empty, damaged or older ralph.db', () => {
  for (const [what, damage] of [
    ['deleted', (db: string) => fs.rmSync(db)],
    ['emptied (0 bytes)', (db: string) => fs.writeFileSync(db, '')],
  ] as const) {
    it(`given ralph.db ${what} beside a journal whose checkpoint knew events, then open is refused; restore brings every event back from ralph.db.prev and the journal`, async () => {
      const { dir, all } = await history(5, 2);
      const before = await rowsOf(dir);
      damage(path.join(dir, 'ralph.db'));
      await refused(
        dir,
        'writer',
        /ralph\.db: is (missing|empty \(0 bytes\)), but the journal's checkpoint header says it held events up to evt_/,
      );
      await refused(dir, 'observer', /Ralph will not start an empty store over that history/);
      const insp = await inspectStoreFiles(dir);
      assert.deepEqual(
        insp.problems.map((p) => p.kind),
        ['db_missing'],
      );
      const r = await restoreStoreFiles(dir);
      assert.equal(r?.base, 'ralph.db.prev');
      assert.ok(r?.summary.includes('nothing was lost'), r?.summary.join('\n'));
      assert.deepEqual(
        await eventIds(dir),
        all.map((e) => e.event_id),
      );
      const s = await open(dir);
      try {
        assert.deepEqual(counterRows(s), before, 'the projections are rebuilt by the replay');
      } finally {
        await s.close();
      }
    });
  }

  it('given ralph.db and the journal deleted but ralph.db.prev holding events, then open is refused', async () => {
    const { dir } = await history(3, 0);
    fs.rmSync(path.join(dir, 'ralph.db'));
    fs.rmSync(path.join(dir, JOURNAL_FILE));
    await refused(dir, 'writer', /ralph\.db\.prev, the checkpoint before it, holds \d+ event\(s\)/);
  });

  it('given a new store (no history anywhere), then a missing or empty ralph.db opens as a fresh store', async () => {
    const dir = tmpRalph();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'ralph.db'), '');
    const s = await open(dir);
    assert.equal(s.events().length, 0);
    await s.close();
  });

  it('given one flipped byte in ralph.db, then the writer refuses it (checksum); restore uses ralph.db.prev and the journal, losing nothing', async () => {
    const { dir, all } = await history(6, 1);
    const db = path.join(dir, 'ralph.db');
    const bytes = fs.readFileSync(db);
    bytes[Math.floor(bytes.length / 2)] = (bytes[Math.floor(bytes.length / 2)] ?? 0) ^ 0x10;
    fs.writeFileSync(db, bytes);
    await refused(dir, 'writer', /ralph\.db: does not match the checksum its last checkpoint recorded/);
    const r = await restoreStoreFiles(dir);
    assert.equal(r?.base, 'ralph.db.prev');
    assert.deepEqual(
      await eventIds(dir),
      all.map((e) => e.event_id),
    );
  });

  it('given ralph.db replaced by an older copy, then the writer refuses it; restore loses nothing', async () => {
    const { dir, all } = await history(6, 1);
    fs.copyFileSync(path.join(dir, PREV_DB_FILE), path.join(dir, 'ralph.db'));
    await refused(dir, 'writer', /does not match the checksum/);
    const r = await restoreStoreFiles(dir);
    assert.ok(r?.summary.includes('nothing was lost'), r?.summary.join('\n'));
    assert.deepEqual(
      await eventIds(dir),
      all.map((e) => e.event_id),
    );
  });

  it('given a checkpoint cut short after renaming ralph.db and before trimming the journal, then the writer accepts the newer ralph.db', async () => {
    const { dir, all } = await history(3, 2);
    const w = await open(dir); // replays the tail and checkpoints
    const journalBefore = fs.readFileSync(path.join(dir, JOURNAL_FILE));
    await w.append([ev('late')]);
    await w.close(); // rotates ralph.db into ralph.db.prev, writes the new ralph.db, trims the journal
    fs.writeFileSync(path.join(dir, JOURNAL_FILE), journalBefore); // the trim "never happened"
    const ids = await eventIds(dir);
    assert.equal(ids.length, all.length + 1);
  });
});

describe('store history: a checkpoint that rotated and then failed to write', () => {
  it('given ralph.db.prev and ralph.db as one file (rotated, then the new image failed), then the next checkpoints leave no temp and a complete history', async () => {
    const { dir, all } = await history(3, 2);
    const db = path.join(dir, 'ralph.db');
    const prev = path.join(dir, PREV_DB_FILE);
    fs.rmSync(prev);
    fs.linkSync(db, prev); // what the rotation leaves when the image write then fails
    const w = await open(dir); // replays the tail and checkpoints
    const late = await w.append([ev('late')]);
    await w.close();
    assert.deepEqual(
      fs.readdirSync(dir).filter((f) => f.includes('.tmp-')),
      [],
    );
    assert.notEqual(fs.statSync(db).ino, fs.statSync(prev).ino);
    // ralph.db.prev plus the journal is still the whole history
    fs.rmSync(db);
    const r = await restoreStoreFiles(dir);
    assert.ok(r?.summary.includes('nothing was lost'), r?.summary.join('\n'));
    assert.deepEqual(
      await eventIds(dir),
      [...all, ...late].map((e) => e.event_id),
    );
  });
});

describe('store history: repair agrees with the writer on a ralph.db that is ralph.db.prev', () => {
  it('given ralph.db and ralph.db.prev as one file and a header naming neither, then the writer accepts and repair reports no db_checksum', async () => {
    const { dir, all } = await history(3, 2);
    const w = await open(dir); // replays the tail and checkpoints: ralph.db.prev, ralph.db, a header naming ralph.db
    await w.close();
    const db = path.join(dir, 'ralph.db');
    const prev = path.join(dir, PREV_DB_FILE);
    fs.rmSync(prev);
    fs.linkSync(db, prev);
    // The header names an image that never reached ralph.db (a checkpoint cut short).
    const journal = path.join(dir, JOURNAL_FILE);
    const scan = readJournalSync(journal, 0);
    const header = headerOf(scan.records);
    assert.ok(header?.db, 'a checkpoint header');
    const rest = fs.readFileSync(journal).subarray(scan.headerEnd);
    fs.writeFileSync(journal, Buffer.concat([encodeHeader({ ...header, db: { ...header.db, crc: (header.db.crc + 1) >>> 0 } }), rest]));
    const found = await inspectStoreFiles(dir);
    assert.deepEqual(
      found.problems.map((p) => p.kind),
      [],
      'repair finds nothing the writer refuses',
    );
    assert.deepEqual(
      await eventIds(dir),
      all.map((e) => e.event_id),
    );
    // A copy of ralph.db.prev (same bytes, another file) is still damage to both.
    fs.rmSync(db);
    fs.copyFileSync(prev, db);
    fs.writeFileSync(journal, Buffer.concat([encodeHeader({ ...header, db: { ...header.db, crc: (header.db.crc + 1) >>> 0 } }), rest]));
    assert.deepEqual(
      (await inspectStoreFiles(dir)).problems.map((p) => p.kind),
      ['db_checksum'],
    );
    await refused(dir, 'writer', /does not match the checksum/);
  });
});

/** The counter rows of the store in `dir`, read from a copy (the files in `dir` stay as they are). */
async function rowsOf(dir: string): Promise<unknown[]> {
  const s = await open(snapshotAsCrashed(dir));
  try {
    return counterRows(s);
  } finally {
    await s.close();
  }
}
