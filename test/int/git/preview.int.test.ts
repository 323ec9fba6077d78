import { strict as assert } from 'node:assert';
import { symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { gitCallCount } from '../../../src/git/exec';
import { previewChanges } from '../../../src/git/preview';
import { repoRoot } from '../../../src/git/repo';
import { git } from '../../kit/git';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

/** The paths capture would include, asked of git the long way: the preview's oracle. */
function capturedPaths(dir: string, base: string): string[] {
  const scope = ['--', ':(top)', ':(top,exclude).ralph'];
  const tracked = git(dir, 'diff', '--name-only', '-z', '--no-renames', base, ...scope).split('\0');
  const untracked = git(dir, 'ls-files', '--others', '--exclude-standard', '-z', ...scope).split('\0');
  return [...new Set([...tracked, ...untracked].filter((p) => p.length > 0))].sort();
}

async function previewWithCalls(dir: string, base: string): Promise<{ paths: string[]; calls: number; links: Record<string, string> }> {
  await repoRoot(dir); // cached from here on: only the preview's own processes are counted
  const before = gitCallCount();
  const previewed = await previewChanges(dir, base);
  const links: Record<string, string> = {};
  for (const p of previewed) if (p.symlinkTarget !== undefined) links[p.path] = p.symlinkTarget;
  return { paths: previewed.map((p) => p.path), calls: gitCallCount() - before, links };
}

describe('git/preview (real git)', () => {
  let repo: TempRepo;
  let base: string;
  beforeEach(() => {
    repo = makeRepo({
      'src/a.js': 'a\n',
      'src/gone.js': 'gone\n',
      'src/staged.js': 'staged\n',
      'docs/with space é.md': 'doc\n',
      '.gitignore': 'build/\n',
      '.ralph/BACKLOG.md': '# backlog\n',
    });
    base = repo.git('rev-parse', 'HEAD');
  });
  afterEach(() => repo.cleanup());

  it('with HEAD at the base: every changed, deleted and untracked path from one git status', async () => {
    writeIn(repo.dir, 'src/a.js', 'a2\n');
    unlinkSync(join(repo.dir, 'src/gone.js'));
    writeIn(repo.dir, 'new dir/deep/new file.js', 'n\n');
    writeIn(repo.dir, 'docs/with space é.md', 'doc2\n');
    writeIn(repo.dir, 'build/out.js', 'ignored\n');
    writeIn(repo.dir, '.ralph/BACKLOG.md', '# changed, never previewed\n');
    symlinkSync('/etc/passwd', join(repo.dir, 'src/link'));
    // Staged, then undone in the file: capture would not include it; listing it is the safe side.
    writeIn(repo.dir, 'src/staged.js', 'staged2\n');
    repo.git('add', 'src/staged.js');
    writeIn(repo.dir, 'src/staged.js', 'staged\n');

    const got = await previewWithCalls(repo.dir, base);
    assert.equal(got.calls, 1);
    assert.deepEqual(got.paths, [...capturedPaths(repo.dir, base), 'src/staged.js'].sort());
    assert.deepEqual(got.paths, [
      'docs/with space é.md',
      'new dir/deep/new file.js',
      'src/a.js',
      'src/gone.js',
      'src/link',
      'src/staged.js',
    ]);
    assert.deepEqual(got.links, { 'src/link': '/etc/passwd' });
  });

  it('an index that differs from HEAD (a rebased worktree) still lists what changed since the base', async () => {
    const other = repo.commit({ 'src/a.js': 'moved on\n', 'src/added.js': 'x\n' }, 'next');
    repo.git('reset', '--quiet', '--hard', base);
    // What rebaseWorktree leaves: HEAD at the base, index and files at the merged tree.
    repo.git('read-tree', '-m', '-u', base, other);
    const got = await previewWithCalls(repo.dir, base);
    assert.equal(got.calls, 1);
    assert.deepEqual(got.paths, capturedPaths(repo.dir, base));
    assert.deepEqual(got.paths, ['src/a.js', 'src/added.js']);
  });

  it('with HEAD moved off the base (a commit in the worktree): the diff against the base, not HEAD', async () => {
    repo.commit({ 'src/a.js': 'committed\n' }, 'by the agent');
    writeIn(repo.dir, 'src/untracked.js', 'u\n');
    const got = await previewWithCalls(repo.dir, base);
    assert.equal(got.calls, 3, 'status, then diff and ls-files');
    assert.deepEqual(got.paths, ['src/a.js', 'src/untracked.js']);
    assert.deepEqual(got.paths, capturedPaths(repo.dir, base));
  });

  it('an unmerged path is listed', async () => {
    repo.git('checkout', '-q', '-b', 'side');
    repo.commit({ 'src/a.js': 'side\n' }, 'side');
    repo.git('checkout', '-q', 'main');
    const tip = repo.commit({ 'src/a.js': 'main\n' }, 'main');
    assert.throws(() => repo.git('merge', '-q', 'side'));
    const got = await previewWithCalls(repo.dir, tip);
    assert.equal(got.calls, 1);
    assert.deepEqual(got.paths, ['src/a.js']);
  });
});
