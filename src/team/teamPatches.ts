// The patches workers queued through the shared remote (team mode): a worker records its
// patch's ref, commit and base in the `patch.gates` event it queues the patch with, and the
// promoter finds the ones still waiting for promotion here. Kept from the events like every
// other view, so a promoter that takes over reads the same list.
import type { Projection, SqlReader, SqlWriter, StoredEvent } from '../store/types';

export interface TeamPatch {
  readonly patch_id: string;
  readonly task_id: string;
  /** `refs/ralph/patches/<patch id>` on the shared remote. */
  readonly ref: string;
  /** The worker's commit: its base plus exactly the patch its gates passed. */
  readonly commit_sha: string;
  /** The commit of the target branch the worker's gates ran on. */
  readonly base_commit: string;
  /** Who queued it (`<host>/<worker>`). */
  readonly worker: string;
}

export const teamPatchProjection: Projection = {
  name: 'team_patch',
  version: 1,
  tables: ['team_patch'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS team_patch (
      patch_id TEXT NOT NULL PRIMARY KEY,
      task_id TEXT NOT NULL,
      ref TEXT NOT NULL,
      commit_sha TEXT NOT NULL,
      base_commit TEXT NOT NULL,
      worker TEXT NOT NULL
    )`,
  ],
  apply(db: SqlWriter, e: StoredEvent): void {
    if (e.event_type !== 'patch.gates') return;
    const p = e.payload;
    const ref = p['ref'];
    const commit = p['commit'];
    if (typeof ref !== 'string' || typeof commit !== 'string') return;
    db.run('INSERT OR REPLACE INTO team_patch(patch_id, task_id, ref, commit_sha, base_commit, worker) VALUES (?, ?, ?, ?, ?, ?)', [
      e.entity_id,
      String(p['task_id']),
      ref,
      commit,
      String(p['base_commit']),
      e.actor,
    ]);
  },
};

/** Team patches still queued for promotion, oldest first (their tasks proposed, not deferred). */
export function queuedTeamPatches(db: SqlReader): TeamPatch[] {
  return db.all<TeamPatch>(
    `SELECT tp.patch_id, tp.task_id, tp.ref, tp.commit_sha, tp.base_commit, tp.worker
       FROM team_patch tp
       JOIN patch_view p ON p.patch_id = tp.patch_id
       JOIN task_view t ON t.task_id = tp.task_id
      WHERE p.status = 'queued' AND t.status = 'proposed' AND t.patch_id = tp.patch_id
      ORDER BY tp.patch_id`,
  );
}

export function teamPatch(db: SqlReader, patchId: string): TeamPatch | undefined {
  return db.get<TeamPatch>('SELECT patch_id, task_id, ref, commit_sha, base_commit, worker FROM team_patch WHERE patch_id = ?', [patchId]);
}

/**
 * Queued patches of proposed tasks that no worker pushed: a promoter's re-based patches
 * (its re-verification on a moved tip). Their files are on the machine that made them; a
 * promoter that stopped mid-way leaves them for the next, which can only use its own.
 */
export function queuedLocalPatches(db: SqlReader): { patch_id: string; task_id: string; patch_path: string | null }[] {
  return db.all(
    `SELECT p.patch_id, p.task_id, p.patch_path
       FROM patch_view p
       JOIN task_view t ON t.task_id = p.task_id AND t.patch_id = p.patch_id
      WHERE p.status = 'queued' AND t.status = 'proposed'
        AND NOT EXISTS (SELECT 1 FROM team_patch tp WHERE tp.patch_id = p.patch_id)
      ORDER BY p.patch_id`,
  );
}
