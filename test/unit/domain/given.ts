// Given/when/then helpers for the domain's deciders: stamp domain events as the store
// would, and fold them into task and patch state with the evolve functions; `world` is the
// decider specification (test/kit/decider.ts) over both aggregates.
import type { DomainEvent, RecordedEvent } from '../../../src/domain/events';
import { evolveTask } from '../../../src/domain/task';
import { evolvePatch } from '../../../src/domain/patch';
import type { Patch, Task } from '../../../src/domain/model';
import { deciderSpecification, recordEvents } from '../../kit/decider';

export const record = recordEvents;

export interface World {
  tasks: Map<string, Task>;
  patches: Map<string, Patch>;
}

/** Folds one stored event into the world (in place), as the task and patch projections do. */
export function evolveWorld(world: World, e: RecordedEvent): World {
  if (e.type.startsWith('task.')) {
    const t = evolveTask(world.tasks.get(e.entity_id), e);
    if (t) world.tasks.set(e.entity_id, t);
  } else if (e.type.startsWith('patch.')) {
    const p = evolvePatch(world.patches.get(e.entity_id), e);
    if (p) world.patches.set(e.entity_id, p);
  }
  return world;
}

export function fold(events: readonly DomainEvent[], world: World = { tasks: new Map(), patches: new Map() }): World {
  return record(events).reduce(evolveWorld, world);
}

/** given events (tasks and patches) / when a decision / then the whole events it appends. */
export const world = deciderSpecification<World>({ initial: () => ({ tasks: new Map(), patches: new Map() }), evolve: evolveWorld });

export function ctxOf(w: World, taskId: string): { task: Task | undefined; patches: Patch[] } {
  return { task: w.tasks.get(taskId), patches: [...w.patches.values()].filter((p) => p.task_id === taskId) };
}

export function types(events: readonly DomainEvent[]): string[] {
  return events.map((e) => `${e.type} ${e.entity_id}`);
}
