// Events are validated when read: known types against their schema, others pass through.
import assert from 'node:assert/strict';
import { domainEvent, eventSchemas, isDomainEventType, readEvent, toNewEvent } from '../../../src/domain/events';

const base = { event_id: 'evt_1', ts: '2026-11-29T10:00:00.000Z', run_id: 'r', actor: 'a' };

describe('domain/events', () => {
  it('reads a known event into the typed union', () => {
    const e = readEvent({
      ...base,
      entity_type: 'task',
      entity_id: 'W1',
      event_type: 'task.claimed',
      payload: { old_status: 'pending', new_status: 'claimed', claimed_by: 'w', extra: 1 },
    });
    assert.equal(e?.type, 'task.claimed');
    assert.equal((e?.data as Record<string, unknown>)['extra'], 1);
  });
  it('throws InvalidEventError naming the event for a bad payload', () => {
    assert.throws(
      () => readEvent({ ...base, entity_type: 'patch', entity_id: 'p', event_type: 'patch.promoted', payload: { task_id: 'W1' } }),
      (e: Error) => e.name === 'InvalidEventError' && /evt_1 \(patch\.promoted\).*commit_hash/.test(e.message),
    );
  });
  it('knows exactly the event types it has schemas for', () => {
    for (const t of Object.keys(eventSchemas())) assert.ok(isDomainEventType(t), t);
    assert.equal(isDomainEventType('run.started'), false);
  });
  it('passes unknown event types through as null', () => {
    assert.equal(readEvent({ ...base, entity_type: 'run', entity_id: 'r', event_type: 'run.started', payload: {} }), null);
  });
  it('builds store rows with the entity type from the event type', () => {
    const n = toNewEvent(domainEvent('patch.discarded', 'p1', 'cp', { task_id: 'W1', reason: 'x' }));
    assert.deepEqual([n.entity_type, n.entity_id, n.event_type], ['patch', 'p1', 'patch.discarded']);
    assert.throws(() => domainEvent('patch.discarded', 'p1', 'cp', { task_id: 'W1' } as never), { name: 'InvalidEventError' });
  });
});
