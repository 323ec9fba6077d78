// promotion_view: what promotion needs to know about each queued patch, folded from the
// events so that a later run, another host or a late approval reads it from the store —
// the commit its gates ran on and their results (`patch.gates`), whether a reviewer
// approved it (or the patch it was re-based from), and why its promotion waits
// (`patch.waiting`: the user's checkout, or a harness error, counted).
import { readEvent } from '../domain/events';
import type { SqlReader, SqlWriter, StoredEvent, Projection } from '../store/types';

/** One row of promotion_view, as the loop reads it. */
export interface PromotionRecord {
  readonly patch_id: string;
  readonly task_id: string;
  /** The commit the patch's gates ran on; null before its gates are recorded. */
  readonly base_commit: string | null;
  readonly gates: readonly { readonly gate: string; readonly status: string }[];
  readonly reverified_from: string | null;
  readonly approved: boolean;
  /** Why its promotion waits; null when it does not. */
  readonly waiting_reason: string | null;
  /** Harness failures while promoting it late (given up at the third). */
  readonly harness_errors: number;
}

/** A promotion waiting on the user's checkout (or retried after a harness error). */
export interface WaitingPromotion {
  readonly patchId: string;
  readonly taskId: string;
  readonly patchPath: string;
  readonly reason: string;
  readonly approved: boolean;
}

interface Row {
  patch_id: string;
  task_id: string;
  base_commit: string | null;
  gates: string;
  reverified_from: string | null;
  approved: number;
  waiting_reason: string | null;
  harness_errors: number;
}

/** Task transitions after which none of the task's patches waits any more. */
const ENDS_WAITING = new Set(['task.pending', 'task.deferred', 'task.blocked', 'task.dropped', 'task.done']);

export const promotionViewProjection: Projection = {
  name: 'promotion_view',
  version: 1,
  tables: ['promotion_view'],
  ddl: [
    `CREATE TABLE IF NOT EXISTS promotion_view (
      patch_id TEXT PRIMARY KEY,
      task_id TEXT NOT NULL,
      base_commit TEXT,
      gates TEXT NOT NULL DEFAULT '[]',
      reverified_from TEXT,
      approved INTEGER NOT NULL DEFAULT 0,
      waiting_reason TEXT,
      waiting_since TEXT,
      harness_errors INTEGER NOT NULL DEFAULT 0
    )`,
    'CREATE INDEX IF NOT EXISTS idx_promotion_view_task ON promotion_view(task_id)',
  ],
  apply(db: SqlWriter, event: StoredEvent): void {
    if (event.entity_type !== 'patch' && event.entity_type !== 'task') return;
    const e = readEvent(event);
    if (e === null) return;
    switch (e.type) {
      case 'patch.queued':
        db.run('INSERT OR IGNORE INTO promotion_view(patch_id, task_id) VALUES (?, ?)', [e.entity_id, e.data.task_id]);
        return;
      case 'patch.gates': {
        const from = e.data.reverified_from ?? null;
        // A patch re-based from an approved one carries the approval (the reviewer saw its change).
        const inherited =
          from === null
            ? 0
            : (db.get<{ approved: number }>('SELECT approved FROM promotion_view WHERE patch_id = ?', [from])?.approved ?? 0);
        db.run('INSERT OR IGNORE INTO promotion_view(patch_id, task_id) VALUES (?, ?)', [e.entity_id, e.data.task_id]);
        db.run(
          'UPDATE promotion_view SET base_commit = ?, gates = ?, reverified_from = ?, approved = MAX(approved, ?) WHERE patch_id = ?',
          [e.data.base_commit, JSON.stringify(e.data.gates.map((g) => ({ gate: g.gate, status: g.status }))), from, inherited, e.entity_id],
        );
        return;
      }
      case 'patch.waiting':
        db.run('UPDATE promotion_view SET waiting_reason = ?, waiting_since = ?, harness_errors = harness_errors + ? WHERE patch_id = ?', [
          e.data.reason,
          event.ts,
          e.data.cause === 'harness_error' ? 1 : 0,
          e.entity_id,
        ]);
        return;
      case 'patch.promoted':
      case 'patch.discarded':
        db.run('UPDATE promotion_view SET waiting_reason = NULL, waiting_since = NULL WHERE patch_id = ?', [e.entity_id]);
        return;
      case 'task.deferral_resolved':
        if (e.data.decision === 'approve' && typeof e.data.patch_id === 'string')
          db.run('UPDATE promotion_view SET approved = 1 WHERE patch_id = ?', [e.data.patch_id]);
        return;
      default:
        if (ENDS_WAITING.has(e.type)) {
          db.run('UPDATE promotion_view SET waiting_reason = NULL, waiting_since = NULL WHERE task_id = ? AND waiting_reason IS NOT NULL', [
            e.entity_id,
          ]);
        }
    }
  },
};

function toRecord(r: Row): PromotionRecord {
  let gates: PromotionRecord['gates'] = [];
  try {
    const parsed = JSON.parse(r.gates) as unknown;
    if (Array.isArray(parsed)) gates = parsed as PromotionRecord['gates'];
  } catch {
    // written by this projection only; an unreadable value reads as no gates
  }
  return {
    patch_id: r.patch_id,
    task_id: r.task_id,
    base_commit: r.base_commit,
    gates,
    reverified_from: r.reverified_from,
    approved: r.approved !== 0,
    waiting_reason: r.waiting_reason,
    harness_errors: r.harness_errors,
  };
}

export function promotionOf(db: SqlReader, patchId: string): PromotionRecord | undefined {
  const r = db.get<Row>('SELECT * FROM promotion_view WHERE patch_id = ?', [patchId]);
  return r === undefined ? undefined : toRecord(r);
}

/**
 * Promotions that wait: the current live patch of a proposed task, with a waiting reason,
 * oldest first. A patch its task moved on from (re-based, dropped, re-deferred) is not among them.
 */
export function waitingPromotions(db: SqlReader): WaitingPromotion[] {
  return db
    .all<{ patch_id: string; task_id: string; patch_path: string | null; waiting_reason: string; approved: number }>(
      `SELECT w.patch_id, w.task_id, p.patch_path, w.waiting_reason, w.approved
         FROM promotion_view w
         JOIN patch_view p ON p.patch_id = w.patch_id
         JOIN task_view t ON t.task_id = w.task_id
        WHERE w.waiting_reason IS NOT NULL
          AND p.status IN ('queued', 'applied', 'verified')
          AND t.status = 'proposed' AND t.patch_id = w.patch_id
        ORDER BY w.waiting_since, w.patch_id`,
    )
    .filter((r) => r.patch_path !== null)
    .map((r) => ({
      patchId: r.patch_id,
      taskId: r.task_id,
      patchPath: r.patch_path ?? '',
      reason: r.waiting_reason,
      approved: r.approved !== 0,
    }));
}
