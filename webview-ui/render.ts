// Over 400 lines because every monitor panel renders from one snapshot, with one change check per section.
// The monitor's layout and panels: header facts, four summary cards, and tabs for activity,
// charts, deferred items, cost and the log. Each section re-renders only when its slice of
// the snapshot changed, so a burst of updates does not rebuild the whole page.
import type { VscodeTabs } from '@vscode-elements/elements/dist/vscode-tabs/vscode-tabs.js';
import type { DeferredItem, MonitorSnapshot } from '../src/protocol/monitor.js';
import { PATCH_STATUSES, TASK_STATUSES } from '../src/protocol/monitor.js';
import { fill, h } from './dom.js';
import { icon } from './icons.js';
import type { IconName } from './icons.js';
import { clock, compact, duration, int, percent, usd } from './format.js';
import { timeText } from './ticker.js';
import type { TimeKind } from './ticker.js';
import { buildTimeline } from './timeline.js';
import { buildReqBlock, renderReq } from './req.js';
import type { TimelineActions, TimelineSection } from './timeline.js';

export interface Actions extends TimelineActions {
  openTask(taskId: string): void;
  showDiff(taskId: string, patchId: string | null): void;
  resolve(taskId: string, decision: 'approve' | 'reject', done: (ok: boolean) => void): void;
  openSettings(): void;
}

export interface Sections {
  readonly root: HTMLElement;
  readonly title: HTMLElement;
  readonly header: HTMLElement;
  readonly notice: HTMLElement;
  readonly timeline: TimelineSection;
  readonly cards: Record<'tasks' | 'patches' | 'events' | 'cost', HTMLElement>;
  /** REQ mode's block, hidden without a specification.yaml. */
  readonly req: HTMLElement;
  readonly recent: HTMLElement;
  readonly agents: HTMLElement;
  readonly pending: HTMLElement;
  readonly deferred: HTMLElement;
  readonly deferredBadge: HTMLElement;
  readonly costTable: HTMLElement;
  readonly log: HTMLElement;
  readonly canvases: Record<'cost' | 'flow' | 'phases', HTMLCanvasElement>;
  /** Last rendered JSON per section key. */
  readonly rendered: Map<string, string>;
}

interface LayoutOptions {
  readonly initialTab: number;
  readonly onTab: (index: number) => void;
  readonly openSettings: () => void;
  readonly travel: TimelineActions['travel'];
}

const TAB_NAMES = ['Activity', 'Charts', 'Deferred', 'Cost', 'Log'] as const;

function card(id: string, title: string, iconName: IconName): HTMLElement {
  const body = h('div', { className: 'card-body', id: `${id}-body` });
  h(
    'section',
    { className: 'card', id, role: 'group', 'aria-labelledby': `${id}-title` },
    h('h2', { className: 'card-title', id: `${id}-title` }, icon(iconName), title),
    body,
  );
  return body;
}

function panelBlock(title: string, id: string, ...extra: HTMLElement[]): { block: HTMLElement; body: HTMLElement } {
  const body = h('div', { className: 'block-body', id });
  const block = h(
    'section',
    { className: 'block', 'aria-labelledby': `${id}-title` },
    h('h3', { className: 'block-title', id: `${id}-title` }, title, ...extra),
    body,
  );
  return { block, body };
}

function chartBox(kind: string, title: string, wide: boolean): { box: HTMLElement; canvas: HTMLCanvasElement } {
  const canvas = h('canvas', { role: 'img', id: `chart-${kind}` });
  const box = h(
    'figure',
    { className: `chart${wide ? ' wide' : ''}` },
    h('figcaption', {}, title),
    h('div', { className: 'chart-area' }, canvas),
  );
  return { box, canvas };
}

