// The loop's typed events and the small emitter hosts subscribe to (the CLI prints them,
// the VS Code extension feeds its views and the monitor). Truth stays in the event store;
// these are live notifications of what the harness is doing right now.
import { redactValue } from '../shared/redaction';
import type { AgentStatus } from '../agents/types';
import type { GateStatus } from './gates';
import type { Phase } from '../domain/primaryMachine';

export type LoopRunState = 'idle' | 'starting' | 'running' | 'paused' | 'stopping' | 'stopped';

/** `primary` or `worker-<n>`; `judge` and `harness` for the harness's own invocations. */
export type AgentName = string;

export type LoopEvent =
  | { readonly type: 'loop.state'; readonly state: LoopRunState; readonly reason?: string }
  | {
      readonly type: 'phase.changed';
      readonly agent: AgentName;
      readonly from: Phase;
      readonly to: Phase;
      readonly reason: string;
      readonly taskId: string | null;
      readonly iteration: number;
    }
  | {
      readonly type: 'agent.started';
      readonly agent: AgentName;
      readonly phase: string;
      readonly taskId: string | null;
      readonly promptBytes: number;
      readonly budgetUsd: number;
    }
  | {
      readonly type: 'agent.finished';
      readonly agent: AgentName;
      readonly phase: string;
      readonly taskId: string | null;
      readonly status: AgentStatus;
      readonly costUsd: number;
      readonly durationMs: number;
      readonly turns: number;
    }
  | { readonly type: 'gate.started'; readonly agent: AgentName; readonly gate: string; readonly taskId: string | null }
  | { readonly type: 'gate.progress'; readonly agent: AgentName; readonly gate: string; readonly line: string }
  | {
      readonly type: 'gate.finished';
      readonly agent: AgentName;
      readonly gate: string;
      readonly taskId: string | null;
      readonly status: GateStatus;
      readonly durationMs: number;
      readonly outputTail: string;
    }
  | {
      readonly type: 'patch.queued';
      readonly taskId: string;
      readonly patchId: string;
      readonly files: readonly string[];
      readonly tier: number;
    }
  | { readonly type: 'patch.promoted'; readonly taskId: string; readonly patchId: string; readonly commit: string }
  | { readonly type: 'patch.deferred'; readonly taskId: string; readonly patchId: string; readonly reason: string }
  | { readonly type: 'patch.waiting'; readonly taskId: string; readonly patchId: string; readonly reason: string }
  | { readonly type: 'patch.discarded'; readonly taskId: string; readonly patchId: string; readonly reason: string }
  | { readonly type: 'task.released'; readonly taskId: string; readonly reason: string }
  | { readonly type: 'task.blocked'; readonly taskId: string; readonly reason: string }
  /** `accepted`: the sub-tasks created for it. */
  | { readonly type: 'task.decomposed'; readonly taskId: string; readonly accepted: number }
  | {
      readonly type: 'verdict';
      readonly taskId: string;
      readonly verdict: 'approve' | 'reject' | 'modify';
      readonly rationale: string;
      readonly confidence: number | null;
      readonly by: 'judge' | 'human';
    }
  | {
      readonly type: 'budget';
      readonly scope: 'day' | 'task' | 'invocation';
      readonly spent: number;
      readonly limit: number;
      readonly message: string;
    }
  | {
      /** The integrity check found changes the invocation may not make (also an `incident` store event). */
      readonly type: 'incident';
      readonly incidentId: string;
      readonly agent: AgentName;
      readonly phase: string;
      readonly taskId: string | null;
      readonly changes: readonly {
        readonly path: string;
        readonly change: 'added' | 'removed' | 'modified';
        readonly restorable: boolean;
      }[];
      readonly summary: string;
      /** `ralph restore-incident <id>` when something can be put back, else null. */
      readonly restore: string | null;
    }
  | {
      /** How each role's agents are confined for this run (also an `agents.confinement` store event). */
      readonly type: 'agents.confinement';
      readonly roles: readonly { readonly role: string; readonly backend: string; readonly kind: string; readonly summary: string }[];
      /** Some role runs with no confinement (the user opted in): hosts show a warning. */
      readonly unconfined: boolean;
    }
  | { readonly type: 'log'; readonly level: 'info' | 'warn' | 'error'; readonly agent: AgentName; readonly message: string }
  | { readonly type: 'summary'; readonly summary: LoopSummary };

