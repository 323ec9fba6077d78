// Given/when/then helpers for the domain's deciders: stamp domain events as the store
// would, and fold them into task and patch state with the evolve functions.
import type { DomainEvent, RecordedEvent } from '../../../src/domain/events';
import { evolveTask } from '../../../src/domain/task';
import { evolvePatch } from '../../../src/domain/patch';
import type { Patch, Task } from '../../../src/domain/model';

let seq = 0;

export function record(events: readonly DomainEvent[], ts = '2026-11-29T10:00:00.000Z'): RecordedEvent[] {
  return events.map((e) => ({ ...e, event_id: `evt_${String(++seq).padStart(8, '0')}`, ts, run_id: 'run_test' }) as RecordedEvent);
}

export interface World {
  tasks: Map<string, Task>;
  patches: Map<string, Patch>;
}

export function fold(events: readonly DomainEvent[], world: World = { tasks: new Map(), patches: new Map() }): World {
  for (const e of record(events)) {
    if (e.type.startsWith('task.')) {
      const t = evolveTask(world.tasks.get(e.entity_id), e);
      if (t) world.tasks.set(e.entity_id, t);
    } else if (e.type.startsWith('patch.')) {
      const p = evolvePatch(world.patches.get(e.entity_id), e);
      if (p) world.patches.set(e.entity_id, p);
    }
  }
  return world;
}

export function ctxOf(w: World, taskId: string): { task: Task | undefined; patches: Patch[] } {
  return { task: w.tasks.get(taskId), patches: [...w.patches.values()].filter((p) => p.task_id === taskId) };
}

export function types(events: readonly DomainEvent[]): string[] {
  return events.map((e) => `${e.type} ${e.entity_id}`);
}