/** Builds the static page skeleton once; rendering fills its sections. */
export function buildLayout(root: HTMLElement, o: LayoutOptions): Sections {
  const header = h('div', { className: 'facts', id: 'facts' });
  const title = h('h1', { id: 'title' }, 'Ralph Loop');
  const settings = h(
    'vscode-button',
    { 'icon-only': true, secondary: true, 'aria-label': 'Open monitor settings', title: 'Monitor settings', id: 'settings' },
    slotted(icon('settings-gear')),
  );
  settings.addEventListener('click', () => o.openSettings());
  const top = h(
    'header',
    { className: 'topbar' },
    h('div', { className: 'brand' }, icon('pulse'), title),
    header,
    h('span', { className: 'status', id: 'status', role: 'status', 'aria-live': 'polite' }),
    settings,
  );
  const notice = h('div', { className: 'notice', id: 'notice' });
  const timeline = buildTimeline({ travel: o.travel });

  const cardsWrap = h('div', { className: 'cards' });
  const cards = {
    tasks: card('card-tasks', 'Tasks', 'checklist'),
    patches: card('card-patches', 'Patches', 'git-pull-request'),
    events: card('card-events', 'Events', 'history'),
    cost: card('card-cost', 'Cost today', 'credit-card'),
  };
  for (const c of Object.values(cards)) if (c.parentElement) cardsWrap.append(c.parentElement);

  const tabs = h('vscode-tabs', { id: 'tabs', panel: true, 'aria-label': 'Monitor sections' }) as VscodeTabs;
  const deferredBadge = h('vscode-badge', { variant: 'counter', slot: 'content-after', id: 'deferred-count' }, '0');
  const headers = TAB_NAMES.map((name, i) =>
    h('vscode-tab-header', { slot: 'header', 'data-tab': name.toLowerCase() }, name, i === 2 ? deferredBadge : null),
  );

  const recent = panelBlock('Last events', 'recent');
  const agents = panelBlock('Running agents', 'agents');
  const pending = panelBlock('Patches waiting for promotion', 'pending');
  const activity = h('div', { className: 'grid two' }, recent.block, h('div', { className: 'stack' }, agents.block, pending.block));

  const cost = chartBox('cost', 'Cost & tokens over time', true);
  const flow = chartBox('flow', 'Cumulative flow of task states', false);
  const phases = chartBox('phases', 'Duration per phase', false);
  const chartsPanel = h('div', { className: 'grid charts' }, cost.box, flow.box, phases.box);

  const deferred = panelBlock('Deferred patches awaiting review', 'deferred');
  const costTable = panelBlock('Invocations by agent today', 'cost-by-agent');
  const log = h('pre', { className: 'log', id: 'log', tabindex: '0', 'aria-label': 'Recent log lines' });

  const panels = [activity, chartsPanel, deferred.block, costTable.block, log].map((content) => h('vscode-tab-panel', {}, content));
  for (const hd of headers) tabs.append(hd);
  for (const p of panels) tabs.append(p);
  tabs.selectedIndex = Math.min(o.initialTab, TAB_NAMES.length - 1);
  tabs.addEventListener('vsc-tabs-select', (e) => o.onTab(e.detail.selectedIndex));

  const req = buildReqBlock();
  fill(root, top, notice, timeline.root, cardsWrap, req, tabs);
  return {
    root,
    title,
    header,
    notice,
    timeline,
    cards,
    req,
    recent: recent.body,
    agents: agents.body,
    pending: pending.body,
    deferred: deferred.body,
    deferredBadge,
    costTable: costTable.body,
    log,
    canvases: { cost: cost.canvas, flow: flow.canvas, phases: phases.canvas },
    rendered: new Map(),
  };
}

// ---------------------------------------------------------------------------------------

interface Column {
  readonly label: string;
  /**
   * `fit` columns are as wide as their widest cell (times, ids, numbers, buttons); `fill`
   * columns share what is left and cut long text with an ellipsis (the full text is in the
   * cell's title).
   */
  readonly size: 'fit' | 'fill';
  readonly num?: boolean;
}

type Cell = Node | string;

/**
 * A plain, semantic table styled like VS Code's own (keybindings editor): automatic row
 * heights, columns sized to their content, zebra rows.
 */
