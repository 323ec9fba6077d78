// Over 400 lines because it is the table of every palette and tree command, each entry a small factory over one context.
// Every palette and tree command as a small factory over the extension's context. Human
// decisions go through the engine (the inbox), so they are events with actor `human`
// whether this window runs the loop, another process does, or nobody does. With several
// folders, a command invoked on a tree item acts on that item's folder, one invoked with a
// task id and a folder (monitor, notifications) on that folder, and one from the palette asks
// which folder.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CONTROL_PROJECTIONS } from '../control';
import { proposalSchemas } from '../domain/proposals';
import { EFFORTS } from '../domain/model';
import type { AgentBackend } from '../agents/types';
import type { PreflightReport } from '../preflight/preflight';
import { CONFIG_FILE, loadConfig } from '../project/config';
import { writeFileAtomicSync } from '../shared/fs';
import { openStore } from '../store';
import type { Engine, SubmitOutcome } from '../session/engine';
import { openEventLog } from './eventLog';
import type { CommandId } from './ids';
import { Commands, HUMAN_ACTOR, Settings } from './ids';
import type { PatchContentProvider } from './patchContent';
import { openPatchDiff } from './patchContent';
import type { Projects } from './projects';
import type { BacklogNode, BacklogTreeProvider } from './trees/backlogTree';
import { TaskItem, WaveItem } from './trees/backlogTree';
import { DeferredItem } from './trees/deferredTree';
import { AgentItem } from './trees/agentsTree';
import { FolderItem, HintItem } from './trees/folderItem';
import { verdictWord } from './notificationRules';
import { decideReqCommand, runReqLoop } from './reqCommands';
import { keepingStatusImage } from '../control/statusImage';

export interface CommandContext {
  readonly extension: vscode.ExtensionContext;
  readonly projects: Projects;
  readonly output: vscode.LogOutputChannel;
  readonly patches: PatchContentProvider;
  readonly backlog: BacklogTreeProvider;
  readonly backlogView: vscode.TreeView<BacklogNode>;
  readonly activationMs: () => number;
}

type Handler = (...args: unknown[]) => unknown;
type Factory = (c: CommandContext) => Handler;

/** A task id from whatever invoked the command: a tree item, a string (monitor, notification). */
function taskIdOf(arg: unknown): string | undefined {
  if (arg instanceof TaskItem || arg instanceof DeferredItem) return arg.task.task_id;
  if (arg instanceof AgentItem) return arg.row.taskId ?? undefined;
  if (typeof arg === 'string' && arg.length > 0) return arg;
  return undefined;
}

/** The folder a tree item belongs to. */
function engineOfItem(arg: unknown): Engine | undefined {
  if (
    arg instanceof TaskItem ||
    arg instanceof WaveItem ||
    arg instanceof DeferredItem ||
    arg instanceof FolderItem ||
    arg instanceof HintItem ||
    arg instanceof AgentItem
  )
    return arg.engine;
  return undefined;
}

interface ProjectQuery {
  /** For the quick pick's title: "Start the loop in which folder?" */
  readonly verb: string;
  /** Only initialized projects qualify (default true). */
  readonly initialized?: boolean;
  /** Among those, only the ones this predicate accepts (e.g. a loop that runs). */
  readonly filter?: (e: Engine) => boolean;
}

/**
 * The project a command acts on: the invoking tree item's, the folder passed after a task id
 * (`[taskId, projectDir]` from the monitor, the Agents view and notifications), the folder of
 * a task id when only one folder has it, the only folder, or the user's pick among several.
 */
