// How an observer keeps up with another writer: a re-read after each file change, with a
// burst of changes coalesced into one more read (never two at once), and a slow safety-net
// poll while another process writes (file watchers miss changes on some file systems).
import type { DisposableLike } from '../shared/lifecycle';

export class CoalescedRefresh implements DisposableLike {
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly read: () => Promise<void>) {}

  /** Reads now, or once more after the read in flight. */
  schedule(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.read().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.schedule();
      }
    });
  }

  /** Resolves once no read is pending. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Polls every `ms` while `want` (0 ms: never); an unref'd timer that keeps no process alive. */
  poll(want: boolean, ms: number): void {
    if (want && ms > 0 && !this.timer) {
      this.timer = setInterval(() => this.schedule(), ms);
      this.timer.unref();
    } else if (!want || ms <= 0) this.stopPolling();
  }

  stopPolling(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.stopPolling();
  }
}
