// @ralph in the real chat view of VS Code 1.100.3 (code-server + chromium), with the packaged
// .vsix, in a window with two Ralph folders. code-server has no chat extension, and VS Code
// 1.100 shows its chat view only beside a default participant and invokes any participant only
// when a language model is registered, so a fixture extension (fixtures/chat-host) stands in
// for the user's Copilot: a default participant and a model that is never asked. What the
// person does here is typed into the chat input and clicked in the answers: /status asks which
// folder, a follow-up picks one; /reject finds the folder holding the task, asks back, and
// only the confirming follow-up decides (checked in the folder's store); /stop with no loop
// anywhere says so. A deciding language-model tool called outside a chat request (the fixture's
// command, as agent mode calls it) shows VS Code's own confirmation dialog naming the folder:
// Cancel decides nothing, Yes decides as lm-tool; a call that names no folder is refused with
// the folders named. Screenshots in .artifacts/screenshots/chat-*.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS, decideAndAppend, openControl } from '../../src/control';
import { allTasks } from '../../src/control/views';
import { cliGitPort } from '../../src/cli/gitPort';
import { domainEvent } from '../../src/domain/events';
import { initProject } from '../../src/project/init';
import { openStore } from '../../src/store';
import type { Locator } from 'playwright-core';
import type { Session, Workbench } from './harness';
import { defaultVsix, makeGitRepo, pollUntil, quickInputTitle, startSession } from './harness';

const chatHost = path.join(__dirname, 'fixtures', 'chat-host');

/** An initialized Ralph project whose store holds `tasks`; `deferred` ones wait with a tier-2 patch. */
async function project(name: string, tasks: { id: string; title: string; deferred?: boolean }[]): Promise<string> {
  const dir = await makeGitRepo({ 'README.md': `# ${name}\n` });
  await initProject({
    dir,
    createDatabase: async (ralphDir) => {
      const s = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
      await s.close();
    },
  });
  const ctx = await openControl({ projectDir: dir, mode: 'writer', git: cliGitPort(dir) });
  try {
    await decideAndAppend(ctx, () => ({
      events: tasks.flatMap((t) => {
        const created = domainEvent('task.created', t.id, 'test', {
          title: t.title,
          source: 'specs/a.md:1',
          effort: 'M',
          deps: '-',
          wave: 1,
          provenance: 'spec',
        });
        if (!t.deferred) return [created];
        const patch = `patch_${t.id}_1`;
        return [
          created,
          domainEvent('task.claimed', t.id, 'primary', { old_status: 'pending', new_status: 'claimed', claimed_by: 'primary' }),
          domainEvent('patch.queued', patch, 'primary', {
            task_id: t.id,
            patch_path: `.ralph/commits/pending/${t.id}.patch`,
            created_by: 'primary',
          }),
          domainEvent('task.proposed', t.id, 'primary', { old_status: 'claimed', new_status: 'proposed', patch_id: patch }),
          domainEvent('task.deferred', t.id, 'primary', {
            old_status: 'proposed',
            new_status: 'deferred',
            patch_id: patch,
            risk_tier: 2,
            reason: 'tier 2 (sensitive): defer to the judge',
          }),
        ];
      }),
      result: undefined,
    }));
  } finally {
    await ctx.store.close();
  }
  return dir;
}

