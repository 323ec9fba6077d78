import { strict as assert } from 'node:assert';
import type { BatcherClock } from '../../../src/monitor/batcher';
import type { MonitorDataSource } from '../../../src/monitor/dataSource';
import { MonitorSession } from '../../../src/monitor/session';
import type { MonitorActions } from '../../../src/monitor/session';
import type { HostToWebviewMessage, MonitorSnapshot } from '../../../src/protocol/monitor';
import { emptySnapshot } from '../../../src/protocol/monitor';

const NOW = new Date('2026-11-29T12:00:00.000Z');

/** Timers fire only when the test runs them. */
function manualClock(): BatcherClock & { runAll(): void } {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimeout: (fn, ms) => {
      const t = { at: now + ms, fn };
      timers.push(t);
      return t;
    },
    clearTimeout: (h) => {
      const i = timers.indexOf(h as { at: number; fn: () => void });
      if (i >= 0) timers.splice(i, 1);
    },
    runAll() {
      while (timers.length) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers.shift();
        if (!t) break;
        now = Math.max(now, t.at);
        t.fn();
      }
    },
  };
}

function harness(actions: Partial<MonitorActions> = {}) {
  let snap: MonitorSnapshot = emptySnapshot(NOW);
  const listeners = new Set<() => void>();
  const source: MonitorDataSource = {
    snapshot: () => snap,
    // A past moment: the live snapshot with the moment named, as the replay would give it.
    snapshotAt: async (index) => ({
      ...snap,
      timeline: { ...snap.timeline, at: { index, eventId: `evt_${index}`, ts: NOW.toISOString() } },
    }),
    onDidChange: (l) => {
      listeners.add(l);
      return { dispose: () => listeners.delete(l) };
    },
  };
  const sent: HostToWebviewMessage[] = [];
  const logs: string[] = [];
  const clock = manualClock();
  const calls: string[] = [];
  const session = new MonitorSession({
    port: { postMessage: (m) => void sent.push(m) },
    source,
    actions: {
      openTask: (id) => void calls.push(`open ${id}`),
      showDiff: (id, p) => void calls.push(`diff ${id} ${p}`),
      resolveDeferred: (id, d) => void calls.push(`${d} ${id}`),
      openSettings: () => void calls.push('settings'),
      ...actions,
    },
    log: { info: (m) => logs.push(`info ${m}`), warn: (m) => logs.push(`warn ${m}`), error: (m) => logs.push(`error ${m}`) },
    clock,
  });
  const change = (f: (s: MonitorSnapshot) => MonitorSnapshot): void => {
    snap = f(snap);
    for (const l of listeners) l();
  };
  /** Lets the session's async sends settle after timers ran. */
  const settle = async (): Promise<void> => {
    clock.runAll();
    for (let i = 0; i < 5; i++) await Promise.resolve();
  };
  return { session, sent, logs, calls, change, settle, listeners };
}

