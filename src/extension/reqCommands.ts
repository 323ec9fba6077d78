// REQ mode's commands in VS Code (seed 001): "Ralph: Run REQ Loop" runs `ralph req run` (or
// `resume` after a run that did not finish) in an integrated terminal, the CLI that ships in
// the extension on the extension host's own runtime, so its output is the user's to read and
// it holds the event log's writer like any CLI run (this window observes it). "Decide…" on
// a blocked REQ (the Requirements view, the block notification) applies skip / manual /
// stop / rollback, or queues it for the running REQ loop. No agent runs in the extension host.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { REQ_DECISION_HELP } from '../domain/reqDecide';
import { REQ_DECISIONS } from '../domain/reqEvents';
import type { ReqDecision } from '../domain/reqEvents';
import { CONFIG_FILE } from '../project/config';
import { applyReqDecision } from '../req/host';
import { reqTreeData } from '../req/view';
import type { Engine } from '../session/engine';
import { reqBlockToasts } from './notificationRules';
import { Commands, HUMAN_ACTOR } from './ids';
import type { Projects } from './projects';
import { FolderItem, HintItem } from './trees/folderItem';
import { AcItem, ReqItem, ReqLevelItem } from './trees/reqTree';

export interface ReqCommandContext {
  readonly extension: vscode.ExtensionContext;
  readonly projects: Projects;
  readonly output: vscode.LogOutputChannel;
}

/** The folder: the invoking item's, a folder path among the arguments, the only one, or the user's pick. */
async function reqProject(c: ReqCommandContext, args: readonly unknown[], verb: string): Promise<Engine | undefined> {
  const a = args[0];
  if (a instanceof ReqItem || a instanceof ReqLevelItem || a instanceof FolderItem || a instanceof HintItem) return a.engine;
  if (a instanceof AcItem) return undefined;
  for (const x of args) if (typeof x === 'string' && c.projects.get(x)) return c.projects.get(x);
  const all = c.projects.list();
  if (all.length <= 1) return all[0];
  return (
    await vscode.window.showQuickPick(
      all.map((e) => ({ label: e.name, description: e.projectDir, engine: e })),
      { title: `Ralph: ${verb} in which folder?` },
    )
  )?.engine;
}

/** Runs the REQ loop of a folder in a terminal; returns the terminal (tests wait on it). */
export function runReqLoop(c: ReqCommandContext): (...args: unknown[]) => Promise<vscode.Terminal | undefined> {
  return async (...args) => {
    const e = await reqProject(c, args, 'run the REQ loop');
    if (!e) return undefined;
    if (!fs.existsSync(path.join(e.projectDir, CONFIG_FILE))) {
      const init = await vscode.window.showWarningMessage(`${e.name} has no ralph.config.json yet.`, 'Initialize Project');
      if (init) await vscode.commands.executeCommand(Commands.initialize, e.projectDir);
      return undefined;
    }
    await e.open();
    const data = reqTreeData(e.projectDir, e.view);
    if (data === null) {
      void vscode.window.showWarningMessage(
        `Ralph: ${e.name} has no specification.yaml (REQ mode builds its requirements one by one; see the README's "Building a specification requirement by requirement").`,
      );
      return undefined;
    }
    if ('problem' in data) {
      void vscode.window.showErrorMessage(`Ralph: ${data.problem}`);
      return undefined;
    }
    if (e.loopState() !== 'stopped') {
      void vscode.window.showWarningMessage(
        `Ralph: the loop of ${e.name} is ${e.loopState()}: stop it first (the REQ loop and the main loop write the same event log).`,
      );
      return undefined;
    }
    // A run that never finished (killed, or this window closed) resumes: done REQs are skipped.
    const verb = data.report.status === 'running' ? 'resume' : 'run';
    const cli = path.join(c.extension.extensionPath, 'dist', 'cli.js');
    const terminal = vscode.window.createTerminal({
      name: `Ralph REQ${c.projects.multi ? ` — ${e.name}` : ''}`,
      cwd: e.projectDir,
      shellPath: process.execPath,
      shellArgs: [cli, '--dir', e.projectDir, 'req', verb],
      env: { ELECTRON_RUN_AS_NODE: '1' },
      iconPath: new vscode.ThemeIcon('checklist'),
    });
    terminal.show(true);
    c.output.info(`${c.projects.multi ? `[${e.name}] ` : ''}ralph req ${verb} started in a terminal`);
    return terminal;
  };
}

