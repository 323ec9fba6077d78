// The context object the loop's drivers receive (recovery, the primary, the workers, the
// inbox): the harness and its context, the run's lifecycle, the inbox consumer, the spec
// watch, and which task each agent is on. Built once per run by Loop.start.
import type { HarnessContext } from './context';
import type { AgentName } from './events';
import type { Harness } from './harness';
import type { EvolveRetry } from './evolveRetry';
import type { InboxConsumer } from './inboxConsumer';
import type { SpecWatch } from './ports';
import type { RunLifecycle } from './runLifecycle';

export interface LoopRun {
  readonly ctx: HarnessContext;
  readonly harness: Harness;
  readonly lifecycle: RunLifecycle;
  readonly inbox: InboxConsumer;
  readonly specs: SpecWatch;
  /** When evolve_goals may run again after a failure. */
  readonly evolveRetry: EvolveRetry;
  /** Task each agent works on, so the primary and workers never pick the same one. */
  readonly current: Map<AgentName, string>;
}
