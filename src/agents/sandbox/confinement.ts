// Which confinement an agent process runs under, chosen per CLI and platform from what was
// measured (README "Safety"), and how a backend's command line becomes a confined one.
//
//   bwrap        Linux with a working bubblewrap: the whole agent process (every tool, MCP
//                server and child) in bwrap.ts's sandbox. Claude keeps a permission mode
//                that is not bypassPermissions; Codex runs `danger-full-access` inside,
//                because its own sandbox cannot nest there (bwrap.ts).
//   cli-sandbox  The CLI's own sandbox only: Codex `--sandbox workspace-write` (Linux
//                without bubblewrap: measured confining, capabilities dropped; macOS
//                Seatbelt), Claude Code's sandbox on macOS (Seatbelt, Bash only; Write and
//                Edit outside the working directory are denied by acceptEdits in -p mode).
//   none         Nothing stops the agent: the loop refuses to start it unless the user set
//                `agents.unconfined: true`.
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { BwrapProbe } from './bwrap';
import { bwrapArgs, findOnPath, installRoot, ralphInstallRoot } from './bwrap';
import type { AgentCli } from './environment';
import { storeCredentialPaths } from './credentialFiles';

export type ConfinementKind = 'bwrap' | 'cli-sandbox' | 'none';

export interface Confinement {
  readonly kind: ConfinementKind;
  /** bwrap's absolute path, for kind `bwrap`. */
  readonly bwrap?: string;
  /** One line for `ralph doctor`, `ralph status`, the status bar. */
  readonly summary: string;
  /** For `none`: what would confine it (install bubblewrap, ...). */
  readonly remedy?: string;
}

export const NO_CONFINEMENT: Confinement = {
  kind: 'none',
  summary: 'unconfined: the agent can write anything your user can',
};

const INSTALL_BWRAP = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap socat; Fedora: dnf install bubblewrap socat)';

/** The confinement an agent of `cli` gets on `platform`, given what probing bwrap found. */
export function chooseConfinement(cli: AgentCli, platform: NodeJS.Platform, bwrap: BwrapProbe): Confinement {
  if (platform === 'linux') {
    if (bwrap.ok && bwrap.path !== null) {
      return {
        kind: 'bwrap',
        bwrap: bwrap.path,
        summary: `bubblewrap ${bwrap.version ?? ''}`.trim() + ': writes only its worktree and scratch folder',
      };
    }
    if (cli === 'codex') {
      return {
        kind: 'cli-sandbox',
        summary: `codex --sandbox workspace-write (${bwrap.error ?? 'no bubblewrap'}): writes only its worktree and scratch folder`,
        remedy: INSTALL_BWRAP,
      };
    }
    return { ...NO_CONFINEMENT, summary: `unconfined: ${bwrap.error ?? 'no bubblewrap'}`, remedy: INSTALL_BWRAP };
  }
  if (platform === 'darwin' && (cli === 'claude' || cli === 'codex')) {
    return {
      kind: 'cli-sandbox',
      summary:
        cli === 'claude'
          ? "Claude Code's sandbox (Seatbelt) for commands, acceptEdits for file tools"
          : 'codex --sandbox workspace-write (Seatbelt)',
    };
  }
  return { ...NO_CONFINEMENT, remedy: 'run Ralph on Linux with bubblewrap, or on macOS with claude or codex' };
}

/** Claude Code's own sandbox settings (given with --settings) for kind `cli-sandbox`. */
export const CLAUDE_SANDBOX_SETTINGS = {
  sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false },
} as const;

export interface ConfinedSpawn {
  readonly file: string;
  readonly args: readonly string[];
}

export interface SpawnPlace {
  /** The agent's working directory (its worktree): writable. */
  readonly cwd: string;
  /** Its scratch folder (HOME, TMPDIR, CLI config): writable. */
  readonly scratch: string | undefined;
  /** Files it must read that may lie in hidden folders (a scenario file). */
  readonly readable?: readonly string[];
  /** The child's PATH, to find a command given by name (its install folder stays readable). */
  readonly path?: string | undefined;
}

/** The worktree's `.git` entry and the git dir it names: read-only to the agent. */
function gitPaths(cwd: string): { protect: string[]; readable: string[] } {
  const dotGit = join(cwd, '.git');
  try {
    const st = lstatSync(dotGit);
    if (st.isDirectory()) return { protect: [dotGit], readable: [] };
    // A linked worktree: `.git` names <common>/worktrees/<name>; git reads the common dir too.
    const m = /^gitdir: (.*)$/m.exec(readFileSync(dotGit, 'utf8'));
    if (m?.[1] === undefined) return { protect: [dotGit], readable: [] };
    const admin = resolve(cwd, m[1].trim());
    const common = join(admin, '..', '..');
    return { protect: [dotGit], readable: existsSync(common) ? [common] : [] };
  } catch {
    return { protect: [], readable: [] };
  }
}

/** Wraps a backend's command in the confinement (a no-op for `cli-sandbox` and `none`). */
export function confineSpawn(confinement: Confinement, file: string, args: readonly string[], place: SpawnPlace): ConfinedSpawn {
  if (confinement.kind !== 'bwrap' || confinement.bwrap === undefined) return { file, args };
  const git = gitPaths(place.cwd);
  const ralph = ralphInstallRoot();
  const command = isAbsolute(file) ? file : findOnPath(file, place.path);
  const profile = bwrapArgs({
    writable: [place.cwd, ...(place.scratch !== undefined ? [place.scratch] : [])],
    protect: git.protect,
    readable: [
      ...git.readable,
      // The command as named (its links are recreated) and the folder it really lives in.
      ...(command !== null ? [command, installRoot(command)] : []),
      // What the agent runs of Ralph itself (the scripted claude and its modules).
      ...(ralph !== null ? [ralph] : []),
      // PATH folders in hidden places (a test's trimmed PATH under /tmp) keep their programs.
      ...(place.path ?? '').split(':').filter((d) => isAbsolute(d)),
      ...(place.readable ?? []),
    ],
    cwd: place.cwd,
    hidden: storeCredentialPaths(),
  });
  return { file: confinement.bwrap, args: [...profile, '--', file, ...args] };
}