async function projectFor(c: CommandContext, args: readonly unknown[], q: ProjectQuery): Promise<Engine | undefined> {
  const fromItem = engineOfItem(args[0]);
  if (fromItem) return fromItem;
  for (const a of args) if (typeof a === 'string' && c.projects.get(a)) return c.projects.get(a);
  const all = c.projects.list();
  if (all.length === 1) return all[0];
  let candidates = all.filter((e) => (q.initialized === false ? true : e.isInitialized()));
  if (q.filter) candidates = candidates.filter(q.filter);
  const taskId = taskIdOf(args[0]);
  if (taskId !== undefined) {
    await Promise.all(candidates.map((e) => e.open()));
    const having = candidates.filter((e) => e.task(taskId) !== undefined);
    if (having.length === 1) return having[0];
    if (having.length > 1) candidates = having;
  }
  // Several folders and nothing says which: ask, even when one qualifies (the user sees which).
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(
      q.initialized === false
        ? 'Ralph: no folder to act on.'
        : 'Ralph: no folder of this window has a Ralph project yet (Ralph: Initialize Project).',
    );
    return undefined;
  }
  const focus = c.projects.focus(vscode.window.activeTextEditor?.document.uri.fsPath);
  const items = candidates
    .map((e) => ({
      label: e.name,
      description: e.projectDir,
      detail: e.isInitialized() ? `Ralph loop ${e.loopState()}${e.role() === 'observer' ? ' (observing)' : ''}` : 'no Ralph project yet',
      engine: e,
    }))
    .sort((a, b) => Number(b.engine === focus) - Number(a.engine === focus));
  return (await vscode.window.showQuickPick(items, { title: `Ralph: ${q.verb} in which folder?`, matchOnDescription: true }))?.engine;
}

/** Output lines name the folder when there are several. */
function tag(c: CommandContext, e: Engine): string {
  return c.projects.multi ? `[${e.name}] ` : '';
}

async function pickDeferred(e: Engine, arg: unknown, verb: string): Promise<string | undefined> {
  const id = taskIdOf(arg);
  if (id) return id;
  await e.open();
  const items = e
    .deferred()
    .map((t) => ({ label: t.task_id, description: t.title ?? '', detail: `tier ${t.risk_tier} · ${t.deferred_reason ?? ''}` }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`Ralph: no deferred patches wait for a decision in ${e.name}.`);
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title: `${verb} which deferred patch?` }))?.label;
}

async function pickTask(e: Engine, arg: unknown, verb: string): Promise<string | undefined> {
  const id = taskIdOf(arg);
  if (id) return id;
  await e.open();
  const items = e.tasks().map((t) => ({ label: t.task_id, description: t.title ?? '', detail: `${t.status} · wave ${t.wave}` }));
  return (await vscode.window.showQuickPick(items, { title: `${verb} which task?` }))?.label;
}

function reportOutcome(c: CommandContext, e: Engine, what: string, o: SubmitOutcome): void {
  const where =
    o.via === 'applied'
      ? 'done'
      : o.writer === 'this-window'
        ? 'sent to the running loop'
        : `sent to the loop of pid ${o.writer.pid} (inbox)`;
  c.output.info(`${tag(c, e)}${what}: ${where} (${path.basename(o.file)})`);
  void vscode.window.setStatusBarMessage(`Ralph: ${what} — ${where}`, 5000);
}

const approve: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'approve a patch' });
    if (!e) return;
    const taskId = await pickDeferred(e, arg, 'Approve');
    if (!taskId) return;
    const o = await e.resolveDeferred(taskId, 'approve', 'approved in VS Code');
    reportOutcome(c, e, `${taskId} ${verdictWord('approve')}`, o);
    c.backlog.refresh();
  };

/**
 * Reject is deliberate, like Drop: a box to confirm (Enter) or cancel (Escape), with an
 * optional note the next attempt's prompt carries (the rationale of the human's verdict).
 */
