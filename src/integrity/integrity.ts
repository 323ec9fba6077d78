// The integrity check around every agent invocation (defence in depth: confinement should
// make it find nothing). Before the run a snapshot (snapshot.ts); after it another; what
// changed in between that Ralph did not do is an incident: its paths, whether Ralph can put
// each back (a hook or config line the agent added), and a record file under
// `.ralph/incidents/` with the old contents, which `ralph restore-incident` writes back.
//
// What Ralph itself changes meanwhile is not an incident: its own files under `.ralph/`,
// other agents' `ralph/*` branches, the target branch moving to a commit Ralph promoted,
// and, without confinement, checkout files that now equal the branch tip (a promotion's
// checkout update). With confinement active, the user's own work never is either: their
// branches (new ones too), tags, remote-tracking refs and the stash are left out, and the
// checkout's files are not looked at (the agent cannot write them anyway).
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, rm, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { runGit } from '../git/exec';
import { gitCommonDir } from '../git/repo';
import { monotonicMs } from '../shared/clock';
import { writeFileAtomic } from '../shared/fs';
import { compareSnapshots, takeSnapshot } from './snapshot';
import type { Entry, GuardScope, Snapshot, SnapshotChange } from './snapshot';

export interface IncidentChange {
  readonly path: string;
  readonly change: 'added' | 'removed' | 'modified';
  /** Ralph can put it back as it was before the invocation (`ralph restore-incident`). */
  readonly restorable: boolean;
}

export interface Incident {
  readonly incidentId: string;
  readonly changes: readonly IncidentChange[];
  /** `.ralph/incidents/<id>.json`: the changes with the contents to restore. */
  readonly recordFile: string;
  /** One line: what changed. */
  readonly summary: string;
}

export interface IntegrityOptions {
  readonly projectDir: string;
  readonly ralphDir: string;
  /** The branch promotions land on. */
  readonly targetBranch: string;
  /** Whether the agents' processes are confined (bubblewrap or the CLI's sandbox). */
  readonly confined: boolean;
  /** Commits Ralph promoted (the target branch may move to one of them during a run). */
  readonly isRalphCommit: (commit: string) => boolean;
  /** Patches Ralph queued: a promotion's commit names one in its trailer before the store records it. */
  readonly isRalphPatch: (patchId: string) => boolean;
}

export interface GuardToken {
  readonly scope: GuardScope;
  readonly before: Snapshot;
  readonly startedMs: number;
}

/** Paths whose old state Ralph writes back on request: git's config, hooks, info, and Ralph's config. */
function restorable(c: SnapshotChange): boolean {
  const p = c.path;
  const file = p === '.git/config' || p.startsWith('.git/hooks/') || p.startsWith('.git/info/') || p === 'ralph.config.json';
  const gitFile = p === '.git/objects/info/alternates' || /^\.git\/worktrees\/[^/]+\/config\.worktree$/.test(p);
  if (!file && !gitFile && !p.startsWith('.ralph/')) return false;
  // Added: delete it. Removed or modified: its old bytes are needed.
  return c.change === 'added' || c.before?.content !== undefined || c.before?.link !== undefined;
}

/**
 * Refs the user moves in normal work: branches (new ones too), tags, remote-tracking refs and
 * the stash. A confined agent cannot write the repository's git dir, so with confinement
 * active these changes are the user's (or Ralph's) and left out; what no user makes in passing
 * (`refs/replace/`, `refs/notes/`, anything else) is still compared.
 */
const USER_REFS: readonly string[] = ['refs/heads/', 'refs/tags/', 'refs/remotes/', 'refs/stash'];

/** Refs team mode writes with a forced fetch right before it reads them (src/team/). */
const TEAM_REFS: readonly string[] = ['refs/ralph/upstream/', 'refs/ralph/patches/'];

export class IntegrityGuard {
  private commonDir: string | undefined;
  /** Time the snapshots took, for the bench (ms, summed). */
  readonly timing = { snapshots: 0, ms: 0 };

  constructor(private readonly o: IntegrityOptions) {}

  private async common(): Promise<string> {
    return (this.commonDir ??= await gitCommonDir(this.o.projectDir));
  }

  /** The snapshot before an invocation whose agent works in `worktree` on `ownBranch`. */
  async before(worktree: string | null, ownBranch: string | null): Promise<GuardToken> {
    const t0 = monotonicMs();
    const commonDir = await this.common();
    const scope: GuardScope = {
      projectDir: this.o.projectDir,
      commonDir,
      worktree,
      checkout: !this.o.confined,
      ignoreRef: (ref) =>
        ref.startsWith('refs/heads/ralph/') ||
        // Team mode's copies of the remote's branch and patches: other workers and the promoter
        // in this clone fetch them while an agent runs, and each read fetches them afresh.
        TEAM_REFS.some((prefix) => ref.startsWith(prefix)) ||
        (ownBranch !== null && ref === `refs/heads/${ownBranch}`) ||
        (this.o.confined && USER_REFS.some((prefix) => ref === prefix || ref.startsWith(prefix))),
    };
    const before = await takeSnapshot(scope);
    this.timing.snapshots++;
    this.timing.ms += monotonicMs() - t0;
    return { scope, before, startedMs: Date.now() };
  }

