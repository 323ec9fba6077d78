// The repository's folder in Ralph's cache directory (src/shared/cacheDir.ts), keyed by the
// repository: `<cache>/<name>-<hash of the real common git dir>/` holds `worktrees/` (agents,
// `verify`), `judge/` (the judge's empty review folders) and `agents/` (each agent's scratch
// home, temp and CLI config). The hash makes two clones with the same folder name distinct;
// the name keeps the folder recognisable, and a `repository` file in it names the checkout.
import { createHash } from 'node:crypto';
import { mkdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, isAbsolute } from 'node:path';
import { ralphCacheDir } from '../shared/cacheDir';
import { gitCommonDir } from './repo';
import { agentFileStem } from '../domain/agentName';

const cached = new Map<string, string>();

/** A file-name-safe key for the repository whose common git dir is `commonDir`. */
export function repoKey(commonDir: string): string {
  const top = basename(commonDir) === '.git' ? dirname(commonDir) : commonDir;
  const name =
    basename(top)
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .slice(0, 40) || 'repo';
  const hash = createHash('sha256').update(commonDir).digest('hex').slice(0, 12);
  return `${name}-${hash}`;
}

/** `<cache>/<repo key>` for the repository containing `repo` (created, with its `repository` note). */
export async function repoCacheDir(repo: string): Promise<string> {
  const common = await realpath(await gitCommonDir(repo)).catch(() => gitCommonDir(repo));
  const root = ralphCacheDir();
  const memo = `${root}\0${common}`;
  const known = cached.get(memo);
  if (known !== undefined) return known;
  const dir = join(root, repoKey(common));
  await mkdir(dir, { recursive: true });
  const note = join(dir, 'repository');
  const text = `${common}\n`;
  if ((await readFile(note, 'utf8').catch(() => '')) !== text) await writeFile(note, text);
  if (cached.size > 256) cached.clear();
  cached.set(memo, dir);
  return dir;
}

/** Where agents' worktrees live now. */
export async function worktreesRoot(repo: string): Promise<string> {
  return join(await repoCacheDir(repo), 'worktrees');
}

/** Where they lived before (inside the repository's git dir); read only to move them out. */
export async function legacyWorktreesRoot(repo: string): Promise<string> {
  return join(await gitCommonDir(repo), 'ralph', 'worktrees');
}

/** The folder an agent's own HOME, TMPDIR and CLI configuration live in (a team agent's by its name without the machine). */
export async function agentScratchDir(repo: string, agent: string): Promise<string> {
  const stem = agentFileStem(agent);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(stem)) throw new Error(`invalid agent name ${JSON.stringify(agent)}`);
  return join(await repoCacheDir(repo), 'agents', stem);
}

/** The parent of the judge's per-review empty folders. */
export async function judgeRoot(repo: string): Promise<string> {
  return join(await repoCacheDir(repo), 'judge');
}

/** Whether `path` lies strictly inside `root` (both absolute, compared lexically). */
export function isInside(path: string, root: string): boolean {
  const rel = relative(resolve(root), resolve(path));
  return rel.length > 0 && !rel.startsWith('..') && !isAbsolute(rel);
}
