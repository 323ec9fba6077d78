// The end-to-end harness: a real VS Code 1.100.3 (code-server) on a free loopback port with
// per-run directories, Debian's chromium driven by playwright-core, and helpers that act like
// a user (palette, notifications, views, trees, webviews, screenshots). Every wait is on a
// DOM condition, never a fixed sleep. test/e2e/README.md says why each piece.
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import type { Browser, FrameLocator, Locator, Page } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../kit/chromium';
import { makeTempGitRepo } from '../kit/git';

const execFileAsync = promisify(execFile);

export const repoRoot = path.resolve(__dirname, '..', '..');
export const codeServerEntry = path.join(repoRoot, '.e2e', 'code-server', 'node_modules', '.bin', 'code-server');
export const defaultVsix = path.join(repoRoot, 'dist', 'ralph-loop.vsix');
export const screenshotDir = path.join(repoRoot, '.artifacts', 'screenshots');
/** Upper bound for one UI condition; generous because CI machines have 2 busy cores. */
export const DEFAULT_TIMEOUT = Number(process.env.RALPH_E2E_TIMEOUT_MS ?? 60_000);

/** A harness step that did not reach its condition; carries what a reader needs to debug it. */
export class E2EError extends Error {
  override readonly name = 'E2EError';
  constructor(
    message: string,
    readonly detail?: string,
  ) {
    super(detail ? `${message}\n${detail}` : message);
  }
}

export interface CodeServerOptions {
  /** Workspace Trust on (untrusted folders open in restricted mode). Default off. */
  readonly workspaceTrust?: boolean;
  /** Extra user settings merged over the harness defaults. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** .vsix files installed before the server starts. */
  readonly vsix?: readonly string[];
}

/** User settings every run starts with: quiet, offline, repeatable screenshots. */
export function defaultSettings(workspaceTrust: boolean): Record<string, unknown> {
  return {
    'workbench.startupEditor': 'none',
    'workbench.colorTheme': 'Default Dark Modern',
    'workbench.tips.enabled': false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoUpdate': false,
    'extensions.autoCheckUpdates': false,
    'extensions.ignoreRecommendations': true,
    'security.workspace.trust.enabled': workspaceTrust,
    'git.openRepositoryInParentFolders': 'never',
    'chat.commandCenter.enabled': false,
    'window.commandCenter': false,
  };
}

/** Asks the OS for a free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.setTimeout(2000, () => req.destroy());
  });
}

/** Polls `probe` until it returns true; the interval is a poll period, not a synchronisation. */
async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>, detail?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new E2EError(`timed out after ${timeoutMs} ms waiting for ${what}`, detail?.());
}

/** Makes a temporary git repository with one commit, the kind of folder a user opens. */
export function makeGitRepo(files: Readonly<Record<string, string>> = { 'README.md': '# demo\n' }): Promise<string> {
  return Promise.resolve(makeTempGitRepo(files, { prefix: 'ralph-e2e-repo-' }).dir);
}

/** Process groups still running; killed if the test process exits without teardown (Ctrl-C). */
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pid of liveGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** One code-server process with its own user-data, extensions, XDG and TMPDIR folders. */
export class CodeServer {
  private exited = false;

