// Programs a repository can make git run, planted as traps: every hook type (in .git/hooks,
// or in a directory core.hooksPath names, plus a config-defined hook for gits that have
// them) and a core.fsmonitor command. Each trap appends its name to a marker file, so a
// test can assert that Ralph's git never ran one (and check, with plain git, that the
// traps do fire).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { GIT_HOOK_EVENTS } from '../../src/git/gitEnv';

export interface RepoTraps {
  /** The file each trap appends its name to; absent until one fires. */
  readonly marker: string;
  /** What fired so far, in order. */
  fired(): string[];
}

function script(marker: string, name: string, exit = 0): string {
  return `#!/bin/sh\necho ${name} >> '${marker}'\nexit ${exit}\n`;
}

/**
 * Plants the traps in the repository at `repo` (a checkout with its own `.git` directory).
 * `via: 'hooksPath'` puts the hooks in `trapDir/hooks` and points core.hooksPath at it.
 */
export function plantRepoTraps(repo: string, trapDir: string, opts: { via?: 'hooksDir' | 'hooksPath' } = {}): RepoTraps {
  const marker = join(trapDir, 'fired.txt');
  mkdirSync(trapDir, { recursive: true });
  const hooksDir = opts.via === 'hooksPath' ? join(trapDir, 'hooks') : join(repo, '.git', 'hooks');
  mkdirSync(hooksDir, { recursive: true });
  for (const event of GIT_HOOK_EVENTS) {
    const file = join(hooksDir, event);
    writeFileSync(file, script(marker, `hook:${event}`));
    chmodSync(file, 0o755);
  }
  // An fsmonitor that fails makes git fall back to a full scan: the trap fires, git still works.
  const fsmonitor = join(trapDir, 'fsmonitor.sh');
  writeFileSync(fsmonitor, script(marker, 'fsmonitor', 1));
  chmodSync(fsmonitor, 0o755);
  const cfg = (...args: string[]): void => {
    execFileSync('git', ['config', ...args], { cwd: repo, stdio: 'ignore' });
  };
  cfg('core.fsmonitor', fsmonitor);
  if (opts.via === 'hooksPath') cfg('core.hooksPath', hooksDir);
  // git >= 2.5x runs hooks defined in config too; older gits ignore these keys.
  const configHook = join(trapDir, 'config-hook.sh');
  writeFileSync(configHook, script(marker, 'config-hook'));
  chmodSync(configHook, 0o755);
  cfg('hook.ralphtrap.command', configHook);
  for (const event of ['post-checkout', 'reference-transaction', 'post-index-change', 'pre-commit']) {
    cfg('--add', 'hook.ralphtrap.event', event);
  }
  return {
    marker,
    fired: () =>
      existsSync(marker)
        ? readFileSync(marker, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [],
  };
}
