// The VS Code side of the engine session (src/session/engine.ts, host-neutral): a session
// per workspace folder whose store changes reach it through a FileSystemWatcher.
import * as vscode from 'vscode';
import { Engine } from '../session/engine';
import type { EngineLog } from '../session/engine';

/** Where the session of a folder is: its directory and the name the views show. */
export interface EngineFolder {
  readonly dir: string;
  readonly name: string;
}

/** The engine session of a workspace folder, following its files with a VS Code watcher. */
export function workspaceEngine(folder: EngineFolder, log: EngineLog): Engine {
  return new Engine({
    projectDir: folder.dir,
    name: folder.name,
    log,
    watch: (_ralphDir, onChange) => {
      // ralph.db (checkpoints), the journal (every acknowledged event), the writer lock, STATE.json.
      const w = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(
          vscode.Uri.file(folder.dir),
          '{.ralph/ralph.db,.ralph/ralph.events.journal,.ralph/locks/writer.lock,.ralph/STATE.json,ralph.config.json}',
        ),
      );
      w.onDidChange(onChange);
      w.onDidCreate(onChange);
      w.onDidDelete(onChange);
      return w;
    },
  });
}
