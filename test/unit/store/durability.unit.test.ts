import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { JOURNAL_FILE, readJournalSync } from '../../../src/store/journal';
import { loadSqlJs } from '../../../src/store/sqlDb';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore, NewEvent } from '../../../src/store/types';
import { counterProjection, counterRows } from './counterProjection';
import { waitUntil } from '../../kit/wait';

function tmpRalph(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-dur-')), '.ralph');
}

function ev(entity_id: string, payload: Record<string, unknown> = {}): NewEvent {
  return { entity_type: 'task', entity_id, event_type: 'task.touched', actor: 'test', payload };
}

/** What a kill -9 leaves behind: the files as they are now, without the (live) lock. */
function snapshotAsCrashed(from: string): string {
  const to = tmpRalph();
  fs.mkdirSync(to, { recursive: true });
  for (const f of fs.readdirSync(from)) {
    const p = path.join(from, f);
    if (fs.statSync(p).isFile()) fs.copyFileSync(p, path.join(to, f));
  }
  return to;
}

describe('store durability (journal, checkpoint, replay)', () => {
  const open: EventStore[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  async function writer(dir: string, debounce = 3_600_000): Promise<EventStore> {
    const s = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointDebounceMs: debounce });
    open.push(s);
    return s;
  }

  it('given acknowledged events only in the journal, when the crashed files are opened, then they are replayed through the projections', async () => {
    const dir = tmpRalph();
    const w = await writer(dir);
    for (let i = 0; i < 30; i++) await w.append([ev(`T${i % 4}`, { i })]);
    assert.equal(w.stats().checkpoints, 1, 'only the initial checkpoint');
    const crashed = snapshotAsCrashed(dir);
    const r = await writer(crashed);
    assert.equal(r.stats().replayedEvents, 30);
    assert.deepEqual(r.events(), w.events());
    assert.deepEqual(counterRows(r), counterRows(w));
    // the replay was checkpointed: the db alone now holds everything
    assert.equal(await dbFileEvents(crashed), 30);
  });

  it('given a torn journal tail, then it is ignored, cut off, and later appends are readable', async () => {
    const dir = tmpRalph();
    const w = await writer(dir);
    const acked = await w.append([ev('A'), ev('B')]);
    const crashed = snapshotAsCrashed(dir);
    const jp = path.join(crashed, JOURNAL_FILE);
    const good = fs.statSync(jp).size;
    fs.appendFileSync(jp, '0badc0de {"v":1,"events":[{"event_id":"evt_2');
    const r = await writer(crashed);
    assert.deepEqual(
      r.events().map((e) => e.event_id),
      acked.map((e) => e.event_id),
    );
    assert.ok(r.stats().tornBytes > 0);
    assert.equal(readJournalSync(jp).tornBytes, 0, 'the torn tail was cut off');
    assert.ok(good > 0);
    const more = await r.append([ev('C')]);
    const again = snapshotAsCrashed(crashed);
    const r2 = await writer(again);
    assert.ok(r2.events().some((e) => e.event_id === more[0]?.event_id));
  });

  it('given a crash between the db rename and the journal trim, then reopening has every event once', async () => {
    const dir = tmpRalph();
    const w = await writer(dir);
    for (let i = 0; i < 10; i++) await w.append([ev(`T${i}`)]);
    const journalBefore = fs.readFileSync(path.join(dir, JOURNAL_FILE));
    await w.checkpoint();
    const crashed = snapshotAsCrashed(dir);
    fs.writeFileSync(path.join(crashed, JOURNAL_FILE), journalBefore); // trim "never happened"
    const r = await writer(crashed);
    assert.equal(r.events().length, 10);
    assert.equal(r.stats().replayedEvents, 0);
    assert.deepEqual(counterRows(r), counterRows(w));
  });

  it('given events appended while a checkpoint writes, then the trimmed journal keeps them', async () => {
    const dir = tmpRalph();
    const w = await writer(dir);
    for (let i = 0; i < 5; i++) await w.append([ev(`A${i}`)]);
    const cp = w.checkpoint();
    const late = await w.append([ev('late')]);
    await cp;
    const crashed = snapshotAsCrashed(dir);
    const r = await writer(crashed);
    assert.ok(r.events().some((e) => e.event_id === late[0]?.event_id));
    assert.equal(r.events().length, 6);
  });

  it('given the debounce, then a checkpoint follows the first append and trims the journal to what ralph.db.prev lacks', async () => {
    const dir = tmpRalph();
    const w = await writer(dir, 20);
    await w.append([ev('A')]);
    await waitUntil('the second checkpoint', () => w.stats().checkpoints >= 2, 5000, 5);
    assert.equal(await dbFileEvents(dir), 1, 'ralph.db holds A');
    assert.equal(await dbFileEvents(dir, 'ralph.db.prev'), 0, 'ralph.db.prev is the first, empty checkpoint');
    assert.equal(journalEvents(dir), 1, 'the journal keeps A for ralph.db.prev');
    await w.append([ev('B')]);
    await waitUntil('the third checkpoint', () => w.stats().checkpoints >= 3, 5000, 5);
    assert.equal(journalEvents(dir), 1, 'the next checkpoint drops A: ralph.db.prev now holds it');
  });

  it('given a journal of 1000 one-event commands sent as a burst, then one fsync covered them', async () => {
    const dir = tmpRalph();
    const w = await writer(dir);
    const before = w.stats().fsyncs;
    await Promise.all(Array.from({ length: 1000 }, (_, i) => w.append([ev(`B${i}`)])));
    assert.equal(w.stats().fsyncs - before, 1);
  });

  it('given a file that is not SQLite, then open fails naming the file', async () => {
    const dir = tmpRalph();
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'ralph.db'), 'this is not a database, just some text that is long enough '.repeat(20));
    await assert.rejects(openStore({ ralphDir: dir, mode: 'writer', projections: [] }), (e: Error) => {
      assert.equal(e.name, 'StoreCorruptError');
      assert.match(e.message, /ralph\.db/);
      return true;
    });
    // and the lock was not left behind
    assert.ok(!fs.existsSync(path.join(dir, 'locks', 'writer.lock')));
  });
});

