// The host side of one monitor page, without vscode: waits for the page's `ready`, sends one
// snapshot, then batched incremental updates when the data source changes; validates every
// message from the page and answers each request by id. The webview panel owns one of these.
import type { BatcherClock, UpdateBatcher } from './batcher';
import { createUpdateBatcher } from './batcher';
import type { MonitorDataSource } from './dataSource';
import { diffSnapshot } from './snapshotDiff';
import type { HostToWebviewMessage, MonitorSnapshot, WebviewRequest } from '../protocol/monitor';
import { ReplyMessage, SnapshotMessage, UpdateMessage, parseWebviewToHost } from '../protocol/monitor';

/** Where the session's messages go (the panel's webview). */
export interface WebviewPort {
  postMessage(message: HostToWebviewMessage): PromiseLike<boolean> | boolean | void;
}

type MaybeAsync = PromiseLike<unknown> | unknown;

/** What the page's buttons do; a rejection is reported back to the page. */
export interface MonitorActions {
  openTask(taskId: string): MaybeAsync;
  showDiff(taskId: string, patchId: string | null): MaybeAsync;
  resolveDeferred(taskId: string, decision: 'approve' | 'reject'): MaybeAsync;
  openSettings(): MaybeAsync;
}

export interface SessionLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface MonitorSessionOptions {
  readonly port: WebviewPort;
  readonly source: MonitorDataSource;
  readonly actions: MonitorActions;
  readonly log: SessionLog;
  /** At most one update per this many ms (default 250). */
  readonly refreshMs?: number;
  readonly clock?: BatcherClock;
}

export class MonitorSession {
  private readonly batcher: UpdateBatcher<true>;
  private readonly subscription: { dispose(): void };
  private ready = false;
  private lastSent: MonitorSnapshot | undefined;
  private seq = 0;
  private disposed = false;
  /** The time slider's position: the page shows the log's first `moment` events; null = live. */
  private moment: number | null = null;

  constructor(private readonly o: MonitorSessionOptions) {
    this.batcher = createUpdateBatcher<true>(() => void this.pushUpdate(), o.refreshMs ?? 250, o.clock);
    this.subscription = o.source.onDidChange(() => this.batcher.push(true));
  }

  /** True between the page's `ready` and its teardown (hidden panel, reload). */
  get isReady(): boolean {
    return this.ready;
  }

  /** A hidden webview is torn down; it says `ready` again when shown, and gets a fresh snapshot. */
  pageGone(): void {
    this.ready = false;
  }

  dispose(): void {
    this.disposed = true;
    this.batcher.dispose();
    this.subscription.dispose();
  }

  /** Handles one raw message from the page. Never throws. */
  async receive(raw: unknown): Promise<void> {
    const r = parseWebviewToHost(raw);
    if (!r.ok) {
      this.o.log.warn(`monitor: dropped a message from the page: ${r.reason}`);
      return;
    }
    const m = r.message;
    switch (m.method) {
      case 'ready':
        this.ready = true;
        this.seq = 0;
        // A reloaded page starts live.
        this.moment = null;
        await this.sendSnapshot();
        return;
      case 'log':
        this.o.log[m.params.level](`monitor page: ${m.params.text}`);
        return;
      default:
        await this.handleRequest(m);
    }
  }

  private async post(message: HostToWebviewMessage): Promise<void> {
    try {
      await this.o.port.postMessage(message);
    } catch (e) {
      this.o.log.warn(`monitor: could not post '${message.method}' to the page: ${String(e)}`);
    }
  }

  private async snapshot(): Promise<MonitorSnapshot | undefined> {
    try {
      const at = this.moment;
      if (at !== null && this.o.source.snapshotAt) return await this.o.source.snapshotAt(at);
      return await this.o.source.snapshot();
    } catch (e) {
      this.o.log.error(`monitor: snapshot failed: ${(e as Error).stack ?? String(e)}`);
      return undefined;
    }
  }

  private async sendSnapshot(): Promise<void> {
    const snap = await this.snapshot();
    if (!snap || this.disposed) return;
    this.lastSent = snap;
    await this.post(SnapshotMessage.create({ snapshot: snap }));
  }

  private async pushUpdate(): Promise<void> {
    if (!this.ready || this.disposed) return;
    const snap = await this.snapshot();
    if (!snap || this.disposed || !this.ready) return;
    if (!this.lastSent) return this.sendSnapshot();
    const patch = diffSnapshot(this.lastSent, snap);
    if (Object.keys(patch).length === 0) return;
    this.lastSent = snap;
    await this.post(UpdateMessage.create({ seq: ++this.seq, patch }));
  }

  private async handleRequest(m: WebviewRequest): Promise<void> {
    const requestId = m.id ?? 0;
    try {
      const a = this.o.actions;
      switch (m.method) {
        case 'openTask':
          await a.openTask(m.params.taskId);
          break;
        case 'showDiff':
          await a.showDiff(m.params.taskId, m.params.patchId);
          break;
        case 'resolveDeferred':
          await a.resolveDeferred(m.params.taskId, m.params.decision);
          break;
        case 'openSettings':
          await a.openSettings();
          break;
        case 'travel':
          if (m.params.index !== null && !this.o.source.snapshotAt) throw new Error('this monitor cannot show past moments');
          this.moment = m.params.index;
          // The page waits for this moment's state: send it now, not after the batching delay.
          await this.pushUpdate();
          break;
      }
      await this.post(ReplyMessage.create({ requestId, ok: true }));
      this.batcher.push(true); // the action probably changed what is shown
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      this.o.log.warn(`monitor: ${m.method} failed: ${error}`);
      await this.post(ReplyMessage.create({ requestId, ok: false, error }));
    }
  }
}
