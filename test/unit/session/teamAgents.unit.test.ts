// The team's agents in a window attached to its store: today's agent.* events of every
// process, the live leases laid over them, grouped by the machine the names carry.
import * as assert from 'node:assert/strict';
import type { StoredEvent } from '../../../src/store';
import type { Lease } from '../../../src/team/leases';
import { agentOfOwner, groupAgentsByMachine, startOfUtcDay, TeamAgentsTracker, type TeamMachine } from '../../../src/session/teamAgents';

let seq = 0;
const ev = (event_type: string, agent: string, payload: Record<string, unknown>, ts = '2026-12-03T08:00:00.000Z'): StoredEvent => ({
  event_id: String(++seq).padStart(6, '0'),
  ts,
  run_id: `run-of-${agent}`,
  entity_type: 'agent',
  entity_id: agent,
  event_type,
  actor: agent,
  payload,
});
const started = (agent: string, task: string, phase = 'worker'): StoredEvent => ev('agent.started', agent, { phase, task_id: task });
const finished = (agent: string, task: string, cost: number): StoredEvent =>
  ev('agent.finished', agent, { phase: 'worker', task_id: task, status: 'success', cost_usd: cost });
const lease = (owner: string, taskId: string, host: string): Lease => ({
  taskId,
  leaseId: `lease_${taskId}`,
  owner,
  host,
  expiresAt: '2026-12-03T09:00:00.000Z',
});
const machinesOf = (...ls: Lease[]): TeamMachine[] => {
  const by = new Map<string, Lease[]>();
  for (const l of ls) by.set(l.host, [...(by.get(l.host) ?? []), l]);
  return [...by].map(([host, leases]) => ({ host, leases }));
};

describe('session/teamAgents', () => {
  it('given agents on three machines, then they are grouped by machine, with phase, task, busy and summed cost', () => {
    const t = new TeamAgentsTracker();
    t.fold([
      started('worker-1@machine-b', 'T-01'),
      finished('worker-1@machine-b', 'T-01', 0.5),
      started('worker-1@machine-a', 'T-02'),
      started('worker-2@machine-a', 'T-03'),
      finished('worker-2@machine-a', 'T-03', 0.25),
      started('worker-10@machine-a', 'T-04'),
      started('worker-1@machine-b', 'T-05'),
      finished('worker-1@machine-b', 'T-05', 0.75),
      started('judge', 'T-01', 'judge'),
      started('worker-1@machine-c', 'T-06'),
      finished('worker-1@machine-c', 'T-06', 1),
    ]);
    const rows = t.rows(
      machinesOf(
        lease('worker-1@machine-a:11', 'T-02', 'machine-a'),
        lease('worker-10@machine-a:11', 'T-04', 'machine-a'),
        lease('worker-1@machine-b:12', 'T-07', 'machine-b'),
      ),
    );
    const groups = groupAgentsByMachine(rows);
    assert.deepEqual(
      groups.map((g) => [g.machine, g.agents.length, g.busy, g.costUsd]),
      [
        ['machine-a', 3, 2, 0.25],
        ['machine-b', 1, 1, 1.25],
        ['machine-c', 1, 0, 1],
        [null, 1, 1, 0],
      ],
    );
    const a = groups[0]?.agents ?? [];
    // Workers by number (2 before 10), each with its phase, task and state.
    assert.deepEqual(
      a.map((r) => [r.name, r.phase, r.taskId, r.busy, r.invocations]),
      [
        ['worker-1@machine-a', 'worker', 'T-02', true, 0],
        ['worker-2@machine-a', 'worker', 'T-03', false, 1],
        ['worker-10@machine-a', 'worker', 'T-04', true, 0],
      ],
    );
    // Between invocations (its gates, its hand-over) a worker is at its leased task.
    assert.deepEqual(
      groups[1]?.agents.map((r) => [r.name, r.taskId, r.busy, r.invocations]),
      [['worker-1@machine-b', 'T-07', true, 2]],
    );
    assert.equal(groups[3]?.agents[0]?.role, 'judge');
  });

  it('given a worker killed mid-run, then it is busy only while its lease lives', () => {
    const t = new TeamAgentsTracker();
    t.fold([started('worker-1@machine-a', 'T-01')]);
    const live = t.rows(machinesOf(lease('worker-1@machine-a:42', 'T-01', 'machine-a')));
    assert.deepEqual(
      live.map((r) => [r.name, r.busy]),
      [['worker-1@machine-a', true]],
    );
    const gone = t.rows([]);
    assert.deepEqual(
      gone.map((r) => [r.name, r.busy, r.startedAt, r.phase, r.taskId]),
      [['worker-1@machine-a', false, null, 'worker', 'T-01']],
    );
  });

  it('given a lease holder whose agent has not started yet, then it is a row of its own, claimed', () => {
    const rows = new TeamAgentsTracker().rows(
      machinesOf(lease('worker-3@machine-c:7', 'T-09', 'machine-c'), lease('worker-1@old-host:8', 'T-10', 'old-host')),
    );
    assert.deepEqual(
      groupAgentsByMachine(rows).map((g) => [g.machine, g.agents.map((r) => [r.name, r.phase, r.taskId, r.busy])]),
      [
        ['machine-c', [['worker-3@machine-c', 'claimed', 'T-09', true]]],
        ['old-host', [['worker-1@old-host', 'claimed', 'T-10', true]]],
      ],
    );
  });

  it('given another process starting or stopping its loop, then no agent of the team is cleared', () => {
    const t = new TeamAgentsTracker();
    const moved = t.fold([
      finished('worker-1@machine-a', 'T-01', 0.5),
      ev('loop.started', 'harness', {}),
      ev('loop.stopped', 'harness', {}),
      ev('phase.changed', 'primary', { to: 'plan' }),
    ]);
    assert.equal(moved, true);
    assert.deepEqual(
      t.rows([]).map((r) => [r.name, r.costUsd]),
      [['worker-1@machine-a', 0.5]],
    );
    assert.equal(t.fold([ev('loop.started', 'harness', {})]), false);
  });

  it('given owners and times, then the agent and the day are what the view keys on', () => {
    assert.equal(agentOfOwner('worker-1@machine-a:4242'), 'worker-1@machine-a');
    assert.equal(agentOfOwner('harness'), 'harness');
    assert.equal(startOfUtcDay(new Date('2026-12-03T23:59:59.999Z')), '2026-12-03T00:00:00.000Z');
  });
});
