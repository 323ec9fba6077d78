// What the PostgreSQL store adds to the port's contract: appends by compare-and-swap between
// processes (a lost race re-decides; a typed conflict error when it keeps losing), every
// process told of new events by LISTEN/NOTIFY, the URL's password in no message or event,
// and a server that goes away mid-command waited out with nothing lost or doubled.
import * as assert from 'node:assert/strict';
import { Client } from 'pg';
import { StoreConflictError, StoreUnavailableError } from '../../../src/store/errors';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { redactStoreUrl } from '../../../src/store/storeUrl';
import type { EventStore, NewEvent, Projection, SqlWriter, StoredEvent } from '../../../src/store/types';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';

/** A projection keeping one counter: the command below reads it to decide the next value. */
const counter: Projection = {
  name: 'test_seq',
  version: 1,
  tables: ['test_seq'],
  ddl: ['CREATE TABLE IF NOT EXISTS test_seq (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)'],
  apply(db: SqlWriter, e: StoredEvent): void {
    if (e.event_type === 'counter.set') db.run('INSERT OR REPLACE INTO test_seq(id, value) VALUES (1, ?)', [Number(e.payload['value'])]);
  },
};

function increment(store: EventStore, calls?: { n: number }): Promise<number> {
  return store
    .execute((db) => {
      if (calls) calls.n += 1;
      const value = (db.get<{ value: number }>('SELECT value FROM test_seq WHERE id = 1')?.value ?? 0) + 1;
      const e: NewEvent = { entity_type: 'counter', entity_id: 'c', event_type: 'counter.set', actor: 'test', payload: { value } };
      return { events: [e], result: value };
    })
    .then((r) => r.result);
}

describe('store/postgres: concurrency, subscriptions, secrets, outages', function () {
  let cluster: PgCluster | undefined;
  let n = 0;
  const opened: EventStore[] = [];
  const url = (): string => (cluster as PgCluster).createDatabase(`pg_${++n}`);
  const open = async (...a: Parameters<typeof openPgStore>): Promise<EventStore> => {
    const s = await openPgStore(...a);
    opened.push(s);
    return s;
  };

  before(async function () {
    cluster = await startPgClusterOrSkip(this);
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  after(() => cluster?.destroy());

  it('given two writers racing read-then-write commands, then no update is lost: the losers re-decide', async () => {
    const u = url();
    const a = await open({ url: u, mode: 'writer', projections: [counter] });
    const b = await open({ url: u, mode: 'writer', projections: [counter] });
    const calls = { n: 0 };
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => increment(i % 2 ? a : b, calls)));
    assert.deepEqual(
      [...results].sort((x, y) => x - y),
      Array.from({ length: 40 }, (_, i) => i + 1),
      'every command saw the state the one before it left',
    );
    assert.ok(calls.n > 40, `some commands lost the race and decided again (${calls.n} decisions for 40 commands)`);
    await a.refresh();
    await b.refresh();
    assert.deepEqual(a.events(), b.events());
    assert.deepEqual(a.get('SELECT value FROM test_seq'), { value: 40 });
  });

  it('given a writer that cannot re-decide, then losing the compare-and-swap is a typed StoreConflictError', async () => {
    const u = url();
    const a = await open({ url: u, mode: 'writer', projections: [counter] });
    const stale = await open({ url: u, mode: 'writer', projections: [counter], subscribe: false, maxAttempts: 1 });
    await increment(a);
    await increment(a);
    await assert.rejects(increment(stale), (e: unknown) => {
      assert.ok(e instanceof StoreConflictError);
      assert.equal(e.expectedHead, 0);
      assert.equal(e.actualHead, 2);
      return true;
    });
    // the retrying default catches up and decides on the newer state
    const retrying = await open({ url: u, mode: 'writer', projections: [counter], subscribe: false });
    await increment(a);
    assert.equal(await increment(retrying), 4);
  });

  it("given a subscribed process, then another process's events arrive without a refresh (LISTEN/NOTIFY)", async () => {
    const u = url();
    const w = await open({ url: u, mode: 'writer', projections: [counter] });
    const o = await open({ url: u, mode: 'observer', projections: [counter] });
    const arrived = new Promise<readonly StoredEvent[]>((resolve) => o.onDidAppend(resolve));
    await increment(w);
    const got = await arrived;
    assert.deepEqual(got, w.events());
    assert.deepEqual(o.get('SELECT value FROM test_seq'), { value: 1 });
  });

  it('given a URL with a password, then it is in no message, store path, stat or event', async () => {
    const u = url();
    const password = (cluster as PgCluster).password;
    const w = await open({ url: u, mode: 'writer', projections: [] });
    assert.equal(w.dbPath, redactStoreUrl(u));
    assert.ok(!w.dbPath.includes(password));
    const [e] = await w.append([
      { entity_type: 'run', entity_id: 'r', event_type: 'note', actor: 'agent', payload: { quoted: `connect with ${u}` } },
    ]);
    assert.ok(e && !JSON.stringify(e).includes(password), JSON.stringify(e));
    const raw = new Client({ connectionString: u });
    await raw.connect();
    const rows = await raw.query<{ payload: string }>('SELECT payload FROM events');
    await raw.end();
    assert.ok(!JSON.stringify(rows.rows).includes(password));
    // a wrong password and an unreachable server fail with the URL redacted
    const wrong = u.replace(password, 'not-the-password-123');
    await assert.rejects(openPgStore({ url: wrong, mode: 'writer', projections: [] }), (err: Error) => {
      assert.ok(!err.message.includes('not-the-password-123'), err.message);
      assert.match(err.message, /password authentication failed/);
      return true;
    });
    const nowhere = `postgres://ralph:${password}@127.0.0.1:1/x`;
    await assert.rejects(openPgStore({ url: nowhere, mode: 'writer', projections: [], outageMs: 300 }), (err: Error) => {
      assert.ok(err instanceof StoreUnavailableError, String(err));
      assert.ok(!err.message.includes(password), err.message);
      assert.match(err.message, /postgres:\/\/ralph:\*\*\*@127\.0\.0\.1:1\/x/);
      return true;
    });
  });

  it('given the server stops mid-run, then a command waits, completes once it is back, exactly once', async function () {
    const c = cluster as PgCluster;
    const u = url();
    const w = await open({ url: u, mode: 'writer', projections: [counter] });
    const o = await open({ url: u, mode: 'observer', projections: [counter] });
    await increment(w);
    c.stop();
    let down = true;
    try {
      const pending = increment(w);
      // Wait until the store has met the outage (a condition, not a time), then bring the server back.
      while (w.stats().lastError === undefined) await new Promise((r) => setTimeout(r, 50));
      assert.ok(!(w.stats().lastError ?? '').includes(c.password));
      c.start();
      down = false;
      assert.equal(await pending, 2);
    } finally {
      if (down) c.start();
    }
    const arrived = new Promise<void>((resolve) => {
      const d = o.onDidAppend(() => {
        if (o.get<{ value: number }>('SELECT value FROM test_seq')?.value === 3) {
          d.dispose();
          resolve();
        }
      });
    });
    await increment(w);
    await arrived; // the observer's LISTEN connection came back and caught up
    const raw = new Client({ connectionString: u });
    await raw.connect();
    const rows = await raw.query<{ n: string }>("SELECT count(*) AS n FROM events WHERE event_type = 'counter.set'");
    await raw.end();
    assert.equal(Number(rows.rows[0]?.n), 3);
  });
});
