// Patch commands (queue, promote, discard) and the risk / policy checks that read the
// files a patch really touches from the patch file itself, never from the agent's word.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SqlReader } from '../store/types';
import { assessChange, type ChangedPath, type RiskTier } from '../domain/risk';
import { parsePatch, PatchParseError } from '../domain/patchText';
import { decideDiscardPatch, decidePromotePatch, decideQueuePatch, newPatchId } from '../domain/patch';
import { decidePolicy, type PolicyVerdict } from '../domain/policy';
import { currentPatch } from '../domain/task';
import { domainEvent, readEvent, type DomainEvent } from '../domain/events';
import {
  CommitNotFoundError,
  CommitNotOnBranchError,
  ControlError,
  InvalidArgumentError,
  InvalidStateError,
  PatchNotFoundError,
  TaskNotFoundError,
} from '../domain/errors';
import type { Patch, Task } from '../domain/model';
import { CONTROL_ACTOR, type ControlContext } from './context';
import { decideAndAppend } from './tasks';
import { getPatch, getTask, patchesOf } from './views';

/** queue-patch: returns the new patch id; the task becomes proposed. */
export async function queuePatch(ctx: ControlContext, cmd: { taskId: string; patchPath: string; createdBy: string }): Promise<string> {
  if (cmd.patchPath.trim() === '') throw new InvalidArgumentError('patch path must not be empty');
  const { result } = await decideAndAppend(ctx, (db) => {
    const patchId = newPatchId(cmd.taskId, ctx.now(), (id) => getPatch(db, id) !== undefined);
    return { events: decideQueuePatch(getTask(db, cmd.taskId), { ...cmd, path: cmd.patchPath, patchId }), result: patchId };
  });
  return result;
}

export interface PromoteResult {
  readonly patchId: string;
  readonly taskId: string;
  readonly commitHash: string;
}

/** The reference's output line for a promotion. */
export function formatPromoted(r: PromoteResult): string {
  return `PROMOTED ${r.patchId} → ${r.taskId} done (commit ${r.commitHash.slice(0, 8)})`;
}

/** Checks through the git port that the commit exists and is on the target branch (an error when no port is given). */
export async function requireCommit(ctx: ControlContext, commitHash: string): Promise<void> {
  if (!/^[0-9a-fA-F]{4,64}$/.test(commitHash)) throw new InvalidArgumentError(`'${commitHash}' is not a commit hash`);
  if (ctx.git === undefined) throw new ControlError('promotion needs git to check the commit, and no git port was given');
  if (!(await ctx.git.commitExists(commitHash))) throw new CommitNotFoundError(commitHash);
  const branch = (await ctx.git.notOnTargetBranch?.(commitHash)) ?? null;
  if (branch !== null) throw new CommitNotOnBranchError(commitHash, branch);
}

/** promote-patch: patch promoted + task done + task.completed, atomically; the commit must exist. */
export async function promotePatch(
  ctx: ControlContext,
  cmd: { patchId: string; commitHash: string; actor?: string },
): Promise<PromoteResult> {
  await requireCommit(ctx, cmd.commitHash);
  const { result } = await decideAndAppend(ctx, (db) => {
    const patch = getPatch(db, cmd.patchId);
    const task = patch ? getTask(db, patch.task_id) : undefined;
    const events = decidePromotePatch(patch, task, { patchId: cmd.patchId, commitHash: cmd.commitHash, actor: cmd.actor ?? CONTROL_ACTOR });
    return { events, result: { patchId: cmd.patchId, taskId: (patch as Patch).task_id, commitHash: cmd.commitHash } };
  });
  return result;
}

