// The inbox as the running loop reads it: commands other processes queued (the CLI beside a
// running writer, an observer window) are applied once each by the control plane; what is
// for the loop itself comes back here — stop, pause, resume, and human decisions, which
// override the judge at any time (a judge still reviewing the task is ended). An approval's
// promotion runs on its own chain, so the inbox stays readable while its gates run.
import { existsSync, mkdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import type { FSWatcher } from 'node:fs';
import type { Harness } from './harness';
import type { RunLifecycle } from './runLifecycle';

export class InboxConsumer {
  private draining: Promise<void> | null = null;
  /** A file landed while a read was under way: that read goes round once more. */
  private again = false;
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

  /**
   * Reads the inbox; a read already under way is joined, and goes round once more so that a
   * file that landed after it listed the folder is not left for the next poll.
   */
  consume(): Promise<void> {
    if (this.draining !== null) {
      this.again = true;
      return this.draining;
    }
    this.draining = (async () => {
      do {
        this.again = false;
        await this.drainOnce();
      } while (this.again);
    })().finally(() => {
      this.draining = null;
    });
    return this.draining;
  }

  /**
   * Reads the inbox as soon as a command file lands in `dir` (fs.watch), and every `pollMs`
   * besides: a command sent beside a running loop (the CLI, an observer window, a human's
   * decision) is applied in milliseconds instead of at the next poll, while the poll still
   * covers what a watch can miss (a network file system, a folder removed and made again).
   * Returns the stop.
   */
  readContinuously(dir: string, pollMs: number, onError: (e: unknown) => void): () => void {
    const read = (): void => void this.consume().catch(onError);
    const poll = setInterval(read, pollMs);
    let watcher: FSWatcher | undefined;
    try {
      mkdirSync(dir, { recursive: true });
      // Only finished command files still there: their atomic writes' temps, and the moves
      // out of the folder that a read makes, are no news.
      watcher = watch(dir, (_kind, name) => {
        if (name === null || (isCommandFile(name) && existsSync(join(dir, name)))) read();
      });
      // A folder that goes away ends the watch; the poll goes on.
      watcher.on('error', () => watcher?.close());
    } catch {
      // no watch here (the folder cannot be made or watched): the poll alone
    }
    return () => {
      clearInterval(poll);
      watcher?.close();
    };
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

/** A command file as submitToInbox names it once its write is complete. */
function isCommandFile(name: string): boolean {
  return name.endsWith('.json') && !name.startsWith('.');
}
