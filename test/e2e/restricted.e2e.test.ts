// Ralph in Restricted Mode, in a real VS Code 1.100.3 with the packaged .vsix: an untrusted
// folder shows why nothing runs (the Backlog welcome), and nothing that executes (Initialize,
// Start Loop, Resume, Repair) is offered in the palette; read-only commands still are.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, startSession } from './harness';

describe('e2e: Ralph in an untrusted folder (Restricted Mode)', function () {
  this.timeout(180_000);
  let session: Session | undefined;
  let repo: string;

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    repo = await makeGitRepo();
    session = await startSession(repo, { workspaceTrust: true, vsix: [defaultVsix] });
  });

  after(async () => {
    await session?.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('given the folder is not trusted, then the Backlog says why and the palette offers no command that executes', async () => {
    const wb = session!.workbench;
    await wb.clickDialogButton('Do you trust the authors of the files in this folder?', "No, I don't trust the authors");
    await wb.statusBarItem('status.workspaceTrust').filter({ hasText: 'Restricted Mode' }).waitFor();
    await wb.openViewContainer('Ralph', 'ralph');
    // The welcome says what works here (decisions are recorded) and what does not (nothing executes).
    const welcome = wb.viewPane('Backlog').locator('.welcome-view-content', { hasText: 'Restricted Mode' });
    await welcome.waitFor();
    assert.match(await welcome.innerText(), /records your decisions[\s\S]*nothing executes here/);
    await wb.screenshot('restricted-backlog-welcome');
    // Read-only commands are listed (proves the contributions are loaded) ...
    await wb.openPalette();
    await wb.quickInput.fill('>Ralph: ');
    const rows = wb.page.locator('.quick-input-widget .monaco-list-row');
    await rows.filter({ hasText: 'Ralph: Show Status' }).first().waitFor();
    const listed = (await rows.allInnerTexts()).join(' | ');
    await wb.page.keyboard.press('Escape');
    // ... and those that run agents, builds or tests are not.
    for (const title of ['Initialize Project', 'Start Loop', 'Resume Loop', 'Repair Project']) {
      assert.ok(!listed.includes(`Ralph: ${title}`), `"Ralph: ${title}" is offered in Restricted Mode: ${listed}`);
    }
  });
});