const reject: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'reject a patch' });
    if (!e) return;
    const taskId = await pickDeferred(e, arg, 'Reject');
    if (!taskId) return;
    const note = await vscode.window.showInputBox({
      title: `Reject ${taskId}?`,
      prompt:
        'The patch is discarded and the task goes back to the agents. Optional: what should the next attempt do differently? Enter rejects, Escape cancels.',
      placeHolder: 'Optional note for the next attempt',
      ignoreFocusOut: true,
      validateInput: (v) => (/[\r\n]/.test(v) ? 'one line of text' : undefined),
    });
    if (note === undefined) return;
    const rationale = note.trim() ? `rejected in VS Code: ${note.trim()}` : 'rejected in VS Code';
    const o = await e.resolveDeferred(taskId, 'reject', rationale);
    reportOutcome(c, e, `${taskId} ${verdictWord('reject')}`, o);
    c.backlog.refresh();
  };

const modify: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'modify a patch' });
    if (!e) return;
    const taskId = await pickDeferred(e, arg, 'Modify');
    if (!taskId) return;
    const instruction = await vscode.window.showInputBox({
      title: `Modify ${taskId}`,
      prompt: 'What should change? The patch is discarded and the task goes back to the agents with this instruction.',
      validateInput: (v) => (v.trim().length === 0 ? 'Say what to change' : undefined),
    });
    if (!instruction) return;
    const o = await e.resolveDeferred(taskId, 'modify', instruction.trim());
    reportOutcome(c, e, `${taskId} sent back for changes`, o);
  };

const override: Factory = (c) => async (taskIdArg, judgeDecision, projectDir) => {
  const taskId = taskIdOf(taskIdArg);
  if (!taskId) return;
  const e = await projectFor(c, [taskIdArg, projectDir], { verb: 'override the judge' });
  if (!e) return;
  const options = (['approve', 'reject', 'modify'] as const).filter((d) => d !== judgeDecision);
  const pick = await vscode.window.showQuickPick(
    options.map((d) => ({ label: d === 'approve' ? 'Approve' : d === 'reject' ? 'Reject…' : 'Modify…', decision: d })),
    {
      title: `Override the judge on ${taskId}`,
      placeHolder: `The judge ${verdictWord(String(judgeDecision))} it. A human decision is recorded with actor "human".`,
    },
  );
  if (!pick) return;
  if (pick.decision === 'modify') return vscode.commands.executeCommand(Commands.modifyDeferred, taskId, e.projectDir);
  if (pick.decision === 'reject') return vscode.commands.executeCommand(Commands.rejectDeferred, taskId, e.projectDir);
  const o = await e.resolveDeferred(taskId, pick.decision, `override of the judge (${String(judgeDecision)}) in VS Code`);
  reportOutcome(c, e, `${taskId} ${verdictWord(pick.decision)} (override)`, o);
  return undefined;
};

const openDiff: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'open a patch' });
    if (!e) return;
    let ref: string | undefined;
    if (arg instanceof DeferredItem) ref = arg.patchId ?? arg.task.task_id;
    else if (arg instanceof TaskItem) ref = arg.task.patch_id ?? arg.task.task_id;
    else if (typeof arg === 'string' && !c.projects.get(arg)) ref = arg;
    ref ??= await pickTask(e, undefined, 'Open the patch of');
    if (!ref) return;
    await openPatchDiff(e, c.patches, ref);
  };