function table(label: string, columns: readonly Column[], rows: readonly Cell[][], rowLabels?: readonly string[]): HTMLElement {
  const cls = (c: Column | undefined): string => [c?.size ?? 'fit', c?.num ? 'num' : ''].filter(Boolean).join(' ');
  const head = h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col', className: cls(c) }, c.label))));
  const body = h(
    'tbody',
    {},
    ...rows.map((cells, i) =>
      h('tr', { 'aria-label': rowLabels?.[i] ?? null }, ...cells.map((c, j) => h('td', { className: cls(columns[j]) }, c))),
    ),
  );
  return h('table', { className: 'data', 'aria-label': label }, head, body);
}

/** A time that keeps ticking ("12s ago", an elapsed "1m 5s"); the exact time is its title. */
function when(iso: string | null, kind: TimeKind, id?: string): HTMLElement {
  return h('span', { className: 'when', 'data-ts': iso ?? null, 'data-kind': kind, title: iso ?? '', id: id ?? null }, timeText(iso, kind));
}

function empty(text: string): HTMLElement {
  return h('p', { className: 'empty' }, text);
}

function dot(status: string): HTMLElement {
  return h('span', { className: `dot s-${status}`, 'aria-hidden': 'true' });
}

function fact(label: string, value: string | number | HTMLElement, id: string): HTMLElement {
  return h(
    'div',
    { className: 'fact' },
    h('span', { className: 'fact-label', id: `${id}-label` }, label),
    typeof value === 'object' ? value : h('span', { className: 'fact-value', id }, String(value)),
  );
}

function bigNumber(value: string, label: string, id: string): HTMLElement {
  return h('div', { className: 'big' }, h('span', { className: 'big-value', id }, value), h('span', { className: 'big-label' }, label));
}

function link(text: string, onClick: () => void, label: string): HTMLElement {
  const a = h('a', { href: '#', className: 'link', 'aria-label': label }, text);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    onClick();
  });
  return a;
}

/** An icon in a vscode-button's slot before its label. */
function slotted(svg: SVGSVGElement): SVGSVGElement {
  svg.setAttribute('slot', 'content-before');
  return svg;
}

function button(text: string, iconName: IconName, label: string, secondary: boolean, onClick: (b: HTMLElement) => void): HTMLElement {
  const b = h('vscode-button', { secondary, 'aria-label': label, title: label, className: 'row-action' }, slotted(icon(iconName)), text);
  b.addEventListener('click', () => onClick(b));
  return b;
}

function phaseClass(phase: string): string {
  if (['implement', 'commit'].includes(phase)) return 'p-build';
  if (['verify', 'test_integration', 'test_ui'].includes(phase)) return 'p-check';
  if (phase === 'reflect') return 'p-warn';
  if (phase === 'idle' || phase === 'stopped') return 'p-idle';
  return 'p-plan';
}

// ---------------------------------------------------------------------------------------

function renderHeader(s: Sections, snap: MonitorSnapshot): void {
  const st = snap.state;
  fill(s.title, 'Ralph Loop', snap.project.name ? h('span', { className: 'project', id: 'project' }, ` · ${snap.project.name}`) : null);
  const phase = h(
    'span',
    { className: `fact-value phase ${phaseClass(st.phase)}`, id: 'phase', 'aria-labelledby': 'phase-label phase' },
    st.phase,
  );
  const run =
    st.run === 'paused'
      ? h(
          'span',
          { className: 'run paused', id: 'run', ...(st.pause ? { title: st.pause.reason } : {}) },
          icon('debug-pause'),
          st.pause ? `paused: ${st.pause.short}` : 'paused',
        )
      : st.observing
        ? h('span', { className: 'run observing', id: 'run', title: 'Another process runs the loop; this window follows it' }, 'observing')
        : null;
  fill(
    s.header,
    fact('Phase', phase, 'phase'),
    run,
    fact('Iteration', int(st.iteration), 'iteration'),
    fact('Wave', int(st.wave), 'wave'),
    fact('Commits', int(st.commits), 'commits'),
    fact('Current', st.currentTask ?? '—', 'current'),
    h('span', { className: 'updated' }, 'updated ', when(snap.generatedAt, 'ago', 'updated')),
  );
}

