// The read side of the engine session: the project's files (initialized, configured) and
// tasks, patches and events as the store this host currently reads has them (its own loop's
// writer, or the observer), through control/'s view functions. Nothing here writes; with no
// store open every view is empty.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DeferralVerdict, TaskEventSummary } from '../control';
import { allTasks, deferredTasksIn, getPatch, getTask, lastDeferralVerdict, lastTaskEvent, patchesOf, recentEvents } from '../control';
import type { Patch, Task } from '../domain/model';
import { CONFIG_FILE } from '../project/config';
import { DB_FILE, JOURNAL_FILE } from '../store';
import type { EventStore, StoredEvent } from '../store';
import { Disposable } from '../shared/lifecycle';

export abstract class SessionViews extends Disposable {
  readonly ralphDir: string;

  constructor(
    readonly projectDir: string,
    private readonly folderName?: string,
  ) {
    super();
    this.ralphDir = path.join(projectDir, '.ralph');
  }

  /** The workspace folder's name, for views and the status bar when several folders are open. */
  get name(): string {
    return this.folderName ?? path.basename(this.projectDir);
  }

  /** `.ralph/ralph.db` exists (or a config without a database yet: init half done). */
  isInitialized(): boolean {
    return fs.existsSync(path.join(this.ralphDir, DB_FILE)) || fs.existsSync(path.join(this.ralphDir, JOURNAL_FILE));
  }

  hasConfig(): boolean {
    return fs.existsSync(path.join(this.projectDir, CONFIG_FILE));
  }

  /** The store views read from, when one is open. */
  abstract get view(): EventStore | undefined;

  /** The monitor's reader: whichever store is current when it reads (observer, or this host's writer). */
  protected currentStore(onDidAppend: EventStore['onDidAppend']): Pick<EventStore, 'all' | 'get' | 'onDidAppend'> {
    return {
      all: (sql, params) => this.view?.all(sql, params) ?? [],
      get: (sql, params) => this.view?.get(sql, params),
      onDidAppend,
    } as Pick<EventStore, 'all' | 'get' | 'onDidAppend'>;
  }

  tasks(): Task[] {
    const v = this.view;
    return v ? allTasks(v) : [];
  }

  task(taskId: string): Task | undefined {
    const v = this.view;
    return v ? getTask(v, taskId) : undefined;
  }

  deferred(): Task[] {
    const v = this.view;
    return v ? deferredTasksIn(v) : [];
  }

  patch(patchId: string): Patch | undefined {
    const v = this.view;
    return v ? getPatch(v, patchId) : undefined;
  }

  /** The task's current patch: its patch_id, else its newest. */
  patchOfTask(taskId: string): Patch | undefined {
    const v = this.view;
    if (!v) return undefined;
    const t = this.task(taskId);
    if (t?.patch_id) return getPatch(v, t.patch_id) ?? undefined;
    return patchesOf(v, taskId).at(-1);
  }

  /** The newest events first, optionally filtered by a substring of type, entity or actor. */
  recentEvents(limit = 200, filter?: string): StoredEvent[] {
    const v = this.view;
    return v ? recentEvents(v, limit, filter) : [];
  }

  /** The latest event about a task (for tooltips). */
  lastTaskEvent(taskId: string): TaskEventSummary | undefined {
    const v = this.view;
    return v ? lastTaskEvent(v, taskId) : undefined;
  }

  /** The latest judge (or human) verdict on a task's deferral. */
  lastVerdict(taskId: string): DeferralVerdict | undefined {
    const v = this.view;
    return v ? lastDeferralVerdict(v, taskId) : undefined;
  }
}
