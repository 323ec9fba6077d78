// An agent invocation's transcript as a read-only document (ralph-transcript:/<absolute file>)
// that follows the file while it grows: the provider looks at the open transcripts' sizes a
// few times a second and announces a change, VS Code re-reads the content, and an editor that
// showed the last line scrolls to the new last line. Scrolling up stops following, scrolling
// back to the end resumes it, as in a terminal. A transcript that ended (its footer written)
// is no longer looked at.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TRANSCRIPTS_DIR } from '../../agents/transcript';
import { listTranscripts } from '../../cli/logsCommand';
import type { Engine } from '../../session/engine';
import { Commands, Schemes } from '../ids';
import { Disposable } from '../../shared/lifecycle';
import type { Projects } from '../projects';
import { AgentItem } from '../trees/agentsTree';
import { isTranscriptFile, latestTranscriptOf, transcriptFileOf } from './transcriptFiles';

/** How often an open, unfinished transcript's size is looked at. */
const POLL_MS = 250;
/** The footer the writer ends every transcript with (src/agents/transcript.ts). */
const FOOTER = /\n# ended [^\n]*\n?$/;

export function transcriptUri(file: string): vscode.Uri {
  return vscode.Uri.from({ scheme: Schemes.transcript, path: file });
}

interface Watched {
  size: number;
  mtimeMs: number;
  ended: boolean;
}

export class TranscriptDocuments extends Disposable implements vscode.TextDocumentContentProvider {
  private readonly changed = this._register(new vscode.EventEmitter<vscode.Uri>());
  readonly onDidChange = this.changed.event;
  private readonly watched = new Map<string, Watched>();
  /** Per document: whether its editors follow the end (true until the user scrolls up). */
  private readonly following = new Map<string, boolean>();
  private timer: NodeJS.Timeout | undefined;

  constructor() {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(Schemes.transcript, this));
    this._register({ dispose: () => this.timer && clearInterval(this.timer) });
    this._register(
      vscode.workspace.onDidCloseTextDocument((d) => {
        if (d.uri.scheme !== Schemes.transcript) return;
        this.watched.delete(d.uri.toString());
        this.following.delete(d.uri.toString());
      }),
    );
    this._register(
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
        const doc = e.textEditor.document;
        if (doc.uri.scheme !== Schemes.transcript) return;
        const last = e.visibleRanges.at(-1)?.end.line ?? 0;
        // The document ends with a newline: its last line is empty, the one before it the last text.
        this.following.set(doc.uri.toString(), last >= doc.lineCount - 2);
      }),
    );
    this._register(
      vscode.workspace.onDidChangeTextDocument((e) => {
        const doc = e.document;
        if (doc.uri.scheme !== Schemes.transcript || this.following.get(doc.uri.toString()) === false) return;
        for (const editor of vscode.window.visibleTextEditors) if (editor.document === doc) revealEnd(editor);
      }),
    );
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const file = uri.path;
    if (!isTranscriptFile(file)) return `Not a Ralph transcript: ${file}\n`;
    let text: string;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      return `The transcript ${file} cannot be read: ${(e as Error).message}\n`;
    }
    const key = uri.toString();
    const ended = FOOTER.test(text);
    this.watched.set(key, { size: stat.size, mtimeMs: stat.mtimeMs, ended });
    if (!ended) this.startPolling();
    return text;
  }

  /** Opens `file` in an editor scrolled to its end, following it. */
  async open(file: string): Promise<vscode.TextEditor> {
    const uri = transcriptUri(file);
    this.following.set(uri.toString(), true);
    let doc = await vscode.workspace.openTextDocument(uri);
    if (doc.languageId !== 'log') doc = await vscode.languages.setTextDocumentLanguage(doc, 'log');
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    revealEnd(editor);
    return editor;
  }

  private startPolling(): void {
    this.timer ??= setInterval(() => this.poll(), POLL_MS);
  }

  private poll(): void {
    let open = 0;
    for (const [key, w] of this.watched) {
      if (w.ended) continue;
      open += 1;
      const uri = vscode.Uri.parse(key);
      try {
        const s = fs.statSync(uri.path);
        if (s.size !== w.size || s.mtimeMs !== w.mtimeMs) {
          w.size = s.size;
          w.mtimeMs = s.mtimeMs;
          this.changed.fire(uri);
        }
      } catch {
        // Gone (a repair, a clean): what was read stays shown.
        w.ended = true;
      }
    }
    if (open === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

function revealEnd(editor: vscode.TextEditor): void {
  const line = Math.max(0, editor.document.lineCount - 1);
  editor.revealRange(new vscode.Range(line, 0, line, 0), vscode.TextEditorRevealType.Default);
}

/**
 * `ralph.openTranscript`: an Agents row (its current or last transcript), an agent's name, or
 * a transcript's path (relative to `.ralph/`, as the story links it), each with an optional
 * folder; without arguments, a pick of the focused folder's transcripts, newest first.
 */
export function registerTranscriptCommand(projects: Projects, docs: TranscriptDocuments): vscode.Disposable {
  return vscode.commands.registerCommand(Commands.openTranscript, async (arg?: unknown, folder?: unknown) => {
    let engine: Engine | undefined = arg instanceof AgentItem ? arg.engine : typeof folder === 'string' ? projects.get(folder) : undefined;
    engine ??= projects.focus(vscode.window.activeTextEditor?.document.uri.fsPath) ?? projects.list()[0];
    if (!engine) return undefined;
    const ralphDir = engine.ralphDir;
    let file: string | undefined;
    if (arg instanceof AgentItem || (typeof arg === 'string' && !arg.endsWith('.log'))) {
      const agent = arg instanceof AgentItem ? arg.row.name : (arg as string);
      await engine.open();
      file = latestTranscriptOf(engine.view, ralphDir, agent);
      if (!file) {
        void vscode.window.showInformationMessage(`${agent} has no transcript yet in ${engine.name}.`);
        return undefined;
      }
    } else if (typeof arg === 'string') {
      file = transcriptFileOf(ralphDir, path.isAbsolute(arg) ? path.relative(ralphDir, arg) : arg);
      if (!file) {
        void vscode.window.showErrorMessage(`Not a transcript of ${engine.name}: ${arg.slice(0, 200)}`);
        return undefined;
      }
    } else {
      const dir = path.join(ralphDir, TRANSCRIPTS_DIR);
      const all = listTranscripts(dir, {}).reverse();
      if (all.length === 0) {
        void vscode.window.showInformationMessage(`No transcript yet in ${engine.name}.`);
        return undefined;
      }
      const pick = await vscode.window.showQuickPick(
        all.map((t) => ({ label: `${t.agent}${t.task ? ` · ${t.task}` : ''}`, description: t.file, file: path.join(dir, t.file) })),
        { title: 'Ralph: open which transcript?' },
      );
      file = pick?.file;
    }
    return file ? docs.open(file) : undefined;
  });
}
