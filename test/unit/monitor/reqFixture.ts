// The REQ section's fixtures: a specification.yaml of five REQs over three levels and the
// req.* events of a run halfway through it (REQ-001 done, REQ-003 blocked after 3 rounds so
// REQ-005 is blocked(auto), REQ-002 in its second round), for the unit and browser tests.
import type { EventSeed } from './sqlFixture';

export const REQ_NOW = new Date('2026-12-01T12:00:00.000Z');

/** REQ-001 → REQ-002 → REQ-004; REQ-003 alone; REQ-005 depends on REQ-003. */
export const REQ_SPEC = `specification:
  requirements:
    - id: REQ-001
      description: "Add add()"
      acceptance_criteria: [{ id: AC-001-01, criteria: "add(2, 3) is 5" }]
      priority: 1
      status: pending
    - id: REQ-002
      description: "Add sub()"
      acceptance_criteria: [{ id: AC-002-01, criteria: "sub(3, 2) is 1" }]
      priority: 2
      depends_on: [REQ-001]
      status: pending
    - id: REQ-003
      description: "Add mul()"
      acceptance_criteria: [{ id: AC-003-01, criteria: "mul(2, 3) is 6" }]
      priority: 3
      status: pending
    - id: REQ-004
      description: "Add div()"
      acceptance_criteria: [{ id: AC-004-01, criteria: "div(6, 3) is 2" }]
      priority: 1
      depends_on: [REQ-002]
      status: pending
    - id: REQ-005
      description: "Add sq()"
      acceptance_criteria: [{ id: AC-005-01, criteria: "sq(3) is 9" }]
      priority: 1
      depends_on: [REQ-003]
      status: pending
`;

let tick = 0;
export function req(type: string, id: string, payload: Record<string, unknown>): EventSeed {
  tick++;
  return {
    ts: new Date(REQ_NOW.getTime() - 600_000 + tick * 1000).toISOString(),
    entity_type: 'req',
    entity_id: id,
    event_type: type,
    actor: 'req',
    payload,
  };
}
export const started = (id: string, round: number, iteration: number): EventSeed =>
  req('req.started', id, { iteration, round, title: id, worktree: `/wt/${id}` });
export const layer = (id: string, round: number, l: string, ok: boolean): EventSeed =>
  req('req.layer', id, { round, layer: l, ok, summary: ok ? `${l} passed` : `${l} failed` });
export const agent = (type: 'agent.started' | 'agent.finished', task: string): EventSeed => ({
  ts: new Date(REQ_NOW.getTime() - 600_000 + ++tick * 1000).toISOString(),
  entity_type: 'agent',
  entity_id: 'req',
  event_type: type,
  actor: 'req',
  payload: { role: 'primary', phase: 'req', task_id: task, backend: 'claude', status: 'success' },
});

/** Levels: [REQ-001, REQ-003], [REQ-002, REQ-005], [REQ-004] (priority then id within a level). */
export function reqRunEvents(): EventSeed[] {
  return [
    req('req.run_started', 'req-run', {
      spec_file: 'specification.yaml',
      order: ['REQ-001', 'REQ-003', 'REQ-002', 'REQ-005', 'REQ-004'],
      layers: [['REQ-001', 'REQ-003'], ['REQ-002', 'REQ-005'], ['REQ-004']],
      max_iterations: 15,
      resume: false,
    }),
    started('REQ-001', 1, 1),
    layer('REQ-001', 1, 'L1', true),
    layer('REQ-001', 1, 'L1b', true),
    layer('REQ-001', 1, 'L2', true),
    layer('REQ-001', 1, 'L3', true),
    req('req.done', 'REQ-001', { commit: 'abcdef1234', patch_id: 'P-1', title: 'Add add()', round: 1 }),
    req('req.learning', 'REQ-001', { kind: 'permanent', text: 'One module per function under src/', why: 'tagged' }),
    req('req.learning', 'REQ-001', { kind: 'contextual', text: 'assert.equal is enough here' }),
    started('REQ-003', 1, 2),
    req('req.round_failed', 'REQ-003', { round: 1, layer: 'L2', summary: 'L2 failed: mul.test.js', timed_out: false }),
    started('REQ-003', 2, 2),
    req('req.round_failed', 'REQ-003', { round: 2, layer: 'L2', summary: 'L2 failed: mul.test.js', timed_out: false }),
    started('REQ-003', 3, 2),
    req('req.round_failed', 'REQ-003', {
      round: 3,
      layer: 'L3',
      summary: 'L3 (coverage): lines 50% below the threshold 80%',
      timed_out: false,
    }),
    req('req.blocked', 'REQ-003', {
      kind: 'retries',
      reason: 'failed 3 rounds: L3 (coverage): lines 50% below the threshold 80%',
      options: ['skip', 'manual', 'stop', 'rollback'],
      rounds: 3,
    }),
    started('REQ-002', 1, 3),
    req('req.round_failed', 'REQ-002', { round: 1, layer: 'L1b', summary: 'L1b failed: 10% test lines', timed_out: false }),
    started('REQ-002', 2, 3),
    req('req.learning', 'REQ-002', { kind: 'contextual', text: 'sub() takes two numbers' }),
  ];
}