export interface LoopSummary {
  readonly iterations: number;
  readonly invocations: number;
  readonly promoted: number;
  readonly deferred: number;
  readonly blocked: number;
  readonly released: number;
  readonly costUsd: number;
  readonly wallMs: number;
  /** Invocation time summed over agents (parallel agents overlap). */
  readonly modelMs: number;
  /** Gate time summed over agents. */
  readonly gateMs: number;
  /** Wall time during which at least one agent or gate ran (src/loop/busyClock.ts). */
  readonly busyMs: number;
  /** Per agent, the wall time during which its invocation or one of its gates ran. */
  readonly agentBusyMs: Readonly<Record<string, number>>;
  readonly stopReason: string;
}

function busyOf(v: unknown): Record<string, number> {
  if (typeof v !== 'object' || v === null) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number'));
}

/** A `loop.stopped` event's payload read back as the summary it recorded (missing numbers are 0). */
export function loopSummaryOf(payload: Readonly<Record<string, unknown>>): LoopSummary {
  const n = (k: string): number => (typeof payload[k] === 'number' ? (payload[k] as number) : 0);
  return {
    iterations: n('iterations'),
    invocations: n('invocations'),
    promoted: n('promoted'),
    deferred: n('deferred'),
    blocked: n('blocked'),
    released: n('released'),
    costUsd: n('costUsd'),
    wallMs: n('wallMs'),
    modelMs: n('modelMs'),
    gateMs: n('gateMs'),
    busyMs: n('busyMs'),
    agentBusyMs: busyOf(payload['agentBusyMs']),
    stopReason: typeof payload['stopReason'] === 'string' ? payload['stopReason'] : 'stopped',
  };
}

export type LoopEventType = LoopEvent['type'];
export type LoopEventOf<T extends LoopEventType> = Extract<LoopEvent, { type: T }>;

export interface Subscription {
  dispose(): void;
}

/** A tiny synchronous emitter; a throwing listener is isolated and never breaks the loop. */
export class LoopEmitter {
  private readonly all = new Set<(e: LoopEvent) => void>();

  on(listener: (e: LoopEvent) => void): Subscription {
    this.all.add(listener);
    return { dispose: () => this.all.delete(listener) };
  }

  onType<T extends LoopEventType>(type: T, listener: (e: LoopEventOf<T>) => void): Subscription {
    return this.on((e) => {
      if (e.type === type) listener(e as LoopEventOf<T>);
    });
  }

  emit(event: LoopEvent): void {
    // Every host sink (console, Output, monitor, notifications) sees redacted text only.
    const e = redactValue(event);
    for (const l of [...this.all]) {
      try {
        l(e);
      } catch {
        // a host's listener bug must not stop the engine
      }
    }
  }

  /** Resolves with the first event matching `pred` (tests and hosts wait on events, not sleeps). */
  next<T extends LoopEvent>(pred: (e: LoopEvent) => e is T, signal?: AbortSignal): Promise<T>;
  next(pred: (e: LoopEvent) => boolean, signal?: AbortSignal): Promise<LoopEvent>;
  next(pred: (e: LoopEvent) => boolean, signal?: AbortSignal): Promise<LoopEvent> {
    return new Promise((resolve, reject) => {
      const sub = this.on((e) => {
        if (pred(e)) {
          sub.dispose();
          resolve(e);
        }
      });
      signal?.addEventListener('abort', () => {
        sub.dispose();
        reject(new Error('aborted'));
      });
    });
  }
}