/** The folder's task rows and its human decisions, read from its store as another process would. */
async function storeOf(dir: string): Promise<{ status: (id: string) => string | undefined; decisions: string[][] }> {
  const store = await openStore({ ralphDir: path.join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    const decisions = store.events({ entityType: 'task' }).filter((e) => e.event_type === 'task.deferral_resolved');
    const tasks = new Map(allTasks(store).map((t) => [t.task_id, t.status]));
    return {
      status: (id) => tasks.get(id),
      decisions: decisions.map((e) => [e.entity_id, e.actor, String(e.payload['decision']), String(e.payload['client'])]),
    };
  } finally {
    await store.close();
  }
}

/** Waits until a markdown preview (a webview frame, whichever) shows all of `texts`. */
async function previewShows(wb: Workbench, ...texts: RegExp[]): Promise<void> {
  await pollUntil(`a preview showing ${texts.join(' and ')}`, async () => {
    for (const f of wb.page.frames()) {
      const text = await f.evaluate(() => document.body?.innerText ?? '').catch(() => '');
      if (texts.every((t) => t.test(text))) return true;
    }
    return false;
  });
}

class ChatView {
  constructor(private readonly wb: Workbench) {}

  private get input(): Locator {
    return this.wb.page.locator('.interactive-input-part .monaco-editor .view-lines').first();
  }

  /** Opens the chat view (Ctrl+Alt+I), as a person would. */
  async open(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      await this.wb.page.locator('.part.statusbar').click({ position: { x: 700, y: 10 } });
      await this.wb.page.keyboard.press('Control+Alt+KeyI');
      try {
        await this.input.waitFor({ state: 'visible', timeout: 5000 });
        return;
      } catch {
        // the keybinding lands only once the workbench has its chat contributions
      }
    }
    await this.input.waitFor({ state: 'visible' });
  }

  /**
   * Waits until a request can be answered: Ralph is active (its status bar item) and the chat
   * host's model is there (the input shows the mode picker), else a request sent during
   * start-up is refused for want of a model.
   */
  async ready(): Promise<void> {
    await this.wb
      .statusBarItem(/Ralph \[/)
      .first()
      .waitFor();
    await this.wb.page.locator('.interactive-input-part').getByText('Ask', { exact: true }).first().waitFor();
  }

  /**
   * The newest row of the chat list: its index and, when it is an answer, whether it is still
   * coming. The list is virtual (rows out of view are not in the page), so rows are told apart
   * by their data-index, never counted.
   */
  private newest(): Promise<{ index: number; response: boolean; loading: boolean }> {
    return this.wb.page.evaluate(() => {
      let best: Element | undefined;
      let index = -1;
      for (const row of Array.from(document.querySelectorAll('.interactive-session .monaco-list-row[data-index]'))) {
        const i = Number(row.getAttribute('data-index'));
        if (i > index) [index, best] = [i, row];
      }
      const item = best?.querySelector('.interactive-item-container');
      return {
        index,
        response: item?.classList.contains('interactive-response') ?? false,
        loading: item?.classList.contains('chat-response-loading') ?? false,
      };
    });
  }

  /** Types a request and sends it; resolves with the answer once it is complete. */
  async send(text: string): Promise<Locator> {
    return this.answer(await this.submit(text));
  }

  /** Types a request and sends it; resolves with the newest row's index before it. */
  async submit(text: string): Promise<number> {
    const before = (await this.newest()).index;
    await this.input.click();
    // Typed as a person does: the participant and the command are completed as they are typed.
    await this.wb.page.keyboard.type(text, { delay: 20 });
    // Close the completion list the command left open, so the click reaches the send button.
    await this.wb.page.keyboard.press('Escape');
    await this.wb.page.locator('.interactive-input-part a.action-label[aria-label^="Send"]').first().click();
    return before;
  }

  /** Switches the chat's mode (Ask / Edit / Agent) with Ctrl+. in its input, as a person does. */
  async mode(name: 'Ask' | 'Agent'): Promise<void> {
    const label = this.wb.page.locator('.interactive-input-part .chat-modelPicker-item .chat-model-label');
    const shows = async (): Promise<string> => (await label.allInnerTexts()).join(' ');
    for (let press = 0; press < 4 && !(await shows()).split(' ').includes(name); press++) {
      await this.input.click();
      await this.wb.page.keyboard.press('Control+Period');
      await this.wb.page
        .waitForFunction(
          (before) =>
            Array.from(document.querySelectorAll('.interactive-input-part .chat-modelPicker-item .chat-model-label'))
              .map((e) => (e as HTMLElement).innerText)
              .join(' ') !== before,
          await shows(),
          { timeout: 5000 },
        )
        .catch(() => undefined);
    }
    assert.ok((await shows()).split(' ').includes(name), `the chat's pickers show ${await shows()}, not ${name}`);
  }

  /** The follow-ups of the last answer. */
  get followups(): Locator {
    return this.wb.page.locator('.interactive-session-followups .monaco-button');
  }

  /** Clicks a follow-up of the last answer by its label; resolves with the answer it brings. */
  async followup(label: string | RegExp): Promise<Locator> {
    const before = (await this.newest()).index;
    // VS Code shows the last answer's follow-ups above the input.
    await this.followups.filter({ hasText: label }).first().click();
    return this.answer(before);
  }

  async answer(before: number): Promise<Locator> {
    let index = -1;
    await pollUntil(
      'the chat answer',
      async () => {
        const n = await this.newest();
        index = n.index;
        return n.index > before && n.response && !n.loading;
      },
      () => `newest row ${index}, before ${before}`,
    );
    const row = this.wb.page.locator(`.interactive-session .monaco-list-row[data-index="${index}"]`);
    await row.locator('.rendered-markdown').first().waitFor();
    return row;
  }
}

describe('e2e: @ralph in the chat view (two folders, packaged .vsix)', function () {
  this.timeout(300_000);
  let session: Session | undefined;
  const cleanup: string[] = [];
  let api: string;
  let web: string;

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    api = await project('api', [
      { id: 'API-1', title: 'Validate tokens', deferred: true },
      { id: 'API-2', title: 'Rotate keys', deferred: true },
      { id: 'API-3', title: 'Hash passwords', deferred: true },
      { id: 'SHARED-1', title: 'Log requests on the server' },
    ]);
    web = await project('web', [
      { id: 'WEB-1', title: 'Render the form' },
      { id: 'SHARED-1', title: 'Log clicks in the browser' },
    ]);
    cleanup.push(api, web);
    const ws = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-e2e-chat-'))), 'two.code-workspace');
    cleanup.push(path.dirname(ws));
    fs.writeFileSync(
      ws,
      JSON.stringify({
        folders: [
          { path: api, name: 'api' },
          { path: web, name: 'web' },
        ],
      }),
    );
    session = await startSession(ws, {
      vsix: [defaultVsix],
      payload: (server) => [['extensionDevelopmentPath', server.remoteUri(chatHost)]],
    });
  });

  afterEach(async function () {
    // What the window showed when a test failed, for the reader of the artifacts.
    if (this.currentTest?.state === 'failed')
      await session?.workbench.screenshot(`chat-failed-${this.currentTest.title.slice(0, 30).replace(/\W+/g, '-')}`);
  });

  after(async () => {
    await session?.dispose();
    for (const d of cleanup) fs.rmSync(d, { recursive: true, force: true });
  });

  it('/status with nothing saying which folder asks; the follow-up for api answers from api', async () => {
    const wb = session!.workbench;
    const chat = new ChatView(wb);
    await chat.open();
    await chat.ready();
    const asked = await chat.send('@ralph /status');
    await asked.getByText(/Which folder\? 2 folders of this window have a Ralph project: api, web/).waitFor();
    await wb.screenshot('chat-01-which-folder');
    const status = await chat.followup('/status in api');
    await status.getByText('Folder api:').waitFor();
    const text = await status.innerText();
    assert.match(text, /Deferred: 3/);
    assert.match(text, /Waiting for a decision: API-1 \(tier 2, Validate tokens\)/);
    await wb.screenshot('chat-02-status-api');
  });

  it('/reject finds the folder that holds the task and asks back; only the confirming follow-up decides', async () => {
    const wb = session!.workbench;
    const chat = new ChatView(wb);
    const asked = await chat.send('@ralph /reject API-1 tokens must expire');
    await asked.getByText(/Reject the deferred patch of API-1\?/).waitFor();
    assert.match(await asked.innerText(), /Folder api:/);
    assert.equal((await storeOf(api)).status('API-1'), 'deferred', 'asking back decided nothing');
    await wb.screenshot('chat-03-reject-asks');
    const done = await chat.followup('Reject API-1');
    await done.getByText(/Rejected API-1/).waitFor();
    const s = await storeOf(api);
    assert.equal(s.status('API-1'), 'pending');
    assert.deepEqual(s.decisions, [['API-1', 'human', 'reject', 'vscode-chat']]);
    assert.deepEqual((await storeOf(web)).decisions, [], 'the other folder is untouched');
    await wb.screenshot('chat-04-rejected');
  });

  it('/stop with no loop in any folder says so and asks nothing', async () => {
    const chat = new ChatView(session!.workbench);
    const answer = await chat.send('@ralph /stop');
    await answer.getByText(/No loop is running in any folder of this window \(api, web\); there is nothing to stop/).waitFor();
    assert.equal(await chat.followups.count(), 0);
  });

  it("a deciding language-model tool, called as agent mode does, shows VS Code's own confirmation naming the folder; Cancel decides nothing", async () => {
    const wb = session!.workbench;
    const call = async (line: string): Promise<void> => {
      await wb.runCommand('E2E: Invoke Language Model Tool');
      await wb.answerQuickInput(line);
    };
    await call('ralph_decide {"task_id":"API-2","decision":"approve"}');
    const dialog = await wb.waitForDialog(/Approve API-2's patch\?/);
    assert.match(await dialog.innerText(), /promoted onto the branch, overriding the judge\. \(folder api\)/);
    await wb.screenshot('chat-05-tool-confirmation');
    await wb.clickDialogButton(/Approve API-2's patch\?/, 'Cancel');
    await wb.notification(/tool ralph_decide failed: Canceled/).waitFor();
    assert.equal((await storeOf(api)).status('API-2'), 'deferred', 'a cancelled confirmation decides nothing');
    await call('ralph_decide {"task_id":"API-2","decision":"approve"}');
    await wb.clickDialogButton(/Approve API-2's patch\?/, 'Yes');
    await wb.notification(/tool ralph_decide: Folder api: Approved API-2/).waitFor();
    const s = await storeOf(api);
    assert.equal(s.status('API-2'), 'proposed');
    assert.deepEqual(s.decisions.at(-1), ['API-2', 'lm-tool', 'approve', 'vscode']);
    // Nothing in the call, no editor open: the tool refuses, naming the folders.
    await call('ralph_status {}');
    await wb.notification(/tool ralph_status failed: Ralph has 2 folders in this window that could be meant \(api, web\)/).waitFor();
    await wb.screenshot('chat-06-tool-which-folder');
  });

  it("a task id in both folders: /why asks which; its Open the Story and Show Task Story open that folder's story", async () => {
    const wb = session!.workbench;
    const chat = new ChatView(wb);
    await chat.open();
    // The palette's Show Task Story asks whose story, and opens the one picked.
    await wb.runCommand('Ralph: Show Task Story');
    await wb.answerQuickInput('SHARED-1');
    await quickInputTitle(wb).getByText('SHARED-1 is a task in 2 folders: whose story?').waitFor();
    const rows = await wb.page.locator('.quick-input-widget .monaco-list-row .label-name').allInnerTexts();
    assert.deepEqual(rows, ['api', 'web']);
    await wb.screenshot('chat-08-story-which-folder');
    await wb.answerQuickInput('api');
    await wb.page.locator('.tabs-container .tab', { hasText: 'Story SHARED-1 (api)' }).first().waitFor();
    await previewShows(wb, /Folder api/, /SHARED-1: Log requests on the server/);
    await wb.screenshot('chat-07-story-of-api');
    // /why asks which folder; its Open the Story opens that folder's story.
    const asked = await chat.send('@ralph /why SHARED-1');
    await asked.getByText(/Which folder\? 2 folders of this window hold SHARED-1: api, web/).waitFor();
    const why = await chat.followup('/why in web');
    await why.getByText('Folder web:').waitFor();
    assert.match(await why.innerText(), /SHARED-1: Log clicks in the browser/);
    await why.locator('.monaco-button', { hasText: 'Open the Story' }).first().click();
    await previewShows(wb, /Folder web/, /SHARED-1: Log clicks in the browser/);
    await wb.page.locator('.tabs-container .tab', { hasText: 'Story SHARED-1 (web)' }).first().waitFor();
    await wb.screenshot('chat-09-story-of-web');
  });

  it("VS Code's MCP list shows each folder's Ralph server; started, its tools are offered to agent mode", async () => {
    const wb = session!.workbench;
    await wb.runCommand('MCP: List Servers');
    const row = (label: string): Locator => wb.page.locator('.quick-input-widget .monaco-list-row').filter({ hasText: label }).first();
    await row('Ralph Loop (api)').waitFor();
    await row('Ralph Loop (web)').waitFor();
    await wb.screenshot('chat-10-mcp-list');
    // Picked by typing, as a hover tooltip over the list can take a click.
    await wb.answerQuickInput('Ralph Loop (api)');
    await wb.page
      .locator('.quick-input-widget .monaco-list-row')
      .filter({ hasText: /Start Server/ })
      .first()
      .waitFor();
    await wb.answerQuickInput('Start Server');
    // VS Code shows the server's log as it starts it: the SDK handshake done, the tools listed.
    await wb.waitForOutput(/Discovered\s9\stools/); // the editor shows spaces as U+00A0
    let listed = '';
    await pollUntil(
      "the Ralph server's tools among VS Code's",
      async () => {
        await wb.runCommand('E2E: List Other Tools');
        const toast = wb.notification(/other tools \(/).last();
        await toast.waitFor();
        listed = await toast.innerText();
        await wb.page.keyboard.press('Escape');
        return /deferred_queue/.test(listed);
      },
      () => listed,
    );
    for (const tool of ['status', 'list_tasks', 'show_task', 'deferred_queue', 'add_task', 'decide', 'pause', 'resume', 'stop']) {
      assert.match(listed, new RegExp(`\\S*${tool}\\b`), `the MCP server's ${tool} tool is offered`);
    }
    await wb.runCommand('MCP: List Servers');
    await row('Ralph Loop (api)').waitFor();
    await wb.screenshot('chat-11-mcp-running');
    await wb.page.keyboard.press('Escape');
  });

  it("agent mode: the model calls ralph_decide and VS Code's confirmation shows in the chat turn; Continue decides", async () => {
    const wb = session!.workbench;
    const chat = new ChatView(wb);
    await chat.open();
    await chat.mode('Agent');
    const before = await chat.submit('approve API-3');
    // The confirmation is part of the agent's answer, not a dialog: the turn asks for it (its
    // accessible label) and shows the tool's title, message and buttons.
    const confirm = wb.page.locator(`.monaco-list-row[aria-label^="Action required to confirm tool action: Approve API-3's patch?"]`);
    await confirm.waitFor();
    const shown = await confirm.innerText();
    assert.match(shown, /promoted onto the branch, overriding the judge\. \(folder api\)/, shown);
    assert.equal((await storeOf(api)).status('API-3'), 'deferred', 'nothing is decided before the person confirms');
    await wb.screenshot('chat-12-agent-confirmation');
    await confirm
      .locator('.monaco-button', { hasText: /^Continue$/ })
      .first()
      .click();
    const answer = await chat.answer(before);
    await answer.getByText(/The tool said: Folder api: Approved API-3/).waitFor();
    const s = await storeOf(api);
    assert.equal(s.status('API-3'), 'proposed');
    assert.deepEqual(s.decisions.at(-1), ['API-3', 'lm-tool', 'approve', 'vscode']);
    await wb.screenshot('chat-13-agent-decided');
    await chat.mode('Ask');
  });
});
