// The team's agents as a window attached to the team's store sees them: every agent that ran
// today (its agent.started / agent.finished events: phase, task, cost, invocations) and every
// live lease holder, grouped by the machine its name carries (`worker-1@machine-a`). Many
// processes write the team's log, so one process's loop.started or loop.stopped says nothing
// about the others' agents: only each agent's own events move its row, and a lease says
// whether it is still at work (a worker killed mid-run leaves an agent.started with no end;
// its lease running out is what tells). Pure (no vscode): the Agents tree, the monitor and
// the tests share it.
import { splitAgentName } from '../domain/agentName';
import type { Lease } from '../team/leases';
import type { StoredEvent } from '../store/types';
import { AgentsTracker, type AgentRow } from './agentsTracker';
import { notificationsOf } from '../loop/storeFeed';

export interface TeamMachine {
  readonly host: string;
  /** The live leases of this machine's agents (`worker-1@host:pid`), by holder. */
  readonly leases: readonly Lease[];
}

/** One machine's agents in the Agents view. */
export interface MachineAgents {
  /** The machine the agents' names carry; null for names with none (the promoter's `judge`). */
  readonly machine: string | null;
  readonly agents: readonly AgentRow[];
  readonly busy: number;
  readonly costUsd: number;
}

/** The agent a lease owner (`worker-1@machine-a:4242`) is: `worker-1@machine-a`. */
export function agentOfOwner(owner: string): string {
  const { local, machine } = splitAgentName(owner);
  return machine === null ? owner : `${local}@${machine}`;
}

/** The first moment of `now`'s UTC day: the team's agents are those of today. */
export function startOfUtcDay(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** Folds the team's agent.* events, whoever wrote them; no run boundary clears it. */
export class TeamAgentsTracker {
  private readonly tracker = new AgentsTracker();

  /** Folds stored events (others are ignored); true when an agent's row moved. */
  fold(events: readonly StoredEvent[]): boolean {
    let changed = false;
    for (const e of events) {
      if (e.event_type !== 'agent.started' && e.event_type !== 'agent.finished') continue;
      for (const n of notificationsOf([e])) changed = this.tracker.apply(n, new Date(e.ts)) || changed;
    }
    return changed;
  }

  clear(): void {
    this.tracker.clear();
  }

  /** The agents folded so far merged with the live leases: see teamAgentRows. */
  rows(machines: readonly TeamMachine[]): AgentRow[] {
    return teamAgentRows(this.tracker.list(), machines);
  }
}

/**
 * The tracked agents with the live leases laid over them. A lease holder with no agent event
 * yet (claimed, its agent about to start) is a row of its own; a lease holder is busy on its
 * task; a worker that holds no live lease is not busy, whatever its last event said; the judge holds no lease and keeps what
 * its events say.
 */
export function teamAgentRows(tracked: readonly AgentRow[], machines: readonly TeamMachine[]): AgentRow[] {
  const leased = new Map<string, { lease: Lease; host: string }>();
  for (const m of machines) for (const l of m.leases) leased.set(agentOfOwner(l.owner), { lease: l, host: m.host });
  const rows = new Map<string, AgentRow>();
  for (const r of tracked) {
    const held = leased.get(r.name);
    // Between two invocations (its gates, its hand-over) a worker is still at its leased task.
    if (held !== undefined) rows.set(r.name, { ...r, busy: true, taskId: held.lease.taskId });
    else rows.set(r.name, r.role === 'judge' ? r : { ...r, busy: false, startedAt: null });
  }
  for (const [name, { lease, host }] of leased) {
    if (rows.has(name)) continue;
    rows.set(name, {
      name,
      role: name.startsWith('primary@') ? 'primary' : 'worker',
      phase: splitAgentName(name).machine === null ? `claimed on ${host}` : 'claimed',
      taskId: lease.taskId,
      startedAt: null,
      busy: true,
      costUsd: 0,
      invocations: 0,
    });
  }
  return [...rows.values()];
}

const byNumber = (a: string, b: string): number => a.localeCompare(b, 'en', { numeric: true });

/** Rows grouped by the machine their names carry: machines by name, the unqualified last. */
export function groupAgentsByMachine(rows: readonly AgentRow[]): MachineAgents[] {
  const groups = new Map<string | null, AgentRow[]>();
  for (const r of rows) {
    const { machine } = splitAgentName(r.name);
    groups.set(machine, [...(groups.get(machine) ?? []), r]);
  }
  const role = (r: AgentRow): number => ['primary', 'worker', 'judge', 'harness'].indexOf(r.role);
  return [...groups]
    .sort(([a], [b]) => (a === null ? 1 : b === null ? -1 : byNumber(a, b)))
    .map(([machine, agents]) => {
      const sorted = [...agents].sort((x, y) => role(x) - role(y) || byNumber(x.name, y.name));
      return {
        machine,
        agents: sorted,
        busy: sorted.filter((r) => r.busy).length,
        costUsd: sorted.reduce((n, r) => n + r.costUsd, 0),
      };
    });
}
