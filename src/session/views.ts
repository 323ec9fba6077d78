// The read side of the engine session: the project's files (initialized, configured) and
// tasks, patches and events as the store this host currently reads has them (its own loop's
// writer, or the observer), through control/'s view functions, and where that store is (the
// embedded one, or the team's on PostgreSQL: then its machines are views too). Nothing here
// writes; with no store open every view is empty.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DeferralVerdict, TaskEventSummary } from '../control';
import { allTasks, deferredTasksIn, getPatch, getTask, lastDeferralVerdict, lastTaskEvent, patchesOf, recentEvents } from '../control';
import type { Patch, Task } from '../domain/model';
import { CONFIG_FILE } from '../project/config';
import { DB_FILE, JOURNAL_FILE } from '../store';
import type { EventStore, StoredEvent } from '../store';
import { Disposable } from '../shared/lifecycle';
import { sessionStoreOf, teamMachines, type SessionStoreLocation } from './storeSource';
import type { TeamMachine } from './teamAgents';

export abstract class SessionViews extends Disposable {
  readonly ralphDir: string;

  private location: SessionStoreLocation | undefined;
  private lastLocationProblem = '';

  constructor(
    readonly projectDir: string,
    private readonly folderName: string | undefined,
    /** Where RALPH_STORE_URL is read. */
    protected readonly storeEnv: NodeJS.ProcessEnv,
    private readonly onStoreProblem: (problem: string) => void,
  ) {
    super();
    this.ralphDir = path.join(projectDir, '.ralph');
  }

  /**
   * Where this folder's events live: the embedded store in .ralph, or the team's PostgreSQL
   * store its config (or RALPH_STORE_URL) names. Fixed once the team's store is open.
   */
  storeLocation(): SessionStoreLocation {
    if (this.location) return this.location;
    const l = sessionStoreOf(this.projectDir, this.storeEnv);
    if (l.kind === 'broken' && l.problem !== this.lastLocationProblem) {
      this.lastLocationProblem = l.problem;
      this.onStoreProblem(l.problem);
    }
    return l;
  }

  protected fixStoreLocation(l: SessionStoreLocation): void {
    if (l.kind === 'postgres') this.location = l;
  }

  /** The team store this folder is attached to (its URL without the password), or undefined. */
  teamStore(): string | undefined {
    const l = this.storeLocation();
    return l.kind === 'postgres' ? l.where : undefined;
  }

  /** The team's machines and the tasks their agents hold live leases on (team store only). */
  machines(): TeamMachine[] {
    const v = this.view;
    return v && this.storeLocation().kind === 'postgres' ? teamMachines(v, new Date()) : [];
  }

  /** The workspace folder's name, for views and the status bar when several folders are open. */
  get name(): string {
    return this.folderName ?? path.basename(this.projectDir);
  }

  /** `.ralph/ralph.db` exists (or its journal: init half done), or the config names the team's store. */
  isInitialized(): boolean {
    if (this.storeLocation().kind === 'postgres') return true;
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