function renderNotice(s: Sections, snap: MonitorSnapshot): void {
  const parts: HTMLElement[] = [];
  if (snap.empty) parts.push(h('div', { className: 'welcome', role: 'note', id: 'welcome' }, ...welcome(snap)));
  const { unconfined, incidents } = snap.safety;
  if (unconfined.length > 0 || incidents > 0) parts.push(h('div', { className: 'safety', role: 'alert', id: 'safety' }, ...safety(snap)));
  if (snap.warnings.length > 0) {
    parts.push(
      h(
        'details',
        { className: 'warnings' },
        h('summary', {}, icon('warning'), `${snap.warnings.length} input problem${snap.warnings.length === 1 ? '' : 's'}`),
        h('ul', {}, ...snap.warnings.map((w) => h('li', {}, w))),
      ),
    );
  }
  fill(s.notice, ...parts);
}

/** Said above everything: agents that can write anything the user can, and incidents. */
function safety(snap: MonitorSnapshot): (Element | string)[] {
  const { unconfined, incidents } = snap.safety;
  const lines: string[] = [];
  if (unconfined.length > 0) {
    const who = snap.state.run === 'stopped' ? "The last run's agents ran" : 'Agents run';
    lines.push(`${who} UNCONFINED (agents.unconfined: true): ${unconfined.join(', ')} could write anything your user can.`);
  }
  if (incidents > 0)
    lines.push(`${incidents} integrity incident${incidents === 1 ? '' : 's'}: see ralph status and ralph restore-incident.`);
  return [icon('warning'), h('span', {}, lines.join(' '))];
}

/** The empty state says what to do next in this project, not in some other one. */
function welcome(snap: MonitorSnapshot): (Element | string)[] {
  const infoIcon = icon('info');
  const cmd = (t: string): HTMLElement => h('strong', {}, t);
  if (!snap.project.initialized) {
    return [
      infoIcon,
      h(
        'span',
        {},
        'This folder has no Ralph project yet. Run ',
        cmd('Ralph: Initialize Project'),
        ', then ',
        cmd('Ralph: Start Loop'),
        '.',
      ),
    ];
  }
  const n = snap.project.specs;
  if (n > 0) {
    return [
      infoIcon,
      h(
        'span',
        {},
        `Ready: ${n} spec file${n === 1 ? '' : 's'} found. Run `,
        cmd('Ralph: Start Loop'),
        ' — the first step turns the specs into tasks, and this page fills in as the loop works.',
      ),
    ];
  }
  return [
    infoIcon,
    h(
      'span',
      {},
      'Ready, but there is nothing to work on yet: add spec documents under ',
      h('code', {}, 'specs/'),
      ' or a task with ',
      cmd('Ralph: Add Task…'),
      ', then run ',
      cmd('Ralph: Start Loop'),
      '.',
    ),
  ];
}

function renderTasks(el: HTMLElement, snap: MonitorSnapshot): void {
  const t = snap.tasks;
  const live = t.total - t.byStatus.dropped;
  const bar = h('vscode-progress-bar', {
    'aria-label': `Tasks done: ${percent(t.progress)}`,
    max: '100',
    value: String(Math.round(t.progress * 1000) / 10),
  });
  const legend = h(
    'ul',
    { className: 'legend', 'aria-label': 'Tasks by status' },
    ...TASK_STATUSES.filter((x) => x !== 'dropped' || t.byStatus.dropped > 0).map((x) =>
      h(
        'li',
        { className: t.byStatus[x] === 0 ? 'zero' : '', id: `tasks-${x}` },
        dot(x),
        h('span', { className: 'n' }, int(t.byStatus[x])),
        ` ${x}`,
      ),
    ),
  );
  fill(
    el,
    h(
      'div',
      { className: 'big-row' },
      bigNumber(int(t.total), 'tasks', 'tasks-total'),
      h(
        'span',
        { className: 'share', id: 'tasks-progress' },
        `${percent(t.progress)} done`,
        h('span', { className: 'muted' }, ` · ${int(t.byStatus.done)}/${int(live)}`),
      ),
    ),
    bar,
    legend,
  );
}