/** discard-patch: patch discarded, its task back to pending. Returns the task id. */
export async function discardPatch(
  ctx: ControlContext,
  cmd: { patchId: string; reason: string; actor?: string },
): Promise<{ patchId: string; taskId: string }> {
  const { result } = await decideAndAppend(ctx, (db) => {
    const patch = getPatch(db, cmd.patchId);
    const task = patch ? getTask(db, patch.task_id) : undefined;
    const events = decideDiscardPatch(patch, task, { patchId: cmd.patchId, reason: cmd.reason, actor: cmd.actor ?? CONTROL_ACTOR });
    return { events, result: { patchId: cmd.patchId, taskId: (patch as Patch).task_id } };
  });
  return result;
}

export class PatchFileError extends ControlError {
  override readonly name = 'PatchFileError';
  constructor(
    readonly patchId: string,
    readonly file: string,
    detail: string,
  ) {
    super(`patch ${patchId}: cannot read patch file ${file}: ${detail}`);
  }
}

/** A patch file's location: absolute, or relative to the project root. */
export function resolvePatchPath(ctx: ControlContext, p: string): string {
  return path.isAbsolute(p) ? p : path.join(ctx.projectDir, p);
}

/**
 * What a patch changes, read by the one patch parser (the loop's too): its files with their
 * old names and symlink targets. A patch git would read differently is a PatchFileError
 * naming the line.
 */
export function patchChanges(ctx: ControlContext, patch: Patch): ChangedPath[] {
  if (patch.patch_path === null) throw new PatchFileError(patch.patch_id, '(none)', 'the patch has no file');
  const file = resolvePatchPath(ctx, patch.patch_path);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new PatchFileError(patch.patch_id, file, (e as Error).message);
  }
  try {
    return parsePatch(text);
  } catch (e) {
    if (e instanceof PatchParseError) throw new PatchFileError(patch.patch_id, file, e.message);
    throw e;
  }
}

/** The repo-relative files a patch touches (old and new names), sorted. */
export function patchFiles(ctx: ControlContext, patch: Patch): string[] {
  return [...new Set(patchChanges(ctx, patch).flatMap((c) => [c.path, ...(c.oldPath !== undefined ? [c.oldPath] : [])]))].sort();
}

export interface RiskAssessment {
  readonly taskId: string;
  readonly patchId: string | null;
  readonly files: readonly string[];
  readonly tier: RiskTier;
  readonly previousTier: number;
  /** Why the tier is what it is (paths and patterns, never content). */
  readonly reasons: readonly string[];
  /** Ralph's control files the patch touches: it is never promoted. */
  readonly controlFiles: readonly string[];
}

function selectPatch(db: SqlReader, task: Task, patchId: string | undefined): Patch | undefined {
  if (patchId === undefined) return currentPatch({ task, patches: patchesOf(db, task.task_id) });
  const p = getPatch(db, patchId);
  if (p === undefined) throw new PatchNotFoundError(patchId);
  if (p.task_id !== task.task_id) throw new InvalidArgumentError(`patch ${patchId} belongs to task ${p.task_id}, not ${task.task_id}`);
  return p;
}

/** Classifies a task's risk from its (given or current) patch; no patch -> source and effort only. */
export function assessRisk(ctx: ControlContext, db: SqlReader, taskId: string, patchId?: string): RiskAssessment {
  const task = getTask(db, taskId);
  if (task === undefined) throw new TaskNotFoundError(taskId);
  const patch = selectPatch(db, task, patchId);
  const changes = patch ? patchChanges(ctx, patch) : [];
  const a = assessChange(changes, task, ctx.riskPatterns);
  return {
    taskId,
    patchId: patch?.patch_id ?? null,
    files: [...new Set(changes.flatMap((c) => [c.path, ...(c.oldPath !== undefined ? [c.oldPath] : [])]))].sort(),
    tier: a.tier,
    previousTier: task.risk_tier,
    reasons: a.reasons,
    controlFiles: a.controlFiles,
  };
}

function riskEvent(a: RiskAssessment, actor: string): DomainEvent[] {
  if (a.tier === a.previousTier) return [];
  return [
    domainEvent('task.risk_classified', a.taskId, actor, {
      old_tier: Math.min(3, Math.max(0, a.previousTier)),
      risk_tier: a.tier,
      files: [...a.files],
      patch_id: a.patchId,
      ...(a.reasons.length > 0 ? { reasons: [...a.reasons] } : {}),
    }),
  ];
}

