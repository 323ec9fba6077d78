// The git port the CLI supplies to the control plane: plain `git` child processes in the
// project directory with Ralph's git environment (no hooks, no fsmonitor), and no git
// library loaded, to keep start-up fast.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ralphGitEnv } from '../git/gitEnv';
import type { GitPort } from '../control/context';

function git(projectDir: string, args: readonly string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile('git', [...args], { cwd: projectDir, env: ralphGitEnv() }, (err, stdout) =>
      resolve({ ok: err === null, out: String(stdout).trim() }),
    );
  });
}

/**
 * The branch promotions land on, as the loop resolves it (src/project/targetBranch.ts):
 * ralph.config.json `target_branch`, else the checked-out branch; null when HEAD is
 * detached and the config names none. A config that does not parse is reported by the
 * commands that load it; here it only means "no explicit target".
 */
async function targetBranch(projectDir: string): Promise<string | null> {
  try {
    const config = JSON.parse(await readFile(join(projectDir, 'ralph.config.json'), 'utf8')) as { target_branch?: unknown };
    if (typeof config.target_branch === 'string' && config.target_branch !== '') return config.target_branch;
  } catch {
    // no or unreadable config: fall back to the checked-out branch
  }
  const head = await git(projectDir, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return head.ok && head.out !== '' ? head.out : null;
}

export function cliGitPort(projectDir: string): GitPort {
  return {
    async commitExists(hash: string): Promise<boolean> {
      return (await git(projectDir, ['cat-file', '-e', `${hash}^{commit}`])).ok;
    },
    async notOnTargetBranch(hash: string): Promise<string | null> {
      const branch = await targetBranch(projectDir);
      if (branch === null) return null;
      return (await git(projectDir, ['merge-base', '--is-ancestor', hash, `refs/heads/${branch}`])).ok ? null : branch;
    },
  };
}
