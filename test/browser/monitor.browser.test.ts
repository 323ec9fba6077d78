// The monitor webview in a real browser (Debian chromium through playwright-core): the
// page the panel serves (same HTML builder, CSP and nonce) from a tiny 127.0.0.1 server,
// with a stub acquireVsCodeApi that records what the page posts. Checks the numbers of a
// real snapshot appear, a burst of updates lands, zero CSP violations, Approve posts the
// right request, a reload restores the state, and leaves screenshots in .artifacts/.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { codiconPaths, oneEnglishZod } from '../../scripts/esbuildPlugins.cjs';
import { chromium } from 'playwright-core';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';
import { createNonce, renderMonitorHtml } from '../../src/extension/monitor/monitorHtml';
import { buildMonitorSnapshot } from '../../src/monitor/snapshot';
import type { MonitorSnapshot } from '../../src/protocol/monitor';
import { emptySnapshot } from '../../src/protocol/monitor';
import { seedDemoProject } from '../unit/monitor/demoData';
import { REFERENCE_DDL, insertEvents, openSqlJs, readerOf } from '../unit/monitor/sqlFixture';
import { REQ_NOW, REQ_SPEC, agent, layer, reqRunEvents } from '../unit/monitor/reqFixture';
import { THEMES } from './themes';
import type { ThemeName } from './themes';
import { CHROMIUM_ARGS, chromiumPath } from '../kit/chromium';

const ROOT = resolve(__dirname, '..', '..');
const SHOTS = join(ROOT, '.artifacts', 'screenshots');
const NOW = new Date('2026-11-29T15:40:00.000Z');

/** Runs before the bundle: the VS Code API stub, the CSP listener and the theme variables. */
function prelude(theme: ThemeName): string {
  const t = THEMES[theme];
  return `
window.__posted = [];
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
window.acquireVsCodeApi = () => ({
  postMessage: (m) => window.__posted.push(JSON.parse(JSON.stringify(m))),
  getState: () => { const s = sessionStorage.getItem('vscode-state'); return s ? JSON.parse(s) : undefined; },
  setState: (s) => { sessionStorage.setItem('vscode-state', JSON.stringify(s)); return s; },
});
window.__setTheme = (vars, bodyClass) => {
  for (const [k, v] of Object.entries(vars)) document.documentElement.style.setProperty(k, v);
  document.body.className = bodyClass;
};
window.__setTheme(${JSON.stringify(t.vars)}, ${JSON.stringify(t.bodyClass)});
`;
}

interface Served {
  server: Server;
  origin: string;
}

