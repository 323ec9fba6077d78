// Puts the `ralph` CLI that ships in the extension on the integrated terminal's PATH, so
// `ralph status` works in VS Code's terminal without `npm link` or a system Node: a
// launcher in the extension's global storage runs dist/cli.js with the runtime of
// the extension host itself (Electron's, as Node), and the extension's environment variable
// collection prepends its folder to PATH (launcher.ts writes it). Only in a trusted folder
// (the CLI runs agents, builds and tests, like the commands Restricted Mode withholds).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { writeLaunchers } from './launcher';

/**
 * Keeps `ralph` on the terminal's PATH while the folder is trusted (and from the moment it
 * becomes trusted). Terminals opened before keep their environment: VS Code marks them stale.
 */
export function registerTerminalPath(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): vscode.Disposable {
  const binDir = path.join(context.globalStorageUri.fsPath, 'bin');
  const cli = path.join(context.extensionPath, 'dist', 'cli.js');
  const env = context.environmentVariableCollection;
  env.description = 'Puts the `ralph` command line of the Ralph Loop extension on the PATH.';
  const apply = async (): Promise<void> => {
    try {
      await writeLaunchers(binDir, process.execPath, cli);
      env.prepend('PATH', `${binDir}${path.delimiter}`);
    } catch (e) {
      log.warn(`ralph is not on the terminal's PATH: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  if (vscode.workspace.isTrusted) void apply();
  else env.clear();
  return vscode.workspace.onDidGrantWorkspaceTrust(() => void apply());
}
