// A task's story as a read-only markdown document (ralph-story:/<task id>.md, or with a folder
// ralph-story:/<task id> (<folder name>).md?folder=<dir>), rendered
// from the store each time it is opened, and the command that shows it as a page (storyPanel.ts).
// The chat's links and the Backlog open it. With several folders a task id can exist in more than one of them: the
// document names its folder in the query, and the command asks which folder when the caller
// did not say and more than one folder holds the task — never the first one silently.
import * as vscode from 'vscode';
import { readTaskStory, renderTaskStory, withCommitFiles } from '../../control/story';
import { commitFiles } from '../../git/commitFiles';
import type { Engine } from '../../session/engine';
import { ChatIds } from './chatIds';
import { commandLinks } from './links';
import { StoryPanels } from './storyPanel';

/**
 * The story document of a task; `folder` says whose store tells it. The folder's name is in the
 * path too: the tab says whose story it is, and the markdown preview, which tells documents
 * apart by path, keeps two folders' stories of one id apart.
 */
export function storyUri(taskId: string, folder?: { readonly dir: string; readonly name: string }): vscode.Uri {
  if (folder === undefined) return vscode.Uri.from({ scheme: ChatIds.storyScheme, path: `/${taskId}.md` });
  return vscode.Uri.from({
    scheme: ChatIds.storyScheme,
    path: `/${taskId} (${folder.name.replace(/[/\\()]/g, '_')}).md`,
    query: new URLSearchParams({ folder: folder.dir }).toString(),
  });
}

/** The task id of a story document (ids have no spaces or parentheses: the id grammar). */
export function storyTaskId(uri: vscode.Uri): string {
  return decodeURIComponent(uri.path.replace(/^\//, '').replace(/\.md$/, '')).replace(/ \(.*\)$/, '');
}

/** Finds a folder's session: by its directory when given, else the one folder that has the task. */
export interface StoryEngines {
  /** Every folder's session, in workspace order. */
  all(): readonly Engine[];
  /** The folder that tells a story when the document names none (the task's, the active editor's, the first). */
  fallback(taskId: string): Promise<Engine | undefined>;
}

export class StoryDocumentProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly engines: StoryEngines) {}

  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    return this.markdown(uri);
  }

  /** The folder whose store tells the story of this document. */
  async engineOf(uri: vscode.Uri): Promise<Engine | undefined> {
    const folder = new URLSearchParams(uri.query).get('folder') ?? undefined;
    return folder !== undefined ? this.engines.all().find((e) => e.projectDir === folder) : await this.engines.fallback(storyTaskId(uri));
  }

  /** The story's markdown, read from the store now. */
  async markdown(uri: vscode.Uri): Promise<string> {
    const taskId = storyTaskId(uri);
    const folder = new URLSearchParams(uri.query).get('folder') ?? undefined;
    const engine = await this.engineOf(uri);
    if (folder !== undefined && !engine) return `No folder ${folder} in this window.\n`;
    const store = await engine?.open();
    if (!engine || !store) return `No Ralph project in ${engine?.projectDir ?? 'this window'}.\n`;
    const read = readTaskStory(engine.view ?? store, taskId);
    if (!read) return `No task ${taskId} in folder ${engine.name}.\n`;
    // The files of the commit it landed as come from git, which Restricted Mode does not run.
    const story = vscode.workspace.isTrusted ? await withCommitFiles(read, (hash) => commitFiles(engine.projectDir, hash)) : read;
    const where = this.engines.all().length > 1 ? `_Folder **${engine.name}** (${engine.projectDir})_\n\n` : '';
    return where + renderTaskStory(story, commandLinks(engine.projectDir));
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** The folders whose stores hold the task, in workspace order. */
async function foldersHolding(engines: readonly Engine[], taskId: string): Promise<Engine[]> {
  const has = await Promise.all(engines.map(async (e) => (await e.open()) !== undefined && e.task(taskId) !== undefined));
  return engines.filter((_e, i) => has[i]);
}

/**
 * The folder whose story to open: the one named, else the only one holding the task, else
 * the person's pick among those holding it (undefined: they cancelled).
 */
async function chooseStoryFolder(engines: StoryEngines, taskId: string, folder: string | undefined): Promise<string | null | undefined> {
  if (folder !== undefined) return folder;
  const all = engines.all();
  if (all.length < 2) return null;
  const holding = await foldersHolding(all, taskId);
  if (holding.length < 2) return holding[0]?.projectDir ?? null;
  const pick = await vscode.window.showQuickPick(
    holding.map((e) => ({ label: e.name, description: e.projectDir, dir: e.projectDir })),
    {
      title: `${taskId} is a task in ${holding.length} folders: whose story?`,
      placeHolder: 'Pick the folder',
    },
  );
  return pick?.dir;
}

/** Registers the story documents and the command that shows one as a page. */
export function registerStoryDocuments(engines: StoryEngines): vscode.Disposable[] {
  const provider = new StoryDocumentProvider(engines);
  const panels = new StoryPanels(provider);
  return [
    provider,
    panels,
    vscode.workspace.registerTextDocumentContentProvider(ChatIds.storyScheme, provider),
    vscode.commands.registerCommand(ChatIds.showTaskStory, async (arg: unknown, folderArg: unknown) => {
      const taskId =
        typeof arg === 'string'
          ? arg
          : await vscode.window.showInputBox({ title: 'Show the story of which task?', prompt: 'A task id, e.g. W1-003' });
      if (!taskId) return;
      const id = taskId.trim();
      const folder = await chooseStoryFolder(engines, id, typeof folderArg === 'string' ? folderArg : undefined);
      if (folder === undefined) return;
      const engine = folder === null ? undefined : engines.all().find((e) => e.projectDir === folder);
      const uri = storyUri(id, engine ? { dir: engine.projectDir, name: engine.name } : undefined);
      await panels.show(uri, engine && engines.all().length > 1 ? `Story ${id} (${engine.name})` : `Story ${id}`);
    }),
  ];
}
