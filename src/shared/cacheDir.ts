// Where Ralph keeps what it can rebuild and the user never edits: agents' worktrees, the
// judge's and the late-verification folders, and each agent's scratch home. Outside every
// repository, so no tool run in a checkout (tests, builds, watchers, searches) sees them.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * Ralph's folder in the user's cache directory: `$RALPH_CACHE_DIR` when set (tests, or a
 * user who wants it elsewhere), else `$XDG_CACHE_HOME/ralph`, else the platform's cache
 * folder (`~/.cache/ralph`, `~/Library/Caches/ralph`, `%LOCALAPPDATA%\ralph\cache`).
 */
export function ralphCacheDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  const own = env.RALPH_CACHE_DIR;
  if (own !== undefined && own.length > 0) return resolve(own);
  // The XDG spec says relative values are invalid and must be ignored.
  const xdg = env.XDG_CACHE_HOME;
  if (xdg !== undefined && isAbsolute(xdg)) return join(xdg, 'ralph');
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'ralph');
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA;
    return local !== undefined && isAbsolute(local) ? join(local, 'ralph', 'cache') : join(home, 'AppData', 'Local', 'ralph', 'cache');
  }
  return join(home, '.cache', 'ralph');
}
