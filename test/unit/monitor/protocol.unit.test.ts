import { strict as assert } from 'node:assert';
import {
  ReadyMessage,
  ResolveDeferredRequest,
  SnapshotMessage,
  applySnapshotPatch,
  emptySnapshot,
  parseHostToWebview,
  parseWebviewToHost,
} from '../../../src/protocol/monitor';
import { diffSnapshot } from '../../../src/monitor/snapshotDiff';

const NOW = new Date('2026-11-29T12:00:00.000Z');

describe('monitor protocol', () => {
  it('accepts a valid snapshot message and types it by method', () => {
    const r = parseHostToWebview(SnapshotMessage.create({ snapshot: emptySnapshot(NOW) }));
    assert.ok(r.ok);
    assert.equal(r.message.method, 'snapshot');
    assert.ok(SnapshotMessage.is(r.message));
  });

  it('rejects an unknown method with a reason', () => {
    const r = parseHostToWebview({ method: 'explode', params: {} });
    assert.deepEqual(r, { ok: false, reason: "host→webview: unknown method 'explode'" });
  });

  it('rejects a non-envelope with a reason instead of throwing', () => {
    for (const raw of [null, 42, 'ready', { params: {} }]) {
      const r = parseWebviewToHost(raw);
      assert.equal(r.ok, false);
      assert.match((r as { reason: string }).reason, /not a message envelope/);
    }
  });

  it('rejects a snapshot with a wrong field, naming the field', () => {
    const bad = { ...emptySnapshot(NOW), tasks: { total: -1, byStatus: {}, progress: 2 } };
    const r = parseHostToWebview({ method: 'snapshot', params: { snapshot: bad } });
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /invalid params for 'snapshot'.*tasks/s);
  });

  it('requires an id on requests and validates their params', () => {
    assert.match(
      (parseWebviewToHost({ method: 'resolveDeferred', params: { taskId: 'W2-014', decision: 'approve' } }) as { reason: string }).reason,
      /has no id/,
    );
    assert.equal(parseWebviewToHost({ method: 'resolveDeferred', id: 3, params: { taskId: 'W2-014', decision: 'maybe' } }).ok, false);
    const ok = parseWebviewToHost(ResolveDeferredRequest.create({ taskId: 'W2-014', decision: 'approve' }, 3));
    assert.deepEqual(ok, { ok: true, message: { method: 'resolveDeferred', params: { taskId: 'W2-014', decision: 'approve' }, id: 3 } });
  });

  it('accepts ready without params', () => {
    const r = parseWebviewToHost({ method: 'ready' });
    assert.ok(r.ok && ReadyMessage.is(r.message));
  });

  it('diffs snapshots by top-level key and applies the patch back', () => {
    const a = emptySnapshot(NOW);
    const b = { ...a, generatedAt: '2026-11-29T12:00:01.000Z', state: { ...a.state, phase: 'plan' } };
    const patch = diffSnapshot(a, b);
    assert.deepEqual(Object.keys(patch).sort(), ['generatedAt', 'state']);
    assert.deepEqual(applySnapshotPatch(a, patch), b);
    assert.deepEqual(diffSnapshot(b, { ...b, generatedAt: 'later' }), {});
  });
});
