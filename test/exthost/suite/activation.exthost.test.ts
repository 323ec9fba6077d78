// Inside the real extension host: the extension activates and registers its commands.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

describe('exthost: activation', () => {
  it('given the development extension, when it is activated, then it is active and ralph.showStatus is registered', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded in the extension host`);
    const wasActive = ext.isActive;
    const started = performance.now();
    await ext.activate();
    // A measurement for the report (issue 6 asks for activation time), not an assertion.
    if (!wasActive) console.log(`      activation took ${(performance.now() - started).toFixed(1)} ms (load + activate)`);
    assert.equal(ext.isActive, true);
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('ralph.showStatus'), 'ralph.showStatus is not registered');
  });

  it('given the active extension, when ralph.showStatus runs, then it completes', async () => {
    await vscode.commands.executeCommand('ralph.showStatus');
  });
});
