// The monitor's port to the engine: where snapshots come from and when they change. The
// webview panel depends only on this; `createStoreDataSource` adapts an EventStore.
import type { Disposable, EventStore } from '../store/types';
import type { LogLine, LoopRun, MonitorSnapshot, RunningAgent } from '../protocol/monitor';
import { buildMonitorSnapshot, createSnapshotCache } from './snapshot';
import { MonitorTimeline } from './timeline';

export interface MonitorDataSource {
  /** The current snapshot (rebuilt on each call; the panel batches calls). */
  snapshot(): MonitorSnapshot | Promise<MonitorSnapshot>;
  /** The snapshot after the log's first `index` events (the time slider); absent: no time travel. */
  snapshotAt?(index: number): Promise<MonitorSnapshot>;
  /** Fires whenever something shown may have changed; bursts are fine, the panel batches. */
  onDidChange(listener: () => void): Disposable;
}

export interface StoreDataSourceOptions {
  readonly store: Pick<EventStore, 'all' | 'get' | 'onDidAppend'>;
  /** `.ralph/logs` */
  readonly logsDir: string;
  readonly agents?: () => readonly RunningAgent[];
  /** Whether a loop runs, and whether it runs in another process (default: stopped). */
  readonly run?: () => { readonly run: LoopRun; readonly observing: boolean };
  /** The folder's name and how many spec files it has. */
  readonly project?: () => { readonly name: string; readonly specs: number };
  readonly logLines?: () => readonly LogLine[];
  readonly now?: () => Date;
  /**
   * Also fire this often (default 5000 ms, the seed monitor's refresh; 0 = never), so time
   * windows ("last 10 min"), elapsed times and metrics files that no event announces stay
   * current. The panel still batches and sends only what changed.
   */
  readonly pollMs?: number;
}

export interface StoreDataSource extends MonitorDataSource, Disposable {
  /** Call when something outside the store changed (agents, log lines, metrics files). */
  notify(): void;
}

/** A data source over an open event store: changes on every append, and on `notify()`. */
export function createStoreDataSource(o: StoreDataSourceOptions): StoreDataSource {
  const listeners = new Set<() => void>();
  const fire = (): void => {
    for (const l of [...listeners]) l();
  };
  const sub = o.store.onDidAppend(fire);
  const pollMs = o.pollMs ?? 5000;
  const timer = pollMs > 0 ? setInterval(() => listeners.size > 0 && fire(), pollMs) : undefined;
  timer?.unref();
  const cache = createSnapshotCache();
  const timeline = new MonitorTimeline({ source: o.store, logsDir: o.logsDir });
  return {
    snapshotAt: (index) => timeline.snapshotAt(index, o.project ? { project: o.project() } : {}),
    snapshot: () => {
      // A page shows the live snapshot first: from then on the slider's folds run ahead in
      // the background, so that its first move needs no fold from the log's start.
      void timeline.prefold().catch(() => undefined);
      return buildMonitorSnapshot(o.store, o.logsDir, o.now?.() ?? new Date(), {
        ...(o.run ? o.run() : {}),
        ...(o.project ? { project: o.project() } : {}),
        agents: o.agents?.() ?? [],
        logLines: o.logLines?.() ?? [],
        cache,
      });
    },
    onDidChange(listener: () => void): Disposable {
      listeners.add(listener);
      return { dispose: () => listeners.delete(listener) };
    },
    notify: fire,
    dispose(): void {
      if (timer) clearInterval(timer);
      timeline.dispose();
      sub.dispose();
      listeners.clear();
    },
  };
}
