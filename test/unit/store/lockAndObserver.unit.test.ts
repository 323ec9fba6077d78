import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreLockedError, type LockHolder } from '../../../src/store/errors';
import { crc32, encodeRecord } from '../../../src/store/journal';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore, NewEvent, StoredEvent } from '../../../src/store/types';
import { counterProjection, counterRows } from './counterProjection';

function tmpRalph(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-lock-')), '.ralph');
}

function ev(entity_id: string): NewEvent {
  return { entity_type: 'task', entity_id, event_type: 'task.touched', actor: 'test', payload: {} };
}

function writeLock(dir: string, holder: LockHolder): void {
  fs.mkdirSync(path.join(dir, 'locks'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'locks', 'writer.lock'), JSON.stringify(holder));
}

/** A pid that certainly belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('store writer lock and observers', () => {
  const open: EventStore[] = [];
  afterEach(async () => {
    for (const s of open.splice(0).reverse()) await s.close();
  });
  async function openAs(dir: string, mode: 'writer' | 'observer', extra: { lockStaleMs?: number } = {}): Promise<EventStore> {
    const s = await openStore({ ralphDir: dir, mode, projections: [counterProjection()], checkpointDebounceMs: 3_600_000, ...extra });
    open.push(s);
    return s;
  }

  it('given a live writer, when a second writer opens, then StoreLockedError names pid, host and since', async () => {
    const dir = tmpRalph();
    await openAs(dir, 'writer');
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'locks', 'writer.lock'), 'utf8')) as LockHolder;
    assert.equal(lock.pid, process.pid);
    assert.equal(lock.host, os.hostname());
    await assert.rejects(openAs(dir, 'writer'), (e: unknown) => {
      assert.ok(e instanceof StoreLockedError);
      assert.equal(e.name, 'StoreLockedError');
      assert.equal(e.holder?.pid, process.pid);
      assert.match(e.message, new RegExp(`pid ${process.pid} on host ${os.hostname()}, since ${lock.started}`));
      return true;
    });
  });

  it('when the writer closes, then the lock is released and another writer can open', async () => {
    const dir = tmpRalph();
    const w = await openAs(dir, 'writer');
    await w.close();
    assert.ok(!fs.existsSync(path.join(dir, 'locks', 'writer.lock')));
    await openAs(dir, 'writer');
  });

  it('given a lock left by a dead pid on this host, then it is taken over with a lock.taken_over event', async () => {
    const dir = tmpRalph();
    const old: LockHolder = {
      pid: deadPid(),
      host: os.hostname(),
      started: '2026-01-01T00:00:00.000Z',
      heartbeat: new Date().toISOString(),
      runId: 'run_old',
    };
    writeLock(dir, old);
    const w = await openAs(dir, 'writer');
    const taken = w.events({ entityType: 'run' });
    assert.equal(taken.length, 1);
    assert.equal(taken[0]?.event_type, 'lock.taken_over');
    assert.equal(taken[0]?.entity_id, w.runId);
    assert.deepEqual(taken[0]?.payload, { previous: old, reason: 'pid_dead' });
  });

  it('given a lock from another host with a stale heartbeat, then it is taken over; with a fresh one, it is not', async () => {
    const dir = tmpRalph();
    const fresh: LockHolder = {
      pid: 1,
      host: 'elsewhere',
      started: new Date().toISOString(),
      heartbeat: new Date().toISOString(),
      runId: 'run_x',
    };
    writeLock(dir, fresh);
    await assert.rejects(openAs(dir, 'writer', { lockStaleMs: 60_000 }), StoreLockedError);
    writeLock(dir, { ...fresh, heartbeat: new Date(Date.now() - 120_000).toISOString() });
    const w = await openAs(dir, 'writer', { lockStaleMs: 60_000 });
    assert.equal(w.events({ entityType: 'run' })[0]?.payload['reason'], 'heartbeat_stale');
  });

  it('given a writer, then an observer opens without the lock and sees acknowledged events via the journal before any checkpoint', async () => {
    const dir = tmpRalph();
    const w = await openAs(dir, 'writer');
    await w.append([ev('A')]);
    const o = await openAs(dir, 'observer');
    assert.equal(o.events().length, 1);
    const seen: StoredEvent[] = [];
    o.onDidAppend((es) => seen.push(...es));
    const acked = await w.append([ev('B'), ev('C')]);
    assert.equal(w.stats().checkpoints, 1, 'no checkpoint since open');
    assert.equal(await o.refresh(), true);
    assert.deepEqual(seen, acked);
    assert.deepEqual(o.events(), w.events());
    assert.deepEqual(counterRows(o), counterRows(w));
    assert.equal(await o.refresh(), false);
  });

  it('given the writer checkpoints and trims the journal, then the observer reloads and misses nothing', async () => {
    const dir = tmpRalph();
    const w = await openAs(dir, 'writer');
    const o = await openAs(dir, 'observer');
    const seen: string[] = [];
    o.onDidAppend((es) => seen.push(...es.map((e) => e.entity_id)));
    await w.append([ev('A')]);
    await o.refresh();
    await w.append([ev('B')]);
    await w.checkpoint();
    await w.append([ev('C')]);
    await o.refresh();
    assert.equal(o.stats().dbReloads, 1, 'B was only in the new ralph.db: reload');
    await w.checkpoint();
    await o.refresh();
    assert.equal(o.stats().dbReloads, 1, 'the observer had everything in the next checkpoint: no reload');
    await w.append([ev('D')]);
    await o.refresh();
    assert.deepEqual(seen, ['A', 'B', 'C', 'D']);
    assert.deepEqual(o.events(), w.events());
    assert.deepEqual(counterRows(o), counterRows(w));
  });

  it('given an observer that read the ralph.db a checkpoint then replaced, then it replays what the journal kept for it', async () => {
    // The race the header's `covered` count must not lose: ralph.db read, then a checkpoint
    // rotates it and trims the journal, then the journal read. The kept records are covered
    // by the new ralph.db, not by the one this observer holds, so they must be parsed.
    const dir = tmpRalph();
    const w = await openAs(dir, 'writer');
    await w.append([ev('A')]);
    await w.checkpoint();
    const older = fs.readFileSync(path.join(dir, 'ralph.db'));
    await w.append([ev('B')]);
    await w.append([ev('C')]);
    await w.checkpoint();
    await w.close();
    open.splice(open.indexOf(w), 1);
    const journal = fs.readFileSync(path.join(dir, 'ralph.events.journal'), 'utf8');
    assert.match(journal.split('\n')[0] ?? '', /"covered":[1-9]/, 'the header counts the kept records');
    fs.writeFileSync(path.join(dir, 'ralph.db'), older);
    const o = await openAs(dir, 'observer');
    assert.deepEqual(
      o.events().map((e) => e.entity_id),
      ['A', 'B', 'C'],
    );
    assert.equal(o.stats().replayedEvents, 2);
  });
});

describe('store writer lock: a takeover mutex left by a killed process', () => {
  it('given a dead holder and its abandoned mutex, then the lock is still taken over', async () => {
    const dir = tmpRalph();
    const pid = deadPid();
    writeLock(dir, {
      pid,
      host: os.hostname(),
      started: '2026-01-01T00:00:00.000Z',
      heartbeat: new Date().toISOString(),
      runId: 'run_old',
    });
    fs.writeFileSync(path.join(dir, 'locks', 'writer.lock.takeover'), JSON.stringify({ pid, host: os.hostname() }));
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    try {
      assert.equal(w.events({ entityType: 'run' })[0]?.event_type, 'lock.taken_over');
      assert.ok(!fs.existsSync(path.join(dir, 'locks', 'writer.lock.takeover')));
    } finally {
      await w.close();
    }
  });
});

describe('store writer lock: heartbeat and a lock taken away', () => {
  it('refreshes the heartbeat; when another process takes the lock, writes stop and close does not overwrite ralph.db', async () => {
    const dir = tmpRalph();
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [], heartbeatMs: 10, checkpointDebounceMs: 3_600_000 });
    const lockFile = path.join(dir, 'locks', 'writer.lock');
    const first = (JSON.parse(fs.readFileSync(lockFile, 'utf8')) as LockHolder).heartbeat;
    await until(() => (JSON.parse(fs.readFileSync(lockFile, 'utf8')) as LockHolder).heartbeat !== first);
    await w.append([ev('mine')]);
    const dbBefore = fs.readFileSync(path.join(dir, 'ralph.db'));
    // someone judged us dead and took over
    const thief: LockHolder = {
      pid: 1,
      host: 'other-host',
      started: new Date().toISOString(),
      heartbeat: new Date().toISOString(),
      runId: 'run_thief',
    };
    fs.writeFileSync(lockFile, JSON.stringify(thief));
    await assert.rejects(w.append([ev('late')]), (e: Error) => {
      assert.equal(e.name, 'StoreFailedError');
      assert.match(e.message, /taken over/);
      return true;
    });
    await assert.rejects(w.append([ev('later')]), /stopped accepting writes/);
    await assert.rejects(w.checkpoint(), /stopped accepting writes/);
    await w.close();
    assert.deepEqual(fs.readFileSync(path.join(dir, 'ralph.db')), dbBefore, 'the lost writer did not checkpoint over the new one');
    assert.ok(fs.readFileSync(lockFile, 'utf8').includes('run_thief'), 'and left the new holder its lock');
  });
});

async function until(cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('store observer and a record still being written', () => {
  it('given half a record at the journal tail, then the observer ignores it until the rest arrives', async () => {
    const dir = tmpRalph();
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [], checkpointDebounceMs: 3_600_000 });
    const [a] = await w.append([ev('A')]);
    await w.close(); // ralph.db now holds A; the journal only its header
    const b: StoredEvent = { ...(a as StoredEvent), event_id: 'evt_29991231235959999_000000', entity_id: 'B' };
    const rec = encodeRecord([b]);
    const jp = path.join(dir, 'ralph.events.journal');
    fs.appendFileSync(jp, rec.subarray(0, 25));
    const o = await openStore({ ralphDir: dir, mode: 'observer', projections: [] });
    try {
      assert.deepEqual(
        o.events().map((e) => e.entity_id),
        ['A'],
      );
      assert.equal(await o.refresh(), false);
      fs.appendFileSync(jp, rec.subarray(25));
      assert.equal(await o.refresh(), true);
      assert.deepEqual(
        o.events().map((e) => e.entity_id),
        ['A', 'B'],
      );
    } finally {
      await o.close();
    }
  });
});

describe('store journal: the records a checkpoint header counts as held by ralph.db', () => {
  const stores: EventStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0).reverse()) await s.close();
  });
  async function openAs(dir: string, mode: 'writer' | 'observer', clock?: () => number): Promise<EventStore> {
    const s = await openStore({
      ralphDir: dir,
      mode,
      projections: [counterProjection()],
      checkpointDebounceMs: 3_600_000,
      ...(clock ? { clock } : {}),
    });
    stores.push(s);
    return s;
  }
  async function closeLast(s: EventStore): Promise<void> {
    await s.close();
    stores.splice(stores.indexOf(s), 1);
  }
  /** An event another tool appended, whose id sorts after every one of ours. */
  function foreign(dir: string): void {
    const e: StoredEvent = {
      event_id: 'zzz-imported-1',
      ts: '2026-12-01T00:00:00.000Z',
      run_id: 'import',
      entity_type: 'task',
      entity_id: 'F',
      event_type: 'task.touched',
      actor: 'import',
      payload: {},
    };
    fs.appendFileSync(path.join(dir, 'ralph.events.journal'), encodeRecord([e]));
  }
  const ids = (s: EventStore): string[] => s.events().map((e) => e.entity_id);

  /** A, then the foreign event replayed by a writer (every checkpoint's upTo is now its id), and an observer open. */
  async function observerAfterForeign(): Promise<{ dir: string; o: EventStore }> {
    const dir = tmpRalph();
    const w0 = await openAs(dir, 'writer');
    await w0.append([ev('A')]);
    await closeLast(w0);
    foreign(dir);
    await closeLast(await openAs(dir, 'writer'));
    return { dir, o: await openAs(dir, 'observer') };
  }

  it('given a foreign largest id, when a writer appends and closes, then a following observer sees its events', async () => {
    const { dir, o } = await observerAfterForeign();
    const w = await openAs(dir, 'writer');
    await w.append([ev('C')]);
    await w.append([ev('D')]);
    await closeLast(w);
    await o.refresh();
    assert.deepEqual(ids(o).sort(), ['A', 'C', 'D', 'F']);
  });

  it('given that observer and a damaged record after the counted ones, then its refresh applies the intact records, then says the journal is damaged', async () => {
    const { dir, o } = await observerAfterForeign();
    const w = await openAs(dir, 'writer');
    await w.append([ev('C')]);
    await closeLast(w);
    fs.appendFileSync(path.join(dir, 'ralph.events.journal'), '00000000 {"v":1,"events":[]}\n');
    await assert.rejects(o.refresh(), /checksum mismatch/);
    assert.deepEqual(ids(o).sort(), ['A', 'C', 'F']);
  });

  it('given a foreign largest id and every record of ours counted as held, then a writer at the same millisecond continues after our last id', async () => {
    const dir = tmpRalph();
    const at = () => Date.parse('2026-12-03T12:00:00.000Z');
    const w0 = await openAs(dir, 'writer', at);
    await w0.append([ev('A')]);
    await closeLast(w0);
    foreign(dir);
    await closeLast(await openAs(dir, 'writer', at));
    const w = await openAs(dir, 'writer', at);
    const [b] = await w.append([ev('B')]);
    const a = w.events().find((e) => e.entity_id === 'A');
    assert.ok(a && b && b.event_id > a.event_id, `${b?.event_id} after ${a?.event_id}`);
  });

  /** A store whose writer appended A, checkpointed, appended `later` one command each, and closed. */
  async function closedAfter(...later: string[]): Promise<string> {
    const dir = tmpRalph();
    const w0 = await openAs(dir, 'writer');
    await w0.append([ev('A')]);
    await w0.checkpoint();
    for (const id of later) await w0.append([ev(id)]);
    await closeLast(w0);
    return dir;
  }

  it('given a checkpoint that keeps records ralph.db holds, then its header carries their sum, and an open takes them by it', async () => {
    const dir = await closedAfter('B', 'C');
    const bytes = fs.readFileSync(path.join(dir, 'ralph.events.journal'));
    const headerEnd = bytes.indexOf(0x0a) + 1;
    const header = JSON.parse(bytes.subarray(9, headerEnd - 1).toString('utf8')) as {
      covered: number;
      coveredCrc: number;
      coveredLast: string;
    };
    assert.ok(header.covered > 0);
    assert.equal(header.coveredCrc, crc32(bytes, headerEnd, headerEnd + header.covered));
    const o = await openAs(dir, 'observer');
    assert.deepEqual(ids(o), ['A', 'B', 'C']);
    assert.equal(header.coveredLast, o.events().at(-1)?.event_id, 'the last covered event is named');
  });

  it('given an observer that read the ralph.db before a checkpoint, then it lacks the last covered event and parses the counted records', async () => {
    const dir = tmpRalph();
    const w = await openAs(dir, 'writer');
    await w.append([ev('A')]);
    await w.checkpoint();
    await w.append([ev('B'), ev('C')]);
    await closeLast(w);
    // The race: ralph.db read just before the close's checkpoint replaced it, the journal after.
    fs.copyFileSync(path.join(dir, 'ralph.db.prev'), path.join(dir, 'ralph.db'));
    assert.match(fs.readFileSync(path.join(dir, 'ralph.events.journal'), 'utf8').split('\n')[0] ?? '', /"coveredLast":"evt_/);
    assert.deepEqual(ids(await openAs(dir, 'observer')), ['A', 'B', 'C']);
  });

  it('given a journal cut short inside the counted records, then what a writer appends after it is not skipped by a later open', async () => {
    const dir = await closedAfter('B', 'C');
    const journal = path.join(dir, 'ralph.events.journal');
    const lines = fs.readFileSync(journal, 'utf8').split('\n');
    assert.match(lines[0] ?? '', /"covered":[1-9]/);
    fs.writeFileSync(journal, `${lines.slice(0, -2).join('\n')}\n`); // C's record gone (ralph.db still holds it)
    const w = await openAs(dir, 'writer');
    await w.append([ev('Z')]);
    // The state a crash now would leave: a copy of the files as they are.
    const copy = tmpRalph();
    fs.mkdirSync(copy, { recursive: true });
    for (const f of ['ralph.db', 'ralph.db.prev', 'ralph.events.journal']) {
      if (fs.existsSync(path.join(dir, f))) fs.copyFileSync(path.join(dir, f), path.join(copy, f));
    }
    const o = await openAs(copy, 'observer');
    assert.deepEqual(ids(o), ['A', 'B', 'C', 'Z']);
  });

  it('given a last record ralph.db holds whose newline never reached the disk, then a writer finishes the line and the journal stays readable after its checkpoints', async () => {
    const dir = await closedAfter('B');
    const journal = path.join(dir, 'ralph.events.journal');
    const bytes = fs.readFileSync(journal);
    assert.equal(bytes.at(-1), 0x0a);
    fs.writeFileSync(journal, bytes.subarray(0, -1));
    await closeLast(await openAs(dir, 'writer'));
    assert.ok(!fs.readFileSync(journal, 'utf8').includes('\n\n'), 'no empty line');
    assert.deepEqual(ids(await openAs(dir, 'observer')), ['A', 'B']);
    const w = await openAs(dir, 'writer');
    await w.append([ev('C')]);
    await closeLast(w);
    assert.deepEqual(ids(await openAs(dir, 'observer')), ['A', 'B', 'C']);
  });
});
