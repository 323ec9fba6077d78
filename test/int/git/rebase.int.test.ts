import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePatch } from '../../../src/git/capture';
import { promotePatch } from '../../../src/git/promote';
import { rebaseWorktree } from '../../../src/git/rebase';
import { ensureWorktree } from '../../../src/git/worktrees';
import { git } from '../../kit/git';
import { makeRepo, writeIn } from './gitFixture';
import type { TempRepo } from './gitFixture';

describe('git/rebase (real git)', () => {
  let repo: TempRepo;
  let out: string;
  beforeEach(() => {
    repo = makeRepo({ 'src/a.ts': 'one\ntwo\nthree\nfour\nfive\nsix\n', 'src/b.ts': 'b\n', '.gitignore': 'node_modules/\n' });
    out = mkdtempSync(join(tmpdir(), 'ralph-patches-'));
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(out, { recursive: true, force: true });
  });

  it('moves committed and uncommitted agent work onto the moved tip; the patch then promotes', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'src/a.ts', 'one\ntwo\nthree\nfour\nfive\nSIX (agent)\n');
    writeIn(wt.path, 'src/new file.ts', 'agent\n');
    git(wt.path, 'add', '-A');
    git(wt.path, '-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-qm', 'agent step 1');
    writeIn(wt.path, 'src/b.ts', 'b (agent, uncommitted)\n');
    writeIn(wt.path, 'node_modules/dep.js', 'kept');
    writeIn(wt.path, '.ralph/plan.json', '{}');
    // Someone else promoted meanwhile, touching the same file far away.
    const tip = repo.commit({ 'src/a.ts': 'ONE (other)\ntwo\nthree\nfour\nfive\nsix\n' }, 'other');

    const r = await rebaseWorktree(wt.path, 'main');
    assert.equal(r.status, 'rebased');
    assert.equal(git(wt.path, 'rev-parse', 'HEAD'), tip);
    assert.equal(readFileSync(join(wt.path, 'src/a.ts'), 'utf8'), 'ONE (other)\ntwo\nthree\nfour\nfive\nSIX (agent)\n');
    assert.equal(readFileSync(join(wt.path, 'src/b.ts'), 'utf8'), 'b (agent, uncommitted)\n');
    assert.equal(readFileSync(join(wt.path, 'src/new file.ts'), 'utf8'), 'agent\n');
    assert.equal(existsSync(join(wt.path, '.ralph/plan.json')), true, '.ralph/ artifacts survive');
    assert.equal(existsSync(join(wt.path, 'node_modules/dep.js')), true, 'ignored dependencies survive');

    const cap = await capturePatch(wt.path, tip, join(out, 'p.patch'));
    assert.deepEqual(cap.files.map((f) => f.path).sort(), ['src/a.ts', 'src/b.ts', 'src/new file.ts']);
    const p = await promotePatch(repo.dir, { branch: 'main', patchFile: cap.path, message: 'ralph(T-1): x' });
    assert.equal(p.status, 'promoted');
    assert.equal(repo.read('src/a.ts'), 'ONE (other)\ntwo\nthree\nfour\nfive\nSIX (agent)\n');
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('reports conflicting files and leaves the worktree as it was', async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'src/a.ts', 'one (agent)\ntwo\nthree\nfour\nfive\nsix\n');
    const before = git(wt.path, 'status', '--porcelain');
    repo.commit({ 'src/a.ts': 'one (other)\ntwo\nthree\nfour\nfive\nsix\n' }, 'other');
    const r = await rebaseWorktree(wt.path, 'main');
    assert.equal(r.status, 'conflict');
    if (r.status !== 'conflict') return;
    assert.deepEqual(r.files, ['src/a.ts']);
    assert.ok(r.messages.some((m) => /CONFLICT/.test(m)));
    assert.equal(r.markersWritten, false);
    assert.equal(git(wt.path, 'rev-parse', 'HEAD'), wt.base);
    assert.equal(git(wt.path, 'status', '--porcelain'), before);
    assert.equal(readFileSync(join(wt.path, 'src/a.ts'), 'utf8'), 'one (agent)\ntwo\nthree\nfour\nfive\nsix\n');
  });

  it("with onConflict 'markers', writes the conflict markers for the agent to resolve", async () => {
    const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
    writeIn(wt.path, 'src/a.ts', 'one (agent)\ntwo\nthree\nfour\nfive\nsix\n');
    const tip = repo.commit({ 'src/a.ts': 'one (other)\ntwo\nthree\nfour\nfive\nsix\n' }, 'other');
    const r = await rebaseWorktree(wt.path, 'main', { onConflict: 'markers' });
    assert.equal(r.status, 'conflict');
    assert.equal(git(wt.path, 'rev-parse', 'HEAD'), tip);
    assert.match(readFileSync(join(wt.path, 'src/a.ts'), 'utf8'), /<<<<<<<[\s\S]*one \(other\)[\s\S]*one \(agent\)/);
  });
});
