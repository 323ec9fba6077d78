// A task's story shown as a page: the story document's markdown rendered by VS Code's own
// markdown engine (`markdown.api.render`) into a webview panel whose links run Ralph's linked
// commands. The markdown preview would show the same text, but it runs no `command:` link (it
// hands links to the opener without allowing commands), so its diff, transcript and commit
// links did nothing. The page runs no script and loads nothing (CSP `default-src 'none'`):
// what it shows comes from agents, and it is re-rendered as the task's events arrive.
import * as vscode from 'vscode';
import type { Engine } from '../../session/engine';
import { LINKED_COMMANDS } from './links';

export const STORY_VIEW_TYPE = 'ralph.story';

/** What the panels need of the story documents: a story's markdown and the folder telling it. */
export interface StorySource {
  markdown(uri: vscode.Uri): Promise<string>;
  engineOf(uri: vscode.Uri): Promise<Engine | undefined>;
}

const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The markdown as HTML by VS Code's engine; without the markdown extension, the text itself. */
async function render(markdown: string): Promise<string> {
  try {
    const html = await vscode.commands.executeCommand<unknown>('markdown.api.render', markdown);
    if (typeof html === 'string') return html;
  } catch {
    // The built-in markdown extension can be disabled: the text still says everything.
  }
  return `<pre>${escapeHtml(markdown)}</pre>`;
}

/** The page around the rendered story: the editor's font and colours, nothing loaded. */
export function storyPage(body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 20px 20px; line-height: 1.5; max-width: 980px; }
a { color: var(--vscode-textLink-foreground); text-decoration: none; }
a:hover { text-decoration: underline; }
code, pre { font-family: var(--vscode-editor-font-family); font-size: 0.95em; }
pre { background: var(--vscode-textCodeBlock-background); padding: 8px; overflow-x: auto; white-space: pre-wrap; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid var(--vscode-panel-border); padding: 4px 10px; text-align: left; vertical-align: top; }
h1, h2 { font-weight: 600; border-bottom: 1px solid var(--vscode-panel-border); padding-bottom: 4px; }
</style></head>
<body>${body}</body></html>`;
}

/** One panel per story document: shown again, it is revealed and re-rendered, not opened twice. */
export class StoryPanels implements vscode.Disposable {
  private readonly panels = new Map<string, { panel: vscode.WebviewPanel; dirty: boolean; rendering: boolean; stale: boolean }>();

  constructor(private readonly source: StorySource) {}

  async show(uri: vscode.Uri, title: string): Promise<void> {
    const key = uri.toString();
    let entry = this.panels.get(key);
    if (entry) {
      entry.panel.reveal();
    } else {
      const panel = vscode.window.createWebviewPanel(STORY_VIEW_TYPE, title, vscode.ViewColumn.Active, {
        enableCommandUris: [...LINKED_COMMANDS],
        enableFindWidget: true,
        localResourceRoots: [],
      });
      const shown = { panel, dirty: false, rendering: false, stale: false };
      entry = shown;
      this.panels.set(key, shown);
      const engine = await this.source.engineOf(uri);
      // A hidden page is not re-rendered on every event of a busy loop: once, when shown again.
      const changed = engine?.onDidChangeData(() => {
        if (panel.visible) void this.refresh(key, uri);
        else shown.stale = true;
      });
      const viewState = panel.onDidChangeViewState(() => {
        if (panel.visible && shown.stale) void this.refresh(key, uri);
      });
      panel.onDidDispose(() => {
        changed?.dispose();
        viewState.dispose();
        this.panels.delete(key);
      });
    }
    await this.refresh(key, uri);
  }

  /** Renders the story now; a change that arrives while it renders renders once more after. */
  private async refresh(key: string, uri: vscode.Uri): Promise<void> {
    const entry = this.panels.get(key);
    if (!entry) return;
    if (entry.rendering) {
      entry.dirty = true;
      return;
    }
    entry.rendering = true;
    try {
      do {
        entry.dirty = false;
        entry.stale = false;
        const html = storyPage(await render(await this.source.markdown(uri)));
        if (this.panels.get(key) === entry) entry.panel.webview.html = html;
      } while (entry.dirty && this.panels.get(key) === entry);
    } finally {
      entry.rendering = false;
    }
  }

  dispose(): void {
    for (const { panel } of this.panels.values()) panel.dispose();
    this.panels.clear();
  }
}
