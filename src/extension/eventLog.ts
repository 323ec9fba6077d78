// "Ralph: Open Event Log": a quick pick over the newest events, filtered as you type (type,
// entity, actor, payload), and a read-only JSON Lines document of the events table
// (scheme `ralph-events`, the folder in the `project` query parameter) for the whole query
// or one event.
import * as vscode from 'vscode';
import type { StoredEvent } from '../store';
import type { Engine } from '../session/engine';
import { Schemes } from './ids';
import { Disposable } from '../shared/lifecycle';
import type { Projects } from './projects';

const LIMIT = 500;

export class EventLogProvider extends Disposable implements vscode.TextDocumentContentProvider {
  constructor(private readonly projects: Projects) {
    super();
    this._register(vscode.workspace.registerTextDocumentContentProvider(Schemes.events, this));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const q = new URLSearchParams(uri.query);
    const engine = this.projects.get(q.get('project') ?? '') ?? this.projects.list()[0];
    if (!engine) return '';
    const id = q.get('id');
    const events = engine.recentEvents(Number(q.get('limit') ?? LIMIT), q.get('filter') ?? undefined);
    if (id)
      return `${JSON.stringify(events.find((e) => e.event_id === id) ?? engine.recentEvents(100_000).find((e) => e.event_id === id) ?? null, null, 2)}\n`;
    return events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  }
}

interface EventPick extends vscode.QuickPickItem {
  readonly event?: StoredEvent;
  readonly all?: boolean;
}

function summary(e: StoredEvent): string {
  const p = e.payload as Record<string, unknown>;
  const bits = ['old_status', 'new_status', 'decision', 'reason', 'rationale', 'title', 'commit_hash', 'error']
    .filter((k) => p[k] !== undefined)
    .map((k) => `${k}=${String(p[k]).split('\n')[0]?.slice(0, 80)}`);
  return bits.join('  ');
}

export async function openEventLog(engine: Engine): Promise<void> {
  await engine.open();
  if (!engine.view) {
    void vscode.window.showInformationMessage('Ralph: no event store yet. Initialize the project first.');
    return;
  }
  const events = engine.recentEvents(LIMIT);
  const items: EventPick[] = [
    { label: '$(json) Open these events as a document', description: `${events.length} newest, JSON Lines`, all: true, alwaysShow: true },
    ...events.map((e) => ({ label: `${e.event_type}  ${e.entity_id}`, description: `${e.actor} · ${e.ts}`, detail: summary(e), event: e })),
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: `Ralph events of ${engine.name} (newest ${events.length})`,
    placeHolder: 'Filter by event type, task, actor or payload',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return;
  const query = new URLSearchParams(
    pick.all ? { limit: String(LIMIT), project: engine.projectDir } : { id: pick.event?.event_id ?? '', project: engine.projectDir },
  ).toString();
  const uri = vscode.Uri.from({
    scheme: Schemes.events,
    path: pick.all ? '/events.jsonl' : `/${pick.event?.event_id ?? 'event'}.json`,
    query,
  });
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true });
}