function renderPatches(el: HTMLElement, snap: MonitorSnapshot): void {
  const p = snap.patches;
  fill(
    el,
    h(
      'div',
      { className: 'big-row' },
      bigNumber(int(p.byStatus.promoted), 'promoted', 'patches-promoted'),
      h('span', { className: 'share' }, `${int(p.total)} total`),
    ),
    h(
      'ul',
      { className: 'legend', 'aria-label': 'Patches by status' },
      ...PATCH_STATUSES.filter((x) => x !== 'promoted').map((x) =>
        h(
          'li',
          { className: p.byStatus[x] === 0 ? 'zero' : '', id: `patches-${x}` },
          dot(`p-${x}`),
          h('span', { className: 'n' }, int(p.byStatus[x])),
          ` ${x}`,
        ),
      ),
    ),
    h('div', { className: 'sub' }, icon('git-merge'), `${int(p.pendingFiles.length)} waiting for promotion`),
  );
}

function renderEvents(el: HTMLElement, snap: MonitorSnapshot): void {
  const e = snap.events;
  fill(
    el,
    h('div', { className: 'big-row' }, bigNumber(int(e.total), 'events', 'events-total')),
    h(
      'dl',
      { className: 'pairs' },
      h('dt', {}, 'last hour'),
      h('dd', { id: 'events-hour' }, int(e.lastHour)),
      h('dt', {}, 'last 10 min'),
      h('dd', { id: 'events-10min' }, int(e.last10Min)),
      h('dt', {}, 'latest'),
      h('dd', {}, when(e.recent[0]?.ts ?? null, 'ago', 'events-latest')),
    ),
  );
}

function renderCost(el: HTMLElement, snap: MonitorSnapshot): void {
  const c = snap.cost;
  fill(
    el,
    h('div', { className: 'big-row' }, bigNumber(usd(c.cost), `on ${c.day}`, 'cost-today')),
    h(
      'dl',
      { className: 'pairs' },
      h('dt', {}, 'invocations'),
      h('dd', { id: 'cost-invocations' }, int(c.invocations)),
      h('dt', {}, 'failures'),
      h('dd', { id: 'cost-failures', className: c.failures > 0 ? 'bad' : '' }, int(c.failures)),
      ...c.byAgent.slice(0, 3).flatMap((a) => [h('dt', {}, `agent ${a.agent}`), h('dd', {}, usd(a.cost))]),
    ),
    snap.forecast ? h('p', { className: 'forecast', id: 'forecast' }, snap.forecast.replace(/^Forecast: /, '')) : null,
  );
}

function renderRecent(el: HTMLElement, snap: MonitorSnapshot, actions: Actions): void {
  const rows = snap.events.recent;
  if (rows.length === 0) return fill(el, empty('No events yet.'));
  fill(
    el,
    table(
      'Last events',
      [
        { label: 'When', size: 'fit' },
        { label: 'Event', size: 'fit' },
        { label: 'Entity', size: 'fit' },
        { label: 'Actor', size: 'fit' },
        { label: 'Detail', size: 'fill' },
      ],
      rows.map((r) => [
        when(r.ts, 'ago'),
        h('span', { className: `etype e-${r.eventType.split('.')[0] ?? ''}` }, r.eventType),
        r.entityType === 'task'
          ? link(r.entityId, () => actions.openTask(r.entityId), `Open task ${r.entityId}`)
          : h('span', { className: 'mono' }, r.entityId),
        r.actor,
        h('span', { className: 'muted', title: r.summary }, r.summary),
      ]),
      rows.map((r) => `${r.eventType} ${r.entityId} by ${r.actor} at ${r.ts}`),
    ),
  );
}

