// How a process beside the loop (the MCP server) reads and writes a project's store: reads
// through an observer refreshed before each read; every write is an inbox command file, like
// any observer's. When no live process holds the writer lock, a short-lived writer opened
// here drains it at once (as the CLI writes when no loop runs); when one does (a running
// loop, or another short-lived CLI), the command waits — bounded — until that writer has
// applied it, or the lock frees and it is drained here. Never a success for a command nobody
// applied: the answer says applied, failed (with the writer's reason) or still queued.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { controlContext, type ControlContext } from '../control/context';
import { drainInbox, submitToInbox, type InboxCommand } from '../control/inbox';
import { CONTROL_PROJECTIONS } from '../control/views';
import { DB_FILE, JOURNAL_FILE, LOCK_FILE, LOCKS_DIR, openStore } from '../store';
import type { EventStore, LockHolder } from '../store';
import { deadReason } from '../store/writerLock';
import { keepingStatusImage } from '../control/statusImage';

/** What became of a command. */
export type WriteOutcome =
  | { readonly state: 'applied'; readonly file: string; readonly by: 'here' | 'writer' }
  | { readonly state: 'failed'; readonly file: string; readonly error: string }
  /** Still in the inbox when the wait ended: the lock holder has not applied it yet. */
  | { readonly state: 'queued'; readonly file: string; readonly writer: LockHolder | undefined };

export class NotInitializedError extends Error {
  override readonly name = 'NotInitializedError';
  constructor(readonly ralphDir: string) {
    super(`no Ralph project in ${path.dirname(ralphDir)}: ${ralphDir} has no event store (run \`ralph init\` there first)`);
  }
}

/** Where a drained inbox file ends up: processed/ or failed/ (beside it `<name>.error.txt`). */
export function inboxOutcome(ralphDir: string, file: string): WriteOutcome | undefined {
  const name = path.basename(file);
  const inbox = path.join(ralphDir, 'inbox');
  if (fs.existsSync(path.join(inbox, 'processed', name))) return { state: 'applied', file: name, by: 'writer' };
  if (fs.existsSync(path.join(inbox, 'failed', name))) {
    let error = 'failed';
    try {
      error = fs.readFileSync(path.join(inbox, 'failed', `${name.replace(/\.json$/, '')}.error.txt`), 'utf8').trim() || error;
    } catch {
      // the error file follows the move; the event log has the reason too
    }
    return { state: 'failed', file: name, error };
  }
  return undefined;
}

/** The live holder of the writer lock, if any (a dead or stale one is not). */
export function liveWriter(ralphDir: string, now = Date.now()): LockHolder | undefined {
  let holder: LockHolder;
  try {
    holder = JSON.parse(fs.readFileSync(path.join(ralphDir, LOCKS_DIR, LOCK_FILE), 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
  if (typeof holder.pid !== 'number' || typeof holder.heartbeat !== 'string') return undefined;
  return deadReason(holder, now, 30_000) === undefined ? holder : undefined;
}

export interface StoreAccessOptions {
  readonly projectDir: string;
  /** How long a write waits for another writer to apply it (default 10 s). */
  readonly waitMs?: number;
  /** Poll interval while waiting (default 100 ms). */
  readonly pollMs?: number;
  /** The run id of the short-lived writer (events it appends carry it). */
  readonly runId?: string;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export class StoreAccess {
  readonly ralphDir: string;
  private observer: EventStore | undefined;
  private opening: Promise<EventStore> | undefined;

  constructor(private readonly o: StoreAccessOptions) {
    this.ralphDir = path.join(o.projectDir, '.ralph');
  }

  get projectDir(): string {
    return this.o.projectDir;
  }

  isInitialized(): boolean {
    return fs.existsSync(path.join(this.ralphDir, DB_FILE)) || fs.existsSync(path.join(this.ralphDir, JOURNAL_FILE));
  }

  /** A context over the store as it is now (the observer refreshed). */
  async read(): Promise<ControlContext> {
    const store = await this.openObserver();
    await store.refresh();
    return controlContext(store, { ralphDir: this.ralphDir, projectDir: this.o.projectDir });
  }

  /** The live writer (a running loop or a short-lived CLI), if any. */
  writer(): LockHolder | undefined {
    return liveWriter(this.ralphDir);
  }

  /** Sends a command through the inbox and tells what became of it. */
  async write(cmd: InboxCommand): Promise<WriteOutcome> {
    if (!this.isInitialized()) throw new NotInitializedError(this.ralphDir);
    const file = submitToInbox(this.ralphDir, cmd);
    const name = path.basename(file);
    const deadline = Date.now() + (this.o.waitMs ?? 10_000);
    for (;;) {
      const done = inboxOutcome(this.ralphDir, file);
      if (done) return this.after(done);
      if (this.writer() === undefined) {
        const mine = await this.drainHere(name);
        if (mine) return this.after(mine);
      }
      if (Date.now() >= deadline) return { state: 'queued', file: name, writer: this.writer() };
      await sleep(this.o.pollMs ?? 100);
    }
  }

  /** Drains the inbox with a short-lived writer; undefined when the lock was taken meanwhile or another drained it. */
  private async drainHere(name: string): Promise<WriteOutcome | undefined> {
    let store: EventStore;
    try {
      store = await openStore({
        ralphDir: this.ralphDir,
        mode: 'writer',
        projections: CONTROL_PROJECTIONS,
        runId: this.o.runId ?? `mcp_${process.pid}`,
        ...keepingStatusImage(this.ralphDir),
      });
    } catch (e) {
      if (e instanceof Error && e.name === 'StoreLockedError') return undefined;
      throw e;
    }
    try {
      const results = await drainInbox(controlContext(store, { ralphDir: this.ralphDir, projectDir: this.o.projectDir }));
      const r = results.find((x) => x.file === name);
      if (r === undefined) return undefined;
      return r.ok ? { state: 'applied', file: name, by: 'here' } : { state: 'failed', file: name, error: r.error ?? 'failed' };
    } finally {
      await store.close();
    }
  }

  private async after(outcome: WriteOutcome): Promise<WriteOutcome> {
    if (this.observer) await this.observer.refresh();
    return outcome;
  }

  private async openObserver(): Promise<EventStore> {
    if (this.observer) return this.observer;
    if (!this.isInitialized()) throw new NotInitializedError(this.ralphDir);
    this.opening ??= openStore({ ralphDir: this.ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS }).finally(() => {
      this.opening = undefined;
    });
    this.observer = await this.opening;
    return this.observer;
  }

  async close(): Promise<void> {
    const o = this.observer;
    this.observer = undefined;
    await o?.close();
  }
}