describe('MonitorSession', () => {
  it('given no ready yet, when the data changes, then nothing is posted', async () => {
    const h = harness();
    h.change((s) => ({ ...s, empty: false }));
    await h.settle();
    assert.deepEqual(h.sent, []);
  });

  it('when the page says ready, then it gets one full snapshot', async () => {
    const h = harness();
    await h.session.receive({ method: 'ready', params: {} });
    assert.equal(h.sent.length, 1);
    assert.equal(h.sent[0]?.method, 'snapshot');
  });

  it('given a ready page, when a burst of changes arrives, then one update carries only the changed keys', async () => {
    const h = harness();
    await h.session.receive({ method: 'ready', params: {} });
    for (let i = 1; i <= 50; i++) h.change((s) => ({ ...s, events: { ...s.events, total: i } }));
    await h.settle();
    const updates = h.sent.filter((m) => m.method === 'update');
    assert.equal(updates.length, 1);
    const u = updates[0];
    assert.ok(u && u.method === 'update');
    assert.equal(u.params.seq, 1);
    assert.deepEqual(Object.keys(u.params.patch).sort(), ['events', 'generatedAt']);
    assert.equal(u.params.patch.events?.total, 50);
  });

  it('given the page went away, then updates stop until it is ready again, which resends a snapshot', async () => {
    const h = harness();
    await h.session.receive({ method: 'ready', params: {} });
    h.session.pageGone();
    h.change((s) => ({ ...s, empty: false }));
    await h.settle();
    assert.deepEqual(
      h.sent.map((m) => m.method),
      ['snapshot'],
    );
    await h.session.receive({ method: 'ready', params: {} });
    assert.deepEqual(
      h.sent.map((m) => m.method),
      ['snapshot', 'snapshot'],
    );
  });

  it('given a travel request, then the page gets that moment at once, stays there on changes, and is live again after travel null', async () => {
    const h = harness();
    await h.session.receive({ method: 'ready', params: {} });
    await h.session.receive({ method: 'travel', id: 3, params: { index: 12 } });
    const [, update, reply] = h.sent;
    assert.ok(update?.method === 'update');
    assert.deepEqual(update.params.patch.timeline?.at, { index: 12, eventId: 'evt_12', ts: NOW.toISOString() });
    assert.deepEqual(reply, { method: 'reply', params: { requestId: 3, ok: true } });
    h.change((s) => ({ ...s, events: { ...s.events, total: 99 } }));
    await h.settle();
    const last = h.sent.filter((m) => m.method === 'update').at(-1);
    assert.ok(last?.method === 'update');
    assert.equal(last.params.patch.timeline, undefined, 'still at the same moment');
    await h.session.receive({ method: 'travel', id: 4, params: { index: null } });
    const live = h.sent.filter((m) => m.method === 'update').at(-1);
    assert.ok(live?.method === 'update');
    assert.equal(live.params.patch.timeline?.at, null);
    await h.session.receive({ method: 'travel', id: 5, params: { index: -1 } });
    assert.match(h.logs.join('\n'), /invalid params for 'travel'/);
  });

  it('runs a request and replies ok with its id', async () => {
    const h = harness();
    await h.session.receive({ method: 'resolveDeferred', id: 7, params: { taskId: 'W2-014', decision: 'approve' } });
    assert.deepEqual(h.calls, ['approve W2-014']);
    assert.deepEqual(h.sent[0], { method: 'reply', params: { requestId: 7, ok: true } });
  });

  it('replies with the error when an action fails', async () => {
    const h = harness({
      resolveDeferred: () => Promise.reject(new Error('no promoted patch for W2-014')),
    });
    await h.session.receive({ method: 'resolveDeferred', id: 8, params: { taskId: 'W2-014', decision: 'approve' } });
    assert.deepEqual(h.sent[0], { method: 'reply', params: { requestId: 8, ok: false, error: 'no promoted patch for W2-014' } });
    assert.ok(h.logs.some((l) => l.startsWith('warn monitor: resolveDeferred failed')));
  });

  it('drops invalid messages with a logged reason and carries on', async () => {
    const h = harness();
    await h.session.receive({ method: 'resolveDeferred', params: { taskId: 'W2-014', decision: 'approve' } });
    await h.session.receive('ready');
    await h.session.receive({ method: 'openTask', id: 1, params: { taskId: '' } });
    assert.deepEqual(h.calls, []);
    assert.equal(h.logs.filter((l) => l.startsWith('warn monitor: dropped a message')).length, 3);
    await h.session.receive({ method: 'ready', params: {} });
    assert.equal(h.sent[0]?.method, 'snapshot');
  });

  it('passes the page log lines to the host log', async () => {
    const h = harness();
    await h.session.receive({ method: 'log', params: { level: 'warn', text: 'dropped update 3' } });
    assert.deepEqual(h.logs, ['warn monitor page: dropped update 3']);
  });

  it('when disposed, then it unsubscribes from the source', () => {
    const h = harness();
    assert.equal(h.listeners.size, 1);
    h.session.dispose();
    assert.equal(h.listeners.size, 0);
  });
});