  private constructor(
    readonly port: number,
    readonly root: string,
    readonly userDataDir: string,
    readonly extensionsDir: string,
    private readonly proc: ChildProcess,
    private readonly logFile: string,
  ) {
    if (proc.pid !== undefined) liveGroups.add(proc.pid);
    proc.once('exit', () => (this.exited = true));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A `vscode-remote://` URI for an absolute path on this server (payload entries need it). */
  remoteUri(absPath: string): string {
    return `vscode-remote://127.0.0.1:${this.port}${absPath}`;
  }

  /**
   * The URL of the workbench for `folder` (a `.code-workspace` file opens that multi-root
   * workspace), with optional payload entries (extension dev/tests).
   */
  workbenchUrl(folder: string, payload: Payload = []): string {
    const params = new URLSearchParams(folder.endsWith('.code-workspace') ? { workspace: folder } : { folder });
    if (payload.length > 0) params.set('payload', JSON.stringify(payload));
    return `${this.url}/?${params.toString()}`;
  }

  log(): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  static async start(options: CodeServerOptions = {}): Promise<CodeServer> {
    if (!fs.existsSync(codeServerEntry)) {
      throw new E2EError(`code-server is not installed at ${codeServerEntry}`, 'run: node scripts/ensure-code-server.mjs');
    }
    const trust = options.workspaceTrust ?? false;
    // Short root: unix socket paths under TMPDIR have a ~107 byte limit.
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 're2e-')));
    const dirs = {
      userData: path.join(root, 'ud'),
      extensions: path.join(root, 'ext'),
      config: path.join(root, 'xdg', 'config'),
      data: path.join(root, 'xdg', 'data'),
      cache: path.join(root, 'xdg', 'cache'),
      tmp: path.join(root, 't'),
    };
    for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true });
    fs.mkdirSync(path.join(dirs.userData, 'User'), { recursive: true });
    fs.writeFileSync(
      path.join(dirs.userData, 'User', 'settings.json'),
      JSON.stringify({ ...defaultSettings(trust), ...options.settings }, null, 2),
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      EXTENSIONS_GALLERY: '{}',
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      XDG_CACHE_HOME: dirs.cache,
      TMPDIR: dirs.tmp,
    };
    // Not inherited: a parent's extension-host variables would confuse the server's.
    delete env.VSCODE_IPC_HOOK_CLI;
    delete env.ELECTRON_RUN_AS_NODE;
    const common = ['--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions];
    for (const vsix of options.vsix ?? []) {
      try {
        await execFileAsync(process.execPath, [codeServerEntry, ...common, '--install-extension', vsix], { env });
      } catch (e) {
        const err = e as { stdout?: string; stderr?: string };
        throw new E2EError(`installing ${vsix} failed`, `${err.stdout ?? ''}${err.stderr ?? ''}`);
      }
    }
    const port = await freePort();
    const logFile = path.join(root, 'code-server.log');
    const out = fs.openSync(logFile, 'a');
    const args = [
      codeServerEntry,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      ...common,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      ...(trust ? [] : ['--disable-workspace-trust']),
    ];
    // Detached: its own process group, killed as a whole in stop(); extension hosts would
    // otherwise wait hours for a browser that is gone.
    const proc = spawn(process.execPath, args, { env, detached: true, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    const server = new CodeServer(port, root, dirs.userData, dirs.extensions, proc, logFile);
    try {
      await until(
        `code-server /healthz on port ${port}`,
        30_000,
        async () => {
          if (server.exited) throw new E2EError('code-server exited during start', server.log());
          return (await httpStatus(`${server.url}/healthz`)) === 200;
        },
        () => server.log(),
      );
    } catch (e) {
      await server.stop();
      throw e;
    }
    return server;
  }

  /** Kills the whole process group (server, extension hosts, ptys) and removes the run folder. */
  async stop(options: { keepFiles?: boolean } = {}): Promise<void> {
    const pid = this.proc.pid;
    if (pid !== undefined) {
      const kill = (sig: NodeJS.Signals): void => {
        try {
          process.kill(-pid, sig);
        } catch {
          // group already gone
        }
      };
      if (!this.exited) {
        const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
        kill('SIGTERM');
        const timer = setTimeout(() => kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      kill('SIGKILL'); // stragglers (extension hosts, ptys) left in the group by the leader
      liveGroups.delete(pid);
    }
    if (!options.keepFiles) fs.rmSync(this.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

export type Payload = ReadonlyArray<readonly [string, string]>;

export interface OpenOptions {
  /**
   * Payload entries for the workbench URL, e.g. extensionDevelopmentPath; a function when
   * they need the server (its port is in every vscode-remote URI).
   */
  readonly payload?: Payload | ((server: CodeServer) => Payload);
  /** Called before the page loads (exposeFunction for extension tests). */
  readonly beforeLoad?: (page: Page) => Promise<void>;
}

/** A chromium page showing the workbench, with user-level helpers. */
export class Workbench {
  private constructor(
    readonly browser: Browser,
    readonly page: Page,
    readonly server: CodeServer,
    /** Every console message of the page and its frames (webviews included), in order. */
    readonly consoleMessages: ReadonlyArray<{ readonly type: string; readonly text: string }>,
  ) {}

  static async open(server: CodeServer, folder: string, options: OpenOptions = {}): Promise<Workbench> {
    const browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [...CHROMIUM_ARGS],
    });
    try {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      const page = await context.newPage();
      page.setDefaultTimeout(DEFAULT_TIMEOUT);
      const consoleMessages: Array<{ type: string; text: string }> = [];
      page.on('console', (m) => consoleMessages.push({ type: m.type(), text: m.text() }));
      await options.beforeLoad?.(page);
      const payload = typeof options.payload === 'function' ? options.payload(server) : options.payload;
      await page.goto(server.workbenchUrl(folder, payload));
      await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 2 * DEFAULT_TIMEOUT });
      return new Workbench(browser, page, server, consoleMessages);
    } catch (e) {
      await browser.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.browser.close().catch(() => undefined);
  }

  /** The quick input box (palette, input boxes, quick picks). */
  get quickInput(): Locator {
    return this.page.locator('.quick-input-widget .quick-input-box input');
  }

  /** Opens the command palette; clicks the status bar and retries when F1 was not taken. */
  async openPalette(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      await this.page.keyboard.press('F1');
      try {
        await this.quickInput.waitFor({ state: 'visible', timeout: 2000 });
        return;
      } catch {
        await this.page.locator('.part.statusbar').click({ position: { x: 700, y: 10 } });
      }
    }
    throw new E2EError('the command palette did not open');
  }

  /**
   * Runs a command by its palette title ("Ralph: Show Status"). Contributions appear a few
   * seconds after the workbench, so the palette is reopened until the command is listed.
   */
  async runCommand(title: string, timeoutMs = DEFAULT_TIMEOUT): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const row = this.page
      .locator('.quick-input-widget .monaco-list-row')
      .filter({ has: this.page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }) })
      .first();
    for (;;) {
      await this.openPalette();
      await this.quickInput.fill(`>${title}`);
      try {
        await row.waitFor({ state: 'visible', timeout: Math.min(3000, Math.max(1, deadline - Date.now())) });
        break;
      } catch (e) {
        const listed = await this.page
          .locator('.quick-input-widget .monaco-list-row')
          .allInnerTexts()
          .catch(() => []);
        await this.page.keyboard.press('Escape');
        if (Date.now() >= deadline) {
          throw new E2EError(`command "${title}" not found in the palette`, `listed: ${listed.join(' | ')}\n${String(e)}`);
        }
      }
    }
    await row.click();
    // Done when the palette is gone or reused by the command itself (Go to File, input boxes).
    await this.page.waitForFunction(() => {
      const input = document.querySelector<HTMLInputElement>('.quick-input-widget .quick-input-box input');
      return input === null || input.offsetParent === null || !input.value.startsWith('>');
    });
  }

  /** Opens a workspace file through Quick Open ("Go to File..."), as a user would. */
  async openFile(relativePath: string): Promise<void> {
    await this.runCommand('Go to File...');
    await this.quickInput.fill(relativePath);
    const name = path.basename(relativePath);
    await this.page.locator('.quick-input-widget .monaco-list-row', { hasText: name }).first().waitFor();
    await this.quickInput.press('Enter');
    await this.page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
  }

  /** Moves the cursor of the active editor to line:column (1-based). */
  async goToLine(line: number, column = 1): Promise<void> {
    await this.runCommand('Go to Line/Column...');
    await this.quickInput.fill(`:${line}:${column}`);
    // Enter before the picker has read the value goes nowhere and leaves it open (seen on a
    // loaded machine): wait until its label names the line.
    const input = '.quick-input-widget .quick-input-box input';
    await this.page.locator(`${input}[aria-label^="Go to line ${line} "], ${input}[aria-label^="Go to line ${line}."]`).waitFor();
    await this.quickInput.press('Enter');
    await this.quickInput.waitFor({ state: 'hidden' });
  }

  /** Answers an open input box / quick pick with `text` and Enter. */
  async answerQuickInput(text: string): Promise<void> {
    await this.quickInput.waitFor({ state: 'visible' });
    await this.quickInput.fill(text);
    await this.quickInput.press('Enter');
  }

  /** The toast showing `text`, once its fade-in finished (safe to assert and screenshot). */
  notification(text: string | RegExp): Locator {
    return this.page
      .locator('.notifications-toasts .notification-toast.notification-fade-in-done')
      .filter({ has: this.page.locator('.notification-list-item-message', { hasText: text }) });
  }

  async waitForNotification(text: string | RegExp, timeoutMs = DEFAULT_TIMEOUT): Promise<Locator> {
    const toast = this.notification(text).first();
    await toast.waitFor({ state: 'visible', timeout: timeoutMs });
    return toast;
  }

  async clickNotificationButton(text: string | RegExp, button: string): Promise<void> {
    const toast = await this.waitForNotification(text);
    await toast.locator('.monaco-button', { hasText: button }).click();
  }

  /** The modal dialog (Workspace Trust prompt, modal messages) once it is showing. */
  async waitForDialog(text: string | RegExp, timeoutMs = DEFAULT_TIMEOUT): Promise<Locator> {
    const box = this.page.locator('.monaco-dialog-box', { hasText: text }).first();
    await box.waitFor({ state: 'visible', timeout: timeoutMs });
    return box;
  }

  async clickDialogButton(text: string | RegExp, button: string): Promise<void> {
    const box = await this.waitForDialog(text);
    await box.locator('.monaco-button', { hasText: button }).click();
    await box.waitFor({ state: 'hidden' });
  }

  /** A status bar entry by its id (`status.workspaceTrust`) or by its visible text. */
  statusBarItem(idOrText: string | RegExp): Locator {
    return typeof idOrText === 'string' && /^[\w.-]+\.[\w.-]+$/.test(idOrText)
      ? this.page.locator(`.part.statusbar [id="${idOrText}"]`)
      : this.page.locator('.part.statusbar .statusbar-item', { hasText: idOrText });
  }

  /**
   * Opens a view container from the activity bar (no-op when it is already showing). After a
   * window reload the workbench restores the last container on its own, racing our click
   * (which would toggle it shut): so check, click only when not selected, and check again.
   */
  async openViewContainer(title: string, containerId?: string): Promise<void> {
    const item = this.page
      .locator('.activitybar li.action-item')
      .filter({ has: this.page.locator(`a.action-label[aria-label^="${title}"]`) })
      .first();
    const icon = item.locator('a.action-label');
    const shown =
      containerId !== undefined
        ? this.page.locator(`[id="workbench.view.extension.${containerId}"]`)
        : this.page.locator('.part.sidebar .composite.title', { hasText: new RegExp(escapeRegExp(title), 'i') });
    await icon.waitFor({ state: 'visible' });
    const deadline = Date.now() + DEFAULT_TIMEOUT;
    for (;;) {
      if (await shown.first().isVisible()) return;
      const checked = (await item.getAttribute('class'))?.split(/\s+/).includes('checked') ?? false;
      if (!checked) await icon.click();
      try {
        await shown.first().waitFor({ state: 'visible', timeout: 5_000 });
        return;
      } catch (e) {
        if (Date.now() > deadline) throw e;
      }
    }
  }

  /** Rows of the trees in the side bar (or inside `within`, e.g. one view pane). */
  treeRows(within?: Locator): Locator {
    return (within ?? this.page.locator('.part.sidebar')).locator('.monaco-list-row');
  }

  /** The side-bar view pane whose header says `title` ("Backlog"). */
  viewPane(title: string): Locator {
    return this.page
      .locator('.part.sidebar .pane')
      .filter({ has: this.page.locator('.pane-header', { hasText: new RegExp(escapeRegExp(title), 'i') }) });
  }

  /** Hovers the tree row with `rowText` so its inline actions show, then clicks `actionLabel`. */
  async hoverAndClickInlineAction(rowText: string | RegExp, actionLabel: string, within?: Locator): Promise<void> {
    const row = this.treeRows(within).filter({ hasText: rowText }).first();
    await row.hover();
    const action = row.locator(`.action-label[aria-label="${actionLabel}"]`);
    await action.waitFor({ state: 'visible' });
    await action.click();
  }

  /** The content frame of a webview (the nth ready one, default the last opened). */
  webviewFrame(nth = -1): FrameLocator {
    const outer = this.page.locator('iframe.webview.ready');
    return (nth < 0 ? outer.last() : outer.nth(nth)).contentFrame().frameLocator('iframe#active-frame');
  }

  /** Waits until the Output panel shows `text` (after an extension revealed its channel). */
  async waitForOutput(text: string | RegExp, timeoutMs = DEFAULT_TIMEOUT): Promise<Locator> {
    const lines = this.page.locator('.part.panel .monaco-editor .view-lines', { hasText: text }).first();
    await lines.waitFor({ state: 'visible', timeout: timeoutMs });
    return lines;
  }

  /**
   * Content-Security-Policy violations reported so far. Chromium attributes webview messages
   * to VS Code's pre/index.html, so they are recognised by their text, not their URL.
   */
  cspViolations(): string[] {
    return this.consoleMessages.map((m) => m.text).filter((t) => CSP_VIOLATION.test(t));
  }

  /** The first console message matching `pattern`, already seen or still to come. */
  async waitForConsole(pattern: RegExp, timeoutMs = DEFAULT_TIMEOUT): Promise<string> {
    const seen = this.consoleMessages.find((m) => pattern.test(m.text));
    if (seen) return seen.text;
    const message = await this.page.waitForEvent('console', { predicate: (m) => pattern.test(m.text()), timeout: timeoutMs });
    return message.text();
  }

  /** A PNG in .artifacts/screenshots/ (git-ignored; CI keeps it as an artifact). */
  async screenshot(name: string): Promise<string> {
    fs.mkdirSync(screenshotDir, { recursive: true });
    const file = path.join(screenshotDir, `${name.replace(/[^\w.-]+/g, '-')}.png`);
    await this.page.screenshot({ path: file });
    return file;
  }
}