/** Decides on a blocked REQ: `(ReqItem | reqId, projectDir?, decision?)`. */
export function decideReqCommand(c: ReqCommandContext): (...args: unknown[]) => Promise<string | undefined> {
  return async (...args) => {
    const e = await reqProject(c, args.slice(args[0] instanceof ReqItem ? 0 : 1), 'decide on a blocked REQ');
    if (!e) return undefined;
    await e.open();
    const data = reqTreeData(e.projectDir, e.view);
    if (data === null || 'problem' in data) return undefined;
    let reqId = args[0] instanceof ReqItem ? args[0].req.id : typeof args[0] === 'string' ? args[0] : undefined;
    if (reqId === undefined) {
      const blocked = [...data.blocked.entries()];
      if (blocked.length === 0) {
        void vscode.window.showInformationMessage('Ralph: no REQ is blocked.');
        return undefined;
      }
      reqId = (
        await vscode.window.showQuickPick(
          blocked.map(([id, b]) => ({ label: id, detail: b.reason })),
          { title: 'Ralph: decide on which blocked REQ?' },
        )
      )?.label;
      if (reqId === undefined) return undefined;
    }
    const options = data.blocked.get(reqId)?.options ?? ['skip', 'manual', 'stop', 'rollback'];
    const given = args.find((x): x is ReqDecision => typeof x === 'string' && (REQ_DECISIONS as readonly string[]).includes(x));
    const decision =
      given ??
      (
        await vscode.window.showQuickPick(
          options.map((o) => ({ label: o, detail: REQ_DECISION_HELP[o as ReqDecision] })),
          { title: `Ralph: ${reqId} is blocked — decide` },
        )
      )?.label;
    if (decision === undefined) return undefined;
    const r = await applyReqDecision(e.projectDir, { req: reqId, decision: decision as ReqDecision, actor: HUMAN_ACTOR });
    if (r.kind === 'refused') {
      void vscode.window.showErrorMessage(`Ralph: ${r.message}`);
      return undefined;
    }
    void vscode.window.showInformationMessage(
      r.kind === 'queued'
        ? `Ralph: ${reqId} ${decision} — queued for the running REQ loop (applied between REQs).`
        : `Ralph: ${reqId} ${decision} — ${r.help}.`,
    );
    e.scheduleRefresh();
    return r.kind;
  };
}

/**
 * Block decisions as notifications (seed 001: the user decides asynchronously): a REQ that
 * becomes blocked while the window is open shows its reason and its options as buttons; the
 * run goes on with the REQs that do not depend on it meanwhile.
 */
export class ReqBlockNotifier implements vscode.Disposable {
  private readonly seen = new Map<string, Set<string>>();
  private readonly sub: vscode.Disposable;

  constructor(private readonly projects: Projects) {
    this.sub = projects.onDidChangeData(() => this.check());
  }

  private check(): void {
    for (const e of this.projects.list()) {
      let data: ReturnType<typeof reqTreeData>;
      try {
        data = reqTreeData(e.projectDir, e.view);
      } catch {
        continue;
      }
      if (data === null || 'problem' in data) continue;
      const before = this.seen.get(e.projectDir);
      this.seen.set(e.projectDir, new Set(data.blocked.keys()));
      for (const { reqId, toast } of reqBlockToasts(before, data.blocked)) {
        // Not modal: the run goes on with the REQs that do not depend on this one.
        void vscode.window.showWarningMessage(toast.text, ...toast.actions).then((choice) => {
          if (choice) void vscode.commands.executeCommand(Commands.decideReq, reqId, e.projectDir, choice);
        });
      }
    }
  }

  dispose(): void {
    this.sub.dispose();
  }
}
