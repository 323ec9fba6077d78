// Who was busy when, over one run: each agent is busy while its invocation or one of its
// gates runs, and the run is busy while any agent is. Summing agent and gate durations over
// parallel agents counts overlapping time twice (three workers for 10 s are 30 s of "agent
// time" in 10 s of wall time), so the harness's own share — the wall time during which no
// agent and no gate ran: claims, captures, promotions, store writes — is the wall time minus
// the union of the busy stretches, not minus their sum.
import type { Clock } from './sleep';
import type { LoopEvent } from './events';

export interface BusyTimes {
  /** Wall time during which at least one agent or gate ran. */
  readonly busyMs: number;
  /** Per agent: wall time during which its invocation or one of its gates ran. */
  readonly agentBusyMs: Readonly<Record<string, number>>;
}

export class BusyClock {
  /** What runs now, per agent: `agent` for its invocation, `gate:<name>` for a gate. */
  private readonly running = new Map<string, Set<string>>();
  private readonly agentMs = new Map<string, number>();
  private readonly agentSince = new Map<string, number>();
  private busyMs = 0;
  private busySince: number | null = null;

  constructor(private readonly clock: Clock) {}

  /** Feeds one of the loop's events; those that start or end a run of an agent or gate count. */
  note(e: LoopEvent): void {
    if (e.type === 'agent.started') this.enter(e.agent, 'agent');
    else if (e.type === 'agent.finished') this.leave(e.agent, 'agent');
    else if (e.type === 'gate.started') this.enter(e.agent, `gate:${e.gate}`);
    else if (e.type === 'gate.finished') this.leave(e.agent, `gate:${e.gate}`);
  }

  /** The times so far, the stretches still open counted up to now. */
  times(): BusyTimes {
    const now = this.clock.now();
    const agentBusyMs: Record<string, number> = {};
    for (const [agent, ms] of this.agentMs) agentBusyMs[agent] = ms;
    for (const [agent, since] of this.agentSince) agentBusyMs[agent] = (agentBusyMs[agent] ?? 0) + now - since;
    return { busyMs: this.busyMs + (this.busySince === null ? 0 : now - this.busySince), agentBusyMs };
  }

  private enter(agent: string, what: string): void {
    const now = this.clock.now();
    let set = this.running.get(agent);
    if (!set) this.running.set(agent, (set = new Set()));
    if (set.has(what)) return;
    if (set.size === 0) this.agentSince.set(agent, now);
    set.add(what);
    if (this.busySince === null) this.busySince = now;
  }

  /** An end with no start (a gate that only reports its result) changes nothing. */
  private leave(agent: string, what: string): void {
    const set = this.running.get(agent);
    if (!set?.delete(what)) return;
    const now = this.clock.now();
    if (set.size === 0) {
      this.agentMs.set(agent, (this.agentMs.get(agent) ?? 0) + now - this.agentSince.get(agent)!);
      this.agentSince.delete(agent);
    }
    if (this.busySince !== null && [...this.running.values()].every((s) => s.size === 0)) {
      this.busyMs += now - this.busySince;
      this.busySince = null;
    }
  }
}
