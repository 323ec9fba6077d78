// A promotion commit in VS Code, from a task's story: its diff (every file it changed, as a
// multi-file diff between its parent and itself) and any of its files as they were at that
// commit. Read-only documents `ralph-git:/<path>?commit=<hash>&side=<commit|parent>&folder=<dir>`
// served from `git cat-file` (src/git/commitFiles.ts): no dependence on the git extension,
// and a commit that has left the branch still opens while git has it. Git is a process, so
// nothing here runs in Restricted Mode.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { commitFiles, commitSubject, fileAtCommit, isCommitHash } from '../git/commitFiles';
import { Commands, Schemes } from './ids';

export type CommitSide = 'commit' | 'parent';

/** The read-only document of `file` at `hash` (or at its parent) in the project `folder`. */
export function commitFileUri(folder: string, hash: string, file: string, side: CommitSide = 'commit'): vscode.Uri {
  return vscode.Uri.from({
    scheme: Schemes.commit,
    path: `/${file}`,
    query: new URLSearchParams({ commit: hash, side, folder }).toString(),
  });
}

class CommitContentProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const hash = q.get('commit') ?? '';
    const folder = q.get('folder') ?? '';
    const file = uri.path.replace(/^\//, '');
    if (!vscode.workspace.isTrusted) return 'Ralph reads commits with git, which Restricted Mode does not run.\n';
    if (!isCommitHash(hash) || folder === '') return `Not a commit: ${hash}\n`;
    const text = await fileAtCommit(folder, hash, file, q.get('side') === 'parent');
    return text ?? '';
  }
}

async function openCommit(hashArg: unknown, folderArg: unknown): Promise<void> {
  const hash = typeof hashArg === 'string' ? hashArg : '';
  const folder = typeof folderArg === 'string' ? folderArg : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (folder === undefined || !isCommitHash(hash)) {
    void vscode.window.showErrorMessage(`Ralph: not a commit: ${hash || '(none)'}`);
    return;
  }
  const files = await commitFiles(folder, hash);
  if (files === null) {
    void vscode.window.showErrorMessage(`Ralph: commit ${hash.slice(0, 8)} is not in the repository of ${folder}.`);
    return;
  }
  const subject = (await commitSubject(folder, hash)) ?? '';
  const resources = files.map((f) => [
    vscode.Uri.file(path.join(folder, f.path)),
    f.status === 'added' ? undefined : commitFileUri(folder, hash, f.oldPath ?? f.path, 'parent'),
    f.status === 'deleted' ? undefined : commitFileUri(folder, hash, f.path),
  ]);
  await vscode.commands.executeCommand('vscode.changes', `${hash.slice(0, 8)} ${subject}`.trim(), resources);
}

async function openFileAtCommit(fileArg: unknown, hashArg: unknown, folderArg: unknown): Promise<void> {
  const folder = typeof folderArg === 'string' ? folderArg : vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (typeof fileArg !== 'string' || typeof hashArg !== 'string' || folder === undefined || !isCommitHash(hashArg)) return;
  const doc = await vscode.workspace.openTextDocument(commitFileUri(folder, hashArg, fileArg));
  await vscode.window.showTextDocument(doc, { preview: true });
}

export function registerCommitDocuments(): vscode.Disposable[] {
  return [
    vscode.workspace.registerTextDocumentContentProvider(Schemes.commit, new CommitContentProvider()),
    vscode.commands.registerCommand(Commands.openCommit, openCommit),
    vscode.commands.registerCommand(Commands.openFileAtCommit, openFileAtCommit),
  ];
}