/** How chromium words a Content-Security-Policy violation in the console. */
export const CSP_VIOLATION = /Content Security Policy|Refused to (execute|load|apply|connect|frame)/i;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A whole session: server + browser on a folder, torn down together. */
export interface Session {
  readonly server: CodeServer;
  readonly workbench: Workbench;
  dispose(): Promise<void>;
}

export async function startSession(folder: string, options: CodeServerOptions & OpenOptions = {}): Promise<Session> {
  const server = await CodeServer.start(options);
  let workbench: Workbench;
  try {
    workbench = await Workbench.open(server, folder, options);
  } catch (e) {
    await server.stop({ keepFiles: true });
    throw new E2EError(`workbench did not open (server files kept in ${server.root})`, String(e));
  }
  return {
    server,
    workbench,
    async dispose() {
      await workbench.close();
      await server.stop();
    },
  };
}

// ---- context menus, input-box validation and polled conditions (added for the human-input
// tests; free functions so the helpers above keep their behaviour) ---------------------------

/** Polls `probe` until it returns true (a poll period, not a synchronisation); throws E2EError with `detail()` on timeout. */
export function pollUntil(what: string, probe: () => Promise<boolean>, detail?: () => string, timeoutMs = DEFAULT_TIMEOUT): Promise<void> {
  return until(what, timeoutMs, probe, detail);
}

