// How a human command ended up (applied now, or left in the inbox for the loop), and the two
// errors a command or a loop start raise: the command failed, or another writer holds the lock.
import type { LockHolder } from '../store';

/** How a command reached the control plane. */
export type SubmitOutcome =
  /** Applied by a short-lived writer in this window: already in the database. */
  | { readonly via: 'applied'; readonly file: string }
  /** Left in the inbox for the loop that holds the writer lock (this window's or another process's). */
  | { readonly via: 'inbox'; readonly file: string; readonly writer: 'this-window' | LockHolder };

export class CommandFailedError extends Error {
  override readonly name = 'CommandFailedError';
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`${command}: ${reason}`);
  }
}

export class LoopBusyError extends Error {
  override readonly name = 'LoopBusyError';
  constructor(readonly holder: LockHolder | 'this-window') {
    super(
      holder === 'this-window'
        ? 'the loop is already running in this window'
        : `another process runs the loop (pid ${holder.pid} on ${holder.host}, since ${holder.started}); this window follows it as an observer`,
    );
  }
}

/** The store's StoreLockedError as a LoopBusyError naming the holder; anything else unchanged. */
export function busyErrorOf(e: unknown): unknown {
  if (!(e instanceof Error) || e.name !== 'StoreLockedError') return e;
  const holder = (e as Error & { holder?: LockHolder }).holder;
  return new LoopBusyError(holder ?? { pid: 0, host: '?', started: '?', heartbeat: '?', runId: '?' });
}
