// The walkthrough's checkmarks from the real state of the window's folders, on open as well
// as on change: context keys the steps' `onContext` completion events read. VS Code checks a
// context expression when the walkthrough registers and when a key it names changes, so keys
// this extension owns (set after activation, including `onWalkthrough` activation) tick a
// step for a repository that was already a trusted git repo with promoted patches.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Engine } from '../session/engine';
import { ContextKeys } from './ids';
import { Disposable } from '../shared/lifecycle';
import type { Projects } from './projects';

/** What one folder has done so far, from its files and (when open) its store. */
export interface WalkthroughFacts {
  readonly gitRepository: boolean;
  readonly configured: boolean;
  readonly started: boolean;
  readonly reviewed: boolean;
  readonly promoted: boolean;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** True when `dir` or a parent holds a `.git` (a directory, or the file of a worktree). */
function inGitRepository(dir: string): boolean {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, '.git'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

/** True when `binary` (a name looked up on PATH, or a path) is an executable file. */
function onPath(binary: string, cwd: string): boolean {
  const executable = (f: string): boolean => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return fs.statSync(f).isFile();
    } catch {
      return false;
    }
  };
  if (binary.includes('/')) return executable(path.resolve(cwd, binary));
  return (process.env['PATH'] ?? '').split(path.delimiter).some((d) => d !== '' && executable(path.join(d, binary)));
}

/** A folder's facts; cheap: a few small files, and queries only on a store already open. */
export async function walkthroughFacts(e: Engine): Promise<WalkthroughFacts> {
  const ralphDir = e.ralphDir;
  const state = readJson(path.join(ralphDir, 'STATE.json'));
  const num = (k: string): number => (typeof state?.[k] === 'number' ? (state[k] as number) : 0);
  let configured = false;
  if (fs.existsSync(path.join(e.projectDir, 'ralph.config.json'))) {
    const { loadConfig } = await import('../project/config.js');
    const c = loadConfig(e.projectDir);
    // Valid, and the agent CLI each role names is installed (the in-process and scripted ones always are).
    configured =
      c.ok &&
      (['primary', 'worker', 'judge'] as const).every((role) => {
        const kind = c.value.backends[role];
        if (kind === 'claude') return onPath(c.value.backends.claude.binary, e.projectDir);
        if (kind === 'codex') return onPath(c.value.backends.codex.binary, e.projectDir);
        return true;
      });
  }
  let metrics = false;
  try {
    metrics = fs.readdirSync(path.join(ralphDir, 'logs')).some((f) => /^par-metrics-\d{8}\.jsonl$/.test(f));
  } catch {
    // no logs yet
  }
  const view = e.view;
  const has = (sql: string): boolean => (view?.get<{ n: number }>(sql)?.n ?? 0) > 0;
  const promoted = num('commits_total') > 0 || has("SELECT COUNT(*) AS n FROM task_view WHERE status = 'done'");
  return {
    gitRepository: inGitRepository(e.projectDir),
    configured,
    // A promoted patch means a loop ran, whatever else was cleaned up since.
    started: e.loopState() !== 'stopped' || num('iteration') > 0 || metrics || promoted,
    reviewed: has("SELECT COUNT(*) AS n FROM events WHERE event_type = 'task.deferral_resolved'"),
    promoted,
  };
}

export class Walkthrough extends Disposable {
  private timer: NodeJS.Timeout | undefined;
  private last = '';

  constructor(private readonly projects: Projects) {
    super();
    this._register(projects.onDidChangeState(() => this.schedule()));
    this._register(projects.onDidChangeData(() => this.schedule()));
    this._register(projects.onDidChangeProjects(() => this.schedule()));
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.schedule()));
    this._register(
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (path.basename(d.uri.fsPath) === 'ralph.config.json') this.schedule();
      }),
    );
    this._register({ dispose: () => this.timer && clearTimeout(this.timer) });
    // Off the activation path: the first reading runs right after activate() returns.
    this.schedule(0);
  }

  private schedule(delayMs = 300): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.update();
    }, delayMs);
    this.timer.unref?.();
  }

  private async update(): Promise<void> {
    if (this.isDisposed) return;
    const facts = await Promise.all(this.projects.list().map((e) => walkthroughFacts(e).catch(() => undefined)));
    const any = (k: keyof WalkthroughFacts): boolean => facts.some((f) => f?.[k] === true);
    const keys: Record<string, boolean> = {
      [ContextKeys.gitRepository]: any('gitRepository'),
      [ContextKeys.trusted]: vscode.workspace.isTrusted,
      [ContextKeys.configured]: any('configured'),
      [ContextKeys.started]: any('started'),
      [ContextKeys.reviewed]: any('reviewed'),
      [ContextKeys.hasPromoted]: any('promoted'),
    };
    const key = JSON.stringify(keys);
    if (key === this.last) return;
    this.last = key;
    for (const [k, v] of Object.entries(keys)) await vscode.commands.executeCommand('setContext', k, v);
  }
}
