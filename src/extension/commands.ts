// Every palette and tree command as a small factory over the extension's context. Human
// decisions go through the engine (the inbox), so they are events with actor `human`
// whether this window runs the loop, another process does, or nobody does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CONTROL_PROJECTIONS } from '../control';
import { proposalSchemas } from '../domain/proposals';
import { EFFORTS } from '../domain/model';
import type { AgentBackend } from '../agents/types';
import { CONFIG_FILE, loadConfig } from '../project/config';
import { openStore } from '../store';
import type { Engine, SubmitOutcome } from './engine';
import { openEventLog } from './eventLog';
import type { CommandId } from './ids';
import { Commands, HUMAN_ACTOR, Settings } from './ids';
import type { PatchContentProvider } from './patchContent';
import { openPatchDiff } from './patchContent';
import type { BacklogTreeProvider } from './trees/backlogTree';
import { TaskItem, WaveItem } from './trees/backlogTree';
import { DeferredItem } from './trees/deferredTree';
import { verdictWord } from './notificationRules';

export interface CommandContext {
  readonly extension: vscode.ExtensionContext;
  readonly engine: Engine;
  readonly output: vscode.LogOutputChannel;
  readonly patches: PatchContentProvider;
  readonly backlog: BacklogTreeProvider;
  readonly backlogView: vscode.TreeView<TaskItem | WaveItem>;
  readonly activationMs: () => number;
}

type Handler = (...args: unknown[]) => unknown;
type Factory = (c: CommandContext) => Handler;

/** A task id from whatever invoked the command: a tree item, a string (monitor, notification). */
function taskIdOf(arg: unknown): string | undefined {
  if (arg instanceof TaskItem || arg instanceof DeferredItem) return arg.task.task_id;
  if (typeof arg === 'string' && arg.length > 0) return arg;
  return undefined;
}

async function pickDeferred(c: CommandContext, arg: unknown, verb: string): Promise<string | undefined> {
  const id = taskIdOf(arg);
  if (id) return id;
  await c.engine.open();
  const items = c.engine
    .deferred()
    .map((t) => ({ label: t.task_id, description: t.title ?? '', detail: `tier ${t.risk_tier} · ${t.deferred_reason ?? ''}` }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('Ralph: no deferred patches wait for a decision.');
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { title: `${verb} which deferred patch?` }))?.label;
}

async function pickTask(c: CommandContext, arg: unknown, verb: string): Promise<string | undefined> {
  const id = taskIdOf(arg);
  if (id) return id;
  await c.engine.open();
  const items = c.engine.tasks().map((t) => ({ label: t.task_id, description: t.title ?? '', detail: `${t.status} · wave ${t.wave}` }));
  return (await vscode.window.showQuickPick(items, { title: `${verb} which task?` }))?.label;
}

function reportOutcome(c: CommandContext, what: string, o: SubmitOutcome): void {
  const where =
    o.via === 'applied'
      ? 'done'
      : o.writer === 'this-window'
        ? 'sent to the running loop'
        : `sent to the loop of pid ${o.writer.pid} (inbox)`;
  c.output.info(`${what}: ${where} (${path.basename(o.file)})`);
  void vscode.window.setStatusBarMessage(`Ralph: ${what} — ${where}`, 5000);
}

function requireFolder(c: CommandContext): string {
  return c.engine.projectDir;
}

const resolve =
  (decision: 'approve' | 'reject'): Factory =>
  (c) =>
  async (arg) => {
    const taskId = await pickDeferred(c, arg, decision === 'approve' ? 'Approve' : 'Reject');
    if (!taskId) return;
    const o = await c.engine.resolveDeferred(taskId, decision, `${decision === 'approve' ? 'approved' : 'rejected'} in VS Code`);
    reportOutcome(c, `${taskId} ${verdictWord(decision)}`, o);
    c.backlog.refresh();
  };

const modify: Factory = (c) => async (arg) => {
  const taskId = await pickDeferred(c, arg, 'Modify');
  if (!taskId) return;
  const instruction = await vscode.window.showInputBox({
    title: `Modify ${taskId}`,
    prompt: 'What should change? The patch is discarded and the task goes back to the agents with this instruction.',
    validateInput: (v) => (v.trim().length === 0 ? 'Say what to change' : undefined),
  });
  if (!instruction) return;
  const o = await c.engine.resolveDeferred(taskId, 'modify', instruction.trim());
  reportOutcome(c, `${taskId} sent back for changes`, o);
};

