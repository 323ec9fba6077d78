// What each agent of the loop is doing, folded from the loop's events: phase, task, when it
// started the current invocation, cost so far this run. The loop this window runs feeds it
// live; an observer window feeds it the writer's agent.* events read from the store (the
// same notifications, storeFeed.ts). Pure (no vscode), so the Agents tree, the status bar
// and the monitor share one reading.
import type { LoopEvent } from '../loop/events';
import { notificationsOf } from '../loop/storeFeed';
import type { StoredEvent } from '../store/types';
import type { RunningAgent } from '../protocol/monitor';

export interface AgentRow {
  readonly name: string;
  readonly role: 'primary' | 'worker' | 'judge' | 'harness';
  readonly phase: string;
  readonly taskId: string | null;
  /** ISO time the current invocation (or phase) started; null when idle. */
  readonly startedAt: string | null;
  readonly busy: boolean;
  readonly costUsd: number;
  readonly invocations: number;
}

function roleOf(name: string): AgentRow['role'] {
  if (name === 'primary') return 'primary';
  if (name === 'judge') return 'judge';
  if (name === 'harness') return 'harness';
  return 'worker';
}

export class AgentsTracker {
  private readonly rows = new Map<string, AgentRow>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Folds one event (`at`: when it happened, for events read back from the store); true when a row changed. */
  apply(e: LoopEvent, at?: Date): boolean {
    switch (e.type) {
      case 'phase.changed':
        this.patch(e.agent, { phase: e.to, taskId: e.taskId });
        return true;
      case 'agent.started':
        this.patch(e.agent, { phase: e.phase, taskId: e.taskId, startedAt: (at ?? this.now()).toISOString(), busy: true });
        return true;
      case 'agent.finished': {
        const r = this.get(e.agent);
        this.patch(e.agent, { busy: false, startedAt: null, costUsd: r.costUsd + e.costUsd, invocations: r.invocations + 1 });
        return true;
      }
      case 'loop.state':
        if (e.state === 'stopped') {
          for (const [name, r] of this.rows) this.rows.set(name, { ...r, busy: false, startedAt: null, phase: 'stopped' });
          return true;
        }
        return false;
      default:
        return false;
    }
  }

  /** Primary first, then workers by number, then the judge. */
  list(): AgentRow[] {
    const order = (r: AgentRow): string => `${['primary', 'worker', 'judge', 'harness'].indexOf(r.role)}:${r.name.padStart(12, '0')}`;
    return [...this.rows.values()].filter((r) => r.role !== 'harness').sort((a, b) => order(a).localeCompare(order(b)));
  }

  /** The monitor's shape of the same rows. */
  running(): RunningAgent[] {
    return this.list().map((r) => ({
      name: r.name,
      role: r.role,
      phase: r.phase,
      taskId: r.taskId,
      startedAt: r.startedAt,
      busy: r.busy,
      cost: r.costUsd,
    }));
  }

  clear(): void {
    this.rows.clear();
  }

  /**
   * Folds events another writer appended, read back from the store: its loop.started starts
   * afresh, its loop.stopped idles every agent, its agent.* events move the rows.
   */
  foldStored(events: readonly StoredEvent[]): void {
    for (const e of events) {
      if (e.event_type === 'loop.started') this.clear();
      else if (e.event_type === 'loop.stopped') this.apply({ type: 'loop.state', state: 'stopped' });
      else for (const n of notificationsOf([e])) this.apply(n, new Date(e.ts));
    }
  }

  private get(name: string): AgentRow {
    return (
      this.rows.get(name) ?? {
        name,
        role: roleOf(name),
        phase: 'idle',
        taskId: null,
        startedAt: null,
        busy: false,
        costUsd: 0,
        invocations: 0,
      }
    );
  }

  private patch(name: string, p: Partial<AgentRow>): void {
    this.rows.set(name, { ...this.get(name), ...p });
  }
}