const addTask: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'add a task' });
    if (!e) return;
    await e.open();
    const tasks = e.tasks();
    const defaultWave =
      arg instanceof WaveItem ? arg.wave : arg instanceof TaskItem ? arg.task.wave : Math.max(1, ...tasks.map((t) => t.wave));
    const idShape = proposalSchemas().proposedTask.shape.id;
    const nextId = `W${defaultWave}-${String(tasks.filter((t) => t.wave === defaultWave).length + 1).padStart(3, '0')}`;
    const id = await vscode.window.showInputBox({
      title: 'Add Task (1/4): id',
      value: nextId,
      validateInput: (v) => {
        const r = idShape.safeParse(v.trim());
        if (!r.success) return r.error.issues[0]?.message ?? 'invalid id';
        return tasks.some((t) => t.task_id === v.trim()) ? `${v.trim()} already exists` : undefined;
      },
    });
    if (!id) return;
    const title = await vscode.window.showInputBox({
      title: 'Add Task (2/4): title',
      validateInput: (v) => (v.trim() && !/[\r\n]/.test(v) ? undefined : 'one line of text'),
    });
    if (!title) return;
    const effort = await vscode.window.showQuickPick([...EFFORTS], { title: 'Add Task (3/4): effort' });
    if (!effort) return;
    const waveText = await vscode.window.showInputBox({
      title: 'Add Task (4/4): wave',
      value: String(defaultWave),
      validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : 'a whole number'),
    });
    if (waveText === undefined) return;
    const task = {
      id: id.trim(),
      title: title.trim(),
      source: 'vscode',
      effort: effort as (typeof EFFORTS)[number],
      wave: Number(waveText),
      deps: '-',
    };
    const o = await e.submit({ command: 'add-task', task, actor: HUMAN_ACTOR });
    reportOutcome(c, e, `task ${task.id} added`, o);
  };

const dropTask: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'drop a task' });
    if (!e) return;
    const taskId = await pickTask(e, arg, 'Drop');
    if (!taskId) return;
    const ok = await vscode.window.showWarningMessage(`Drop ${taskId}? Agents will not work on it any more.`, { modal: true }, 'Drop');
    if (ok !== 'Drop') return;
    const o = await e.submit({ command: 'transition-task', task_id: taskId, status: 'dropped', actor: HUMAN_ACTOR });
    reportOutcome(c, e, `${taskId} dropped`, o);
  };

const reprioritize: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'reprioritize a task' });
    if (!e) return;
    const taskId = await pickTask(e, arg, 'Reprioritize');
    if (!taskId) return;
    const current = e.task(taskId);
    const waveText = await vscode.window.showInputBox({
      title: `Move ${taskId} to wave…`,
      value: String(current?.wave ?? 1),
      validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : 'a whole number'),
    });
    if (waveText === undefined) return;
    const o = await e.submit({ command: 'reprioritize-task', task_id: taskId, new_wave: Number(waveText.trim()), actor: HUMAN_ACTOR });
    reportOutcome(c, e, `${taskId} moved to wave ${waveText.trim()}`, o);
  };

const openSource: Factory =
  (c) =>
  async (arg, ...rest) => {
    const e = await projectFor(c, [arg, ...rest], { verb: 'open a task source' });
    if (!e) return;
    const taskId = await pickTask(e, arg, 'Open the source of');
    if (!taskId) return;
    const t = e.task(taskId);
    const source = t?.source ?? '';
    const m = /^(.+?)(?::(\d+))?$/.exec(source.split(/[\s,]+/)[0] ?? '');
    const file = m?.[1] ? path.join(e.projectDir, m[1]) : '';
    if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      void vscode.window.showInformationMessage(`${taskId}: its source "${source || '-'}" is not a file in ${e.name}.`);
      return;
    }
    const line = Math.max(0, Number(m?.[2] ?? 1) - 1);
    await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(line, 0, line, 0), preview: true });
  };

const revealTask: Factory =
  (c) =>
  async (arg, ...rest) => {
    const taskId = taskIdOf(arg);
    if (!taskId) return;
    const e = await projectFor(c, [arg, ...rest], { verb: 'reveal a task' });
    if (!e) return;
    const item = await c.backlog.find(e, taskId);
    if (!item) return;
    await c.backlogView.reveal(item, { select: true, focus: false, expand: true });
  };