  /** The incident the invocation caused, or null when nothing it may not change changed. */
  async after(token: GuardToken): Promise<Incident | null> {
    const t0 = monotonicMs();
    const after = await takeSnapshot(token.scope);
    this.timing.snapshots++;
    const changes: SnapshotChange[] = [];
    for (const c of compareSnapshots(token.before, after)) if (!(await this.ralphDid(c))) changes.push(c);
    this.timing.ms += monotonicMs() - t0;
    if (changes.length === 0) return null;
    const incidentId = `incident_${new Date().toISOString().replace(/[-:.TZ]/g, '')}_${randomUUID().slice(0, 8)}`;
    const recordFile = join(this.o.ralphDir, 'incidents', `${incidentId}.json`);
    const listed = changes.map((c) => ({ path: c.path, change: c.change, restorable: restorable(c) }));
    const record = {
      incident_id: incidentId,
      project: this.o.projectDir,
      common_dir: token.scope.commonDir,
      changes: changes.map((c) => ({
        path: c.path,
        change: c.change,
        restorable: restorable(c),
        ...(c.before?.content !== undefined ? { before_base64: c.before.content.toString('base64'), before_mode: modeOf(c.before) } : {}),
        ...(c.before?.link !== undefined ? { before_link: c.before.link } : {}),
      })),
    };
    await mkdir(dirname(recordFile), { recursive: true });
    await writeFileAtomic(recordFile, Buffer.from(`${JSON.stringify(record, null, 2)}\n`));
    const summary = listed.map((c) => `${c.path} ${c.change}`).join(', ');
    return { incidentId, changes: listed, recordFile, summary };
  }

  /** Whether a change is one Ralph made itself while the agent ran. */
  private async ralphDid(c: SnapshotChange): Promise<boolean> {
    if (c.path === `ref refs/heads/${this.o.targetBranch}` && c.after !== undefined) {
      const commit = c.after.digest;
      if (this.o.isRalphCommit(commit)) return true;
      // Promoted a moment ago (the ref moves before the store records it): its trailer says which patch.
      const r = await runGit(this.o.projectDir, ['log', '-1', '--format=%(trailers:key=Ralph-Patch,valueonly)', commit, '--'], {
        allowExitCodes: [128],
      });
      const id = r.exitCode === 0 ? r.stdout.trim() : '';
      return id.length > 0 && this.o.isRalphPatch(id);
    }
    if (c.path.startsWith('checkout ')) {
      // A promotion updates the checkout to the branch tip: such a file equals the tip now.
      const rel = c.path.slice('checkout '.length);
      const tip = await runGit(this.o.projectDir, ['rev-parse', '--verify', '--quiet', `HEAD:${rel}`], { allowExitCodes: [1, 128] });
      if (c.change === 'removed') return tip.exitCode !== 0;
      if (tip.exitCode !== 0) return false;
      const now = await runGit(this.o.projectDir, ['hash-object', '--no-filters', '--', rel], { allowExitCodes: [128] });
      return now.exitCode === 0 && now.stdout.trim() === tip.stdout.trim();
    }
    return false;
  }
}

export interface IncidentRecord {
  readonly incident_id: string;
  readonly project: string;
  readonly common_dir: string;
  readonly changes: readonly {
    readonly path: string;
    readonly change: 'added' | 'removed' | 'modified';
    readonly restorable: boolean;
    readonly before_base64?: string;
    /** The file's permission bits before (a hook keeps its execute bit). */
    readonly before_mode?: number;
    readonly before_link?: string;
  }[];
}

/** The permission bits a file entry's digest records (`<octal st_mode>:<sha1>`). */
function modeOf(e: Entry): number | undefined {
  const m = /^([0-7]+):/.exec(e.digest);
  return m?.[1] !== undefined ? parseInt(m[1], 8) & 0o777 : undefined;
}

/** Where a logical snapshot path lives on disk (null for refs and other non-files). */
export function diskPath(record: Pick<IncidentRecord, 'project' | 'common_dir'>, path: string): string | null {
  if (path.startsWith('.git/')) return join(record.common_dir, path.slice('.git/'.length));
  if (path === 'ralph.config.json' || path.startsWith('.ralph/')) return join(record.project, path);
  return null;
}

/** Puts back what an incident record says Ralph can restore; returns one line per file. */
export async function restoreIncident(record: IncidentRecord): Promise<string[]> {
  const done: string[] = [];
  for (const c of record.changes) {
    if (!c.restorable) continue;
    const file = diskPath(record, c.path);
    if (file === null) continue;
    if (c.change === 'added') {
      await rm(file, { force: true, recursive: true });
      done.push(`removed ${c.path}`);
    } else if (c.before_base64 !== undefined) {
      // Renamed over whatever is there now (a link the agent put there is replaced, never
      // followed), and never absent: a crash leaves the agent's version or the old one.
      const bytes = Buffer.from(c.before_base64, 'base64');
      await writeFileAtomic(file, bytes, { mkdir: true, ...(c.before_mode !== undefined ? { mode: c.before_mode } : {}) });
      if (c.before_mode !== undefined) await chmod(file, c.before_mode); // the umask took bits off
      done.push(`restored ${c.path}`);
    } else if (c.before_link !== undefined) {
      await mkdir(dirname(file), { recursive: true });
      await rm(file, { force: true });
      await symlink(c.before_link, file);
      done.push(`restored ${c.path} (a link to ${c.before_link})`);
    }
  }
  return done;
}

export type { Entry };
