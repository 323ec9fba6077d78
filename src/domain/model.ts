// The control plane's vocabulary: task and patch statuses, effort, provenance and the
// shape of one task / patch as the task_view and patch_view rows hold it.
import type { RiskTier } from './risk';

export const TASK_STATUSES = ['pending', 'claimed', 'proposed', 'done', 'deferred', 'blocked', 'dropped'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const PATCH_STATUSES = ['queued', 'applied', 'verified', 'promoted', 'discarded'] as const;
export type PatchStatus = (typeof PATCH_STATUSES)[number];

export const EFFORTS = ['S', 'M', 'L', 'XL'] as const;
export type Effort = (typeof EFFORTS)[number];

export const PROVENANCES = ['spec', 'auto'] as const;
export type Provenance = (typeof PROVENANCES)[number];

export type { RiskTier };

export function isTaskStatus(s: string): s is TaskStatus {
  return (TASK_STATUSES as readonly string[]).includes(s);
}

export function isEffort(s: string): s is Effort {
  return (EFFORTS as readonly string[]).includes(s);
}

/** One task, exactly the columns of task_view. */
export interface Task {
  readonly task_id: string;
  readonly status: TaskStatus;
  readonly title: string | null;
  readonly source: string | null;
  readonly effort: string | null;
  readonly deps: string;
  readonly wave: number;
  readonly risk_tier: number;
  readonly claimed_by: string | null;
  readonly patch_id: string | null;
  readonly version: number;
  readonly deferred_reason: string | null;
  readonly deferred_at: string | null;
  readonly provenance: string;
}

/** One patch, exactly the columns of patch_view. */
export interface Patch {
  readonly patch_id: string;
  readonly task_id: string;
  readonly status: PatchStatus;
  readonly patch_path: string | null;
  readonly created_by: string | null;
  readonly created_at: string | null;
  readonly applied_at: string | null;
  readonly commit_hash: string | null;
}

/** A new task's descriptive fields (from BACKLOG.md, a proposal or a payload). */
export interface TaskSpec {
  readonly id: string;
  readonly title: string;
  readonly source: string;
  readonly effort: string;
  readonly wave: number;
  readonly deps: string;
}

/** Splits a deps cell (`W1-001, W1-002` or `-`) into ids. */
export function parseDeps(deps: string | null | undefined): string[] {
  if (deps === null || deps === undefined) return [];
  return deps
    .split(/[,\s]+/)
    .map((d) => d.trim())
    .filter((d) => d.length > 0 && d !== '-');
}

/** The canonical deps cell: ids joined by `,`, or `-` when none. */
export function formatDeps(deps: string | readonly string[] | null | undefined): string {
  const ids = typeof deps === 'string' || deps === null || deps === undefined ? parseDeps(deps) : deps;
  return ids.length === 0 ? '-' : ids.join(',');
}

/** A fresh task row with the table defaults. */
export function newTask(spec: Partial<TaskSpec> & { id: string }, provenance: Provenance = 'spec'): Task {
  return {
    task_id: spec.id,
    status: 'pending',
    title: spec.title ?? null,
    source: spec.source ?? null,
    effort: spec.effort ?? null,
    deps: formatDeps(spec.deps),
    wave: spec.wave ?? 0,
    risk_tier: 1,
    claimed_by: null,
    patch_id: null,
    version: 1,
    deferred_reason: null,
    deferred_at: null,
    provenance,
  };
}
