// Ralph's git in a real VS Code 1.100.3 (packaged .vsix) runs nothing from the repository:
// with every hook type and a core.fsmonitor command planted in the folder, clicking a
// Deferred patch opens its diff in a trusted window (with Ralph's git environment: no hook,
// no fsmonitor) and in Restricted Mode (no process at all: the diff is built from the stored
// patch text). git's own trace (GIT_TRACE2_EVENT) shows every git process and its config.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { plantRepoTraps } from '../kit/repoTraps';
import type { RepoTraps } from '../kit/repoTraps';
import { makeDeferredProject } from '../int/extension/fixture';
import type { Session } from './harness';
import { defaultVsix, startSession } from './harness';

/** git's own trace of every git process started with this environment: command and effective hook/fsmonitor config. */
function gitTrace(dir: string): {
  readonly env: Record<string, string>;
  calls(): { cmd: string; hooksPath?: string; fsmonitor?: string }[];
} {
  const file = path.join(dir, 'git-trace2.json');
  return {
    env: { GIT_TRACE2_EVENT: file, GIT_TRACE2_CONFIG_PARAMS: 'core.hooksPath,core.fsmonitor' },
    calls() {
      if (!fs.existsSync(file)) return [];
      const bySid = new Map<string, { cmd: string; hooksPath?: string; fsmonitor?: string }>();
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        const e = JSON.parse(line) as { event: string; sid: string; argv?: string[]; param?: string; value?: string };
        const c = bySid.get(e.sid) ?? { cmd: '' };
        if (e.event === 'start') c.cmd = (e.argv ?? []).join(' ');
        if (e.event === 'def_param' && e.param === 'core.hookspath') c.hooksPath = e.value;
        if (e.event === 'def_param' && e.param === 'core.fsmonitor') c.fsmonitor = e.value;
        bySid.set(e.sid, c);
      }
      return [...bySid.values()];
    },
  };
}

for (const mode of ['untrusted', 'trusted'] as const) {
  describe(`e2e: a Deferred patch's diff runs nothing from the repository (${mode} window)`, function () {
    this.timeout(240_000);
    let session: Session | undefined;
    let dir: string;
    let scratch: string;
    let traps: RepoTraps;
    let trace: ReturnType<typeof gitTrace>;

    before(async () => {
      assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
      dir = (await makeDeferredProject()).dir;
      scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-e2e-traps-'));
      traps = plantRepoTraps(dir, path.join(scratch, 'traps'));
      trace = gitTrace(scratch);
      // code-server, and the extension host it starts, inherit these.
      Object.assign(process.env, trace.env);
      session = await startSession(dir, {
        workspaceTrust: mode === 'untrusted',
        vsix: [defaultVsix],
        // VS Code's own git support would run git (and the fsmonitor) in the folder too.
        settings: { 'git.enabled': false },
      });
    });

    after(async () => {
      for (const k of Object.keys(trace.env)) delete process.env[k];
      await session?.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(scratch, { recursive: true, force: true });
    });

    it('given the Deferred row is clicked, then the diff opens and no hook or fsmonitor ran', async () => {
      const wb = session!.workbench;
      if (mode === 'untrusted') {
        await wb.clickDialogButton('Do you trust the authors of the files in this folder?', "No, I don't trust the authors");
        await wb.statusBarItem('status.workspaceTrust').filter({ hasText: 'Restricted Mode' }).waitFor();
      }
      await wb.openViewContainer('Ralph', 'ralph');
      const row = wb.treeRows(wb.viewPane('Deferred')).filter({ hasText: 'W2-001' }).first();
      await row.waitFor();
      const tab = wb.page.locator('.tabs-container .tab', { hasText: 'W2-001' }).first();
      for (let attempt = 0; ; attempt++) {
        await row.click();
        try {
          await tab.waitFor({ timeout: 10_000 });
          break;
        } catch (e) {
          if (attempt >= 2) throw e;
        }
      }
      // The new side of the change is on screen (from the hunks in Restricted Mode).
      await wb.page.locator('.monaco-editor', { hasText: 't.length > 8' }).first().waitFor();
      await wb.screenshot(`git-safety-diff-${mode}`);
      assert.deepEqual(traps.fired(), [], `repository programs ran: ${traps.fired().join(', ')}`);
      const calls = trace.calls();
      if (mode === 'untrusted') {
        assert.deepEqual(calls, [], `git ran in Restricted Mode: ${JSON.stringify(calls)}`);
      } else {
        assert.ok(
          calls.some((c) => c.cmd.includes('cat-file')),
          `the trusted diff reads the base blob: ${JSON.stringify(calls)}`,
        );
        for (const c of calls) {
          assert.equal(c.hooksPath, '/dev/null', `hooks on for ${c.cmd}`);
          assert.equal(c.fsmonitor, 'false', `fsmonitor on for ${c.cmd}`);
        }
      }
    });
  });
}