/** Backends the config assigns to `vscode-lm`, built here (only this host can). */
async function lmBackends(projectDir: string): Promise<Partial<Record<'primary' | 'worker' | 'judge', AgentBackend>>> {
  const r = loadConfig(projectDir);
  if (!r.ok) return {};
  const roles = (['primary', 'worker', 'judge'] as const).filter((role) => r.value.backends[role] === 'vscode-lm');
  if (roles.length === 0) return {};
  const { createLmBackend } = await import('./lmBackend.js');
  const out: Partial<Record<'primary' | 'worker' | 'judge', AgentBackend>> = {};
  for (const role of roles) out[role] = createLmBackend(r.value.backends['vscode-lm']);
  return out;
}

const startLoop: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'start the loop', initialized: false, filter: (x) => x.loopState() === 'stopped' });
    if (!e) return;
    const projectDir = e.projectDir;
    if (!fs.existsSync(path.join(projectDir, CONFIG_FILE))) {
      const init = await vscode.window.showWarningMessage(`${e.name} has no ralph.config.json yet.`, 'Initialize Project');
      if (init) await vscode.commands.executeCommand(Commands.initialize, projectDir);
      return;
    }
    // A preflight that refuses (no agent CLI, no confinement…) shows a notification whose
    // buttons fix it, not a bare error; it runs before the loop engine loads, and once more
    // inside the start (the config may change in between) with the same probes.
    const notice = { output: c.output, folderName: c.projects.multi ? e.name : undefined, projectDir };
    const { preflightBeforeStart, showPreflightFailure } = await import('./preflightNotice.js');
    const preflight = preflightBeforeStart(notice);
    if (preflight === null) return;
    let host: Awaited<ReturnType<Engine['startLoop']>>;
    try {
      host = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Ralph: starting the loop${c.projects.multi ? ` in ${e.name}` : ''}…` },
        async () => e.startLoop({ backends: await lmBackends(projectDir), preflight }),
      );
    } catch (err) {
      if (!(err instanceof Error && err.name === 'PreflightFailedError' && 'report' in err)) throw err;
      // Not awaited: the command is done, the notification stays.
      void showPreflightFailure(notice, (err as Error & { report: PreflightReport }).report);
      return;
    }
    // The one Ralph status bar item shows the run (phase, task, spinner); no second progress item.
    c.output.info(
      `${tag(c, e)}loop started (${host.settings.workers} worker(s), target branch ${host.settings.targetBranch ?? 'current'})`,
    );
  };

const stopLoop: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'stop the loop', filter: (x) => x.loopState() !== 'stopped' });
    if (!e) return;
    const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Ralph: stopping the loop…' }, () =>
      e.stopLoop(),
    );
    // The summary is printed once, from the loop's stored loop.stopped event.
    if (r === 'requested') void vscode.window.showInformationMessage('Ralph: asked the running loop to stop (it is in another process).');
  };

const pauseLoop: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'pause the loop', filter: (x) => x.loopState() === 'running' });
    if (e) await e.pauseLoop();
  };
const resumeLoop: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'resume the loop', filter: (x) => x.loopState() === 'paused' });
    if (e) await e.resumeLoop();
  };

const initialize: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'initialize Ralph', initialized: false, filter: (x) => !x.isInitialized() });
    if (!e) return;
    const dir = e.projectDir;
    const { initProject, isGitRepository } = await import('../project/init.js');
    // Ralph works in a git repository; a folder without one is the user's to turn into one.
    let gitInit = false;
    if (!(await isGitRepository(dir))) {
      const choice = await vscode.window.showWarningMessage(
        `${e.name} is not a git repository.`,
        {
          modal: true,
          detail:
            "Ralph's agents work in git worktrees and promote patches as commits, so the project needs a repository. Ralph can run `git init` here and commit only the files it creates (ralph.config.json and .ralph/); your own files stay uncommitted and untouched.",
        },
        "Initialize Git and Commit Ralph's Files",
      );
      if (choice !== "Initialize Git and Commit Ralph's Files") return;
      gitInit = true;
    }
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Ralph: initializing the project…' },
      () =>
        initProject({
          dir,
          gitInit,
          createDatabase: async (ralphDir) => {
            const store = await openStore({
              ralphDir,
              mode: 'writer',
              projections: CONTROL_PROJECTIONS,
              runId: `vscode_init_${process.pid}`,
              ...keepingStatusImage(ralphDir),
            });
            await store.close();
          },
        }),
    );
    const backend = vscode.workspace.getConfiguration().get<string>(Settings.defaultBackend, 'claude');
    if (backend !== 'claude' && report.created.includes(CONFIG_FILE)) {
      // A fresh config follows the user's preferred backend; an existing one is never rewritten.
      const file = path.join(dir, CONFIG_FILE);
      const json = JSON.parse(fs.readFileSync(file, 'utf8')) as { backends?: Record<string, unknown> };
      json.backends = { ...(json.backends ?? {}), primary: backend, worker: backend, judge: backend };
      writeFileAtomicSync(file, `${JSON.stringify(json, null, 2)}\n`);
    }
    c.output.info(
      `${tag(c, e)}initialized ${dir}: language ${report.lang} (${report.langSource}), created ${report.created.length}, kept ${report.kept.length}, database ${report.database}${report.git.commit ? `, git repository with Ralph's files in ${report.git.commit.slice(0, 8)}` : ''}`,
    );
    for (const n of report.notes) c.output.info(`${tag(c, e)}note: ${n}`);
    for (const w of report.warnings) c.output.warn(`${tag(c, e)}warning: ${w}`);
    e.scheduleRefresh();
    await e.open();
    const files = report.created.filter((p) => !p.endsWith('/')).length;
    // Not awaited: the command is done; the buttons are a shortcut.
    void vscode.window
      .showInformationMessage(
        `Ralph initialized ${c.projects.multi ? `${e.name} ` : ''}(${report.lang}): ${files} file(s) created${report.git.initialized ? "; a new git repository holds Ralph's files" : ''}.`,
        'Open Config',
        'Start Loop',
      )
      .then((open) => {
        if (open === 'Open Config') return vscode.window.showTextDocument(vscode.Uri.file(path.join(dir, CONFIG_FILE)));
        if (open === 'Start Loop') return vscode.commands.executeCommand(Commands.startLoop, dir);
        return undefined;
      });
  };

const repair: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'repair', initialized: false });
    if (!e) return;
    const dir = e.projectDir;
    const { applyLocalFixes, checkProject, formatFindings } = await import('../project/repair/index.js');
    // The same checks as `ralph repair` (the store read as an observer): only the store knows
    // which patch files are promoted, queued or discarded.
    const { findings } = await checkProject({ projectDir: dir });
    c.output.info(`${tag(c, e)}repair checks:\n${formatFindings(findings)}`);
    c.output.show(true);
    const fixable = findings.filter((f) => f.status !== 'ok' && (f.fix?.kind === 'init' || f.fix?.kind === 'git-prune'));
    const problems = findings.filter((f) => f.status !== 'ok').length;
    if (fixable.length === 0) {
      void vscode.window.showInformationMessage(
        problems === 0
          ? 'Ralph: every check passed.'
          : `Ralph: ${problems} problem(s) found; none can be fixed automatically (see the Ralph output).`,
      );
      return;
    }
    const go = await vscode.window.showWarningMessage(
      `Ralph: ${problems} problem(s); ${fixable.length} can be fixed here.`,
      'Fix',
      'Show Output',
    );
    if (go === 'Show Output') c.output.show();
    if (go !== 'Fix') return;
    const done = await applyLocalFixes(dir, fixable);
    c.output.info(`${tag(c, e)}repair applied:\n${done.join('\n')}`);
    void vscode.window.showInformationMessage(`Ralph: ${done.length} fix(es) applied.`);
  };

const showStatus: Factory = (c) => async () => {
  c.output.show(true);
  c.output.info('Ralph Loop is active.');
  for (const e of c.projects.list()) {
    await e.open();
    c.output.info(
      `folder ${e.projectDir}: initialized=${e.isInitialized()} role=${e.role()} loop=${e.loopState()} tasks=${e.tasks().length} deferred=${e.deferred().length}`,
    );
  }
  c.output.info(`activation took ${c.activationMs().toFixed(1)} ms`);
};

const openConfig: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'open ralph.config.json', initialized: false });
    if (!e) return;
    const file = path.join(e.projectDir, CONFIG_FILE);
    if (!fs.existsSync(file)) {
      const init = await vscode.window.showWarningMessage(`${e.name} has no ${CONFIG_FILE} yet.`, 'Initialize Project');
      if (init) await vscode.commands.executeCommand(Commands.initialize, e.projectDir);
      return;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
  };

const eventLog: Factory =
  (c) =>
  async (...args) => {
    const e = await projectFor(c, args, { verb: 'open the event log' });
    if (e) await openEventLog(e);
  };

const refresh: Factory = (c) => () => {
  for (const e of c.projects.list()) e.scheduleRefresh();
  c.backlog.refresh();
};

export const COMMAND_FACTORIES: Readonly<Record<CommandId, Factory | null>> = {
  [Commands.initialize]: initialize,
  [Commands.startLoop]: startLoop,
  [Commands.stopLoop]: stopLoop,
  [Commands.pauseLoop]: pauseLoop,
  [Commands.resumeLoop]: resumeLoop,
  [Commands.showMonitor]: null, // registered by the monitor panel
  [Commands.showStatus]: showStatus,
  [Commands.repair]: repair,
  [Commands.approveDeferred]: approve,
  [Commands.rejectDeferred]: reject,
  [Commands.modifyDeferred]: modify,
  [Commands.openPatchDiff]: openDiff,
  [Commands.addTask]: addTask,
  [Commands.dropTask]: dropTask,
  [Commands.reprioritizeTask]: reprioritize,
  [Commands.openTaskSource]: openSource,
  [Commands.revealTask]: revealTask,
  [Commands.openEventLog]: eventLog,
  [Commands.refresh]: refresh,
  [Commands.overrideVerdict]: override,
  [Commands.openConfig]: openConfig,
  [Commands.openTranscript]: null, // registered with the transcript documents
  [Commands.runReqLoop]: runReqLoop,
  [Commands.decideReq]: decideReqCommand,
  [Commands.openCommit]: null, // registered with the commit documents
  [Commands.openFileAtCommit]: null, // registered with the commit documents
};

/** Commands that execute project code (agents, builds, tests): never in Restricted Mode. */
const NEEDS_TRUST: ReadonlySet<string> = new Set([
  Commands.initialize,
  Commands.startLoop,
  Commands.resumeLoop,
  Commands.repair,
  Commands.runReqLoop,
]);

export class UntrustedWorkspaceError extends Error {
  override readonly name = 'UntrustedWorkspaceError';
  constructor(readonly command: string) {
    super(
      'this folder is not trusted, so nothing that executes is available: Ralph runs agents, builds and tests only in a trusted folder (Manage Workspace Trust). Your decisions on tasks and patches are still recorded.',
    );
  }
}

/** Registers every command; a failure is shown to the user and logged (VS Code shows nothing by itself). */
export function registerCommands(c: CommandContext): vscode.Disposable[] {
  return Object.entries(COMMAND_FACTORIES).flatMap(([id, factory]) => {
    if (!factory) return [];
    const handler = factory(c);
    return [
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          if (NEEDS_TRUST.has(id) && !vscode.workspace.isTrusted) throw new UntrustedWorkspaceError(id);
          return await handler(...args);
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          c.output.error(`${id} failed: ${e instanceof Error ? (e.stack ?? msg) : msg}`);
          void vscode.window.showErrorMessage(`Ralph: ${msg}`);
          return undefined;
        }
      }),
    ];
  });
}
