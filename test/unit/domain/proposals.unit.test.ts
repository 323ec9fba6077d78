// Proposals: schema, the seed's auto-accept table, limits, and invalid -> rejected with a
// reason, never deferred silently.
import assert from 'node:assert/strict';
import { evaluateProposal, MAX_BACKLOG, MAX_PENDING_PER_WAVE, parseProposal, type Proposal } from '../../../src/domain/proposals';
import { newTask, type Task } from '../../../src/domain/model';

function backlog(...tasks: Task[]): { tasks: Map<string, Task> } {
  return { tasks: new Map(tasks.map((t) => [t.task_id, t])) };
}
const T = (id: string, wave = 1, status: Task['status'] = 'pending'): Task => ({
  ...newTask({ id, title: id, effort: 'S', wave }),
  status,
});
function prop(o: unknown): Proposal {
  const r = parseProposal(JSON.stringify(o), 'prop_x.json');
  if (!r.ok) throw new Error(r.error);
  return r.proposal;
}
const newTaskProp = (effort: string, confidence: number, deps = '-') =>
  prop({
    proposal_type: 'new_task',
    confidence,
    task: { id: 'W3-035', title: 'New', source: 'ES:42.3', effort, wave: 3, deps },
    rationale: 'r',
  });

describe('domain/proposals', () => {
  it('new S task, no deps, confidence >= 0.7: accepted as task.created (provenance auto)', () => {
    const o = evaluateProposal(newTaskProp('S', 0.7), backlog());
    assert.equal(o.outcome, 'accepted');
    if (o.outcome === 'accepted') {
      assert.equal(o.events[0]?.type, 'task.created');
      assert.equal((o.events[0]?.data as { provenance: string }).provenance, 'auto');
    }
  });
  it('new S task with deps at 0.75: deferred; new M task >= 0.8: accepted; L: deferred', () => {
    assert.equal(evaluateProposal(newTaskProp('S', 0.75, 'W1-001'), backlog(T('W1-001'))).outcome, 'deferred');
    assert.equal(evaluateProposal(newTaskProp('M', 0.8), backlog()).outcome, 'accepted');
    assert.equal(evaluateProposal(newTaskProp('M', 0.79), backlog()).outcome, 'deferred');
    assert.equal(evaluateProposal(newTaskProp('L', 0.99), backlog()).outcome, 'deferred');
  });
  it('decompose with all S sub-tasks: accepted, parent dropped; otherwise deferred', () => {
    const p = (effort: string) =>
      prop({
        proposal_type: 'decompose',
        confidence: 0.9,
        parent_task: 'W1-001',
        sub_tasks: [
          { id: 'W1-001a', title: 'a', effort: 'S' },
          { id: 'W1-001b', title: 'b', effort, deps: 'W1-001a' },
        ],
        rationale: 'tier 3',
      });
    const o = evaluateProposal(p('S'), backlog(T('W1-001')));
    assert.equal(o.outcome, 'accepted');
    if (o.outcome === 'accepted')
      assert.deepEqual(
        o.events.map((e) => `${e.type} ${e.entity_id}`),
        ['task.created W1-001a', 'task.created W1-001b', 'task.dropped W1-001'],
      );
    assert.equal(evaluateProposal(p('M'), backlog(T('W1-001'))).outcome, 'deferred');
  });
  it('drop_task: always deferred', () => {
    assert.equal(
      evaluateProposal(prop({ proposal_type: 'drop_task', confidence: 1, task_id: 'W1-001', rationale: 'obsolete' }), backlog(T('W1-001')))
        .outcome,
      'deferred',
    );
  });
  it('reprioritize by one wave: accepted; by two: deferred', () => {
    const one = evaluateProposal(
      prop({ proposal_type: 'reprioritize', confidence: 0.9, task_id: 'W1-001', old_wave: 1, new_wave: 2 }),
      backlog(T('W1-001')),
    );
    assert.equal(one.outcome, 'accepted');
    assert.equal(
      evaluateProposal(
        prop({ proposal_type: 'reprioritize', confidence: 0.9, task_id: 'W1-001', old_wave: 1, new_wave: 3 }),
        backlog(T('W1-001')),
      ).outcome,
      'deferred',
    );
  });
  it('judged (approved by the judge): thresholds lifted, validity and limits kept', () => {
    assert.equal(evaluateProposal(newTaskProp('L', 0.3), backlog(), 'judge', { judged: true }).outcome, 'accepted');
    const drop = evaluateProposal(prop({ proposal_type: 'drop_task', task_id: 'W1-001' }), backlog(T('W1-001')), 'judge', { judged: true });
    assert.equal(drop.outcome, 'accepted');
    const wave3 = Array.from({ length: MAX_PENDING_PER_WAVE }, (_, i) => T(`W3-${i}`, 3));
    assert.equal(evaluateProposal(newTaskProp('S', 0.9), backlog(...wave3), 'judge', { judged: true }).outcome, 'rejected');
  });
  it('limits: a full backlog or wave defers', () => {
    const many = Array.from({ length: MAX_BACKLOG }, (_, i) => T(`T${i}`, 10 + Math.floor(i / 40), 'done'));
    assert.match((evaluateProposal(newTaskProp('S', 0.9), backlog(...many)) as { reason: string }).reason, /backlog limit/);
    const wave3 = Array.from({ length: MAX_PENDING_PER_WAVE }, (_, i) => T(`W3-${i}`, 3));
    assert.match((evaluateProposal(newTaskProp('S', 0.9), backlog(...wave3)) as { reason: string }).reason, /wave limit/);
    const dropped = Array.from({ length: MAX_BACKLOG }, (_, i) => T(`T${i}`, 10, 'dropped'));
    assert.equal(evaluateProposal(newTaskProp('S', 0.9), backlog(...dropped)).outcome, 'accepted');
  });
  it('invalid proposals are rejected with the reason', () => {
    const bad = [
      ['not json', /not valid JSON/],
      [JSON.stringify({ proposal_type: 'new_task', confidence: 2, task: { id: 'A', title: 't', effort: 'S', wave: 0 } }), /confidence/],
      [JSON.stringify({ proposal_type: 'new_task', confidence: 0.9, task: { id: 'A', title: 't', effort: 'XXL', wave: 0 } }), /effort/],
      [JSON.stringify({ proposal_type: 'merge_tasks' }), /proposal_type/],
      [JSON.stringify({ proposal_type: 'drop_task', confidence: 1 }), /task_id/],
    ] as const;
    for (const [text, re] of bad) {
      const r = parseProposal(text, 'prop_bad.json');
      assert.equal(r.ok, false, text);
      if (!r.ok) {
        assert.match(r.error, re);
        assert.match(r.error, /prop_bad\.json/);
      }
    }
    assert.deepEqual(evaluateProposal(newTaskProp('S', 0.9), backlog({ ...T('W3-035') })), {
      outcome: 'rejected',
      error: 'task W3-035 already exists',
    });
    assert.equal(evaluateProposal(newTaskProp('S', 0.9, 'NOPE-1'), backlog()).outcome, 'rejected');
    assert.equal(evaluateProposal(prop({ proposal_type: 'drop_task', task_id: 'NOPE' }), backlog()).outcome, 'rejected');
  });
});
