import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { capturePatch } from '../../../src/git/capture';
import {
  BranchCheckedOutByAgentError,
  formatPromotionMessage,
  promotePatch,
  promoteIntoCheckout,
  recoverInterruptedPromotion,
} from '../../../src/git/promote';
import type { PromotionMarker, RecoveryOutcome } from '../../../src/git/promote';
import { GitError } from '../../../src/git/exec';
import { branchTip, commitExists, isAncestor } from '../../../src/git/repo';
import { ensureWorktree, worktreesRoot } from '../../../src/git/worktrees';
import { git, wrapGitOnPath } from '../../kit/git';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

/** A git whose run with `command` among its arguments is the shell `action` (given the real git's path). */
function realGitExceptFor(command: string, action: (real: string) => string): () => void {
  return wrapGitOnPath((real) => ['for a in "$@"; do', `  if [ "$a" = ${command} ]; then ${action(real)}; fi`, 'done']);
}

describe('git/promote (real git)', () => {
  let repo: TempRepo;
  let out: string;
  beforeEach(() => {
    repo = makeRepo({
      'src/a.ts': 'export const a = 1;\n',
      'src/b.ts': 'export const b = 1;\n',
      'src/user.ts': 'export const user = 1;\n',
      'docs/guide.md': '# guide\n',
    });
    out = mkdtempSync(join(tmpdir(), 'ralph-patches-'));
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(out, { recursive: true, force: true });
  });

  /** An agent's worktree change on the current tip of main, captured as a patch. */
  async function agentPatch(name: string, files: Record<string, string | null>): Promise<string> {
    const wt = await ensureWorktree(repo.dir, { name, branch: 'main' });
    for (const [p, c] of Object.entries(files)) {
      if (c === null) unlinkSync(join(wt.path, p));
      else writeIn(wt.path, p, c);
    }
    const cap = await capturePatch(wt.path, wt.base, join(out, `${name}.patch`));
    return cap.path;
  }

  const msg = formatPromotionMessage('T-001', 'change a');

  it('formats messages as ralph(<task>): <title>', () => {
    assert.equal(formatPromotionMessage('T-1', ' fix\n  it '), 'ralph(T-1): fix it');
    assert.equal(formatPromotionMessage('T-1', 'x', 'body'), 'ralph(T-1): x\n\nbody');
  });

  it('promotes onto a branch not checked out anywhere: only the ref moves', async () => {
    repo.git('switch', '-q', '-c', 'feature');
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n', 'src/new.ts': 'new\n' });
    const old = await branchTip(repo.dir, 'main');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    if (r.status !== 'promoted') return;
    assert.equal(r.parent, old);
    assert.equal(r.checkout, null);
    assert.equal(await branchTip(repo.dir, 'main'), r.commit);
    assert.equal(await commitExists(repo.dir, r.commit), true);
    assert.equal(await isAncestor(repo.dir, r.commit, 'main'), true);
    assert.equal(repo.git('show', 'main:src/a.ts'), 'export const a = 2;');
    assert.equal(repo.git('log', '-1', '--format=%s', 'main'), 'ralph(T-001): change a');
    // the user's checkout (on feature) is untouched
    assert.equal(repo.read('src/a.ts'), 'export const a = 1;\n');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('with the branch checked out: untouched files are brought in; HEAD, index and worktree agree', async () => {
    const patch = await agentPatch('w1', {
      'src/a.ts': 'export const a = 2;\n',
      'src/new dir/ü.ts': 'export const u = 1;\n',
      'docs/guide.md': null,
    });
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    if (r.status !== 'promoted') return;
    assert.equal(r.checkout, repo.dir);
    assert.equal(repo.git('rev-parse', 'HEAD'), r.commit);
    assert.equal(repo.read('src/a.ts'), 'export const a = 2;\n');
    assert.equal(repo.read('src/new dir/ü.ts'), 'export const u = 1;\n');
    assert.equal(existsSync(join(repo.dir, 'docs/guide.md')), false);
    assert.equal(repo.git('status', '--porcelain'), '');
    assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
  });

  it("keeps the user's own uncommitted edits to other files, and shows only those in status", async () => {
    writeIn(repo.dir, 'src/user.ts', 'export const user = 2; // mine\n');
    repo.git('add', 'src/user.ts');
    writeIn(repo.dir, 'notes.txt', 'my notes\n');
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.read('src/user.ts'), 'export const user = 2; // mine\n');
    assert.equal(repo.git('status', '--porcelain'), 'M  src/user.ts\n?? notes.txt'.replace(/\n/g, '\n'));
  });

  it('waits instead of overwriting an uncommitted user edit; goes through after the user commits', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n', 'src/b.ts': 'export const b = 2;\n' });
    const mine = Buffer.from('export const a = 99; // user edit\r\n\u00e9');
    writeIn(repo.dir, 'src/a.ts', mine);
    const before = repo.git('rev-parse', 'main');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'waiting');
    if (r.status !== 'waiting') return;
    assert.deepEqual(r.files, [{ path: 'src/a.ts', why: 'modified' }]);
    assert.match(r.reason, /src\/a\.ts/);
    assert.deepEqual(repo.readBytes('src/a.ts'), mine);
    assert.equal(repo.read('src/b.ts'), 'export const b = 1;\n', 'nothing brought in while waiting');
    assert.equal(repo.git('rev-parse', 'main'), before);
    assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
    // The temp index prepared beside the checks is gone with the lock.
    assert.deepEqual(
      readdirSync(join(repo.dir, '.git')).filter((f) => f.startsWith('ralph-promote-index')),
      [],
    );

    // The user reverts their edit: now it goes through.
    repo.git('checkout', '--', 'src/a.ts');
    const again = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(again.status, 'promoted');
    assert.equal(repo.read('src/a.ts'), 'export const a = 2;\n');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('after the user commits their own edit, the patch either applies or reports a conflict', async () => {
    const patch = await agentPatch('w1', { 'src/b.ts': 'export const b = 2;\n' });
    writeIn(repo.dir, 'src/b.ts', 'export const b = 1;\nexport const extra = 1;\n');
    const waiting = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(waiting.status, 'waiting');
    repo.git('commit', '-q', '-am', 'user work');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    // b.ts changed on both sides in adjacent lines: git's 3-way merge calls it a conflict.
    assert.equal(r.status, 'conflict');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('after the user commits a non-overlapping edit to the same file, the promotion goes through', async () => {
    repo.commit({ 'src/long.ts': 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n' });
    const patch = await agentPatch('w1', { 'src/long.ts': 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8 (agent)\n' });
    writeIn(repo.dir, 'src/long.ts', 'l1 (user)\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n');
    const waiting = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(waiting.status, 'waiting');
    repo.git('commit', '-q', '-am', 'user work');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.read('src/long.ts'), 'l1 (user)\nl2\nl3\nl4\nl5\nl6\nl7\nl8 (agent)\n');
    assert.equal(repo.git('status', '--porcelain'), '');
    assert.equal(repo.git('log', '--format=%s', '-2'), 'ralph(T-001): change a\nuser work');
  });

  it('racy git: a same-size user edit made right after the index was written is never clobbered', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    for (let i = 0; i < 5; i++) {
      // Rewrite the index now, then edit within the same timestamp granularity.
      repo.git('update-index', '--really-refresh');
      writeIn(repo.dir, 'src/a.ts', `export const a = ${i + 3};\n`);
      const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
      assert.equal(r.status, 'waiting', `round ${i}`);
      assert.equal(repo.read('src/a.ts'), `export const a = ${i + 3};\n`);
      repo.git('checkout', '--', 'src/a.ts');
    }
  });

  it('waits while the user has an unresolved merge in the checkout', async () => {
    repo.git('switch', '-q', '-c', 'side');
    repo.commit({ 'src/b.ts': 'side\n' });
    repo.git('switch', '-q', 'main');
    repo.commit({ 'src/b.ts': 'main\n' });
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    try {
      repo.git('merge', '-q', 'side');
    } catch {
      // the conflict is the point
    }
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'waiting');
    if (r.status === 'waiting') assert.deepEqual(r.files, [{ path: 'src/b.ts', why: 'unmerged' }]);
    assert.match(repo.read('src/b.ts'), /<<<<<<</);
  });

  it('promotes over a file whose timestamp changed but not its content', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const later = new Date(Date.now() + 5000);
    utimesSync(join(repo.dir, 'src/a.ts'), later, later);
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted', JSON.stringify(r));
    assert.equal(repo.read('src/a.ts'), 'export const a = 2;\n');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('waits for a staged user change and for an untracked file where the patch adds one', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n', 'src/added.ts': 'agent\n' });
    writeIn(repo.dir, 'src/a.ts', 'staged\n');
    repo.git('add', 'src/a.ts');
    writeIn(repo.dir, 'src/added.ts', 'user file\n');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'waiting');
    if (r.status !== 'waiting') return;
    assert.deepEqual(r.files, [
      { path: 'src/a.ts', why: 'staged' },
      { path: 'src/added.ts', why: 'untracked' },
    ]);
    assert.equal(repo.read('src/added.ts'), 'user file\n');
  });

  it('names waiting files with spaces and unicode exactly', async () => {
    repo.commit({ 'docs/mes notes été.md': 'v1\n' });
    const patch = await agentPatch('w1', { 'docs/mes notes été.md': 'v2 agent\n' });
    writeIn(repo.dir, 'docs/mes notes été.md', 'v2 user\n');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'waiting');
    if (r.status === 'waiting') assert.deepEqual(r.files, [{ path: 'docs/mes notes été.md', why: 'modified' }]);
  });

  it('with core.autocrlf the checkout gets CRLF files and status stays clean', async () => {
    repo.git('config', 'core.autocrlf', 'true');
    repo.git('rm', '-q', '--cached', '-r', '.');
    repo.git('reset', '-q', '--hard');
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\r\nexport const b = 3;\r\n' });
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.git('show', 'HEAD:src/a.ts'), 'export const a = 2;\nexport const b = 3;');
    assert.equal(repo.read('src/a.ts'), 'export const a = 2;\r\nexport const b = 3;\r\n');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('waits for an untracked file in the way of a directory the patch creates', async () => {
    const patch = await agentPatch('w1', { 'gen/x.ts': 'agent\n' });
    writeIn(repo.dir, 'gen', 'a user file named gen\n');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'waiting');
    if (r.status === 'waiting') assert.deepEqual(r.files, [{ path: 'gen', why: 'untracked' }]);
    assert.equal(repo.read('gen'), 'a user file named gen\n');
  });

  it('promotes a tracked file turning into a directory', async () => {
    repo.commit({ lib: 'was a file\n' });
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    unlinkSync(join(wt.path, 'lib'));
    writeIn(wt.path, 'lib/index.ts', 'now a dir\n');
    const cap = await capturePatch(wt.path, wt.base, join(out, 'dir.patch'));
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: cap.path, message: msg });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.read('lib/index.ts'), 'now a dir\n');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('treats names with pathspec magic characters literally', async () => {
    repo.commit({ 'src/we*rd:[1].ts': 'v1\n', 'src/weXrd:1.ts': 'other\n' });
    const patch = await agentPatch('w1', { 'src/we*rd:[1].ts': 'v2\n' });
    writeIn(repo.dir, 'src/weXrd:1.ts', 'user edit on a name the glob would match\n');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.read('src/we*rd:[1].ts'), 'v2\n');
    assert.equal(repo.git('status', '--porcelain'), ' M "src/weXrd:1.ts"'.replace(/"/g, ''));
  });

  it('waits for an ignored file in the way of an added path', async () => {
    repo.commit({ '.gitignore': 'out/\n' });
    // The agent un-ignores out/ and adds a file there; the user has an ignored file at that path.
    const patch = await agentPatch('w1', { '.gitignore': '', 'out/keep.txt': 'agent\n' });
    writeIn(repo.dir, 'out/keep.txt', 'user build output\n');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'waiting');
    if (r.status === 'waiting') assert.deepEqual(r.files, [{ path: 'out/keep.txt', why: 'ignored' }]);
    assert.equal(repo.read('out/keep.txt'), 'user build output\n');
    assert.equal(repo.read('.gitignore'), 'out/\n');
  });

  it('moving only the ref (update-ref alone) loses promoted work on the next commit; our promotion does not', async () => {
    // The reference's failure mode, reproduced: commit from a temp index, move the ref only.
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const idx = join(out, 'ref-index');
    const env = { ...process.env, GIT_INDEX_FILE: idx };
    const run = (...args: string[]): string => execFileSync('git', args, { cwd: repo.dir, env, encoding: 'utf8' }).trim();
    run('read-tree', 'HEAD');
    run('apply', '--cached', patch);
    const tree = run('write-tree');
    const c = run('commit-tree', tree, '-p', 'HEAD', '-m', 'worker patch');
    run('update-ref', 'HEAD', c);
    writeIn(repo.dir, 'src/user.ts', 'export const user = 2;\n');
    repo.git('commit', '-q', '-am', 'user commit');
    assert.equal(repo.git('show', 'HEAD:src/a.ts'), 'export const a = 1;', 'the reference reverts the worker');

    // Ours, from the same starting point.
    repo.git('reset', '-q', '--hard', 'HEAD~2');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.git('status', '--porcelain'), '', 'no phantom reverse diff');
    writeIn(repo.dir, 'src/user.ts', 'export const user = 2;\n');
    repo.git('commit', '-q', '-am', 'user commit');
    assert.equal(repo.git('show', 'HEAD:src/a.ts'), 'export const a = 2;', 'promoted work survives');
    assert.equal(repo.git('show', 'HEAD:src/user.ts'), 'export const user = 2;');
    // And an agent's next commit on the new tip cannot revert it either.
    const patch2 = await agentPatch('w2', { 'src/b.ts': 'export const b = 3;\n' });
    const r2 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch2, message: msg });
    assert.equal(r2.status, 'promoted');
    assert.equal(repo.git('show', 'HEAD:src/a.ts'), 'export const a = 2;');
    assert.equal(repo.git('show', 'HEAD:src/b.ts'), 'export const b = 3;');
  });

  it('reports a conflict (and changes nothing) when the patch no longer applies', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    repo.commit({ 'src/a.ts': 'export const a = 3;\n' }, 'someone else');
    const tip = repo.git('rev-parse', 'main');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'conflict');
    if (r.status !== 'conflict') return;
    assert.equal(r.reason, 'does-not-apply');
    assert.equal(repo.git('rev-parse', 'main'), tip);
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('applies onto a moved tip when the changes do not overlap', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const moved = repo.commit({ 'src/b.ts': 'export const b = 5;\n' }, 'someone else');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r.status, 'promoted');
    if (r.status === 'promoted') assert.equal(r.parent, moved);
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('with expectedTip, refuses a moved tip (the gates never saw it) and changes nothing', async () => {
    const base = await branchTip(repo.dir, 'main');
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const moved = repo.commit({ 'src/b.ts': 'export const b = 5;\n' }, 'someone else');
    // The tree is built early on the expected tip, in a folder of its own under the temp
    // folder (a private one here: other suites build theirs at the same time); it is thrown
    // away with its folder.
    const privateTmp = mkdtempSync(join(tmpdir(), 'ralph-promote-test-'));
    const savedTmp = process.env['TMPDIR'];
    process.env['TMPDIR'] = privateTmp;
    let r: Awaited<ReturnType<typeof promotePatch>>;
    try {
      r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, expectedTip: base ?? '' });
    } finally {
      if (savedTmp === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = savedTmp;
    }
    assert.equal(r.status, 'conflict');
    if (r.status === 'conflict') assert.equal(r.reason, 'branch-moved');
    assert.deepEqual(readdirSync(privateTmp), []);
    rmSync(privateTmp, { recursive: true });
    assert.equal(await branchTip(repo.dir, 'main'), moved);
    assert.equal(readFileSync(join(repo.dir, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
    const ok = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, expectedTip: moved });
    assert.equal(ok.status, 'promoted');
  });

  it('compare-and-swap: a branch moved between the read and the update fails cleanly', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const old = repo.git('rev-parse', 'main');
    // Build the commit promotePatch would, then let the branch move before the swap.
    repo.commit({ 'src/b.ts': 'export const b = 9;\n' }, 'moved underneath');
    const movedTip = repo.git('rev-parse', 'main');
    const tree = repo.git('rev-parse', `${old}^{tree}`);
    const fake = repo.git('commit-tree', tree, '-p', old, '-m', 'x');
    const r = await promoteIntoCheckout(repo.dir, 'main', old, fake, 'test');
    assert.equal(r.status, 'conflict');
    if (r.status === 'conflict') assert.equal(r.reason, 'branch-moved');
    assert.equal(repo.git('rev-parse', 'main'), movedTip);
    assert.equal(repo.git('status', '--porcelain'), '');
    assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
    // The same on a branch not checked out.
    repo.git('switch', '-q', '-c', 'other');
    const r2 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
    assert.equal(r2.status, 'promoted');
  });

  it('is idempotent with a patch id: a second promotion returns the first commit', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const r1 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, patchId: 'patch_T-001_1' });
    const r2 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, patchId: 'patch_T-001_1' });
    assert.equal(r1.status, 'promoted');
    assert.equal(r2.status, 'promoted');
    if (r1.status !== 'promoted' || r2.status !== 'promoted') return;
    assert.equal(r2.commit, r1.commit);
    assert.equal(r2.alreadyPromoted, true);
    assert.match(repo.git('log', '-1', '--format=%B'), /Ralph-Patch: patch_T-001_1/);
    assert.equal(repo.git('rev-list', '--count', 'main'), '2');
  });

  it('uses the given author and never touches .ralph/ on the branch', async () => {
    repo.commit({ '.ralph/BACKLOG.md': 'b\n' });
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'src/a.ts', 'export const a = 2;\n');
    writeIn(wt.path, '.ralph/BACKLOG.md', 'agent\n');
    const cap = await capturePatch(wt.path, wt.base, join(out, 'x.patch'));
    // Even a hand-made patch touching .ralph/ is filtered at apply time.
    writeFileSync(join(out, 'both.patch'), `${readFileSync(cap.path, 'utf8')}${git(wt.path, 'diff', '--full-index', '--', '.ralph')}\n`);
    const r = await promotePatch(repo.dir, {
      branch: 'main',
      patchFile: join(out, 'both.patch'),
      message: msg,
      author: { name: 'Worker One', email: 'w1@ralph' },
    });
    assert.equal(r.status, 'promoted');
    assert.equal(repo.git('log', '-1', '--format=%an <%ae>'), 'Worker One <w1@ralph>');
    assert.equal(repo.git('show', 'HEAD:.ralph/BACKLOG.md'), 'b');
  });

  it('refuses when the target branch is checked out in an agent worktree', async () => {
    repo.git('switch', '-q', '-c', 'feature');
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const wt = await ensureWorktree(repo.dir, { name: 'w2', branch: 'main' });
    git(wt.path, 'switch', '-q', 'main');
    await assert.rejects(
      promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg }),
      (e: unknown) => e instanceof BranchCheckedOutByAgentError,
    );
  });

  it('waits while another git command holds the index lock', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    writeFileSync(join(repo.dir, '.git/index.lock'), '');
    const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, lockWaitMs: 100 });
    assert.equal(r.status, 'waiting');
    if (r.status === 'waiting') assert.deepEqual(r.files, [{ path: 'index.lock', why: 'locked' }]);
    assert.equal(existsSync(join(repo.dir, '.git/index.lock')), true, "someone else's lock is left alone");
    unlinkSync(join(repo.dir, '.git/index.lock'));
    assert.equal((await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg })).status, 'promoted');
  });

  it('waits out a briefly held index lock (an editor refreshing status)', async () => {
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const lock = join(repo.dir, '.git/index.lock');
    writeFileSync(lock, '');
    const pending = promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, lockWaitMs: 10_000 });
    // Released once the promotion has started its work, whether or not it already tried.
    await new Promise<void>((res) => setImmediate(res));
    unlinkSync(lock);
    const r = await pending;
    assert.equal(r.status, 'promoted');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('finds an earlier promotion within base..branch only', async () => {
    const base = repo.git('rev-parse', 'main');
    const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
    const r1 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, patchId: 'p1', baseCommit: base });
    assert.equal(r1.status, 'promoted');
    const r2 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, patchId: 'p1', baseCommit: base });
    assert.equal(r2.status === 'promoted' && r2.alreadyPromoted, true);
    // A patch id that is a prefix of another is not confused with it.
    const r3 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, patchId: 'p', baseCommit: base });
    assert.notEqual(r3.status === 'promoted' && r3.alreadyPromoted, true);
  });

  describe('recovery after a crash inside the checkout update', () => {
    async function crashState(
      stage: 'after-read-tree' | 'after-update-ref',
      pid = 999999,
    ): Promise<{ old: string; next: string; patch: string }> {
      const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n', 'src/added.ts': 'agent\n' });
      // Build the commit without promoting, then replay promoteIntoCheckout's steps by hand.
      repo.git('switch', '-q', '-c', 'tmp');
      const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
      assert.equal(r.status, 'promoted');
      if (r.status !== 'promoted') throw new Error('setup');
      repo.git('update-ref', 'refs/heads/main', r.parent);
      repo.git('switch', '-q', 'main');
      repo.git('branch', '-q', '-D', 'tmp');
      const gd = join(repo.dir, '.git');
      const marker: PromotionMarker = {
        ralphPromotion: 1,
        pid,
        token: 'a-previous-run',
        branch: 'main',
        old: r.parent,
        next: r.commit,
        tempIndex: join(gd, 'ralph-promote-index'),
      };
      copyFileSync(join(gd, 'index'), marker.tempIndex);
      const env = { ...process.env, GIT_INDEX_FILE: marker.tempIndex };
      execFileSync('git', ['read-tree', '-m', '-u', r.parent, r.commit], { cwd: repo.dir, env });
      writeFileSync(join(gd, 'index.lock'), JSON.stringify(marker));
      if (stage === 'after-update-ref') repo.git('update-ref', 'refs/heads/main', r.commit);
      return { old: r.parent, next: r.commit, patch };
    }

    it('rolls back the files when the ref had not moved yet', async () => {
      writeIn(repo.dir, 'notes.txt', 'user\n');
      const { old } = await crashState('after-read-tree');
      const outcomes = await recoverInterruptedPromotion(repo.dir);
      assert.deepEqual(outcomes, [{ worktree: repo.dir, action: 'rolled-back', branch: 'main', keptUserFiles: [] }]);
      assert.equal(repo.git('rev-parse', 'main'), old);
      assert.equal(repo.read('src/a.ts'), 'export const a = 1;\n');
      assert.equal(existsSync(join(repo.dir, 'src/added.ts')), false);
      assert.equal(repo.git('status', '--porcelain'), '?? notes.txt');
    });

    it('treats a missing or cut-short file as reached, and keeps content only a user could have written', async () => {
      await crashState('after-read-tree');
      unlinkSync(join(repo.dir, 'src/a.ts'));
      writeIn(repo.dir, 'src/added.ts', 'ag'); // a prefix of "agent\n": a write cut short
      let outcomes = await recoverInterruptedPromotion(repo.dir);
      assert.deepEqual(outcomes, [{ worktree: repo.dir, action: 'rolled-back', branch: 'main', keptUserFiles: [] }]);
      assert.equal(repo.read('src/a.ts'), 'export const a = 1;\n');
      assert.equal(existsSync(join(repo.dir, 'src/added.ts')), false);
      assert.equal(repo.git('status', '--porcelain'), '');

      repo.git('reset', '-q', '--hard');
      repo.git('worktree', 'remove', '--force', join(await worktreesRoot(repo.dir), 'w1'));
      repo.git('branch', '-q', '-D', 'ralph/w1');
      await crashState('after-read-tree');
      writeIn(repo.dir, 'src/a.ts', 'the user typed this after the crash\n');
      outcomes = await recoverInterruptedPromotion(repo.dir);
      assert.deepEqual(outcomes, [{ worktree: repo.dir, action: 'rolled-back', branch: 'main', keptUserFiles: ['src/a.ts'] }]);
      assert.equal(repo.read('src/a.ts'), 'the user typed this after the crash\n');
    });

    it('completes the index when the ref had moved', async () => {
      const { next } = await crashState('after-update-ref');
      // A killed update-ref leaves its locks too (the branch's and HEAD's).
      writeFileSync(join(repo.dir, '.git/HEAD.lock'), '');
      writeFileSync(join(repo.dir, '.git/refs/heads/main.lock'), `${next}\n`);
      const outcomes = await recoverInterruptedPromotion(repo.dir);
      assert.deepEqual(outcomes, [{ worktree: repo.dir, action: 'completed', branch: 'main' }]);
      assert.equal(repo.git('rev-parse', 'HEAD'), next);
      assert.equal(repo.git('status', '--porcelain'), '');
      assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
      assert.equal(existsSync(join(repo.dir, '.git/HEAD.lock')), false);
      assert.equal(existsSync(join(repo.dir, '.git/refs/heads/main.lock')), false);
    });

    it("a promotion that meets an interrupted promotion's lock repairs it at once, even one of a process with our pid", async () => {
      const { old, patch } = await crashState('after-read-tree', process.pid);
      const recovered: RecoveryOutcome[] = [];
      // A wait for the stale lock would outlast the test's timeout: no one will release it.
      const r = await promotePatch(repo.dir, {
        branch: 'main',
        patchFile: patch,
        message: msg,
        patchId: 'again',
        lockWaitMs: 3_600_000,
        onRecovered: (o) => recovered.push(o),
      });
      assert.equal(r.status, 'promoted', JSON.stringify(r));
      if (r.status === 'promoted') assert.equal(r.parent, old);
      assert.deepEqual(recovered, [{ worktree: repo.dir, action: 'rolled-back', branch: 'main', keptUserFiles: [] }]);
      assert.equal(repo.read('src/a.ts'), 'export const a = 2;\n');
      assert.equal(repo.git('status', '--porcelain'), '');
      assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
    });

    it('a promotion does not run recovery where nothing stands in its way; start-up recovery does', async () => {
      const other = join(repo.dir, '..', `${basename(repo.dir)}-other`);
      repo.git('worktree', 'add', '-q', '-b', 'other', other);
      try {
        const tip = repo.git('rev-parse', 'other');
        const gd = join(repo.dir, '.git/worktrees', basename(other));
        const marker: PromotionMarker = {
          ralphPromotion: 1,
          pid: 999999,
          token: 'a-previous-run',
          branch: 'other',
          old: tip,
          next: tip,
          tempIndex: join(gd, 'ralph-promote-index'),
        };
        writeFileSync(join(gd, 'index.lock'), JSON.stringify(marker));
        const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
        const recovered: RecoveryOutcome[] = [];
        const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, onRecovered: (o) => recovered.push(o) });
        assert.equal(r.status, 'promoted', JSON.stringify(r));
        assert.deepEqual(recovered, []);
        assert.equal(existsSync(join(gd, 'index.lock')), true);
        assert.deepEqual(await recoverInterruptedPromotion(repo.dir), [{ worktree: other, action: 'completed', branch: 'other' }]);
        assert.equal(existsSync(join(gd, 'index.lock')), false);
      } finally {
        rmSync(other, { recursive: true, force: true });
      }
    });

    describe('a git process killed in the middle of a promotion', () => {
      let undo: () => void;
      beforeEach(() => {
        // The real git, except that `update-ref` takes main's lock and dies by SIGKILL (as
        // the OOM killer would take it).
        undo = realGitExceptFor('update-ref', (real) => `: > "$(${real} rev-parse --git-common-dir)/refs/heads/main.lock"; kill -9 $$`);
      });
      afterEach(() => undo());

      it('in the user checkout: the error is thrown and the checkout is put back at once', async () => {
        writeIn(repo.dir, 'notes.txt', 'user\n');
        const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n', 'src/added.ts': 'agent\n' });
        const old = repo.git('rev-parse', 'main');
        const recovered: RecoveryOutcome[] = [];
        await assert.rejects(
          promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, onRecovered: (o) => recovered.push(o) }),
          (e: unknown) => e instanceof GitError && e.args[0] === 'update-ref',
        );
        // Before, the lock went and the checkout kept the agent's files over the old index.
        assert.deepEqual(recovered, [{ worktree: repo.dir, action: 'rolled-back', branch: 'main', keptUserFiles: [] }]);
        assert.equal(repo.git('rev-parse', 'main'), old);
        assert.equal(repo.read('src/a.ts'), 'export const a = 1;\n');
        assert.equal(existsSync(join(repo.dir, 'src/added.ts')), false);
        assert.equal(repo.git('status', '--porcelain'), '?? notes.txt');
        assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
      });

      it('of a branch not checked out: its marker is recovered at once, the ref unchanged', async () => {
        repo.git('switch', '-q', '-c', 'elsewhere');
        const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
        const old = repo.git('rev-parse', 'main');
        const recovered: RecoveryOutcome[] = [];
        await assert.rejects(
          promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg, onRecovered: (o) => recovered.push(o) }),
          GitError,
        );
        // Before, the marker went first and the lock then looked like someone else's.
        assert.deepEqual(recovered, [{ worktree: repo.dir, action: 'rolled-back', branch: 'main', keptUserFiles: [] }]);
        assert.equal(repo.git('rev-parse', 'main'), old);
        assert.equal(existsSync(join(repo.dir, '.git/refs/heads/main.lock')), false);
        assert.equal(existsSync(join(repo.dir, '.git/ralph/promote-ref.json')), false);
      });
    });

    describe('a refresh of the temp index that would take an hour', () => {
      let undo: () => void;
      beforeEach(() => {
        // The real git, except that `update-index` (the temp index's refresh) never ends.
        undo = realGitExceptFor('update-index', () => 'exec sleep 3600');
      });
      afterEach(() => undo());

      it('is stopped when the checks say wait: the lock goes with the answer, not an hour later', async () => {
        const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
        writeIn(repo.dir, 'src/a.ts', 'export const a = 99; // user edit\n');
        const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
        assert.equal(r.status, 'waiting');
        assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false);
        assert.deepEqual(
          readdirSync(join(repo.dir, '.git')).filter((f) => f.startsWith('ralph-promote-index')),
          [],
        );
        assert.equal(repo.read('src/a.ts'), 'export const a = 99; // user edit\n');
      });
    });

    it('clears the ref lock of a killed update-ref on a branch not checked out', async () => {
      repo.git('switch', '-q', '-c', 'elsewhere');
      const patch = await agentPatch('w1', { 'src/a.ts': 'export const a = 2;\n' });
      const tip = repo.git('rev-parse', 'main');
      mkdirSync(join(repo.dir, '.git/ralph'), { recursive: true });
      writeFileSync(
        join(repo.dir, '.git/ralph/promote-ref.json'),
        JSON.stringify({ pid: 999999, token: 't', branch: 'main', next: 'f'.repeat(40) }),
      );
      writeFileSync(join(repo.dir, '.git/refs/heads/main.lock'), '');
      const r = await promotePatch(repo.dir, { branch: 'main', patchFile: patch, message: msg });
      assert.equal(r.status, 'promoted', JSON.stringify(r));
      if (r.status === 'promoted') assert.equal(r.parent, tip);
      assert.equal(existsSync(join(repo.dir, '.git/ralph/promote-ref.json')), false);
      // Without our marker, a ref lock is someone else's: wait, do not delete it.
      writeFileSync(join(repo.dir, '.git/refs/heads/main.lock'), '');
      const patch2 = await agentPatch('w2', { 'src/b.ts': 'export const b = 2;\n' });
      const r2 = await promotePatch(repo.dir, { branch: 'main', patchFile: patch2, message: msg });
      assert.equal(r2.status, 'waiting');
      assert.equal(existsSync(join(repo.dir, '.git/refs/heads/main.lock')), true);
    });

    it("leaves git's own locks alone", async () => {
      writeFileSync(join(repo.dir, '.git/index.lock'), '');
      assert.deepEqual(await recoverInterruptedPromotion(repo.dir), []);
      assert.equal(existsSync(join(repo.dir, '.git/index.lock')), true);
    });
  });
});
