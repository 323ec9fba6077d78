// Ralph's own git runs nothing the repository names: with every hook type and a
// core.fsmonitor command planted in the repository, no git operation of the engine (worktree
// add/reset/remove, capture, rebase, replay, promotion into the checkout and onto a branch,
// recovery, queries) or of the CLI's git port ever fires one. Plain git fires them, which
// shows the traps are live.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliGitPort } from '../../../src/cli/gitPort';
import { applyPatchToWorktree } from '../../../src/git/applyToWorktree';
import { capturePatch } from '../../../src/git/capture';
import { ralphGitEnv } from '../../../src/git/gitEnv';
import { findPromotedCommit, formatPromotionMessage, promotePatch, recoverInterruptedPromotion } from '../../../src/git/promote';
import { rebaseWorktree } from '../../../src/git/rebase';
import { changedFiles, currentBranch, dirtyPaths, isClean, listWorktrees } from '../../../src/git/repo';
import { ensureWorktree, findOrphanedWorktrees, removeWorktree, resetWorktree } from '../../../src/git/worktrees';
import { plantRepoTraps } from '../../kit/repoTraps';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

/** The test's own git, as the user would run it but with the traps switched off. */
function quiet(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, env: ralphGitEnv(), encoding: 'utf8' }).trim();
}

for (const via of ['hooksDir', 'hooksPath'] as const) {
  describe(`git: Ralph's git runs no repository program (hooks via ${via}, fsmonitor)`, function () {
    this.timeout(120_000);
    let repo: TempRepo;
    let traps: ReturnType<typeof plantRepoTraps>;
    let scratch: string;
    beforeEach(() => {
      repo = makeRepo({ 'src/a.ts': 'export const a = 1;\n', 'docs/x.md': '# x\n' });
      scratch = mkdtempSync(join(tmpdir(), 'ralph-traps-'));
      traps = plantRepoTraps(repo.dir, join(scratch, 'traps'), { via });
    });
    afterEach(() => {
      repo.cleanup();
      rmSync(scratch, { recursive: true, force: true });
    });

    it('given plain git, then the traps fire (the fixture is live)', () => {
      const plain = { ...process.env, GIT_CONFIG_COUNT: '0' };
      execFileSync('git', ['status', '--porcelain'], { cwd: repo.dir, env: plain, stdio: 'ignore' });
      execFileSync('git', ['worktree', 'add', '-q', join(scratch, 'plain-wt'), '-b', 'plain'], {
        cwd: repo.dir,
        env: plain,
        stdio: 'ignore',
      });
      const fired = traps.fired();
      assert.ok(fired.includes('fsmonitor'), fired.join(','));
      assert.ok(fired.includes('hook:post-checkout'), fired.join(','));
      assert.ok(fired.includes('hook:reference-transaction'), fired.join(','));
    });

    it('given every engine git operation and the CLI git port, then no trap fires', async () => {
      // A worker's worktree: create, edit, capture, list, query.
      const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
      writeIn(wt.path, 'src/a.ts', 'export const a = 2;\n');
      writeIn(wt.path, 'src/new.ts', 'export const n = 1;\n');
      assert.equal(await isClean(wt.path), false);
      assert.equal((await changedFiles(wt.path, wt.base)).length, 2);
      // The branch moves under it (the user's own commit, traps off): rebase, capture on the new base.
      writeIn(repo.dir, 'docs/y.md', '# y\n');
      quiet(repo.dir, 'add', 'docs/y.md');
      quiet(repo.dir, 'commit', '-q', '-m', 'user commit');
      const rb = await rebaseWorktree(wt.path, 'main');
      assert.equal(rb.status, 'rebased');
      const patch = await capturePatch(wt.path, rb.base, join(scratch, 'w1.patch'));
      assert.equal(patch.isEmpty, false);
      // A late replay in a scratch worktree.
      const verify = await ensureWorktree(repo.dir, { name: 'verify', branch: 'main' });
      assert.equal((await applyPatchToWorktree(verify.path, patch.path)).status, 'applied');
      await resetWorktree(verify.path, rb.base, { branch: 'ralph/verify' });
      // Promotion into the user's checkout of main (read-tree -u, update-ref), then recovery.
      writeIn(repo.dir, 'docs/x.md', '# the user edits an unrelated file\n');
      assert.deepEqual(await dirtyPaths(repo.dir, ['docs/x.md']), ['docs/x.md']);
      const r = await promotePatch(repo.dir, {
        branch: 'main',
        patchFile: patch.path,
        message: formatPromotionMessage('T-1', 'change'),
        patchId: 'patch_T-1_1',
        expectedTip: rb.base,
      });
      assert.equal(r.status, 'promoted');
      assert.equal(await findPromotedCommit(repo.dir, 'main', 'patch_T-1_1'), r.status === 'promoted' ? r.commit : null);
      await recoverInterruptedPromotion(repo.dir);
      // Promotion onto a branch not checked out (ref update only).
      quiet(repo.dir, 'branch', 'side', 'main~1');
      await resetWorktree(wt.path, 'side', { branch: 'ralph/w1' });
      writeIn(wt.path, 'src/side.ts', 'export const s = 1;\n');
      const sidePatch = await capturePatch(wt.path, quiet(repo.dir, 'rev-parse', 'side'), join(scratch, 'side.patch'));
      assert.equal((await promotePatch(repo.dir, { branch: 'side', patchFile: sidePatch.path, message: 'side' })).status, 'promoted');
      // Queries and clean-up.
      assert.equal(await currentBranch(repo.dir), 'main');
      assert.ok((await listWorktrees(repo.dir)).length >= 3);
      await findOrphanedWorktrees(repo.dir, ['w1']);
      await removeWorktree(repo.dir, 'verify');
      await removeWorktree(repo.dir, 'w1');
      const port = cliGitPort(repo.dir);
      assert.equal(await port.commitExists(quiet(repo.dir, 'rev-parse', 'main')), true);
      assert.equal(await port.notOnTargetBranch?.(quiet(repo.dir, 'rev-parse', 'main')), null);

      assert.deepEqual(traps.fired(), []);
    });
  });
}

