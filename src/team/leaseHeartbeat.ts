// The heartbeat of a leased task: renews the lease every third of its time to live, takes
// it again when it ran out and nobody else took the task, and tells its worker (an aborted
// signal) the moment another holder has it.
import type { ControlContext } from '../control/context';
import { LeaseLostError, reclaimLease, renewLease, type Lease } from './leases';

/**
 * Renews a lease every third of its time to live until stopped. A lease that runs out
 * while nobody else takes the task is taken again (`reclaim`: the work in flight is still
 * fenced at queue time, by the new lease); `signal` aborts the moment another holder has
 * the task (or it moved on), so the worker stops paying for a result that would be refused.
 */
export class LeaseHeartbeat {
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private current: Lease;
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: ControlContext,
    lease: Lease,
    private readonly ttlMs: number,
    private readonly onError: (e: unknown) => void = () => undefined,
    /** Told when a lost lease was taken again (the old id, the new lease). */
    private readonly onReclaimed?: (lostId: string, lease: Lease) => void,
  ) {
    this.current = lease;
    this.schedule();
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get lease(): Lease {
    return this.current;
  }

  private schedule(): void {
    this.timer = setTimeout(
      () => {
        this.beating = renewLease(this.ctx, this.current, this.ttlMs).then(
          (l) => {
            this.current = l;
            if (!this.abort.signal.aborted) this.schedule();
          },
          async (e: unknown) => {
            let held = false;
            try {
              held = e instanceof LeaseLostError && (await this.reclaim());
            } catch (r) {
              e = r; // the store is away while taking it again: as for a renewal, next beat
            }
            if (e instanceof LeaseLostError && !held) this.abort.abort(e);
            else {
              // Renewed through a new lease, or the store is away (it waits outages out itself).
              if (!held) this.onError(e);
              if (!this.abort.signal.aborted) this.schedule();
            }
          },
        );
      },
      Math.max(50, Math.floor(this.ttlMs / 3)),
    );
  }

  /**
   * Takes the lost lease again when nobody else holds the task (see reclaimLease); true
   * when this heartbeat holds a live lease on it afterwards.
   */
  async reclaim(): Promise<boolean> {
    if (this.abort.signal.aborted) return false;
    const lost = this.current;
    const again = await reclaimLease(this.ctx, lost, this.ttlMs);
    if (again === undefined) return false;
    this.current = again;
    if (again.leaseId !== lost.leaseId) this.onReclaimed?.(lost.leaseId, again);
    return true;
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.abort.signal.aborted) this.abort.abort(new Error('stopped'));
    await this.beating.catch(() => undefined);
  }
}
