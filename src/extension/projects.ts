// The Ralph projects of this window: one engine session per workspace folder on disk (a
// multi-root workspace has several, each its own `.ralph/`), kept in folder order as folders
// come and go, with their events re-fired tagged by project so the trees, the status bar and
// the notifications can say which folder they speak of. Plain Node: no `vscode` here (the
// composition root passes folders in and the watchers through `watch`).
import type { LoopEvent } from '../loop/events';
import type { StoredEvent } from '../store';
import { Emitter } from '../shared/emitter';
import type { Engine } from '../session/engine';
import { Disposable } from '../shared/lifecycle';
import type { DisposableLike } from '../shared/lifecycle';

export interface ProjectFolder {
  /** The folder's path on disk. */
  readonly dir: string;
  /** The workspace folder's name. */
  readonly name: string;
}

export class Projects extends Disposable {
  private readonly engines = new Map<string, { engine: Engine; subs: DisposableLike[] }>();
  private order: string[] = [];

  private readonly _onDidChangeProjects = this._register(new Emitter<void>());
  /** A folder was added or removed. */
  readonly onDidChangeProjects = this._onDidChangeProjects.event;
  private readonly _onDidChangeData = this._register(new Emitter<{ readonly engine: Engine; readonly events: readonly StoredEvent[] }>());
  /** A project's events changed (appended here or read from another writer). */
  readonly onDidChangeData = this._onDidChangeData.event;
  private readonly _onDidChangeState = this._register(new Emitter<Engine>());
  /** A project's initialized / role / loop state may have changed. */
  readonly onDidChangeState = this._onDidChangeState.event;
  private readonly _onDidLoopEvent = this._register(new Emitter<{ readonly engine: Engine; readonly event: LoopEvent }>());
  /** A project's loop (run by this window) emitted a live event. */
  readonly onDidLoopEvent = this._onDidLoopEvent.event;

  constructor(private readonly create: (folder: ProjectFolder) => Engine) {
    super();
    this._register({ dispose: () => this.setFolders([]) });
  }

  /** Makes the projects match the workspace's folders: new engines for new folders, shut down for removed ones. */
  setFolders(folders: readonly ProjectFolder[]): void {
    const wanted = new Set(folders.map((f) => f.dir));
    let changed = false;
    for (const [dir, p] of this.engines) {
      if (wanted.has(dir)) continue;
      for (const s of p.subs) s.dispose();
      void p.engine.shutdown();
      this.engines.delete(dir);
      changed = true;
    }
    for (const f of folders) {
      if (this.engines.has(f.dir) || this.isDisposed) continue;
      const engine = this.create(f);
      const subs = [
        engine.onDidChangeData((events) => this._onDidChangeData.fire({ engine, events })),
        engine.onDidChangeState(() => this._onDidChangeState.fire(engine)),
        engine.onDidLoopEvent((event) => this._onDidLoopEvent.fire({ engine, event })),
      ];
      this.engines.set(f.dir, { engine, subs });
      changed = true;
    }
    const order = folders.map((f) => f.dir).filter((d) => this.engines.has(d));
    if (order.join('\0') !== this.order.join('\0')) changed = true;
    this.order = order;
    if (changed) this._onDidChangeProjects.fire();
  }

  /** Every project, in workspace folder order. */
  list(): Engine[] {
    return this.order.map((d) => this.engines.get(d)?.engine).filter((e): e is Engine => e !== undefined);
  }

  /** More than one folder: views group by folder and commands ask which one. */
  get multi(): boolean {
    return this.order.length > 1;
  }

  get(dir: string): Engine | undefined {
    return this.engines.get(dir)?.engine;
  }

  /** The project whose folder contains `file` (the longest folder path that is a prefix of it). */
  containing(file: string): Engine | undefined {
    let best: Engine | undefined;
    for (const e of this.list()) {
      const d = e.projectDir.endsWith('/') ? e.projectDir : `${e.projectDir}/`;
      if ((file === e.projectDir || file.startsWith(d)) && (!best || e.projectDir.length > best.projectDir.length)) best = e;
    }
    return best;
  }

  /**
   * The project the window is "about" when nothing says which: the one of the active file,
   * else one whose loop runs (here or elsewhere), else the first initialized, else the first.
   */
  focus(activeFile?: string): Engine | undefined {
    const all = this.list();
    const byFile = activeFile ? this.containing(activeFile) : undefined;
    return byFile ?? all.find((e) => e.loopState() !== 'stopped') ?? all.find((e) => e.isInitialized()) ?? all[0];
  }

  /** Shuts every engine down (deactivate awaits this). */
  async shutdown(): Promise<void> {
    const all = [...this.engines.values()];
    this.engines.clear();
    this.order = [];
    for (const p of all) for (const s of p.subs) s.dispose();
    await Promise.all(all.map((p) => p.engine.shutdown()));
    this.dispose();
  }
}
