// The monitor webview's entry (browser code, bundled to dist/webview/monitor.js). Owns the
// page's lifecycle: restore the last state, say `ready`, validate every host message,
// apply snapshots and batched updates, render, and send the user's requests with ids.
import './zodConfig.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-icon/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-progress-ring/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import './monitor.css';
import * as z from 'zod/mini';
import type { MonitorSnapshot, WebviewRequest } from '../src/protocol/monitor.js';
import {
  OpenSettingsRequest,
  OpenTaskRequest,
  ReadyMessage,
  ResolveDeferredRequest,
  ShowDiffRequest,
  TravelRequest,
  WebviewLogMessage,
  applySnapshotPatch,
  monitorSnapshotSchema,
  parseHostToWebview,
} from '../src/protocol/monitor.js';
import { MonitorCharts } from './charts.js';
import { byId, fill, h } from './dom.js';
import { observeTheme } from './theme.js';
import { buildLayout, renderAll } from './render.js';
import type { Actions, Sections } from './render.js';
import { syncHostClock, tickTimes } from './ticker.js';
import { vscodeApi } from './vscodeApi.js';

const persistedSchema = z.object({ v: z.literal(1), snapshot: z.nullable(monitorSnapshotSchema), tab: z.int().check(z.nonnegative()) });
type Persisted = z.infer<typeof persistedSchema>;

const vscode = vscodeApi();
let snapshot: MonitorSnapshot | null = null;
let lastSeq = -1;
let tab = 0;
let nextId = 1;
const inFlight = new Map<number, { label: string; done: (ok: boolean, error?: string) => void }>();

function log(level: 'info' | 'warn' | 'error', text: string): void {
  if (level === 'error') console.error(`[ralph monitor] ${text}`);
  else if (level === 'warn') console.warn(`[ralph monitor] ${text}`);
  vscode.postMessage(WebviewLogMessage.create({ level, text }));
}

function persist(): void {
  const state: Persisted = { v: 1, snapshot, tab };
  vscode.setState(state);
}

function restore(): void {
  const raw = vscode.getState();
  if (raw === undefined || raw === null) return;
  const r = persistedSchema.safeParse(raw);
  if (!r.success) {
    log('warn', `saved state ignored: ${z.prettifyError(r.error)}`);
    return;
  }
  snapshot = r.data.snapshot;
  tab = r.data.tab;
}

function status(text: string, kind: 'info' | 'error' = 'info'): void {
  const el = byId('status');
  fill(el, text);
  el.title = text; // the bar truncates it in narrow columns
  el.className = `status ${kind}`;
}

/** Sends a request; the status line says it runs and how it ended (`quiet`: only a failure). */
function request(message: WebviewRequest, label: string, done?: (ok: boolean) => void, quiet = false): void {
  const id = nextId++;
  inFlight.set(id, {
    label,
    done: (ok, error) => {
      if (!ok || !quiet) status(ok ? `${label}: done` : `${label} failed: ${error ?? 'unknown error'}`, ok ? 'info' : 'error');
      done?.(ok);
    },
  });
  vscode.postMessage({ ...message, id });
  if (!quiet) status(`${label}…`);
}

const actions: Actions = {
  openTask: (taskId) => request(OpenTaskRequest.create({ taskId }), `Open ${taskId}`),
  showDiff: (taskId, patchId) => request(ShowDiffRequest.create({ taskId, patchId }), `Diff of ${taskId}`),
  resolve: (taskId, decision, done) =>
    request(ResolveDeferredRequest.create({ taskId, decision }), `${decision === 'approve' ? 'Approve' : 'Reject'} ${taskId}`, done),
  openSettings: () => request(OpenSettingsRequest.create({}), 'Monitor settings'),
  // The slider's own label says where the page is: no status line per step of a drag.
  travel: (index, done) => request(TravelRequest.create({ index }), index === null ? 'Live' : `Event ${index}`, done, true),
};

let sections: Sections;
let charts: MonitorCharts;

function render(): void {
  try {
    if (snapshot) syncHostClock(snapshot.generatedAt);
    renderAll(sections, snapshot, actions);
    if (snapshot) charts.update(snapshot.series);
  } catch (e) {
    log('error', `render failed: ${(e as Error).stack ?? String(e)}`);
  }
}

function onMessage(e: MessageEvent): void {
  const r = parseHostToWebview(e.data);
  if (!r.ok) {
    log('warn', `dropped a message: ${r.reason}`);
    return;
  }
  const m = r.message;
  switch (m.method) {
    case 'snapshot':
      snapshot = m.params.snapshot;
      lastSeq = -1;
      break;
    case 'update':
      if (!snapshot) {
        log('warn', `dropped update ${m.params.seq}: no snapshot yet`);
        return;
      }
      if (m.params.seq <= lastSeq) {
        log('warn', `dropped update ${m.params.seq}: already at ${lastSeq}`);
        return;
      }
      lastSeq = m.params.seq;
      snapshot = applySnapshotPatch(snapshot, m.params.patch);
      break;
    case 'reply': {
      const pending = inFlight.get(m.params.requestId);
      if (!pending) {
        log('warn', `reply to unknown request ${m.params.requestId}`);
        return;
      }
      inFlight.delete(m.params.requestId);
      pending.done(m.params.ok, m.params.error);
      return;
    }
  }
  persist();
  render();
}

function main(): void {
  restore();
  sections = buildLayout(byId('app'), {
    initialTab: tab,
    onTab: (i) => {
      tab = i;
      persist();
      // A chart laid out while its tab was hidden has size 0: measure again once shown.
      requestAnimationFrame(() => charts.resize());
    },
    openSettings: actions.openSettings,
    travel: actions.travel,
  });
  charts = new MonitorCharts(sections.canvases);
  render();
  window.addEventListener('message', onMessage);
  // Relative times move every second, between snapshots too.
  setInterval(() => tickTimes(document), 1000);
  window.addEventListener('resize', () => charts.resize());
  observeTheme(() => {
    charts.retheme();
  });
  vscode.postMessage(ReadyMessage.create({}));
}

try {
  main();
} catch (e) {
  const app = document.getElementById('app');
  if (app) fill(app, h('p', { className: 'fatal', role: 'alert' }, `The monitor could not start: ${(e as Error).message}`));
  log('error', `startup failed: ${(e as Error).stack ?? String(e)}`);
}