function renderAgents(el: HTMLElement, snap: MonitorSnapshot, actions: Actions): void {
  if (snap.agents.length === 0) {
    return fill(el, empty(snap.state.run === 'stopped' ? 'The loop is stopped: no agent runs.' : 'No agent is running.'));
  }
  fill(
    el,
    table(
      'Agents',
      [
        { label: 'Agent', size: 'fill' },
        { label: 'Phase', size: 'fit' },
        { label: 'Task', size: 'fit' },
        { label: 'Elapsed', size: 'fit', num: true },
        { label: 'Cost', size: 'fit', num: true },
      ],
      snap.agents.map((a) => [
        // A spinner only while an agent process really runs; between invocations it waits.
        a.busy
          ? h('span', {}, h('vscode-progress-ring', { className: 'spin', 'aria-label': `${a.name} running` }), ` ${a.name}`)
          : h('span', {}, icon('circle-large', `${a.name} waiting`), ` ${a.name}`),
        h('span', { className: `phase small ${phaseClass(a.phase)}` }, a.phase),
        a.taskId ? link(a.taskId, () => actions.openTask(a.taskId ?? ''), `Open task ${a.taskId}`) : '—',
        a.busy && a.startedAt ? when(a.startedAt, 'elapsed', `elapsed-${a.name}`) : '—',
        usd(a.cost),
      ]),
    ),
  );
}

function renderPending(el: HTMLElement, snap: MonitorSnapshot): void {
  const files = snap.patches.pendingFiles;
  if (files.length === 0) return fill(el, empty('No patch waits for promotion.'));
  fill(el, h('ul', { className: 'files' }, ...files.map((f) => h('li', {}, icon('diff'), h('span', { className: 'mono' }, f)))));
}

function verdictCell(d: DeferredItem): HTMLElement | string {
  if (!d.verdict) return h('span', { className: 'muted' }, 'awaiting judge');
  const cls = /approve|accept|promote/i.test(d.verdict.decision) ? 'good' : /reject|discard/i.test(d.verdict.decision) ? 'bad' : '';
  return h(
    'span',
    { title: d.verdict.rationale },
    h('strong', { className: cls }, d.verdict.decision),
    d.verdict.rationale ? h('span', { className: 'muted' }, ` · ${d.verdict.rationale}`) : null,
  );
}

function renderDeferred(s: Sections, snap: MonitorSnapshot, actions: Actions): void {
  fill(s.deferredBadge, String(snap.deferred.length));
  s.deferredBadge.setAttribute('aria-label', `${snap.deferred.length} deferred`);
  const rows = snap.deferred;
  if (rows.length === 0) return fill(s.deferred, empty('No deferred patches. Tier-2 patches wait here for your review or the judge.'));
  fill(
    s.deferred,
    table(
      'Deferred patches',
      [
        { label: 'Task', size: 'fit' },
        { label: 'Title', size: 'fill' },
        { label: 'Tier', size: 'fit' },
        { label: 'Reason', size: 'fill' },
        { label: 'Judge', size: 'fill' },
        { label: 'Deferred', size: 'fit', num: true },
        { label: '', size: 'fit' },
      ],
      rows.map((d) => {
        const actionsCell = h('div', { className: 'actions', id: `actions-${d.taskId}` });
        const disableAll = (on: boolean): void => {
          for (const b of actionsCell.querySelectorAll('vscode-button')) b.toggleAttribute('disabled', on);
        };
        actionsCell.append(
          button('Diff', 'diff', `Show the diff of ${d.taskId}`, true, () => actions.showDiff(d.taskId, d.patchId)),
          button('Approve', 'check', `Approve ${d.taskId}`, false, () => {
            disableAll(true);
            actions.resolve(d.taskId, 'approve', () => disableAll(false));
          }),
          button('Reject', 'close', `Reject ${d.taskId}`, true, () => {
            disableAll(true);
            actions.resolve(d.taskId, 'reject', () => disableAll(false));
          }),
        );
        return [
          link(d.taskId, () => actions.openTask(d.taskId), `Open task ${d.taskId}`),
          h('span', { title: `${d.title}\n${d.source}` }, d.title || '—'),
          h('span', { className: `tier t${d.riskTier}`, 'aria-label': `risk tier ${d.riskTier}` }, `T${d.riskTier}`),
          h('span', { title: d.reason }, d.reason || '—'),
          verdictCell(d),
          when(d.deferredAt, 'ago'),
          actionsCell,
        ];
      }),
      rows.map((d) => `${d.taskId} ${d.title}, tier ${d.riskTier}`),
    ),
  );
}

