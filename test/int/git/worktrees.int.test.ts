import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gitCallCount } from '../../../src/git/exec';
import { branchTip, currentBranch, gitCommonDir, isClean } from '../../../src/git/repo';
import { isInside, repoCacheDir } from '../../../src/git/repoCache';
import {
  ensureWorktree,
  findOrphanedWorktrees,
  InvalidWorktreeNameError,
  legacyWorktreesRoot,
  listRalphWorktrees,
  migrateLegacyWorktrees,
  removeWorktree,
  resetWorktree,
  UnknownBaseError,
  worktreesRoot,
} from '../../../src/git/worktrees';
import { ralphCacheDir } from '../../../src/shared/cacheDir';
import { git } from '../../kit/git';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

describe('git/worktrees (real git)', () => {
  let repo: TempRepo;
  beforeEach(() => {
    repo = makeRepo({ 'src/a.ts': 'a\n', '.gitignore': 'node_modules/\n' });
  });
  afterEach(() => repo.cleanup());

  it('creates the worktree in the cache directory keyed by the repository, on ralph/<name>, at the target tip', async () => {
    const tip = await branchTip(repo.dir, 'main');
    const wt = await ensureWorktree(repo.dir, { name: 'worker-1', branch: 'main' });
    const cache = await repoCacheDir(repo.dir);
    assert.equal(wt.path, join(cache, 'worktrees', 'worker-1'));
    assert.ok(isInside(cache, ralphCacheDir()), `${cache} is in Ralph's cache directory`);
    assert.ok(!isInside(realpathSync(wt.path), realpathSync(repo.dir)), 'outside the repository tree');
    assert.equal(readFileSync(join(cache, 'repository'), 'utf8'), `${realpathSync(await gitCommonDir(repo.dir))}\n`);
    assert.equal(wt.branch, 'ralph/worker-1');
    assert.equal(wt.base, tip);
    assert.equal(await currentBranch(wt.path), 'ralph/worker-1');
    assert.equal(git(wt.path, 'rev-parse', 'HEAD'), tip);
    // Invisible to the user's checkout: git status there shows nothing.
    assert.equal(repo.git('status', '--porcelain', '--ignored'), '');
    assert.equal(await currentBranch(repo.dir), 'main');
  });

  it('re-ensuring resets to the new tip and discards everything the agent left', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'src/a.ts', 'dirty\n');
    writeIn(wt.path, 'stray.txt', 'x');
    writeIn(wt.path, 'node_modules/m/index.js', 'x');
    git(wt.path, 'add', 'stray.txt');
    git(wt.path, '-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-qm', 'agent');
    const tip = repo.commit({ 'src/b.ts': 'b\n' }, 'moved');
    const again = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    assert.equal(again.base, tip);
    assert.equal(git(wt.path, 'rev-parse', 'HEAD'), tip);
    assert.equal(await isClean(wt.path), true);
    assert.equal(existsSync(join(wt.path, 'stray.txt')), false);
    assert.equal(existsSync(join(wt.path, 'node_modules')), false);
    assert.equal(git(repo.dir, 'rev-parse', 'ralph/w1'), tip);
  });

  it('creates several worktrees concurrently', async () => {
    const all = await Promise.all(['w1', 'w2', 'w3', 'w4', 'w5', 'w6'].map((name) => ensureWorktree(repo.dir, { name, branch: 'main' })));
    assert.deepEqual(
      (await listRalphWorktrees(repo.dir)).map((w) => [w.name, w.registered]),
      all.map((w) => [w.name, true]),
    );
  });

  it('keepIgnored keeps dependencies across a reset', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'node_modules/m/index.js', 'x');
    writeIn(wt.path, 'junk.txt', 'x');
    await resetWorktree(wt.path, wt.base, { keepIgnored: true });
    assert.equal(existsSync(join(wt.path, 'node_modules/m/index.js')), true);
    assert.equal(existsSync(join(wt.path, 'junk.txt')), false);
  });

  it('starts from an explicit base and rejects bad names and unknown bases', async () => {
    const first = repo.git('rev-parse', 'HEAD');
    repo.commit({ 'x.txt': 'x\n' });
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main', base: first });
    assert.equal(wt.base, first);
    await assert.rejects(ensureWorktree(repo.dir, { name: '../evil', branch: 'main' }), InvalidWorktreeNameError);
    await assert.rejects(ensureWorktree(repo.dir, { name: 'ok', branch: 'nope' }), UnknownBaseError);
  });

  it('recreates a worktree whose directory vanished, and replaces a stray directory', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    rmSync(wt.path, { recursive: true, force: true });
    const again = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    assert.equal(await isClean(again.path), true);
    const stray = join(await worktreesRoot(repo.dir), 'w2');
    mkdirSync(stray, { recursive: true });
    writeIn(stray, 'leftover.txt', 'x');
    const w2 = await ensureWorktree(repo.dir, { name: 'w2', branch: 'main' });
    assert.equal(existsSync(join(w2.path, 'leftover.txt')), false);
    assert.equal(await currentBranch(w2.path), 'ralph/w2');
  });

  it('given a vanished registration elsewhere holding ralph/<name>, then ensuring prunes it and creates the worktree', async () => {
    const elsewhere = `${repo.dir}-gone-w1`;
    git(repo.dir, 'worktree', 'add', '-q', '-B', 'ralph/w1', elsewhere, 'main');
    rmSync(elsewhere, { recursive: true, force: true });
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    assert.equal(await currentBranch(wt.path), 'ralph/w1');
    assert.ok(!repo.git('worktree', 'list', '--porcelain').includes(elsewhere), 'the vanished registration was pruned');
  });

  it('given no registration whose folder is gone, then creating a worktree runs no prune', async () => {
    await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    const before = gitCallCount();
    await ensureWorktree(repo.dir, { name: 'w2', branch: 'main' });
    // tip, add: the common dir and the cache root are known from the first call.
    assert.equal(gitCallCount() - before, 2);
  });

  it('lists ralph worktrees, finds orphans (unregistered dirs, vanished, inactive) and removes them', async () => {
    await ensureWorktree(repo.dir, { name: 'primary', branch: 'main' });
    const w1 = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    const w2 = await ensureWorktree(repo.dir, { name: 'w2', branch: 'main' });
    // A user worktree elsewhere is not Ralph's.
    git(repo.dir, 'worktree', 'add', '-q', join(repo.dir, '..', 'user-wt'), '-b', 'user-branch');
    const stray = join(await worktreesRoot(repo.dir), 'stray');
    mkdirSync(stray, { recursive: true });
    rmSync(w2.path, { recursive: true, force: true }); // vanished after a crash

    const listed = await listRalphWorktrees(repo.dir);
    assert.deepEqual(
      listed.map((w) => [w.name, w.registered, w.missing]),
      [
        ['primary', true, false],
        ['stray', false, false],
        ['w1', true, false],
        ['w2', true, true],
      ],
    );
    const orphans = await findOrphanedWorktrees(repo.dir, ['primary', 'w2']);
    // w2 vanished: prune dropped its registration, so it is gone entirely (nothing to reset).
    assert.deepEqual(orphans.map((o) => o.name).sort(), ['stray', 'w1']);
    for (const o of orphans) await removeWorktree(repo.dir, o.name);
    assert.deepEqual(
      (await listRalphWorktrees(repo.dir)).map((w) => w.name),
      ['primary'],
    );
    assert.equal(existsSync(w1.path), false);
    assert.equal(repo.git('branch', '--list', 'ralph/w1'), '');
    assert.ok(existsSync(realpathSync(join(repo.dir, '..', 'user-wt'))));
  });

  it('given worktrees in the old place inside .git, then they are listed as legacy, moved out on migration, and a same-named one is replaced', async () => {
    const legacyRoot = await legacyWorktreesRoot(repo.dir);
    git(repo.dir, 'worktree', 'add', '-q', '-B', 'ralph/primary', join(legacyRoot, 'primary'), 'main');
    git(repo.dir, 'worktree', 'add', '-q', '-B', 'ralph/worker-1', join(legacyRoot, 'worker-1'), 'main');
    writeIn(join(legacyRoot, 'worker-1'), 'half-done.txt', 'x');
    assert.deepEqual(
      (await listRalphWorktrees(repo.dir)).map((w) => [w.name, w.legacy]),
      [
        ['primary', true],
        ['worker-1', true],
      ],
    );
    // A legacy worktree is an orphan even under an active name: it has to move.
    assert.deepEqual(
      (await findOrphanedWorktrees(repo.dir, ['primary', 'worker-1'])).map((w) => w.name),
      ['primary', 'worker-1'],
    );
    // ensureWorktree of a name still in the old place takes its branch over.
    const primary = await ensureWorktree(repo.dir, { name: 'primary', branch: 'main' });
    assert.equal(primary.path, join(await worktreesRoot(repo.dir), 'primary'));
    assert.equal(existsSync(join(legacyRoot, 'primary')), false);

    assert.deepEqual(await migrateLegacyWorktrees(repo.dir), ['worker-1']);
    assert.equal(existsSync(join(await gitCommonDir(repo.dir), 'ralph')), false, 'nothing of Ralph left in .git');
    assert.deepEqual(
      (await listRalphWorktrees(repo.dir)).map((w) => [w.name, w.legacy]),
      [['primary', false]],
    );
    assert.ok(!repo.git('worktree', 'list', '--porcelain').includes(legacyRoot), 'git forgot the old registrations');
    assert.deepEqual(await migrateLegacyWorktrees(repo.dir), [], 'idempotent');
  });

  it("given an agent worktree with tests in it, then a test runner in the checkout sees only the checkout's own tests", async () => {
    writeIn(repo.dir, 'test/own.test.js', "require('node:test')('own', () => {});\n");
    repo.git('add', '.');
    repo.git('commit', '-qm', 'own test');
    const wt = await ensureWorktree(repo.dir, { name: 'worker-1', branch: 'main' });
    writeIn(wt.path, 'test/agent.test.js', "require('node:test')('half-done agent work', () => { throw new Error('x'); });\n");
    const out = execFileSync(process.execPath, ['--test'], { cwd: repo.dir, encoding: 'utf8' });
    assert.match(out, /# tests 1\n/);
    assert.match(out, /# pass 1\n/);
    assert.doesNotMatch(out, /half-done/);
  });
});