async function serve(distDir: string): Promise<Served> {
  const types: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.ttf': 'font/ttf', '.map': 'application/json' };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/') {
      const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
      const nonce = createNonce();
      const theme = (url.searchParams.get('theme') ?? 'dark') as ThemeName;
      const html = renderMonitorHtml({
        cspSource: origin,
        nonce,
        scriptUri: `${origin}/dist/webview/monitor.js`,
        styleUri: `${origin}/dist/webview/monitor.css`,
      }).replace('<body>', `<body>\n<script nonce="${nonce}">${prelude(theme)}</script>`);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
      return;
    }
    if (url.pathname === '/favicon.ico') return void res.writeHead(204).end(); // the browser asks; VS Code's frame never does
    const m = /^\/dist\/webview\/([\w.-]+)$/.exec(url.pathname);
    if (!m?.[1]) return void res.writeHead(404).end();
    try {
      const body = readFileSync(join(distDir, m[1]));
      res.writeHead(200, { 'content-type': types[m[1].slice(m[1].lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Builds the webview bundle exactly as esbuild.js's webview entry does, into `out`. */
async function buildWebview(out: string): Promise<void> {
  await build({
    entryPoints: [join(ROOT, 'webview-ui', 'main.ts')],
    outfile: join(out, 'monitor.js'),
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    minify: true,
    plugins: [oneEnglishZod, codiconPaths],
    logLevel: 'error',
  });
}

async function demoSnapshot(): Promise<MonitorSnapshot> {
  const db = await openSqlJs();
  const dir = mkdtempSync(join(tmpdir(), 'ralph-mon-browser-'));
  try {
    const { logsDir } = seedDemoProject(db, dir, NOW);
    const busy = readerOf(db).all<{ task_id: string }>(
      "SELECT task_id FROM task_view WHERE status IN ('claimed', 'proposed') ORDER BY task_id DESC",
    );
    const agentStart = (min: number): string => new Date(NOW.getTime() - min * 60_000).toISOString();
    return buildMonitorSnapshot(readerOf(db), logsDir, NOW, {
      run: 'running',
      project: { name: 'demo', specs: 3 },
      agents: [
        {
          name: 'primary',
          role: 'A',
          phase: 'implement',
          taskId: busy[0]?.task_id ?? null,
          startedAt: agentStart(3),
          busy: true,
          cost: 0.412,
        },
        {
          name: 'worker-b',
          role: 'B',
          phase: 'verify',
          taskId: busy[1]?.task_id ?? null,
          startedAt: agentStart(11),
          busy: true,
          cost: 0.187,
        },
      ],
      logLines: [
        { ts: agentStart(14), level: 'info', text: '[primary] assess → plan: W2-022 Search endpoint (effort M)' },
        { ts: agentStart(12), level: 'info', text: '[worker-b] worktree .ralph/worktrees/W2-021 ready at 4f3a9c1' },
        { ts: agentStart(9), level: 'warn', text: '[gate] npm test: 1 failing (retry 1/3)' },
        { ts: agentStart(7), level: 'info', text: '[gate] npm test: 212 passing' },
        { ts: agentStart(5), level: 'info', text: '[control] policy W2-020: tier 2 → defer (touches auth/)' },
        { ts: agentStart(3), level: 'info', text: '[primary] plan → implement: sub-step 1/3' },
      ],
    });
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** REQ mode halfway: a real specification.yaml and req.* events through the snapshot code. */
async function reqSnapshot(): Promise<MonitorSnapshot> {
  const db = await openSqlJs();
  const dir = mkdtempSync(join(tmpdir(), 'ralph-mon-browser-req-'));
  try {
    db.run(REFERENCE_DDL);
    writeFileSync(join(dir, 'specification.yaml'), REQ_SPEC);
    mkdirSync(join(dir, '.ralph', 'logs'), { recursive: true });
    insertEvents(db, [
      ...reqRunEvents(),
      agent('agent.started', 'REQ-002'),
      agent('agent.finished', 'REQ-002'),
      layer('REQ-002', 2, 'L1', true),
    ]);
    return buildMonitorSnapshot(readerOf(db), join(dir, '.ralph', 'logs'), REQ_NOW);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same project after its loop stopped: what the host sends then. */
function buildStopped(s: MonitorSnapshot): MonitorSnapshot {
  return { ...s, state: { ...s.state, phase: 'stopped', run: 'stopped', currentTask: null }, agents: [] };
}

describe('monitor webview in chromium', function () {
  this.timeout(120_000);
  let out: string;
  let served: Served;
  let browser: Browser;
  let page: Page;
  let snap: MonitorSnapshot;
  const consoleErrors: string[] = [];
  const violations: string[] = [];

  /** Keeps the page's CSP violations before it navigates away. */
  async function collectViolations(): Promise<void> {
    if (page.url().startsWith('http'))
      violations.push(...(await page.evaluate(() => (window as unknown as { __violations: string[] }).__violations)));
  }

  const posted = (): Promise<{ method: string; params: Record<string, unknown>; id?: number }[]> =>
    page.evaluate(() => (window as unknown as { __posted: { method: string; params: Record<string, unknown>; id?: number }[] }).__posted);
  const post = (msg: unknown): Promise<void> => page.evaluate((m) => window.postMessage(m, '*'), msg);
  const text = (sel: string): Promise<string> => page.locator(sel).first().innerText();

  async function open(theme: ThemeName): Promise<void> {
    await collectViolations();
    await page.goto(`${served.origin}/?theme=${theme}`);
    await page.waitForFunction(() => (window as unknown as { __posted: { method: string }[] }).__posted.some((m) => m.method === 'ready'));
  }

  async function shot(name: string): Promise<void> {
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: join(SHOTS, name), fullPage: true });
  }

  async function selectTab(name: string): Promise<void> {
    await page.locator(`vscode-tab-header[data-tab="${name}"]`).click();
  }

  before(async () => {
    out = mkdtempSync(join(tmpdir(), 'ralph-webview-'));
    mkdirSync(SHOTS, { recursive: true });
    await buildWebview(out);
    served = await serve(out);
    snap = await demoSnapshot();
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: [...CHROMIUM_ARGS] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1 });
    page = await context.newPage();
    page.on('console', (m: ConsoleMessage) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) consoleErrors.push(m.text());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) consoleErrors.push(`${r.status()} ${r.url()}`);
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  });

  after(async () => {
    await browser?.close();
    await new Promise((r) => served?.server.close(r));
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('says ready, then shows the phase, task counts and cost of a snapshot', async () => {
    await open('dark');
    const first = (await posted())[0];
    assert.equal(first?.method, 'ready');
    await post({ method: 'snapshot', params: { snapshot: snap } });
    await page.locator('#phase', { hasText: snap.state.phase }).waitFor();
    assert.equal(await text('#tasks-total'), String(snap.tasks.total));
    assert.equal(await text('#tasks-done .n'), String(snap.tasks.byStatus.done));
    assert.equal(await text('#tasks-deferred .n'), String(snap.tasks.byStatus.deferred));
    assert.equal(await text('#iteration'), String(snap.state.iteration));
    assert.equal(await text('#commits'), String(snap.state.commits));
    assert.equal(await text('#cost-today'), `$${snap.cost.cost.toFixed(snap.cost.cost < 10 ? 3 : 2)}`);
    assert.equal(await text('#cost-invocations'), String(snap.cost.invocations));
    assert.equal(await text('#events-total'), snap.events.total.toLocaleString('en-US'));
    assert.ok(snap.deferred.length >= 2, 'the demo has deferred items');
    assert.equal(await text('#deferred-count'), String(snap.deferred.length));
    await shot('monitor.png');
  });

  it('shows REQ mode: progress by level, the current REQ with its round and layer, blocked REQs with why, learnings; hidden without a specification', async () => {
    assert.equal(await page.locator('#req').isVisible(), false, 'no specification: no REQ section');
    const req = (await reqSnapshot()).req;
    assert.ok(req, 'the snapshot has a REQ section');
    await post({ method: 'snapshot', params: { snapshot: { ...snap, req } } });
    await page.locator('#req-done', { hasText: '1/5' }).waitFor();
    assert.equal(await text('#req-state'), 'running');
    assert.equal((await text('#req-iteration')).trim(), '· iteration 3/15');
    const levels = await page.$$eval('#req-levels li', (els) => els.map((e) => e.textContent));
    assert.deepEqual(levels, ['Level 0 1/2', 'Level 1 0/2', 'Level 2 0/1', '2 pending · 2 blocked · 0 skipped']);
    const current = await text('#req-current');
    assert.match(current, /REQ-002 Add sub\(\) · round 2\/3/);
    assert.match(current, /previous round: L1b failed: 10% test lines/);
    const chips = await page.$$eval('#req-current .req-layer', (els) =>
      els.map((e) => `${e.textContent} ${e.className.replace('req-layer ', '')}`),
    );
    assert.deepEqual(chips, ['agent passed', 'L1 passed', 'L1b running', 'L2 waiting', 'L3 waiting']);
    assert.match(
      await text('#req-blocked li[data-req="REQ-003"]'),
      /^blocked REQ-003 Add mul\(\): failed 3 rounds: .* — decide: skip \/ manual \/ stop \/ rollback$/,
    );
    assert.equal(await text('#req-blocked li[data-req="REQ-005"]'), 'blocked(auto) REQ-005 Add sq(): waits on REQ-003, which is blocked');
    assert.equal(await text('#req-learnings li'), 'contextual · REQ-002: sub() takes two numbers');
    await shot('monitor-req.png');
    await post({ method: 'snapshot', params: { snapshot: snap } });
    await page.locator('#req').waitFor({ state: 'hidden' });
  });

  it('applies a burst of updates, drops invalid and stale messages with a reason', async () => {
    for (let i = 1; i <= 60; i++) {
      await post({ method: 'update', params: { seq: i, patch: { events: { ...snap.events, total: snap.events.total + i } } } });
    }
    await post({ method: 'update', params: { seq: 3, patch: { events: { ...snap.events, total: 1 } } } });
    await post({ method: 'update', params: { seq: 61, patch: { tasks: { total: 'many' } } } });
    await post({ hello: 'world' });
    await page.locator('#events-total', { hasText: (snap.events.total + 60).toLocaleString('en-US') }).waitFor();
    await page.waitForFunction(
      () => (window as unknown as { __posted: { method: string }[] }).__posted.filter((m) => m.method === 'log').length >= 3,
    );
    const logs = (await posted()).filter((m) => m.method === 'log').map((m) => String(m.params['text']));
    assert.ok(
      logs.some((l) => /dropped update 3: already at 60/.test(l)),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => /invalid params for 'update'/.test(l)),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => /not a message envelope/.test(l)),
      logs.join('\n'),
    );
    assert.equal(await text('#tasks-total'), String(snap.tasks.total));
  });

  it('sizes the charts when their hidden tab is shown', async () => {
    await selectTab('charts');
    for (const id of ['chart-cost', 'chart-flow', 'chart-phases']) {
      await page.waitForFunction((i) => {
        const c = document.getElementById(i) as HTMLCanvasElement | null;
        return !!c && c.clientWidth > 100 && c.clientHeight > 100;
      }, id);
    }
    const label = await page.locator('#chart-flow').getAttribute('aria-label');
    assert.match(label ?? '', /Cumulative flow of task states/);
    await shot('monitor-charts.png');
  });

  it('posts a resolveDeferred request with an id when Approve is clicked, and shows the reply', async () => {
    await selectTab('deferred');
    const item = snap.deferred[0];
    assert.ok(item);
    await shot('monitor-deferred.png');
    await page.locator(`vscode-button[aria-label="Approve ${item.taskId}"]`).click();
    await page.waitForFunction(() =>
      (window as unknown as { __posted: { method: string }[] }).__posted.some((m) => m.method === 'resolveDeferred'),
    );
    const req = (await posted()).find((m) => m.method === 'resolveDeferred');
    assert.deepEqual(req?.params, { taskId: item.taskId, decision: 'approve' });
    assert.equal(typeof req?.id, 'number');
    assert.equal(await page.locator(`vscode-button[aria-label="Reject ${item.taskId}"]`).getAttribute('disabled'), '');
    await post({ method: 'reply', params: { requestId: req?.id, ok: true } });
    await page.locator('#status', { hasText: `Approve ${item.taskId}: done` }).waitFor();
    assert.equal(await page.locator(`vscode-button[aria-label="Reject ${item.taskId}"]`).getAttribute('disabled'), null);
  });

  it('draws its icons without a font: each a visible inline SVG in the text colour, buttons with theirs', async () => {
    await selectTab('deferred');
    const icons = await page.$$eval('svg.icon', (els) =>
      els.map((e) => ({
        name: e.getAttribute('class'),
        paths: [...e.querySelectorAll('path')].map((p) => (p.getAttribute('d') ?? '').length),
        fill: e.getAttribute('fill'),
        hidden: e.getAttribute('aria-hidden'),
      })),
    );
    const names = new Set(icons.map((i) => i.name));
    for (const n of ['pulse', 'checklist', 'git-pull-request', 'history', 'credit-card', 'settings-gear', 'check', 'close', 'diff']) {
      assert.ok(names.has(`icon icon-${n}`), `no ${n} icon among ${[...names].join(', ')}`);
    }
    for (const i of icons) {
      assert.ok(i.paths.length > 0 && i.paths.every((d) => d > 20), `${String(i.name)} has no path data`);
      assert.equal(i.fill, 'currentColor');
    }
    const approve = page.locator('vscode-button[aria-label^="Approve "]').first();
    assert.equal(await approve.locator('svg.icon-check[slot="content-before"]').count(), 1);
    assert.ok((await approve.locator('svg.icon-check').boundingBox())?.width === 16);
    assert.equal(await page.locator('link[rel="stylesheet"][href*="codicon"]').count(), 0);
  });

  it("lists today's cost by agent and the recent log lines", async () => {
    await selectTab('cost');
    const rows = page.locator('#cost-by-agent tbody tr');
    await rows.first().waitFor();
    assert.equal(await rows.count(), snap.cost.byAgent.length);
    await shot('monitor-cost.png');
    await selectTab('log');
    assert.equal(await page.locator('#log .line').count(), snap.logLines.length);
    assert.equal(await page.locator('#log .line.l-warn').count(), 1);
    await shot('monitor-log.png');
    await selectTab('deferred');
  });

  it('stays readable in a narrow editor column', async () => {
    await page.setViewportSize({ width: 680, height: 900 });
    await selectTab('activity');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await shot('monitor-narrow.png');
    await page.setViewportSize({ width: 1280, height: 860 });
    await selectTab('deferred');
  });

  it('restores the last snapshot and tab after a reload, before the host answers', async () => {
    await collectViolations();
    await page.reload();
    await page.waitForFunction(() => (window as unknown as { __posted: { method: string }[] }).__posted.some((m) => m.method === 'ready'));
    assert.equal(await text('#phase'), snap.state.phase);
    assert.equal(await text('#events-total'), (snap.events.total + 60).toLocaleString('en-US'));
    assert.equal(await page.locator('vscode-tabs').evaluate((t) => (t as unknown as { selectedIndex: number }).selectedIndex), 2);
  });

  it('re-reads the theme when VS Code switches it', async () => {
    await selectTab('charts');
    await page.evaluate(([vars, cls]) => (window as unknown as { __setTheme: (v: unknown, c: string) => void }).__setTheme(vars, cls), [
      THEMES.light.vars,
      THEMES.light.bodyClass,
    ] as const);
    await page.waitForFunction(
      () => getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-background').trim() === '#ffffff',
    );
    // The charts are rebuilt on the next frame with the light colours.
    await page.waitForFunction(() => {
      const c = document.getElementById('chart-cost') as HTMLCanvasElement | null;
      return !!c && c.clientWidth > 100;
    });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await shot('monitor-light-charts.png');
    await selectTab('activity');
    await shot('monitor-light.png');
  });

  it('labels the phase as such; when the loop stops, the phase reads stopped and nothing spins', async () => {
    await selectTab('activity');
    assert.equal(await text('#phase-label'), 'PHASE'); // the label is uppercased by CSS
    assert.equal(await page.locator('#agents vscode-progress-ring').count(), 2);
    const stopped = buildStopped(snap);
    await post({ method: 'snapshot', params: { snapshot: stopped } });
    await page.locator('#phase', { hasText: 'stopped' }).waitFor();
    assert.equal(await text('#current'), '—');
    assert.equal(await page.locator('vscode-progress-ring').count(), 0);
    await page.locator('#agents .empty', { hasText: 'The loop is stopped' }).waitFor();
    await shot('monitor-stopped.png');
    await post({ method: 'snapshot', params: { snapshot: snap } });
    await page.locator('#phase', { hasText: snap.state.phase }).waitFor();
  });

  it('ticks relative times and elapsed times between snapshots', async () => {
    await selectTab('activity');
    const first = await text('#elapsed-primary');
    const updated = await text('#updated');
    // No message is posted: the page's own clock moves the texts.
    await page.waitForFunction(
      ([a, u]) => document.getElementById('elapsed-primary')?.textContent !== a && document.getElementById('updated')?.textContent !== u,
      [first, updated] as const,
      { timeout: 10_000 },
    );
    assert.match(await text('#elapsed-primary'), /^\d+m \d+s$/);
  });

  it('sizes table columns to their content: times and names stay narrow, the detail takes the rest', async () => {
    await selectTab('activity');
    const widths = await page.locator('#recent table thead th').evaluateAll((ths) => ths.map((th) => th.getBoundingClientRect().width));
    const [when, , , , detail] = widths;
    assert.ok(when !== undefined && detail !== undefined, JSON.stringify(widths));
    assert.ok(when < 90, `the When column is ${when}px wide`);
    assert.ok(detail > 2 * when, `the Detail column (${detail}px) gets the remaining width: ${JSON.stringify(widths)}`);
    // Nothing in a fit column is cut: its cells are as wide as their content.
    const cut = await page
      .locator('#recent td.fit')
      .evaluateAll((tds) => tds.filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.textContent));
    assert.deepEqual(cut, []);
  });

  it('given an initialized project without activity, then the welcome says what to do next here', async () => {
    await page.evaluate(() => sessionStorage.clear());
    await open('dark');
    const empty = emptySnapshot(NOW);
    await post({ method: 'snapshot', params: { snapshot: { ...empty, project: { name: 'calc', initialized: true, specs: 2 } } } });
    await page.locator('#welcome', { hasText: '2 spec files found' }).waitFor();
    assert.doesNotMatch(await text('#welcome'), /Initialize Project/);
    assert.match(await text('#title'), /calc/);
    await post({ method: 'snapshot', params: { snapshot: { ...empty, project: { name: 'calc', initialized: true, specs: 0 } } } });
    await page.locator('#welcome', { hasText: 'nothing to work on yet' }).waitFor();
  });

  it('given agents that ran unconfined and an incident, then a warning above everything says so, for a running and for a stopped loop', async () => {
    await page.evaluate(() => sessionStorage.clear());
    await open('dark');
    const running = {
      ...snap,
      state: { ...snap.state, run: 'running' as const },
      safety: { unconfined: ['primary (claude)'], incidents: 2 },
    };
    await post({ method: 'snapshot', params: { snapshot: running } });
    await page.locator('#safety[role=alert]', { hasText: 'Agents run UNCONFINED' }).waitFor();
    assert.match(await text('#safety'), /primary \(claude\) could write anything your user can.*2 integrity incidents/);
    await post({
      method: 'snapshot',
      params: { snapshot: { ...running, generatedAt: NOW.toISOString(), state: { ...snap.state, run: 'stopped' as const } } },
    });
    await page.locator('#safety', { hasText: "The last run's agents ran UNCONFINED" }).waitFor();
    await post({ method: 'snapshot', params: { snapshot: { ...snap, safety: { unconfined: [], incidents: 0 } } } });
    await page.locator('#safety').waitFor({ state: 'detached' });
  });

  it('shows an empty project without errors', async () => {
    await page.evaluate(() => sessionStorage.clear());
    await open('dark');
    await post({ method: 'snapshot', params: { snapshot: emptySnapshot(NOW) } });
    await page.locator('.welcome', { hasText: 'no Ralph project yet' }).waitFor();
    assert.equal(await text('#tasks-total'), '0');
    await selectTab('charts');
    assert.match((await page.locator('#chart-cost').getAttribute('aria-label')) ?? '', /no invocations recorded yet/);
    assert.equal(await page.locator('.chart-area.no-data').count(), 3);
    await shot('monitor-empty.png');
  });

  it('had zero CSP violations and no console errors throughout', async () => {
    await collectViolations();
    assert.deepEqual(violations, []);
    assert.deepEqual(consoleErrors, []);
  });
});