const override: Factory = (c) => async (taskIdArg, judgeDecision) => {
  const taskId = taskIdOf(taskIdArg);
  if (!taskId) return;
  const options = (['approve', 'reject', 'modify'] as const).filter((d) => d !== judgeDecision);
  const pick = await vscode.window.showQuickPick(
    options.map((d) => ({ label: d === 'approve' ? 'Approve' : d === 'reject' ? 'Reject' : 'Modify…', decision: d })),
    {
      title: `Override the judge on ${taskId}`,
      placeHolder: `The judge ${verdictWord(String(judgeDecision))} it. A human decision is recorded with actor "human".`,
    },
  );
  if (!pick) return;
  if (pick.decision === 'modify') return vscode.commands.executeCommand(Commands.modifyDeferred, taskId);
  const o = await c.engine.resolveDeferred(taskId, pick.decision, `override of the judge (${String(judgeDecision)}) in VS Code`);
  reportOutcome(c, `${taskId} ${verdictWord(pick.decision)} (override)`, o);
  return undefined;
};

const openDiff: Factory = (c) => async (arg) => {
  let ref: string | undefined;
  if (arg instanceof DeferredItem) ref = arg.patchId ?? arg.task.task_id;
  else if (arg instanceof TaskItem) ref = arg.task.patch_id ?? arg.task.task_id;
  else if (typeof arg === 'string') ref = arg;
  ref ??= await pickTask(c, undefined, 'Open the patch of');
  if (!ref) return;
  await openPatchDiff(c.engine, c.patches, ref);
};

const addTask: Factory = (c) => async (arg) => {
  await c.engine.open();
  const tasks = c.engine.tasks();
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
  const o = await c.engine.submit({ command: 'add-task', task, actor: HUMAN_ACTOR });
  reportOutcome(c, `task ${task.id} added`, o);
};

const dropTask: Factory = (c) => async (arg) => {
  const taskId = await pickTask(c, arg, 'Drop');
  if (!taskId) return;
  const ok = await vscode.window.showWarningMessage(`Drop ${taskId}? Agents will not work on it any more.`, { modal: true }, 'Drop');
  if (ok !== 'Drop') return;
  const o = await c.engine.submit({ command: 'transition-task', task_id: taskId, status: 'dropped', actor: HUMAN_ACTOR });
  reportOutcome(c, `${taskId} dropped`, o);
};

const reprioritize: Factory = (c) => async (arg) => {
  const taskId = await pickTask(c, arg, 'Reprioritize');
  if (!taskId) return;
  const current = c.engine.task(taskId);
  const waveText = await vscode.window.showInputBox({
    title: `Move ${taskId} to wave…`,
    value: String(current?.wave ?? 1),
    validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : 'a whole number'),
  });
  if (waveText === undefined) return;
  const o = await c.engine.submit({ command: 'reprioritize-task', task_id: taskId, new_wave: Number(waveText.trim()), actor: HUMAN_ACTOR });
  reportOutcome(c, `${taskId} moved to wave ${waveText.trim()}`, o);
};

const openSource: Factory = (c) => async (arg) => {
  const taskId = await pickTask(c, arg, 'Open the source of');
  if (!taskId) return;
  const t = c.engine.task(taskId);
  const source = t?.source ?? '';
  const m = /^(.+?)(?::(\d+))?$/.exec(source.split(/[\s,]+/)[0] ?? '');
  const file = m?.[1] ? path.join(c.engine.projectDir, m[1]) : '';
  if (!file || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    void vscode.window.showInformationMessage(`${taskId}: its source "${source || '-'}" is not a file in this folder.`);
    return;
  }
  const line = Math.max(0, Number(m?.[2] ?? 1) - 1);
  await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(line, 0, line, 0), preview: true });
};

const revealTask: Factory = (c) => async (arg) => {
  const taskId = taskIdOf(arg);
  if (!taskId) return;
  const item = await c.backlog.find(taskId);
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

const startLoop: Factory = (c) => async () => {
  const projectDir = requireFolder(c);
  if (!fs.existsSync(path.join(projectDir, CONFIG_FILE))) {
    const init = await vscode.window.showWarningMessage('This folder has no ralph.config.json yet.', 'Initialize Project');
    if (init) await vscode.commands.executeCommand(Commands.initialize);
    return;
  }
  const host = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Ralph: starting the loop…' },
    async () => c.engine.startLoop({ backends: await lmBackends(projectDir) }),
  );
  c.output.info(`loop started (${host.settings.workers} worker(s), target branch ${host.settings.targetBranch ?? 'current'})`);
  // The one Ralph status bar item shows the run (phase, task, spinner); no second progress item.
};

