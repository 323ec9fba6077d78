// The inbox as the running loop reads it: commands other processes queued (the CLI beside a
// running writer, an observer window) are applied once each by the control plane; what is
// for the loop itself comes back here — stop, pause, resume, and human decisions, which
// override the judge at any time (a judge still reviewing the task is ended). An approval's
// promotion runs on its own chain, so the inbox stays readable while its gates run.
import type { Harness } from './harness';
import type { RunLifecycle } from './runLifecycle';

export class InboxConsumer {
  private draining: Promise<void> | null = null;
  /**
   * Promotions of approved patches, one after another on their own chain: a re-verification
   * runs gates for a while, and the inbox must stay readable meanwhile (a stop after an
   * approval is honoured at once; the stop signal cancels the gates).
   */
  private approvals: Promise<void> = Promise.resolve();
  private inFlight = 0;

  constructor(
    private readonly harness: Harness,
    private readonly lifecycle: RunLifecycle,
  ) {}

  /** Approved patches whose promotion has not finished yet. */
  get approvalsInFlight(): number {
    return this.inFlight;
  }

  /** Reads the inbox once; a read already under way is joined, not repeated. */
  consume(): Promise<void> {
    this.draining ??= this.drainOnce().finally(() => {
      this.draining = null;
    });
    return this.draining;
  }

  /** Resolves when the read under way and every approval it started have finished. */
  async settled(): Promise<void> {
    await this.draining;
    await this.approvals;
  }

  private async drainOnce(): Promise<void> {
    const { ctx, judge, late } = this.harness;
    const lifecycle = this.lifecycle;
    const { processed, decisions, host } = await ctx.control.takeInbox();
    for (const c of host) {
      if (c.command === 'stop') lifecycle.requestStop(c.reason ?? `stopped by ${c.actor}`);
      else if (c.command === 'pause') lifecycle.pause(c.reason ?? `paused by ${c.actor}`);
      else lifecycle.resume();
    }
    for (const d of decisions) {
      // The human overrides the judge: one still reviewing this task is ended now.
      judge.cancel(d.taskId, `${d.actor} decided ${d.decision}`);
      if (d.decision === 'approve') {
        this.inFlight++;
        this.approvals = this.approvals
          .then(() => late.promoteApproved(d.taskId, d.actor, lifecycle.signal))
          .then(
            () => undefined,
            (e: unknown) => ctx.log('harness', 'warn', `promoting the approved ${d.taskId} failed: ${String(e)}`),
          )
          .finally(() => {
            this.inFlight--;
            lifecycle.progress();
          });
      }
    }
    if (processed > 0) lifecycle.progress();
  }
}
