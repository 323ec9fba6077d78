// The harness helpers against real contributions (the probe extension loaded from its folder):
// palette, notification buttons, activity-bar containers, tree rows with inline actions, and
// webview content with a round trip to the extension host.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Session } from './harness';
import { CSP_VIOLATION, makeGitRepo, startSession } from './harness';

const probe = path.join(__dirname, 'fixtures', 'harness-probe');

describe('e2e: harness helpers on a probe extension', function () {
  this.timeout(180_000);
  let session: Session | undefined;
  let repo: string;

  before(async () => {
    repo = await makeGitRepo();
    // The payload needs the server's port, so the URI is built from a placeholder-free helper.
    session = await startSession(repo, {
      payload: (server) => [['extensionDevelopmentPath', server.remoteUri(probe)]],
    });
  });

  after(async () => {
    await session?.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('given a notification with a button, when the button is clicked, then the extension reacts', async () => {
    const wb = session!.workbench;
    await wb.runCommand('Probe: Notify');
    await wb.clickNotificationButton('Probe says hi', 'Press me');
    await wb.waitForNotification('button pressed');
  });

  it('given a view container with a tree, when an inline action is clicked on a row, then the command gets that row', async () => {
    const wb = session!.workbench;
    await wb.openViewContainer('Probe', 'probe');
    const rows = wb.treeRows(wb.viewPane('Items'));
    await rows.filter({ hasText: 'beta' }).waitFor();
    await wb.hoverAndClickInlineAction('beta', 'Approve', wb.viewPane('Items'));
    await wb.waitForNotification('approved beta');
    await wb.screenshot('harness-tree-inline-action');
  });

  it('given a webview, when its button is clicked, then the message reaches the host', async () => {
    const wb = session!.workbench;
    await wb.runCommand('Probe: Open Webview');
    const frame = wb.webviewFrame();
    await frame.locator('#hello', { hasText: 'Hello from the webview' }).waitFor();
    await frame.locator('#ping').click();
    await wb.waitForNotification('webview pinged the host');
    await wb.screenshot('harness-webview');
    assert.deepEqual(wb.cspViolations(), []);
  });

  it('given a webview with an inline script without nonce, then the CSP violation is reported', async () => {
    const wb = session!.workbench;
    await wb.runCommand('Probe: Open Webview With CSP Violation');
    const violation = await wb.waitForConsole(CSP_VIOLATION);
    assert.match(violation, /script/i);
    assert.ok(wb.cspViolations().length > 0, 'expected a CSP violation to be reported');
  });
});