const stopLoop: Factory = (c) => async () => {
  const r = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Ralph: stopping the loop…' }, () =>
    c.engine.stopLoop(),
  );
  // The summary is printed once, from the loop's stored loop.stopped event.
  if (r === 'requested') void vscode.window.showInformationMessage('Ralph: asked the running loop to stop (it is in another process).');
};

const pauseLoop: Factory = (c) => () => c.engine.pauseLoop();
const resumeLoop: Factory = (c) => () => c.engine.resumeLoop();

const initialize: Factory = (c) => async () => {
  const dir = requireFolder(c);
  const { initProject } = await import('../project/init.js');
  const report = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Ralph: initializing the project…' },
    () =>
      initProject({
        dir,
        createDatabase: async (ralphDir) => {
          const store = await openStore({
            ralphDir,
            mode: 'writer',
            projections: CONTROL_PROJECTIONS,
            runId: `vscode_init_${process.pid}`,
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
    fs.writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  }
  c.output.info(
    `initialized ${dir}: language ${report.lang} (${report.langSource}), created ${report.created.length}, kept ${report.kept.length}, database ${report.database}`,
  );
  for (const n of report.notes) c.output.info(`note: ${n}`);
  for (const w of report.warnings) c.output.warn(`warning: ${w}`);
  c.engine.scheduleRefresh();
  await c.engine.open();
  // Not awaited: the command is done; the buttons are a shortcut.
  void vscode.window
    .showInformationMessage(`Ralph initialized (${report.lang}): ${report.created.length} file(s) created.`, 'Open Config', 'Start Loop')
    .then((open) => {
      if (open === 'Open Config') return vscode.window.showTextDocument(vscode.Uri.file(path.join(dir, CONFIG_FILE)));
      if (open === 'Start Loop') return vscode.commands.executeCommand(Commands.startLoop);
      return undefined;
    });
};

const repair: Factory = (c) => async () => {
  const dir = requireFolder(c);
  const { applyLocalFixes, checkProject, formatFindings } = await import('../project/repair/index.js');
  // The same checks as `ralph repair` (the store read as an observer): only the store knows
  // which patch files are promoted, queued or discarded.
  const { findings } = await checkProject({ projectDir: dir });
  c.output.info(`repair checks:\n${formatFindings(findings)}`);
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
  c.output.info(`repair applied:\n${done.join('\n')}`);
  void vscode.window.showInformationMessage(`Ralph: ${done.length} fix(es) applied.`);
};

const showStatus: Factory = (c) => async () => {
  c.output.show(true);
  c.output.info('Ralph Loop is active.');
  await c.engine.open();
  c.output.info(
    `folder ${c.engine.projectDir}: initialized=${c.engine.isInitialized()} role=${c.engine.role()} loop=${c.engine.loopState()} tasks=${c.engine.tasks().length} deferred=${c.engine.deferred().length}; activation took ${c.activationMs().toFixed(1)} ms`,
  );
};

const openConfig: Factory = (c) => async () => {
  const file = path.join(c.engine.projectDir, CONFIG_FILE);
  if (!fs.existsSync(file)) {
    const init = await vscode.window.showWarningMessage(`This folder has no ${CONFIG_FILE} yet.`, 'Initialize Project');
    if (init) await vscode.commands.executeCommand(Commands.initialize);
    return;
  }
  await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
};

const refresh: Factory = (c) => () => {
  c.engine.scheduleRefresh();
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
  [Commands.approveDeferred]: resolve('approve'),
  [Commands.rejectDeferred]: resolve('reject'),
  [Commands.modifyDeferred]: modify,
  [Commands.openPatchDiff]: openDiff,
  [Commands.addTask]: addTask,
  [Commands.dropTask]: dropTask,
  [Commands.reprioritizeTask]: reprioritize,
  [Commands.openTaskSource]: openSource,
  [Commands.revealTask]: revealTask,
  [Commands.openEventLog]: (c) => () => openEventLog(c.engine),
  [Commands.refresh]: refresh,
  [Commands.overrideVerdict]: override,
  [Commands.openConfig]: openConfig,
};

/** Commands that execute project code (agents, builds, tests): never in Restricted Mode. */
const NEEDS_TRUST: ReadonlySet<string> = new Set([Commands.initialize, Commands.startLoop, Commands.resumeLoop, Commands.repair]);

export class UntrustedWorkspaceError extends Error {
  override readonly name = 'UntrustedWorkspaceError';
  constructor(readonly command: string) {
    super('this folder is not trusted: Ralph runs agents, builds and tests only in a trusted folder (Manage Workspace Trust).');
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
