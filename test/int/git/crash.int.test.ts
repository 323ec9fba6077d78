import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePatch } from '../../../src/git/capture';
import { promotePatch, recoverInterruptedPromotion } from '../../../src/git/promote';
import { ensureWorktree } from '../../../src/git/worktrees';
import { makeRepo, writeIn } from './gitFixture';

const child = join(__dirname, 'fixtures', 'promoteChild.ts');

/**
 * Runs the promotion in a child process group and SIGKILLs it `delayMs` after the child
 * finished the git command matching `trigger` (seen through RALPH_GIT_TRACE), or after it
 * is ready when there is no trigger.
 */
function promoteAndKill(repo: string, patch: string, trigger: string | null, delayMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', child, repo, patch], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RALPH_GIT_TRACE: '1' },
    });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      if (timer !== undefined) return;
      // A random kill point is the point of this fuzz test, not synchronisation.
      timer = setTimeout(() => {
        try {
          process.kill(-(p.pid as number), 'SIGKILL');
        } catch {
          // already finished
        }
      }, delayMs);
    };
    p.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (trigger === null && out.includes('ready\n')) arm();
    });
    p.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      if (trigger !== null && err.split('\n').some((l) => l.includes(`ms] ${trigger}`))) arm();
    });
    p.on('error', reject);
    p.on('close', () => {
      if (timer !== undefined) clearTimeout(timer);
      resolve();
    });
  });
}

const triggers = [null, 'commit-tree', 'diff-tree', 'status --porcelain', 'read-tree -m -u', 'update-ref'];

describe('git/promote crash safety (real git, SIGKILL at random moments)', () => {
  const rounds = Number(process.env['RALPH_CRASH_ROUNDS'] ?? 12);
  for (let round = 0; round < rounds; round++) {
    it(`round ${round}: after recovery the ref and the checkout agree, and re-promotion does not duplicate`, async () => {
      const repo = makeRepo({ 'src/a.ts': 'a1\n', 'src/b.ts': 'b1\n', 'src/user.ts': 'u1\n' });
      const out = mkdtempSync(join(tmpdir(), 'ralph-crash-'));
      try {
        const wt = await ensureWorktree(repo.dir, { name: 'w1', branch: 'main' });
        writeIn(wt.path, 'src/a.ts', 'a2\n');
        writeIn(wt.path, 'src/c.ts', 'c2\n');
        const cap = await capturePatch(wt.path, wt.base, join(out, 'p.patch'));
        writeIn(repo.dir, 'src/user.ts', 'u1 user edit\n');
        const old = repo.git('rev-parse', 'main');

        const only = process.env['RALPH_CRASH_TRIGGER'];
        const trigger = only !== undefined ? only : (triggers[round % triggers.length] ?? null);
        await promoteAndKill(repo.dir, cap.path, trigger, Math.floor(Math.random() * 15));
        await recoverInterruptedPromotion(repo.dir);

        assert.equal(existsSync(join(repo.dir, '.git/index.lock')), false, 'no lock left');
        const tip = repo.git('rev-parse', 'main');
        assert.equal(repo.git('status', '--porcelain'), ' M src/user.ts', 'HEAD, index and worktree agree');
        assert.equal(repo.read('src/user.ts'), 'u1 user edit\n', 'user edit kept');
        if (tip === old) {
          assert.equal(repo.read('src/a.ts'), 'a1\n');
          assert.equal(existsSync(join(repo.dir, 'src/c.ts')), false);
        } else {
          assert.equal(repo.git('rev-parse', 'main^'), old);
          assert.equal(repo.read('src/a.ts'), 'a2\n');
        }
        // The loop re-evaluates the pending patch: exactly one promoted commit results.
        const again = await promotePatch(repo.dir, {
          branch: 'main',
          patchFile: cap.path,
          message: 'ralph(T-9): crash test',
          patchId: 'crash-1',
        });
        assert.equal(again.status, 'promoted', JSON.stringify(again));
        assert.equal(repo.git('rev-list', '--count', `${old}..main`), '1');
        assert.equal(repo.read('src/a.ts'), 'a2\n');
        assert.equal(repo.git('status', '--porcelain'), ' M src/user.ts');
      } finally {
        repo.cleanup();
        rmSync(out, { recursive: true, force: true });
      }
    });
  }
});