/** An entry of the open context menu by its label ("Drop Task"); the menu lives in a shadow root, which CSS locators pierce. */
export function contextMenuItem(wb: Workbench, label: string): Locator {
  return wb.page
    .locator('.monaco-menu .action-menu-item')
    .filter({ has: wb.page.locator('.action-label', { hasText: new RegExp(`^${escapeRegExp(label)}$`) }) });
}

/**
 * Right-clicks the tree row showing `rowText` (inside `within`, e.g. one view pane) and picks
 * `label` from its context menu, as a user would. A tree refresh landing on the right-click
 * can close the menu before it shows: then the menu is dismissed and opened again.
 */
export async function runContextMenuCommand(wb: Workbench, rowText: string | RegExp, label: string, within?: Locator): Promise<void> {
  const row = wb.treeRows(within).filter({ hasText: rowText }).first();
  const item = contextMenuItem(wb, label).first();
  const deadline = Date.now() + DEFAULT_TIMEOUT;
  for (;;) {
    await row.waitFor({ state: 'visible', timeout: Math.max(1, deadline - Date.now()) });
    await row.click({ button: 'right' });
    try {
      await item.waitFor({ state: 'visible', timeout: 5_000 });
      break;
    } catch (e) {
      const shown = await wb.page
        .locator('.monaco-menu .action-menu-item')
        .allInnerTexts()
        .catch(() => []);
      await wb.page.keyboard.press('Escape');
      if (Date.now() >= deadline)
        throw new E2EError(`context menu of "${String(rowText)}" shows no "${label}"`, `shown: ${shown.join(' | ')}\n${String(e)}`);
    }
  }
  // A menu entry acts on mouse-up only once it has been shown for 100 ms (VS Code's menu.ts,
  // runOnceToEnableMouseUp), and playwright can be quicker: a click that left the menu open
  // was ignored, so the user clicks again.
  const menu = wb.page.locator('.monaco-menu').first();
  for (;;) {
    await item.click({ timeout: 5_000 }).catch(() => undefined);
    try {
      await menu.waitFor({ state: 'hidden', timeout: 3_000 });
      return;
    } catch (e) {
      if (Date.now() >= deadline) throw new E2EError(`"${label}" in the context menu of "${String(rowText)}" did not act`, String(e));
    }
  }
}

/** The quick input's title ("Modify W2-001") once it shows. */
export function quickInputTitle(wb: Workbench): Locator {
  return wb.page.locator('.quick-input-widget .quick-input-title');
}

/** The validation or prompt text under the quick input box. */
export function quickInputMessage(wb: Workbench): Locator {
  return wb.page.locator('.quick-input-widget .quick-input-message');
}
