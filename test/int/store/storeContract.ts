// The EventStore port's contract, one suite run against every adapter (the embedded sql.js
// store and the PostgreSQL one): what the control plane, the loop and the hosts rely on.
// Adapter-specific behaviour (the journal, fsync counts on disk, the writer lock, CAS
// conflicts between processes) is tested beside each adapter.
import * as assert from 'node:assert/strict';
import { CommandAlreadyAppliedError, ReadOnlyStoreError } from '../../../src/store/errors';
import type { Clock } from '../../../src/store/eventIds';
import type { EventStore, NewEvent, Projection, StoreMode } from '../../../src/store/types';
import { counterProjection, counterRows } from '../../unit/store/counterProjection';

export interface OpenAt {
  (mode: StoreMode, options?: { projections?: readonly Projection[]; clock?: Clock; runId?: string }): Promise<EventStore>;
}

/** A fresh, empty store location per test; `open` opens a store there. */
export type StoreFactory = () => Promise<OpenAt>;

function ev(entity_id: string, event_type = 'task.touched', payload: Record<string, unknown> = {}): NewEvent {
  return { entity_type: 'task', entity_id, event_type, actor: 'test', payload };
}

export function storeContract(fresh: StoreFactory, burst = 2000): void {
  let open: OpenAt;
  const opened: EventStore[] = [];
  const at = async (...args: Parameters<OpenAt>): Promise<EventStore> => {
    const s = await open(...args);
    opened.push(s);
    return s;
  };

  beforeEach(async () => {
    open = await fresh();
  });
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });

  it('when execute decides events, then they are stored, projected and returned with id, ts and run', async () => {
    const store = await at('writer', { projections: [counterProjection()] });
    const out = await store.execute((db) => {
      const n = db.get<{ n: number }>('SELECT count(*) AS n FROM events')?.n ?? -1;
      return { events: [ev('T1', 'task.created', { title: 'x' })], result: n };
    });
    assert.equal(out.result, 0);
    assert.equal(out.events.length, 1);
    const e = out.events[0];
    assert.ok(e);
    assert.match(e.event_id, /^evt_\d{17}_\d{6}$/);
    assert.match(e.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(e.run_id, store.runId);
    assert.deepEqual(store.events(), out.events);
    assert.deepEqual(store.get('SELECT n FROM test_counter'), { n: 1 });
    assert.equal(store.get<{ payload: string }>('SELECT payload FROM events')?.payload, '{"title":"x"}');
  });

  it('given decide or a projection throws, then nothing is stored and the store still works', async () => {
    const store = await at('writer', { projections: [counterProjection()] });
    await store.append([ev('T0')]);
    await assert.rejects(
      store.execute(() => {
        throw new Error('no');
      }),
      /no/,
    );
    await assert.rejects(store.append([ev('T1'), ev('T2', 'x', { explode: true })]), /projection refused/);
    assert.equal(store.events().length, 1);
    assert.deepEqual(store.all('SELECT entity_id FROM test_last'), [{ entity_id: 'T0' }]);
    await store.append([ev('T3')]);
    assert.equal(store.events().length, 2);
  });

  it('given a command that fails beside others in the same tick, then only it fails', async () => {
    const store = await at('writer', { projections: [counterProjection()] });
    const results = await Promise.allSettled([
      store.append([ev('A')]),
      store.append([ev('B', 'x', { explode: true })]),
      store.append([ev('C')]),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      store.events().map((e) => e.entity_id),
      ['A', 'C'],
    );
  });

  it(`given ${burst} identical events appended in a tight loop, then all get unique ids in order`, async () => {
    const store = await at('writer');
    const acks = Array.from({ length: burst }, () => store.append([ev('T1', 'task.same')]));
    const ids = (await Promise.all(acks)).map((x) => x[0]?.event_id ?? '');
    assert.equal(new Set(ids).size, burst);
    assert.deepEqual(
      store.events().map((e) => e.event_id),
      ids,
    );
    assert.ok(store.stats().fsyncs < 10, `a burst shares its durable writes, got ${store.stats().fsyncs}`);
  });

  it('given a burst of executes in one tick, then they share one durable write; sequential commands get one each', async () => {
    const store = await at('writer');
    const before = store.stats().fsyncs;
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.append([ev(`T${i}`)])));
    assert.equal(store.stats().fsyncs - before, 1);
    for (let i = 0; i < 3; i++) await store.append([ev('S')]);
    assert.equal(store.stats().fsyncs - before, 4);
    assert.equal(store.stats().eventsAppended, 53);
  });

  it('given events, when rebuild runs, then projection rows equal the incrementally built ones', async () => {
    const store = await at('writer', { projections: [counterProjection()] });
    for (let i = 0; i < 100; i++) await store.append([ev(`T${i % 17}`, `t.${i % 5}`, { i })]);
    const incremental = counterRows(store);
    await store.rebuild();
    assert.deepEqual(counterRows(store), incremental);
    assert.equal(incremental.length, 5 + 17);
  });

  it('given an observer, then execute throws ReadOnlyStoreError, reads work and refresh brings new events', async () => {
    const w = await at('writer', { projections: [counterProjection()] });
    await w.append([ev('T1')]);
    const o = await at('observer', { projections: [counterProjection()] });
    await assert.rejects(o.append([ev('T2')]), ReadOnlyStoreError);
    assert.equal(o.events().length, 1);
    await w.append([ev('T3')]);
    await w.checkpoint();
    await o.refresh();
    assert.deepEqual(
      o.events().map((e) => e.entity_id),
      ['T1', 'T3'],
    );
    assert.deepEqual(counterRows(o), counterRows(w));
  });

  it('when execute is called inside decide, then it fails instead of nesting', async () => {
    const store = await at('writer');
    let inner: Promise<unknown> | undefined;
    await store.execute(() => {
      inner = store.append([ev('inner')]).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
      return { events: [ev('outer')], result: 1 };
    });
    assert.match(String(await inner), /do not nest/);
    assert.deepEqual(
      store.events().map((e) => e.entity_id),
      ['outer'],
    );
  });

  it('when closed and reopened (clock at 0), then every event and the next ids continue in order', async () => {
    const first = await (await at('writer')).append([ev('A'), ev('B')]);
    await opened.pop()?.close();
    const store = await at('writer', { clock: () => 0 });
    const next = await store.append([ev('C')]);
    assert.equal(store.events().length, 3);
    assert.ok((next[0]?.event_id ?? '') > (first[1]?.event_id ?? ''));
  });

  it('onDidAppend fires with the acknowledged events only', async () => {
    const store = await at('writer');
    const seen: string[] = [];
    const sub = store.onDidAppend((es) => seen.push(...es.map((e) => e.entity_id)));
    await store.append([ev('A'), ev('B')]);
    sub.dispose();
    await store.append([ev('C')]);
    assert.deepEqual(seen, ['A', 'B']);
  });

  it('events() filters by entity and afterId and limits', async () => {
    const store = await at('writer');
    const all = await store.append([ev('A'), ev('B'), ev('A'), { ...ev('X'), entity_type: 'patch' }]);
    assert.equal(store.events({ entityType: 'task', entityId: 'A' }).length, 2);
    assert.deepEqual(store.events({ afterId: all[1]?.event_id, limit: 1 }), [all[2]]);
  });

  it('given the clock steps back between commands, then ids still increase while ts tells the wall clock', async () => {
    let now = Date.UTC(2026, 10, 29, 12, 0, 0, 0);
    const store = await at('writer', { clock: () => now, runId: 'run_given' });
    const [a] = await store.append([ev('A')]);
    now -= 3_600_000;
    const [b] = await store.append([ev('A')]);
    assert.ok(a && b && a.event_id < b.event_id);
    assert.equal(b.ts, '2026-11-29T11:00:00.000Z');
    assert.equal(b.run_id, 'run_given');
  });

  it('given a command id applied once, then its marker is recorded and a replay appends nothing', async () => {
    const store = await at('writer');
    const command = { id: 'cmd_contract_1', name: 'emit-event', actor: 'human', source: 'inbox/cmd_contract_1.json' };
    const first = await store.append([ev('A')], { command });
    assert.deepEqual(
      first.map((e) => e.event_type),
      ['task.touched', 'command.applied'],
    );
    assert.deepEqual(store.appliedCommand('cmd_contract_1')?.eventIds, [first[0]?.event_id]);
    await assert.rejects(store.append([ev('B')], { command }), CommandAlreadyAppliedError);
    assert.equal(store.events().length, 2);
    assert.equal(store.appliedCommand('cmd_other'), undefined);
  });

  it('given a payload carrying a registered secret, then the stored event has it redacted', async () => {
    const store = await at('writer');
    const [e] = await store.append([ev('A', 'x', { note: 'key sk-ant-api03-abcdefghijklmnop' })]);
    assert.ok(e);
    assert.doesNotMatch(JSON.stringify(store.events()), /abcdefghijklmnop/);
  });
}