describe('git/gitEnv ralphGitEnv', () => {
  it('given inherited redirections and command-line config, then they are dropped and the safety config is set', () => {
    const env = ralphGitEnv(
      { GIT_INDEX_FILE: '/tmp/idx', KEEP: undefined },
      {
        PATH: '/usr/bin',
        KEEP: 'x',
        GIT_DIR: '/elsewhere/.git',
        GIT_CONFIG_PARAMETERS: "'core.hooksPath'='/evil'",
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.fsmonitor',
        GIT_CONFIG_VALUE_0: '/evil.sh',
        GIT_EXTERNAL_DIFF: '/evil-diff',
      },
    );
    assert.equal(env['PATH'], '/usr/bin');
    assert.equal(env['KEEP'], undefined);
    assert.equal(env['GIT_INDEX_FILE'], '/tmp/idx');
    for (const k of ['GIT_DIR', 'GIT_CONFIG_PARAMETERS', 'GIT_EXTERNAL_DIFF']) assert.equal(env[k], undefined, k);
    const n = Number(env['GIT_CONFIG_COUNT']);
    const config = new Map(Array.from({ length: n }, (_, i) => [env[`GIT_CONFIG_KEY_${i}`], env[`GIT_CONFIG_VALUE_${i}`]]));
    assert.equal(config.get('core.hooksPath'), '/dev/null');
    assert.equal(config.get('core.fsmonitor'), 'false');
    assert.equal(config.get('hook.post-checkout.enabled'), 'false');
    assert.equal(env['GIT_TERMINAL_PROMPT'], '0');
    // git itself reads it that way.
    const out = execFileSync('git', ['config', 'core.hooksPath'], { env: ralphGitEnv(), encoding: 'utf8' }).trim();
    assert.equal(out, '/dev/null');
  });
});
