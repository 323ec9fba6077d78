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
import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { isInside } from '../../git/repoCache';
import { HIDDEN_ROOTS } from './hiddenRoots';

export { HIDDEN_ROOTS } from './hiddenRoots';

export interface BwrapProfile {
  /** Writable folders (must exist): the agent's worktree (its cwd) and its scratch folder. */
  readonly writable: readonly string[];
  /** Read-only again inside a writable folder (a worktree's `.git` entry). */
  readonly protect: readonly string[];
  /** Paths to keep readable where they would be hidden (/tmp, /run): git dirs, the CLI, inputs. */
  readonly readable: readonly string[];
  readonly cwd: string;
  /** Files and folders shown empty wherever they are (the team store's credentials). */
  readonly hidden?: readonly { readonly path: string; readonly kind: 'file' | 'dir' }[];
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

export interface SymlinkHop {
  /** Where the link is (its folders real, the link itself not followed). */
  readonly link: string;
  /** What it says (as readlink returns it). */
  readonly target: string;
}

/**
 * The symlinks met on the way to `path`'s real location, in order: a link in a hidden root
 * would vanish with the tmpfs, and a program found through it (`/tmp/x/bin/claude` ->
 * `../lib/node_modules/.../cli.js`) with it. Stops at the first missing component.
 */
export function symlinkHops(path: string): SymlinkHop[] {
  const hops: SymlinkHop[] = [];
  let pending = resolve(path)
    .split(sep)
    .filter((c) => c.length > 0);
  let at: string = sep;
  // A cycle or a very long chain: ELOOP in the kernel after 40, so no more here either.
  for (let guard = 0; pending.length > 0 && guard < 256; guard++) {
    const next = join(at, pending[0] ?? '');
    pending = pending.slice(1);
    let target: string;
    try {
      if (!lstatSync(next).isSymbolicLink()) {
        at = next;
        continue;
      }
      target = readlinkSync(next);
    } catch {
      break;
    }
    if (hops.length >= 40) break;
    hops.push({ link: next, target });
    const dest = isAbsolute(target) ? target : join(at, target);
    pending = [...dest.split(sep).filter((c) => c.length > 0), ...pending];
    at = sep;
  }
  return hops;
}

const hiddenAt = (p: string): boolean => HIDDEN_ROOTS.some((h) => isInside(p, h));

/** The bwrap arguments (before `--` and the command) for a profile. Pure but for realpath. */
export function bwrapArgs(profile: BwrapProfile): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  for (const h of HIDDEN_ROOTS) if (existsSync(h)) args.push('--tmpfs', h);
  // Name resolution often goes through /run (systemd-resolved's stub file): keep it.
  const readable = [...profile.readable, '/etc/resolv.conf'];
  const writable = profile.writable.map(real);
  const bound: string[] = [...writable];
  const covered = (p: string): boolean => bound.some((b) => b === p || isInside(p, b));
  // Folders before what they hold: a path inside one already bound is visible through it.
  const visible = [...new Set(readable.map(real))].sort((a, b) => a.length - b.length);
  for (const p of visible) {
    if (!hiddenAt(p) || covered(p) || !existsSync(p)) continue;
    bound.push(p);
    args.push('--ro-bind', p, p);
  }
  for (const w of writable) args.push('--bind', w, w);
  for (const p of profile.protect.map(real)) if (existsSync(p)) args.push('--ro-bind', p, p);
  // Last, so they win over any bind above; one in a hidden root is gone already, unless bound.
  for (const h of profile.hidden ?? []) {
    if (hiddenAt(h.path) && !covered(h.path)) continue;
    if (h.kind === 'dir') args.push('--tmpfs', h.path);
    else args.push('--ro-bind', '/dev/null', h.path);
  }
  // The way to each path as the agent names it: links in hidden roots recreated (their
  // targets are bound above, or are not hidden). One inside a bound folder is there already.
  const links = new Set<string>();
  for (const p of [...profile.readable, '/etc/resolv.conf', ...profile.writable, profile.cwd]) {
    for (const hop of symlinkHops(p)) {
      if (links.has(hop.link) || !hiddenAt(hop.link) || covered(hop.link)) continue;
      links.add(hop.link);
      args.push('--symlink', hop.target, hop.link);
    }
  }
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
 * sibling package), for a program in a `bin` folder that folder's prefix (its `lib`,
 * `share`), else the executable's own folder. Of the real file: symlinks followed.
 */
export function installRoot(command: string): string {
  const p = real(command);
  const i = p.lastIndexOf(`${sep}node_modules${sep}`);
  if (i >= 0) return p.slice(0, i);
  const dir = dirname(p);
  return basename(dir) === 'bin' && dirname(dir) !== dir ? dirname(dir) : dir;
}

/**
 * The `node_modules` folders Node would search for a script's bare imports (each ancestor's),
 * those that exist: a script run from a folder the sandbox hides needs them readable too.
 */
export function nodeModulesAbove(file: string): string[] {
  const found: string[] = [];
  for (let dir = dirname(real(file)); ; dir = dirname(dir)) {
    const nm = join(dir, 'node_modules');
    if (existsSync(nm)) found.push(nm);
    if (dirname(dir) === dir) break;
  }
  return found;
}

let ownRoot: string | null | undefined;

/**
 * Ralph's own install root (the folder of its package.json: a checkout, an npm install, the
 * VS Code extension's folder): what the agent runs of Ralph (the scripted claude and its
 * modules, the bundle) must stay readable wherever Ralph lives, `/tmp` included.
 */
export function ralphInstallRoot(): string | null {
  if (ownRoot !== undefined) return ownRoot;
  ownRoot = null;
  for (let dir = __dirname, i = 0; i < 8; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'ralph-loop') {
        ownRoot = dir;
        break;
      }
    } catch {
      // not here
    }
    if (dirname(dir) === dir) break;
  }
  return ownRoot;
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
