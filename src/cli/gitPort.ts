// The git port the CLI supplies to the control plane: plain `git` child processes in the
// project directory (no git library loaded, to keep start-up fast).
import { execFile } from 'node:child_process';
import type { GitPort } from '../control/context';

export function cliGitPort(projectDir: string): GitPort {
  return {
    commitExists(hash: string): Promise<boolean> {
      return new Promise((resolve) => {
        execFile('git', ['cat-file', '-e', `${hash}^{commit}`], { cwd: projectDir }, (err) => resolve(err === null));
      });
    },
  };
}
