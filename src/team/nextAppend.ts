// The idle wait of the team's long-running processes (worker, promoter): until the store
// records something (a task released, a lease expired, a patch queued), the poll interval
// passes, or the process is told to stop — whichever comes first.
import type { EventStore } from '../store/types';

export function nextAppendOrPoll(store: Pick<EventStore, 'onDidAppend'>, pollMs: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      sub.dispose();
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, pollMs);
    const sub = store.onDidAppend(done);
    signal.addEventListener('abort', done, { once: true });
  });
}
