// The extension's composition root. Builds the engine once, registers every contribution
// and tracks each registration in a disposable list (filled in by the extension issue).
import * as vscode from 'vscode';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Ralph', { log: true });
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.commands.registerCommand('ralph.showStatus', () => {
      output.show(true);
      output.info('Ralph Loop is active.');
    }),
  );
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
