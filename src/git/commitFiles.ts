// What one commit changed, for a task's story (`ralph show`, VS Code's story links): its
// files with their status, and the text of a file at that commit or at its parent. The hash
// comes from the event log, so it is checked to be a hash before git sees it.
import { runGit } from './exec';
import { parseNameStatusZ, type ChangedFile } from './repo';

const HASH = /^[0-9a-f]{7,40}$/i;

/** Whether `s` looks like a commit hash (hex, 7 to 40 digits): nothing else reaches git. */
export function isCommitHash(s: string): boolean {
  return HASH.test(s);
}

/** The files `hash` changed against its parent (renames detected); null when it is not a commit here. */
export async function commitFiles(repo: string, hash: string): Promise<ChangedFile[] | null> {
  if (!isCommitHash(hash)) return null;
  try {
    const r = await runGit(repo, ['diff-tree', '-r', '-z', '--no-commit-id', '--name-status', '-M', '--root', `${hash}^{commit}`]);
    return parseNameStatusZ(r.stdout);
  } catch {
    return null;
  }
}

/** The first line of the commit's message, or null when it is not a commit here. */
export async function commitSubject(repo: string, hash: string): Promise<string | null> {
  if (!isCommitHash(hash)) return null;
  try {
    return (await runGit(repo, ['log', '-1', '--format=%s', `${hash}^{commit}`, '--'])).stdout.trim();
  } catch {
    return null;
  }
}

/**
 * A file's text at `hash` (`parent`: at its first parent); null when the file is not there
 * (added by the commit, or deleted) or the commit is unknown.
 */
export async function fileAtCommit(repo: string, hash: string, file: string, parent = false): Promise<string | null> {
  if (!isCommitHash(hash) || file === '' || file.startsWith('-')) return null;
  const r = await runGit(repo, ['cat-file', 'blob', `${hash}${parent ? '^' : ''}:${file}`], { allowExitCodes: [1, 128] }).catch(() => null);
  return r !== null && r.exitCode === 0 ? r.stdout : null;
}
