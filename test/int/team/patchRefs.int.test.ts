// Patches through a shared bare remote: a worker's clone pushes its commit as
// refs/ralph/patches/<id> (never replacing another commit under that id), the promoter's
// clone fetches it, and the target branch moves only by compare-and-swap: a promoter whose
// view of the branch is stale is refused and told the branch's tip.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fetchPatchRef, pushBranchCas, pushPatchRef, remoteRefSha } from '../../../src/team/patchRefs';
import { git } from '../../kit/git';

describe('team: patches as refs on the shared remote, compare-and-swap branch pushes', () => {
  let root: string;
  const commit = (repo: string, file: string): string => {
    fs.writeFileSync(path.join(repo, file), `${file}\n`);
    git(repo, 'add', file);
    git(repo, 'commit', '-q', '-m', file);
    return git(repo, 'rev-parse', 'HEAD');
  };

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-refs-'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('given two clones of a bare remote, then patch refs travel between them and the branch moves only by CAS', async () => {
    const remote = path.join(root, 'remote.git');
    git(root, 'init', '-q', '--bare', '-b', 'main', remote);
    const seed = path.join(root, 'seed');
    git(root, 'init', '-q', '-b', 'main', seed);
    const base = commit(seed, 'README.md');
    git(seed, 'push', '-q', remote, 'main');
    const worker = path.join(root, 'worker');
    const promoter = path.join(root, 'promoter');
    git(root, 'clone', '-q', remote, worker);
    git(root, 'clone', '-q', remote, promoter);

    // The worker's verified commit, pushed under its patch id before it is queued.
    const a = commit(worker, 'a.txt');
    assert.deepEqual(await pushPatchRef(worker, 'origin', 'patch_W0-001_1', a), { kind: 'pushed' });
    assert.deepEqual(await pushPatchRef(worker, 'origin', 'patch_W0-001_1', a), { kind: 'pushed' }, 'a retry of the same push is fine');
    git(worker, 'reset', '-q', '--hard', base);
    const other = commit(worker, 'other.txt');
    const taken = await pushPatchRef(worker, 'origin', 'patch_W0-001_1', other);
    assert.equal(taken.kind, 'exists');
    assert.equal('remoteSha' in taken ? taken.remoteSha : null, a, 'the patch id keeps naming the first commit');
    await assert.rejects(pushPatchRef(worker, 'origin', '../../heads/main', a), /invalid patch id|patch id/);

    // The promoter fetches exactly that commit and moves main from the tip it verified on.
    assert.equal(await fetchPatchRef(promoter, 'origin', 'patch_W0-001_1'), a);
    assert.deepEqual(await pushBranchCas(promoter, 'origin', 'main', a, base), { kind: 'pushed' });
    assert.equal(await remoteRefSha(promoter, 'origin', 'refs/heads/main'), a);

    // A second promoter still believing main is at `base` is refused, told the real tip.
    const b = commit(worker, 'b.txt');
    const stale = await pushBranchCas(worker, 'origin', 'main', b, base);
    assert.equal(stale.kind, 'stale');
    assert.equal('remoteSha' in stale ? stale.remoteSha : null, a);
    assert.equal(await remoteRefSha(promoter, 'origin', 'refs/heads/main'), a, 'nothing promoted twice or over another');
    await assert.rejects(pushBranchCas(worker, '--upload-pack=touch /tmp/x', 'main', b, a), /not a git remote/);
  });
});
