// The monitor panel in a real VS Code 1.100.3 (code-server + chromium, the e2e harness):
// a project prepared with the real store and control plane, "Ralph: Show Monitor" from the
// palette, the numbers read inside the webview, zero CSP violations in the workbench log.
// Needs the packaged extension: RALPH_VSIX or dist/ralph-loop.vsix (node scripts/run-e2e.mjs
// builds it). Run: npx mocha --require tsx/cjs --extension ts --timeout 300000 <this file>
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTROL_PROJECTIONS, controlContext, transitionTask } from '../../src/control';
import { openStore } from '../../src/store';
import { defaultVsix, makeGitRepo, startSession } from './harness';
import type { Session } from './harness';

const vsix = process.env['RALPH_VSIX'] ?? defaultVsix;

async function prepareProject(): Promise<string> {
  const repo = await makeGitRepo({ 'README.md': '# demo\n' });
  const ralphDir = join(repo, '.ralph');
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
  try {
    const ctx = controlContext(store, { ralphDir });
    for (let i = 1; i <= 6; i++) {
      await transitionTask(ctx, {
        taskId: `W0-00${i}`,
        status: 'pending',
        actor: 'human',
        payload: { title: `Task ${i}`, effort: 'S', wave: 0 },
      });
    }
    await transitionTask(ctx, { taskId: 'W0-001', status: 'claimed', actor: 'primary', payload: { claimed_by: 'primary' } });
    await transitionTask(ctx, {
      taskId: 'W0-002',
      status: 'deferred',
      actor: 'control_plane',
      payload: { reason: 'tier 2: touches auth/' },
    });
  } finally {
    await store.close();
  }
  mkdirSync(join(ralphDir, 'logs'), { recursive: true });
  const now = new Date();
  const line = (agent: string, cost: number): string =>
    JSON.stringify({
      ts: now.toISOString(),
      agent,
      iter: 3,
      phase_from: 'plan',
      phase_to: 'implement',
      duration: 42,
      cost,
      prompt_bytes: 5000,
      turns: 3,
      input_tokens: 5,
      cache_read: 40000,
      cache_create: 9000,
      output_tokens: 800,
      model: 'claude-opus-4-6',
      subtype: 'success',
    });
  writeFileSync(
    join(ralphDir, 'logs', `par-metrics-${now.toISOString().slice(0, 10).replace(/-/g, '')}.jsonl`),
    `${line('A', 0.25)}\n${line('B', 0.5)}\n`,
  );
  writeFileSync(
    join(ralphDir, 'STATE.json'),
    JSON.stringify({ phase: 'implement', iteration: 3, current_wave: 0, commits_total: 0, current_item: 'W0-001' }),
  );
  return repo;
}

describe('monitor panel in code-server', function () {
  this.timeout(300_000);
  let session: Session | undefined;

  before(function () {
    if (!existsSync(vsix)) this.skip();
  });
  after(async () => {
    await session?.dispose();
  });

  it('shows the phase (stopped: no loop runs, whatever STATE.json last said), task counts and cost with zero CSP violations', async () => {
    const repo = await prepareProject();
    session = await startSession(repo, { vsix: [vsix] });
    const wb = session.workbench;
    await wb.runCommand('Ralph: Show Monitor');
    const frame = wb.webviewFrame();
    await frame.locator('#phase', { hasText: 'stopped' }).waitFor();
    assert.equal(await frame.locator('#phase-label').innerText(), 'PHASE');
    assert.equal(await frame.locator('#current').innerText(), '—');
    assert.equal(await frame.locator('#tasks-total').innerText(), '6');
    assert.equal(await frame.locator('#tasks-deferred .n').innerText(), '1');
    assert.equal(await frame.locator('#cost-today').innerText(), '$0.750');
    assert.equal(await frame.locator('#deferred-count').innerText(), '1');
    await frame.locator('vscode-tab-header[data-tab="charts"]').click();
    await frame.locator('#chart-cost').waitFor();
    await wb.screenshot('monitor-codeserver');
    assert.deepEqual(wb.cspViolations(), []);
  });

  it('opens again from its suggested keybinding, Ctrl+Alt+R then M', async () => {
    assert.ok(session, 'the previous test starts the session');
    const wb = session.workbench;
    await wb.runCommand('View: Close All Editors');
    await wb.page.locator('iframe.webview.ready').waitFor({ state: 'detached' });
    await wb.page.keyboard.press('Control+Alt+r');
    await wb.page.keyboard.press('m');
    await wb.webviewFrame().locator('#tasks-total', { hasText: '6' }).waitFor();
  });
});
