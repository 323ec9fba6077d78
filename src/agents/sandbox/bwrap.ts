// bubblewrap around a whole agent process (Linux): the host's root read-only, private /tmp
// and /run, the agent's worktree and scratch folder writable, its worktree's `.git` entry
// and the repository's git dir read-only even inside them, no capabilities, its own user,
// PID, IPC and UTS namespaces, and the host's network (the model API must stay reachable).
// Measured on this machine (bubblewrap 0.8, as root):
//   - without `--cap-drop ALL` a sandboxed root keeps every capability and
//     `mount -o remount,bind,rw /` makes the whole host writable, user namespace or not;
//   - /tmp and /run hold other programs' Unix sockets (VS Code's IPC, ssh and gpg agents,
//     docker.sock): a read-only mount does not stop connect(), so they are hidden instead;
//   - nested sandboxes (Claude Code's, Codex's) cannot start inside: a capability-less user
//     namespace may not map users (`bwrap: setting up uid map: Operation not permitted`);
//   - start-up costs about 15 ms.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { isInside } from '../../git/repoCache';

/** Folders hidden behind an empty tmpfs (their sockets are other programs' doors). */
export const HIDDEN_ROOTS: readonly string[] = ['/tmp', '/run'];

export interface BwrapProfile {
  /** Writable folders (must exist): the agent's worktree (its cwd) and its scratch folder. */
  readonly writable: readonly string[];
  /** Read-only again inside a writable folder (a worktree's `.git` entry). */
  readonly protect: readonly string[];
  /** Paths to keep readable where they would be hidden (/tmp, /run): git dirs, the CLI, inputs. */
  readonly readable: readonly string[];
  readonly cwd: string;
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** The bwrap arguments (before `--` and the command) for a profile. Pure but for realpath. */
export function bwrapArgs(profile: BwrapProfile): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const h of HIDDEN_ROOTS) if (existsSync(h)) args.push('--tmpfs', h);
  // Name resolution often goes through /run (systemd-resolved's stub file): keep it.
  const resolvConf = real('/etc/resolv.conf');
  const readable = [...profile.readable, resolvConf];
  const writable = profile.writable.map(real);
  const seen = new Set<string>();
  for (const p of readable.map(real)) {
    if (seen.has(p) || !existsSync(p)) continue;
    if (!HIDDEN_ROOTS.some((h) => isInside(p, h))) continue;
    if (writable.some((w) => w === p || isInside(p, w))) continue;
    seen.add(p);
    args.push('--ro-bind', p, p);
  }
  for (const w of writable) args.push('--bind', w, w);
  for (const p of profile.protect.map(real)) if (existsSync(p)) args.push('--ro-bind', p, p);
  args.push(
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--chdir',
    real(profile.cwd),
  );
  return args;
}

/** Where a program would be found on `path` (the first executable entry), or null. */
export function findOnPath(name: string, path: string | undefined): string | null {
  for (const d of (path ?? '').split(delimiter)) {
    if (d.length === 0) continue;
    const p = join(d, name);
    try {
      const st = lstatSync(p);
      if (st.isFile() || st.isSymbolicLink()) return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The folder a CLI is installed in, to keep readable where it would be hidden: for an
 * npm-installed CLI the package folder's `node_modules` parent (its platform binary is a
 * sibling package), else the executable's own folder.
 */
export function installRoot(command: string): string {
  const p = real(command);
  const i = p.lastIndexOf(`${'/'}node_modules${'/'}`);
  return i >= 0 ? p.slice(0, i) : dirname(p);
}

export interface BwrapProbe {
  readonly ok: boolean;
  /** Absolute path of the bwrap found, or null. */
  readonly path: string | null;
  readonly version: string | null;
  /** Why it cannot be used (not installed, user namespaces disabled, ...). */
  readonly error: string | null;
  /** What it cost to start an empty sandbox, in ms (for doctor and the bench). */
  readonly startMs: number | null;
}

const probes = new Map<string, BwrapProbe>();

/**
 * Finds bwrap on `path` and starts the exact sandbox agents get around `true`: a machine
 * where it is installed but user namespaces are disabled (or restricted by AppArmor) fails
 * here with bwrap's own message rather than at the first agent. Remembered per PATH.
 */
export function probeBwrap(path: string | undefined = process.env.PATH): BwrapProbe {
  const key = path ?? '';
  const known = probes.get(key);
  if (known !== undefined) return known;
  const found = findOnPath('bwrap', path);
  let probe: BwrapProbe;
  if (found === null) {
    probe = { ok: false, path: null, version: null, error: 'bubblewrap (bwrap) is not installed', startMs: null };
  } else {
    const v = spawnSync(found, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    const version = v.status === 0 ? v.stdout.trim().replace(/^bubblewrap\s+/, '') : null;
    const cwd = process.cwd();
    const t0 = process.hrtime.bigint();
    const r = spawnSync(found, [...bwrapArgs({ writable: [], protect: [], readable: [], cwd: '/' }), '--', 'true'], {
      encoding: 'utf8',
      timeout: 10_000,
      cwd,
    });
    const startMs = Number(process.hrtime.bigint() - t0) / 1e6;
    probe =
      r.status === 0
        ? { ok: true, path: found, version, error: null, startMs }
        : {
            ok: false,
            path: found,
            version,
            error: `bwrap cannot start a sandbox here: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`,
            startMs: null,
          };
  }
  probes.set(key, probe);
  return probe;
}

/** Forgets remembered probes (tests that change PATH). */
export function resetBwrapProbes(): void {
  probes.clear();
}