/**
 * classify-risk: the tier from the files the task's patch touches. With `record` (the
 * writer), a changed tier is stored in task_view by a `task.risk_classified` event.
 */
export async function classifyTaskRisk(
  ctx: ControlContext,
  taskId: string,
  opts: { patchId?: string; record?: boolean } = {},
): Promise<RiskAssessment> {
  if (opts.record === false || ctx.store.mode === 'observer') return assessRisk(ctx, ctx.store, taskId, opts.patchId);
  const { result } = await decideAndAppend(ctx, (db) => {
    const a = assessRisk(ctx, db, taskId, opts.patchId);
    return { events: riskEvent(a, CONTROL_ACTOR), result: a };
  });
  return result;
}

/** True when the judge's latest verdict on the task approved exactly this patch. */
function approvedByJudge(db: SqlReader, taskId: string, patchId: string | null): boolean {
  if (patchId === null) return false;
  const row = db.get<{
    event_id: string;
    ts: string;
    run_id: string;
    entity_type: string;
    entity_id: string;
    event_type: string;
    actor: string;
    payload: string;
  }>(
    "SELECT * FROM events WHERE entity_type = 'task' AND entity_id = ? AND event_type = 'task.deferral_resolved' ORDER BY event_id DESC LIMIT 1",
    [taskId],
  );
  if (row === undefined) return false;
  const e = readEvent({ ...row, payload: JSON.parse(row.payload) as Record<string, unknown> });
  return e?.type === 'task.deferral_resolved' && e.data.decision === 'approve' && e.data.patch_id === patchId;
}

export interface PolicyCheckResult extends PolicyVerdict {
  readonly task_id: string;
  readonly patch_id: string | null;
  readonly files: readonly string[];
}

/** policy-check: classify (from the patch) and decide promote | defer | decompose. */
export async function policyCheck(
  ctx: ControlContext,
  taskId: string,
  patchId?: string,
  opts: { record?: boolean } = {},
): Promise<PolicyCheckResult> {
  const a = await classifyTaskRisk(ctx, taskId, { ...(patchId ? { patchId } : {}), ...(opts.record === false ? { record: false } : {}) });
  const verdict = decidePolicy(a.tier, { approvedByJudge: approvedByJudge(ctx.store, taskId, a.patchId), controlFiles: a.controlFiles });
  return { ...verdict, task_id: taskId, patch_id: a.patchId, files: a.files };
}

/**
 * Enacts the policy for a verified patch: defer -> `task.deferred` (reason, tier, patch);
 * decompose -> `task.blocked` until a decomposition proposal replaces it; promote ->
 * nothing here (the caller commits, then calls promotePatch with the commit).
 */
export async function applyPolicy(
  ctx: ControlContext,
  taskId: string,
  patchId?: string,
  actor = CONTROL_ACTOR,
): Promise<PolicyCheckResult> {
  const verdict = await policyCheck(ctx, taskId, patchId);
  if (verdict.decision === 'promote') return verdict;
  await decideAndAppend(ctx, (db) => {
    const task = getTask(db, taskId);
    if (task === undefined) throw new TaskNotFoundError(taskId);
    if (task.status === 'done' || task.status === 'dropped')
      throw new InvalidStateError(taskId, task.status, `task ${taskId} is ${task.status}`);
    const to = verdict.decision === 'defer' ? 'deferred' : 'blocked';
    if (task.status === to) return { events: [], result: undefined };
    return {
      events: [
        domainEvent(`task.${to}`, taskId, actor, {
          old_status: task.status,
          new_status: to,
          reason: verdict.reason,
          risk_tier: verdict.risk_tier,
          ...(verdict.patch_id ? { patch_id: verdict.patch_id } : {}),
        }),
      ],
      result: undefined,
    };
  });
  return verdict;
}
