// Read-only documents for a patch's before/after sides (scheme `ralph-patch`) and the
// command that opens them: one modified file as a diff editor, several (or an added or
// deleted one) as a multi-file diff (`vscode.changes`). Patch files never change once queued, so their sides are cached.
// In Restricted Mode nothing here starts a process: the sides come from the stored patch
// text alone (patchFiles.ts), and a folder trusted later gets the full files.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Patch } from '../domain/model';
import type { Engine } from '../session/engine';
import { Schemes } from './ids';
import { Disposable } from '../shared/lifecycle';
import type { FileSides } from './patchFiles';
import { materializePatch, sidesFromPatchText } from './patchFiles';

export class PatchNotFoundError extends Error {
  override readonly name = 'PatchNotFoundError';
  constructor(readonly ref: string) {
    super(`no patch found for ${ref}`);
  }
}

/** The project a patch belongs to (several folders: each has its own store). */
export type PatchProjects = (patchId: string) => Engine | undefined;

export class PatchContentProvider extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly cache = new Map<string, Promise<FileSides[]>>();

  constructor(private readonly projectOf: PatchProjects) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(Schemes.patch, this));
    // Sides built from the hunks alone give way to whole files once the folder is trusted.
    this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.cache.clear()));
  }

  /** The patch file's text (its path in patch_view is project-relative or absolute). */
  patchText(patch: Patch): string {
    const dir = this.projectOf(patch.patch_id)?.projectDir;
    if (patch.patch_path === null || dir === undefined) throw new PatchNotFoundError(patch.patch_id);
    const file = path.isAbsolute(patch.patch_path) ? patch.patch_path : path.join(dir, patch.patch_path);
    return fs.readFileSync(file, 'utf8');
  }

  sides(patch: Patch): Promise<FileSides[]> {
    let p = this.cache.get(patch.patch_id);
    if (!p) {
      const dir = this.projectOf(patch.patch_id)?.projectDir;
      if (dir === undefined) p = Promise.reject(new PatchNotFoundError(patch.patch_id));
      else {
        const text = this.patchText(patch);
        p = vscode.workspace.isTrusted ? materializePatch(dir, text) : Promise.resolve().then(() => sidesFromPatchText(text));
      }
      p.catch(() => this.cache.delete(patch.patch_id));
      this.cache.set(patch.patch_id, p);
    }
    return p;
  }

  /**
   * `ralph-patch:/<file>?patch=<id>&side=before|after`: both sides share the file's path,
   * so the multi-file diff shows a modified file rather than a rename between two paths,
   * and tabs are titled with the file's own name.
   */
  uri(patchId: string, side: 'before' | 'after', file: string): vscode.Uri {
    return vscode.Uri.from({ scheme: Schemes.patch, path: `/${file}`, query: new URLSearchParams({ patch: patchId, side }).toString() });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const q = new URLSearchParams(uri.query);
    const patchId = q.get('patch');
    const side = q.get('side');
    const file = uri.path.replace(/^\//, '');
    if (patchId === null || (side !== 'before' && side !== 'after') || file === '') return '';
    const patch = this.projectOf(patchId)?.patch(patchId);
    if (!patch) return `(patch ${patchId} is not in the event store)\n`;
    const entry = (await this.sides(patch)).find((s) => s.entry.path === file);
    if (!entry) return '';
    return side === 'before' ? entry.before : entry.after;
  }
}

/** Opens a patch (by patch id or task id) as a diff editor or a multi-file diff. */
export async function openPatchDiff(engine: Engine, provider: PatchContentProvider, ref: string): Promise<void> {
  await engine.open();
  const patch = engine.patch(ref) ?? engine.patchOfTask(ref);
  if (!patch) throw new PatchNotFoundError(ref);
  let sides: FileSides[];
  try {
    sides = await provider.sides(patch);
  } catch (e) {
    // A patch that no longer applies to its own base still reads well as a diff file.
    const doc = await vscode.workspace.openTextDocument({ content: provider.patchText(patch), language: 'diff' });
    await vscode.window.showTextDocument(doc, { preview: true });
    void vscode.window.showWarningMessage(
      `Showing ${patch.patch_id} as raw text: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`,
    );
    return;
  }
  const title = `${patch.task_id} · ${patch.patch_id}`;
  if (sides.length === 1 && sides[0]!.entry.status !== 'added' && sides[0]!.entry.status !== 'deleted') {
    const s = sides[0]!;
    await vscode.commands.executeCommand(
      'vscode.diff',
      provider.uri(patch.patch_id, 'before', s.entry.path),
      provider.uri(patch.patch_id, 'after', s.entry.path),
      `${title}: ${s.entry.path}`,
      { preview: true },
    );
    return;
  }
  // A new file has no left side and a deleted one no right side: the multi-file diff then
  // shows the file as added (or deleted), not as a change from one empty line.
  const resources = sides.map((s) => [
    vscode.Uri.file(path.join(engine.projectDir, s.entry.path)),
    s.entry.status === 'added' ? undefined : provider.uri(patch.patch_id, 'before', s.entry.path),
    s.entry.status === 'deleted' ? undefined : provider.uri(patch.patch_id, 'after', s.entry.path),
  ]);
  await vscode.commands.executeCommand('vscode.changes', title, resources);
}
