// A promise chain that runs one task at a time, in call order: promotions update the branch
// one after another within this process, late promotions share one scratch worktree.

export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  /** Runs `fn` after everything queued before it, whether that succeeded or failed. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.tail.then(fn, fn);
    this.tail = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }
}