function renderCostTable(el: HTMLElement, snap: MonitorSnapshot): void {
  const rows = snap.cost.byAgent;
  if (rows.length === 0) return fill(el, empty(`No invocations on ${snap.cost.day} yet.`));
  fill(
    el,
    table(
      'Invocations by agent today',
      [
        { label: 'Agent', size: 'fill' },
        { label: 'Invocations', size: 'fit', num: true },
        { label: 'Failures', size: 'fit', num: true },
        { label: 'Cost', size: 'fit', num: true },
        { label: 'Input', size: 'fit', num: true },
        { label: 'Output', size: 'fit', num: true },
        { label: 'Cache read / write', size: 'fit', num: true },
        { label: 'Agent time', size: 'fit', num: true },
      ],
      rows.map((a) => [
        h('strong', {}, a.agent),
        int(a.invocations),
        h('span', { className: a.failures > 0 ? 'bad' : 'muted' }, int(a.failures)),
        usd(a.cost),
        compact(a.inputTokens),
        compact(a.outputTokens),
        `${compact(a.cacheRead)} / ${compact(a.cacheCreate)}`,
        duration(a.durationSec),
      ]),
    ),
  );
}

function renderLog(el: HTMLElement, snap: MonitorSnapshot): void {
  if (snap.logLines.length === 0) return fill(el, h('span', { className: 'muted' }, 'No log lines yet.'));
  fill(
    el,
    ...snap.logLines.map((l) =>
      h('div', { className: `line l-${l.level}` }, l.ts ? h('span', { className: 'muted' }, `${clock(l.ts)} `) : null, l.text),
    ),
  );
  el.scrollTop = el.scrollHeight;
}

/** Renders every section whose slice of the snapshot changed since the last render. */
export function renderAll(s: Sections, snap: MonitorSnapshot | null, actions: Actions): void {
  s.root.classList.toggle('waiting', snap === null);
  if (!snap) {
    fill(
      s.notice,
      h(
        'div',
        { className: 'welcome' },
        h('vscode-progress-ring', { 'aria-label': 'Waiting for the first snapshot' }),
        h('span', {}, 'Waiting for the loop’s first snapshot…'),
      ),
    );
    return;
  }
  const once = (key: string, data: unknown, fn: () => void): void => {
    const json = JSON.stringify(data);
    if (s.rendered.get(key) === json) return;
    s.rendered.set(key, json);
    fn();
  };
  once('header', [snap.state, snap.project, snap.generatedAt], () => renderHeader(s, snap));
  once('notice', [snap.empty, snap.project, snap.warnings, snap.safety, snap.state.run], () => renderNotice(s, snap));
  once('tasks', snap.tasks, () => renderTasks(s.cards.tasks, snap));
  once('patches', snap.patches, () => renderPatches(s.cards.patches, snap));
  once('events', [snap.events.total, snap.events.lastHour, snap.events.last10Min, snap.events.recent[0]?.ts], () =>
    renderEvents(s.cards.events, snap),
  );
  once('cost', [snap.cost, snap.forecast], () => renderCost(s.cards.cost, snap));
  once('timeline', snap.timeline, () => {
    s.root.classList.toggle('past', snap.timeline.at !== null);
    s.timeline.render(snap.timeline);
  });
  once('req', snap.req, () => renderReq(s.req, snap.req));
  once('recent', snap.events.recent, () => renderRecent(s.recent, snap, actions));
  once('agents', [snap.agents, snap.state.run], () => renderAgents(s.agents, snap, actions));
  once('pending', snap.patches.pendingFiles, () => renderPending(s.pending, snap));
  once('deferred', snap.deferred, () => renderDeferred(s, snap, actions));
  once('costTable', snap.cost.byAgent, () => renderCostTable(s.costTable, snap));
  once('log', snap.logLines, () => renderLog(s.log, snap));
}