/** Events in a database file as it is on disk (not through a store). */
async function dbFileEvents(dir: string, name = 'ralph.db'): Promise<number> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(fs.readFileSync(path.join(dir, name)));
  try {
    return Number(db.exec('SELECT count(*) FROM events')[0]?.values[0]?.[0] ?? -1);
  } finally {
    db.close();
  }
}

function journalEvents(dir: string): number {
  return readJournalSync(path.join(dir, JOURNAL_FILE)).records.reduce((n, r) => n + r.events.length, 0);
}

describe('store durability: read-only sessions', () => {
  it('given a writer session that appends nothing, then close does not rewrite ralph.db', async () => {
    const dir = tmpRalph();
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    await w.append([ev('A')]);
    await w.close();
    const before = fs.statSync(path.join(dir, 'ralph.db'));
    const r = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    assert.equal(r.events().length, 1);
    await r.close();
    assert.equal(r.stats().checkpoints, 0);
    const after = fs.statSync(path.join(dir, 'ralph.db'));
    assert.equal(after.ino, before.ino);
    assert.equal(after.mtimeMs, before.mtimeMs);
  });
});

describe('store durability: a journal write that fails', () => {
  it('given a group-committed burst whose write stops with ENOSPC after its first record, then the journal is cut back and the store refuses further writes', async () => {
    const dir = tmpRalph();
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [], checkpointDebounceMs: 3_600_000 });
    const jp = path.join(dir, JOURNAL_FILE);
    const before = fs.statSync(jp).size;
    // The appender's file handle: the first write lands part of the batch (one whole record
    // and more), the next fails as a full disk does.
    const appender = (w as unknown as { appender: { handle: { write: (...a: unknown[]) => Promise<{ bytesWritten: number }> } } }).appender;
    const handle = appender.handle;
    const write = handle.write.bind(handle);
    let calls = 0;
    handle.write = async (buf: unknown, off: unknown, len: unknown) => {
      if (calls++ === 0) return write(buf, off, Math.floor((len as number) * 0.75));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    const results = await Promise.allSettled([w.append([ev('A')]), w.append([ev('B')]), w.append([ev('C')])]);
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.match(
        String((r as PromiseRejectedResult).reason),
        /could not write .*ralph\.events\.journal: no space left on device \(ENOSPC\)/,
      );
      assert.equal(((r as PromiseRejectedResult).reason as { recorded: string }).recorded, 'no');
    }
    assert.equal(fs.statSync(jp).size, before, 'no record of the failed batch is left in the journal');
    await assert.rejects(w.append([ev('D')]), /stopped accepting writes/);
    await w.close();
    const again = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    try {
      assert.deepEqual(
        again.events().map((e) => e.entity_id),
        [],
        'a retry of A, B or C cannot find the first attempt',
      );
    } finally {
      await again.close();
    }
  });
});
