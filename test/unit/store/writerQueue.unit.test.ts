// Writers waiting for the lock get it in the order they asked for it. The old wait (retry
// with jittered backoff up to 100 ms) let whoever retried at the right instant win: the
// order below came out shuffled (longer waiters back off longer, so newcomers won), and a
// writer that reopened at once kept the lock away from a waiter for as long as it liked.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StoreLockedError } from '../../../src/store/errors';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { TICKET_PREFIX, TICKET_STALE_MS, liveTickets } from '../../../src/store/writerQueue';
import { counterProjection } from './counterProjection';

function tmpRalph(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-queue-')), '.ralph');
}

function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

function open(dir: string, extra: { lockWaitMs?: number; onLockWait?: () => void } = {}): Promise<EventStore> {
  return openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointDebounceMs: 3_600_000, ...extra });
}

/** Resolves when `check` holds, polling the event loop (no fixed sleeps). */
async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Starts a writer that waits for the lock; resolves once it is in line (its first wait). */
async function waiter(dir: string, onTurn: (s: EventStore) => Promise<void>): Promise<{ done: Promise<void> }> {
  let waiting = false;
  const done = open(dir, { lockWaitMs: 60_000, onLockWait: () => (waiting = true) }).then(onTurn);
  done.catch(() => undefined);
  await until('the writer to queue', () => waiting);
  return { done };
}

describe('store writer queue: first come, first served', function () {
  this.timeout(60_000);

  it('given five writers that queued one after another, then they get the lock in that order', async () => {
    const dir = tmpRalph();
    const holder = await open(dir);
    const order: number[] = [];
    const waiters = [];
    for (let i = 0; i < 5; i++) {
      waiters.push(
        await waiter(dir, async (s) => {
          order.push(i);
          await s.close();
        }),
      );
    }
    assert.equal(liveTickets(path.join(dir, 'locks')).length, 5);
    // Let the first ones back off to their longest pause: the old wait then lost to newcomers.
    await new Promise((r) => setTimeout(r, 300));
    await holder.close();
    await Promise.all(waiters.map((w) => w.done));
    assert.deepEqual(order, [0, 1, 2, 3, 4]);
    assert.deepEqual(liveTickets(path.join(dir, 'locks')), [], 'every ticket is gone once its writer had its turn');
  });

  it('given a writer that reopens as soon as it closes, then a waiter gets the next turn', async () => {
    const dir = tmpRalph();
    let cycles = 0;
    let stop = false;
    const first = await open(dir, { lockWaitMs: 60_000 });
    // The hog: closes and reopens at once, up to 40 times, until the waiter has had its turn.
    const hog = (async () => {
      let s = first;
      while (!stop && cycles < 40) {
        await s.close();
        s = await open(dir, { lockWaitMs: 60_000 });
        cycles++;
      }
      await s.close();
    })();
    await until('the hog to cycle', () => cycles >= 2);
    let joinedAt = -1;
    let tookAt = -1;
    await open(dir, { lockWaitMs: 60_000, onLockWait: () => void (joinedAt < 0 && (joinedAt = cycles)) }).then(async (s) => {
      tookAt = cycles;
      stop = true;
      await s.close();
    });
    await hog;
    // In line behind the hog's current turn (and perhaps the one it was taking as the
    // waiter queued), then the waiter's: the hog's next open queues behind it.
    assert.ok(joinedAt >= 0, 'the waiter had to wait');
    assert.ok(tookAt <= joinedAt + 1, `the waiter queued at hog cycle ${joinedAt} and got the lock at cycle ${tookAt}`);
  });

  it('given writers waiting, then a writer that does not wait is refused, naming how many wait ahead', async () => {
    const dir = tmpRalph();
    const holder = await open(dir);
    const w = await waiter(dir, (s) => s.close());
    await assert.rejects(open(dir), (e: unknown) => {
      assert.ok(e instanceof StoreLockedError, String(e));
      assert.equal(e.holder?.pid, process.pid);
      assert.equal(e.waitingAhead, 1);
      assert.match(e.message, /locked by another writer: pid \d+.* 1 other writer\(s\) wait\(s\) for it ahead of this one/);
      return true;
    });
    await holder.close();
    await w.done;
    // With nobody in line, a writer that does not wait takes the lock at once.
    const after = await open(dir);
    await after.close();
  });

  it('given tickets of a dead waiter and an abandoned one, then neither holds up the line', async () => {
    const dir = tmpRalph();
    const locks = path.join(dir, 'locks');
    fs.mkdirSync(locks, { recursive: true });
    const dead = path.join(locks, `${TICKET_PREFIX}00000000000000001-0000000001-aaaaaa.json`);
    fs.writeFileSync(dead, JSON.stringify({ pid: deadPid(), host: os.hostname() }));
    const abandoned = path.join(locks, `${TICKET_PREFIX}00000000000000002-0000000002-bbbbbb.json`);
    fs.writeFileSync(abandoned, JSON.stringify({ pid: process.pid, host: 'elsewhere' }));
    const old = new Date(Date.now() - TICKET_STALE_MS - 1_000);
    fs.utimesSync(abandoned, old, old);
    const live = path.join(locks, `${TICKET_PREFIX}00000000000000003-0000000003-cccccc.json`);
    fs.writeFileSync(live, JSON.stringify({ pid: process.pid, host: 'elsewhere' }));
    assert.deepEqual(liveTickets(locks), [path.basename(live)]);
    assert.ok(!fs.existsSync(dead) && !fs.existsSync(abandoned), 'the gone waiters’ tickets are removed');
    // A live ticket ahead: a writer that does not wait is refused, one that waits gets its
    // turn once that ticket goes.
    await assert.rejects(open(dir), /wait\(s\) for it ahead of this one/);
    const w = await waiter(dir, (s) => s.close());
    fs.rmSync(live);
    await w.done;
  });

  it('given a line that keeps moving, then a waiter waits past lockWaitMs for its turn; behind a holder that never lets go, it gives up', async () => {
    const dir = tmpRalph();
    const WAIT = 3_000;
    const TURN = 1_200; // each turn well under WAIT, four of them well over it
    const holder = await open(dir);
    const turns: { took: boolean; release: () => void }[] = [];
    const ahead = [];
    for (let i = 0; i < 3; i++) {
      const turn = { took: false, release: (): void => undefined };
      const released = new Promise<void>((r) => (turn.release = r));
      turns.push(turn);
      ahead.push(
        await waiter(dir, async (s) => {
          turn.took = true;
          await released;
          await s.close();
        }),
      );
    }
    let said = false;
    const t0 = Date.now();
    const last = open(dir, { lockWaitMs: WAIT, onLockWait: () => (said = true) });
    await until('the last writer to queue', () => said);
    await new Promise((r) => setTimeout(r, TURN));
    await holder.close();
    for (const turn of turns) {
      await until('its turn', () => turn.took);
      await new Promise((r) => setTimeout(r, TURN));
      turn.release();
    }
    const s = await last;
    const waited = Date.now() - t0;
    await s.close();
    await Promise.all(ahead.map((w) => w.done));
    assert.ok(waited > WAIT, `it waited ${waited} ms, through four turns of ${TURN} ms, longer than its lockWaitMs ${WAIT}`);
    // A holder that keeps the lock: nothing moves, and the waiter gives up after lockWaitMs.
    const stuck = await open(dir);
    await assert.rejects(open(dir, { lockWaitMs: 400 }), (e: unknown) => e instanceof StoreLockedError && e.waitedMs >= 400);
    await stuck.close();
  });
});
