// A task's story as a read-only markdown document (ralph-story:/<task id>.md), rendered from
// the store each time it is opened, and the command that opens it. The chat's links open it.
import * as vscode from 'vscode';
import { readTaskStory, renderTaskStory } from '../../control/story';
import type { Engine } from '../engine';
import { ChatIds } from './chatIds';
import { commandLinks } from './links';

export function storyUri(taskId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: ChatIds.storyScheme, path: `/${taskId}.md` });
}

export class StoryDocumentProvider implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  /** `engine`: the folder whose store tells the task's story (with several, the one that has it). */
  constructor(private readonly engine: (taskId: string) => Promise<Engine | undefined>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const taskId = decodeURIComponent(uri.path.replace(/^\//, '').replace(/\.md$/, ''));
    const engine = await this.engine(taskId);
    const store = await engine?.open();
    if (!engine || !store) return `No Ralph project in ${engine?.projectDir ?? 'this window'}.\n`;
    const story = readTaskStory(engine.view ?? store, taskId);
    return story ? renderTaskStory(story, commandLinks()) : `No task ${taskId} in this project.\n`;
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** Registers the story documents and the command that opens one (preview when markdown is there). */
export function registerStoryDocuments(engine: (taskId: string) => Promise<Engine | undefined>): vscode.Disposable[] {
  const provider = new StoryDocumentProvider(engine);
  return [
    provider,
    vscode.workspace.registerTextDocumentContentProvider(ChatIds.storyScheme, provider),
    vscode.commands.registerCommand(ChatIds.showTaskStory, async (arg: unknown) => {
      const taskId =
        typeof arg === 'string'
          ? arg
          : await vscode.window.showInputBox({ title: 'Show the story of which task?', prompt: 'A task id, e.g. W1-003' });
      if (!taskId) return;
      const uri = storyUri(taskId.trim());
      try {
        await vscode.commands.executeCommand('markdown.showPreview', uri);
      } catch {
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
      }
    }),
  ];
}
