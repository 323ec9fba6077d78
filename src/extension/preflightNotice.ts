// What VS Code shows when Start Loop's preflight refuses to start agents (a missing or too
// old agent CLI, a backend that cannot run here, no confinement): one error notification
// that names the failing check and what to do, with the check's actions as buttons —
// Install… runs the install command in a terminal, Choose Backend writes the pick into
// ralph.config.json, Open ralph.config.json opens it, Install bubblewrap… and Run
// Unconfined… where confinement is what failed. Every check goes to the Ralph output too.
// Loaded only when a start fails, not at activation.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { findOnPath } from '../agents/sandbox/bwrap';
import { defaultPreflightDeps, formatPreflight, runPreflight } from '../preflight/preflight';
import type { PreflightAction, PreflightActionId, PreflightDeps, PreflightReport } from '../preflight/preflight';
import { CONFIG_FILE, loadConfig } from '../project/config';
import type { BackendKind } from '../project/config';
import { writeFileAtomic } from '../shared/fs';
import { Commands } from './ids';

export interface PreflightNoticeContext {
  readonly output: vscode.LogOutputChannel;
  /** The folder's name when the window has several (the message says which), else undefined. */
  readonly folderName: string | undefined;
  readonly projectDir: string;
}

/** At most this many buttons: a toast with more wraps them out of sight. */
const MAX_BUTTONS = 4;

/**
 * The buttons' words: a toast cuts a button's label at about 18 characters, so they are
 * short here (the message already names the CLI); the CLI prints the checks' own labels.
 */
const BUTTON_LABEL: Readonly<Record<PreflightActionId, string>> = {
  'install-cli': 'Install…',
  'install-bubblewrap': 'Install bubblewrap…',
  'choose-backend': 'Choose Backend…',
  'open-config': 'Open ralph.config.json',
  'allow-unconfined': 'Allow Unconfined…',
};

/** The error checks' actions, in the order the checks and their actions name them, each once. */
export function preflightButtons(report: PreflightReport): PreflightAction[] {
  const seen = new Set<PreflightActionId>();
  const out: PreflightAction[] = [];
  for (const c of report.checks) {
    if (c.ok || c.severity !== 'error') continue;
    for (const a of c.actions ?? []) {
      if (seen.has(a.id)) continue;
      seen.add(a.id);
      out.push({ ...a, label: BUTTON_LABEL[a.id] });
    }
  }
  return out.slice(0, MAX_BUTTONS);
}

/** The notification's text: the first failing check with its fix, and how many more there are. */
export function preflightMessage(report: PreflightReport, folderName: string | undefined): string {
  const failed = report.checks.filter((c) => !c.ok && c.severity === 'error');
  const first = failed[0];
  const where = folderName === undefined ? '' : ` in ${folderName}`;
  if (first === undefined) return `Ralph cannot start the loop${where}.`;
  const more = failed.length > 1 ? ` (${failed.length - 1} more problem(s): see the Ralph output)` : '';
  return `Ralph cannot start the loop${where}: ${first.message}.${first.fix ? ` To fix: ${first.fix}.` : ''}${more}`;
}

/**
 * The preflight before the loop engine loads (it is the larger part of a first start): a
 * machine that cannot run agents hears so at once. Returns the probes it made, memoized, for
 * the loop host's own preflight to reuse (the same answers, no second `--version` run), or
 * null when it failed and the notification is showing. A config that does not load is the
 * loop host's to report (it names the file and the place).
 */
export function preflightBeforeStart(c: PreflightNoticeContext): Partial<PreflightDeps> | null {
  const loaded = loadConfig(c.projectDir);
  const base = defaultPreflightDeps({ host: 'vscode' });
  const versions = new Map<string, ReturnType<PreflightDeps['version']>>();
  const starts = new Map<string, string | null>();
  const deps: PreflightDeps = {
    ...base,
    version: (binary) => {
      if (!versions.has(binary)) versions.set(binary, base.version(binary));
      return versions.get(binary)!;
    },
    startConfined: (cli, confinement, file, args, readable) => {
      const key = JSON.stringify([cli, confinement.kind, file, args, readable]);
      if (!starts.has(key)) starts.set(key, base.startConfined(cli, confinement, file, args, readable));
      return starts.get(key)!;
    },
  };
  const memo = { version: deps.version, startConfined: deps.startConfined };
  if (!loaded.ok) return memo;
  const report = runPreflight(loaded.value, c.projectDir, deps);
  if (report.ok) return memo;
  void showPreflightFailure(c, report);
  return null;
}

/** Shows the notification; resolves once the user picked an action (or dismissed it). */
export async function showPreflightFailure(c: PreflightNoticeContext, report: PreflightReport): Promise<void> {
  c.output.error(`${c.folderName ? `[${c.folderName}] ` : ''}the loop did not start: the preflight failed\n${formatPreflight(report)}`);
  const buttons = preflightButtons(report);
  const picked = await vscode.window.showErrorMessage(preflightMessage(report, c.folderName), ...buttons.map((b) => b.label));
  const action = buttons.find((b) => b.label === picked);
  if (action !== undefined) await runAction(c, action);
}

