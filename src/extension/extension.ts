// The extension's entry point and composition root. VS Code counts loading this module and
// the synchronous part of activate() as Ralph's activation, so both stay small: activate()
// creates the output channel and hands the rest to composition.ts (one engine session per
// workspace folder, views, commands, status bar, monitor), which loads as a chunk of its own
// right after; VS Code holds back commands and views until the returned promise settles, so
// nothing runs against a half-built extension. Activation errors are shown and rethrown.
import * as vscode from 'vscode';
import type { RalphChat } from './chat';
import type * as CompositionModule from './composition';
import type { RalphViews } from './composition';
import type { Engine } from '../session/engine';
import { Commands } from './ids';
import type { Projects } from './projects';

export type { RalphViews } from './composition';

/** What tests read: the sessions, the tree providers and the activation times. */
export interface RalphApi {
  /** The first folder's session (the only one in a single-folder window). */
  readonly engine: Engine | undefined;
  readonly projects: Projects | undefined;
  readonly views: RalphViews | undefined;
  /** The chat participant's handler and the language-model tools (src/extension/chat). */
  readonly chat: RalphChat | undefined;
  /** The synchronous part of activate(), which VS Code adds to the time it took to load this module. */
  readonly activationMs: number;
  /** From entering activate() until everything is registered (the composition loaded and run). */
  readonly readyMs: number;
}

let projects: Projects | undefined;
let views: RalphViews | undefined;
let chat: RalphChat | undefined;
let activationMs = 0;
let readyMs = 0;

const loadComposition = (): Promise<typeof CompositionModule> =>
  typeof RALPH_BUNDLE !== 'undefined'
    ? import('./composition.js')
    : // eslint-disable-next-line @typescript-eslint/no-require-imports
      Promise.resolve().then(() => require('./composition') as typeof CompositionModule);

export function activate(context: vscode.ExtensionContext): RalphApi | Promise<RalphApi> {
  const started = performance.now();
  const output = vscode.window.createOutputChannel('Ralph', { log: true });
  context.subscriptions.push(output);
  const fail = (e: unknown): never => {
    const msg = e instanceof Error ? e.message : String(e);
    output.error(`activation failed: ${e instanceof Error ? (e.stack ?? msg) : msg}`);
    void vscode.window.showErrorMessage(`Ralph failed to activate: ${msg}`);
    throw e;
  };
  try {
    if (!(vscode.workspace.workspaceFolders ?? []).some((f) => f.uri.scheme === 'file')) {
      for (const id of Object.values(Commands)) {
        context.subscriptions.push(
          vscode.commands.registerCommand(id, () => vscode.window.showInformationMessage('Ralph needs an open folder (a git repository).')),
        );
      }
      activationMs = performance.now() - started;
      return { engine: undefined, projects: undefined, views: undefined, chat: undefined, activationMs, readyMs: activationMs };
    }
    activationMs = performance.now() - started;
    return loadComposition()
      .then((m) => {
        const built = m.composeRalph(context, output, () => activationMs);
        projects = built.projects;
        views = built.views;
        chat = built.chat;
        readyMs = performance.now() - started;
        output.info(
          `Ralph activated in ${activationMs.toFixed(1)} ms, ready in ${readyMs.toFixed(1)} ms (the database opens on first use)`,
        );
        return {
          get engine() {
            return projects?.list()[0];
          },
          get projects() {
            return projects;
          },
          get views() {
            return views;
          },
          get chat() {
            return chat;
          },
          get activationMs() {
            return activationMs;
          },
          get readyMs() {
            return readyMs;
          },
        };
      })
      .catch(fail);
  } catch (e) {
    return fail(e);
  }
}

export async function deactivate(): Promise<void> {
  // Running loops are stopped (agents aborted, claims released) and the stores checkpointed.
  await projects?.shutdown();
  projects = undefined;
  views = undefined;
  chat = undefined;
}
