import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from '../../../src/git/exec';
import { NoTargetBranchError, resolveTargetBranch } from '../../../src/project/targetBranch';

describe('project/targetBranch (real git)', () => {
  it('given no target_branch, then the checked-out branch; given one, then it; detached, then an error', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-branch-'));
    try {
      await runGit(dir, ['init', '-q', '--initial-branch=trunk']);
      assert.equal(await resolveTargetBranch(dir, {}), 'trunk');
      assert.equal(await resolveTargetBranch(dir, { target_branch: 'release' }), 'release');
      await runGit(dir, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'x']);
      await runGit(dir, ['checkout', '-q', '--detach']);
      await assert.rejects(resolveTargetBranch(dir, {}), NoTargetBranchError);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
