// Workspace Trust in a real VS Code: an untrusted folder opens in restricted mode. The product's
// own restricted behaviour (nothing that executes is available) is asserted here later.
import * as fs from 'node:fs';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, startSession } from './harness';

describe('e2e: workspace trust enabled, untrusted folder', function () {
  this.timeout(180_000);
  let session: Session | undefined;
  let repo: string;

  before(async () => {
    repo = await makeGitRepo();
    session = await startSession(repo, { workspaceTrust: true, vsix: fs.existsSync(defaultVsix) ? [defaultVsix] : [] });
  });

  after(async () => {
    await session?.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('given the trust prompt, when the user does not trust the authors, then the workbench shows Restricted Mode', async () => {
    const wb = session!.workbench;
    const prompt = await wb.waitForDialog('Do you trust the authors of the files in this folder?');
    await wb.screenshot('trust-prompt');
    await prompt.locator('.monaco-button', { hasText: "No, I don't trust the authors" }).click();
    await prompt.waitFor({ state: 'hidden' });
    await wb.statusBarItem('status.workspaceTrust').filter({ hasText: 'Restricted Mode' }).waitFor();
    await wb.page.locator('.part.banner', { hasText: 'Restricted Mode is intended for safe code browsing' }).waitFor();
    await wb.screenshot('trust-restricted-mode');
  });
});
