// The top level of every Ralph tree when the window has several folders: one node per
// folder (one Ralph project each), saying which folder and its loop's state, so every task,
// deferred patch and agent below it is clearly that folder's. With a single folder the trees
// show its content directly.
import * as vscode from 'vscode';
import type { Engine } from '../../session/engine';

export class FolderItem extends vscode.TreeItem {
  constructor(
    readonly engine: Engine,
    view: string,
    description: string,
  ) {
    super(engine.name, vscode.TreeItemCollapsibleState.Expanded);
    this.id = `${view}:folder:${engine.projectDir}`;
    const initialized = engine.isInitialized();
    this.contextValue = initialized ? 'ralph.folder' : 'ralph.folder.uninitialized';
    this.iconPath = new vscode.ThemeIcon(initialized ? 'root-folder' : 'root-folder-opened');
    this.description = initialized ? description : 'no Ralph project';
    this.tooltip = `${engine.projectDir}\n${initialized ? `Ralph loop ${engine.loopState()}` : 'Not initialized: right-click → Initialize Project'}`;
  }
}

/** A one-line hint under a folder (nothing to show, or what to do next). */
export class HintItem extends vscode.TreeItem {
  override readonly contextValue = 'ralph.hint';
  constructor(
    readonly engine: Engine,
    view: string,
    label: string,
    command?: vscode.Command,
  ) {
    super(label, vscode.TreeItemCollapsibleState.None);
    this.id = `${view}:hint:${engine.projectDir}`;
    this.iconPath = new vscode.ThemeIcon(command ? 'add' : 'info');
    if (command) this.command = command;
  }
}

/** One word for a project's loop, for folder descriptions. */
export function loopWord(engine: Engine): string {
  if (!engine.isInitialized()) return 'no Ralph project';
  const state = engine.loopState();
  return engine.role() === 'observer' ? `${state} (observing)` : state;
}