async function runAction(c: PreflightNoticeContext, action: PreflightAction): Promise<void> {
  switch (action.id) {
    case 'install-cli':
    case 'install-bubblewrap':
      runInTerminal(c, action);
      return;
    case 'open-config':
      await vscode.commands.executeCommand(Commands.openConfig, c.projectDir);
      return;
    case 'choose-backend':
      await chooseBackend(c);
      return;
    case 'allow-unconfined':
      await allowUnconfined(c);
      return;
  }
}

/** The install command in a terminal of its own, run at once: the user sees it and its output. */
function runInTerminal(c: PreflightNoticeContext, action: PreflightAction): void {
  if (action.detail === undefined) return;
  const terminal = vscode.window.createTerminal({ name: `Ralph: ${action.label.replace(/…$/, '')}`, cwd: c.projectDir });
  terminal.show();
  terminal.sendText(action.detail, true);
  c.output.info(`running in a terminal: ${action.detail} (then Start Loop again)`);
}

interface BackendPick extends vscode.QuickPickItem {
  readonly backend: BackendKind;
}

const BACKEND_CHOICES: ReadonlyArray<{ kind: BackendKind; label: string; cli?: string; what: string }> = [
  { kind: 'claude', label: 'Claude Code', cli: 'claude', what: 'claude -p, confined' },
  { kind: 'codex', label: 'Codex', cli: 'codex', what: 'codex exec, confined' },
  { kind: 'vscode-lm', label: "VS Code's language model", what: 'the chat model VS Code offers (e.g. Copilot), in this window' },
];

/** A quick pick of the backends (saying which CLIs are on PATH); the pick runs every role. */
async function chooseBackend(c: PreflightNoticeContext): Promise<void> {
  const items: BackendPick[] = BACKEND_CHOICES.map((b) => {
    const found = b.cli === undefined ? null : findOnPath(b.cli, process.env.PATH);
    return {
      backend: b.kind,
      label: b.label,
      description: b.cli === undefined ? b.what : found !== null ? `${b.what} · found: ${found}` : `${b.what} · not installed`,
    };
  });
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Ralph: which backend runs the agents (primary, workers, judge)?',
    placeHolder: `written to ${CONFIG_FILE} as backends.primary, backends.worker and backends.judge`,
  });
  if (pick === undefined) return;
  await editConfig(c, (config) => {
    const backends = objectAt(config, 'backends');
    for (const role of ['primary', 'worker', 'judge'] as const) backends[role] = pick.backend;
  });
  c.output.info(`${CONFIG_FILE}: backends.primary, worker and judge set to "${pick.backend}"`);
  await offerStart(c, `Ralph: the agents now run on ${pick.label} (${CONFIG_FILE}).`);
}

/** After a warning that says what it means, `"agents": {"unconfined": true}` in the config. */
async function allowUnconfined(c: PreflightNoticeContext): Promise<void> {
  const yes = 'Allow Unconfined Agents';
  const answer = await vscode.window.showWarningMessage(
    'Run agents without confinement?',
    {
      modal: true,
      detail:
        'No confinement is available here, so an agent could write anything your user can: your home, other repositories, its own instructions. Ralph still checks your checkout, git and its own files around every invocation. This sets "agents": {"unconfined": true} in ralph.config.json.',
    },
    yes,
  );
  if (answer !== yes) return;
  await editConfig(c, (config) => {
    objectAt(config, 'agents').unconfined = true;
  });
  c.output.warn(`${CONFIG_FILE}: agents.unconfined set to true`);
  await offerStart(c, `Ralph: agents may run unconfined in this project (${CONFIG_FILE}).`);
}

async function offerStart(c: PreflightNoticeContext, message: string): Promise<void> {
  const again = await vscode.window.showInformationMessage(message, 'Start Loop');
  if (again) await vscode.commands.executeCommand(Commands.startLoop, c.projectDir);
}

type JsonObject = Record<string, unknown>;

function objectAt(o: JsonObject, key: string): JsonObject {
  const v = o[key];
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as JsonObject;
  const fresh: JsonObject = {};
  o[key] = fresh;
  return fresh;
}

/**
 * Changes ralph.config.json in place (key order kept, 2-space JSON as `ralph init` writes it),
 * atomically. The preflight ran on a config that parsed, so a file that no longer does was
 * changed meanwhile: it is opened for the user instead of overwritten.
 */
async function editConfig(c: PreflightNoticeContext, change: (config: JsonObject) => void): Promise<void> {
  const file = path.join(c.projectDir, CONFIG_FILE);
  let config: unknown;
  try {
    config = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    void vscode.window.showErrorMessage(`Ralph: ${file} cannot be read as JSON (${(e as Error).message}); change it by hand.`);
    await vscode.commands.executeCommand(Commands.openConfig, c.projectDir);
    return;
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    void vscode.window.showErrorMessage(`Ralph: ${file} is not a JSON object; change it by hand.`);
    return;
  }
  change(config as JsonObject);
  await writeFileAtomic(file, `${JSON.stringify(config, null, 2)}\n`);
}
