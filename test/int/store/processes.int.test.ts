import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreLockedError } from '../../../src/store/errors';
import { readJournalSync } from '../../../src/store/journal';
import { openStore } from '../../../src/store/sqlJsStore';
import type { StoredEvent } from '../../../src/store/types';
import { counterProjection } from '../../unit/store/counterProjection';
import { pythonSqlite, spawnStoreChild } from './childProcess';

function tmpRalph(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-proc-')), '.ralph');
}

const countEvents = 'print(json.dumps(con.execute("SELECT count(*) FROM events WHERE actor = \'child\'").fetchone()[0]))';

describe('store across processes', function () {
  this.timeout(120_000);

  it('given a writer process, then a second writer (this process) gets StoreLockedError naming it; after kill -9 the lock is taken over with an event', async () => {
    const dir = tmpRalph();
    const child = spawnStoreChild(['hold', dir]);
    await child.waitForLine((l) => l === 'ready');
    const pid = child.proc.pid;
    await assert.rejects(openStore({ ralphDir: dir, mode: 'writer', projections: [] }), (e: unknown) => {
      assert.ok(e instanceof StoreLockedError);
      assert.equal(e.holder?.pid, pid);
      assert.match(e.message, new RegExp(`pid ${pid} on host ${os.hostname()}, since `));
      return true;
    });
    // an observer opens beside the live writer
    const o = await openStore({ ralphDir: dir, mode: 'observer', projections: [] });
    await o.close();
    await child.kill9();
    const w = await openStore({ ralphDir: dir, mode: 'writer', projections: [] });
    try {
      const [taken] = w.events({ entityType: 'run' });
      assert.equal(taken?.event_type, 'lock.taken_over');
      assert.equal((taken?.payload['previous'] as { pid: number }).pid, pid);
      assert.equal(taken?.payload['reason'], 'pid_dead');
      // and now a second process is the one refused
      const late = spawnStoreChild(['hold', dir]);
      const line = await late.waitForLine((l) => l.startsWith('error '));
      assert.match(line, new RegExp(`^error StoreLockedError .*pid ${process.pid} on host `));
      assert.equal((await late.exited).code, 3);
    } finally {
      await w.close();
    }
  });

  it('given a writer process that has not checkpointed, then an observer sees its acknowledged events via the journal', async () => {
    const dir = tmpRalph();
    const child = spawnStoreChild(['append-wait', dir, '20']);
    await child.waitForLine((l) => l === 'done');
    const acked = child.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));
    try {
      // ralph.db on disk does not have them yet: only the journal does
      assert.equal(pythonSqlite<number>(path.join(dir, 'ralph.db'), countEvents), 0);
      const o = await openStore({ ralphDir: dir, mode: 'observer', projections: [counterProjection()] });
      try {
        assert.deepEqual(
          o.events().map((e) => e.event_id),
          acked,
        );
        assert.equal(o.get<{ n: number }>("SELECT n FROM test_counter WHERE event_type = 'task.touched'")?.n, 20);
      } finally {
        await o.close();
      }
    } finally {
      await child.kill9();
    }
  });

  it('given an observer open while the writer process appends, then refresh delivers the new events to onDidAppend', async () => {
    const dir = tmpRalph();
    const first = spawnStoreChild(['append-exit', dir, '3']);
    await first.exited;
    const o = await openStore({ ralphDir: dir, mode: 'observer', projections: [] });
    try {
      assert.equal(o.events().length, 3);
      const seen: StoredEvent[] = [];
      o.onDidAppend((es) => seen.push(...es));
      const child = spawnStoreChild(['append-wait', dir, '5']);
      await child.waitForLine((l) => l === 'done');
      await o.refresh();
      await child.kill9();
      assert.deepEqual(
        seen.map((e) => e.event_id),
        child.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4)),
      );
    } finally {
      await o.close();
    }
  });

  it('given a writer that exits without close(), then the exit handler leaves ralph.db complete and releases the lock', async () => {
    const dir = tmpRalph();
    const child = spawnStoreChild(['append-exit', dir, '25']);
    const { code } = await child.exited;
    assert.equal(code, 0);
    assert.equal(pythonSqlite<number>(path.join(dir, 'ralph.db'), countEvents), 25);
    const left = readJournalSync(path.join(dir, 'ralph.events.journal')).records;
    assert.deepEqual(
      left.map((r) => r.events.length),
      [0, ...Array.from({ length: 25 }, () => 1)],
      'a checkpoint header, then the records ralph.db.prev (the first, empty checkpoint) lacks',
    );
    assert.ok(!fs.existsSync(path.join(dir, 'locks', 'writer.lock')));
  });

  it('given writer processes waiting in line (one killed -9 while it waits), then the others get the lock in the order they queued', async () => {
    const dir = tmpRalph();
    const first = spawnStoreChild(['hold', dir]);
    await first.waitForLine((l) => l === 'ready');
    const waiters = [];
    for (let i = 0; i < 4; i++) {
      const c = spawnStoreChild(['wait-hold', dir]);
      await c.waitForLine((l) => l === 'waiting');
      waiters.push(c);
    }
    // The second in line dies where it stands: its ticket stays behind with a dead pid.
    const dead = waiters.splice(1, 1)[0];
    await dead?.kill9();
    const order: number[] = [];
    const all = waiters.map((c, i) => c.waitForLine((l) => l === 'ready').then(() => order.push(i)));
    first.proc.stdin?.end();
    for (const c of waiters) {
      await c.waitForLine((l) => l === 'ready');
      // only one at a time: the lock is held until this one lets go
      assert.equal(order.length, waiters.indexOf(c) + 1, `waiter ${waiters.indexOf(c)} alone holds the lock`);
      c.proc.stdin?.end();
      assert.deepEqual(await c.exited, { code: 0, signal: null });
    }
    await Promise.all(all);
    assert.deepEqual(order, [0, 1, 2]);
    assert.deepEqual(
      fs.readdirSync(path.join(dir, 'locks')).filter((n) => n.startsWith('writer.')),
      [],
      'no lock and no ticket left (the dead waiter’s ticket was dropped)',
    );
  });
});
