// evolve_goals that failed (the agent CLI missing or crashed, the budget, an answer that is
// not valid) leaves its specs unread, so it must run again, but not on every assess: each
// failure holds the next attempt back, doubling from the base delay up to the cap. A new
// run tries at once (a restart is someone acting on the failure); the attempt number counts
// the failures recorded in the store since the last success, so it carries across runs.
import type { Clock } from './sleep';

export interface EvolveRetryPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_EVOLVE_RETRY: EvolveRetryPolicy = { baseMs: 30_000, maxMs: 30 * 60_000 };

/** The delay before the next attempt after `failures` failures in a row (>= 1). */
export function evolveRetryDelayMs(failures: number, policy: EvolveRetryPolicy = DEFAULT_EVOLVE_RETRY): number {
  return Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
}

export class EvolveRetry {
  private heldUntil = 0;

  constructor(
    private readonly clock: Clock,
    private readonly policy: EvolveRetryPolicy = DEFAULT_EVOLVE_RETRY,
  ) {}

  /** Records a failure, the `failures`-th in a row; returns the delay before the next attempt. */
  failed(failures: number): number {
    const delay = evolveRetryDelayMs(failures, this.policy);
    this.heldUntil = this.clock.now() + delay;
    return delay;
  }

  succeeded(): void {
    this.heldUntil = 0;
  }

  /** True while the next attempt is held back. */
  get held(): boolean {
    return this.clock.now() < this.heldUntil;
  }
}
