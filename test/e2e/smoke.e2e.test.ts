// Smoke test in a real VS Code: the packaged .vsix installs, its command runs from the
// palette and writes to the "Ralph" output channel.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Session } from './harness';
import { defaultVsix, makeGitRepo, startSession } from './harness';

describe('e2e: smoke (packaged extension in VS Code 1.100.3)', function () {
  this.timeout(180_000);
  let session: Session | undefined;
  let repo: string;

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    repo = await makeGitRepo();
    session = await startSession(repo, { vsix: [defaultVsix] });
  });

  after(async () => {
    await session?.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('given the installed .vsix and a git repo, when "Ralph: Show Status" runs from the palette, then the Ralph output channel says it is active', async () => {
    const wb = session!.workbench;
    await wb.runCommand('Ralph: Show Status');
    await wb.waitForOutput('Ralph Loop is active.');
    await wb.screenshot('smoke-show-status');
  });
});
