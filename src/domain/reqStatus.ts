// REQ mode's state, folded from the req.* events over the specification's requirements: each
// REQ's status (blocked(auto) derived from its dependencies), the run's iteration and state,
// the learnings window, and the seed's output contract (`ralph req status --json`) with its
// invariants: done + pending + blocked + skipped == total, iteration <= max_iterations. Pure.
import type { RecordedEvent } from './events';
import type { LearningKind, ReqBlockKind, ReqDecision, ReqLayer, ReqTerminalState } from './reqEvents';
import { contextualWindow, type Learning } from './reqLearnings';

/** A requirement as REQ mode needs it (src/project/specification.ts's Requirement is one). */
export interface ReqItem {
  readonly id: string;
  readonly description: string;
  readonly title?: string | undefined;
  readonly acceptance_criteria: readonly { readonly id: string; readonly criteria: string }[];
  readonly priority: number;
  readonly depends_on: readonly string[];
  readonly status: string;
}

export type ReqState = 'pending' | 'in_progress' | 'done' | 'blocked' | 'blocked_auto' | 'manual' | 'skipped';

export interface ReqRow {
  readonly id: string;
  readonly title: string;
  readonly level: number;
  readonly status: ReqState;
  readonly round: number;
  readonly layer: ReqLayer | null;
  readonly lastFailure: string | null;
  /** For blocked(auto): the blocked REQ it waits on. */
  readonly blockedBy: string | null;
  readonly blockKind: ReqBlockKind | null;
  readonly blockReason: string | null;
  readonly options: readonly ReqDecision[];
  readonly commit: string | null;
  readonly worktree: string | null;
  readonly worktreeBase: string | null;
}

export type ReqRunState = 'idle' | 'running' | ReqTerminalState;

export interface ReqView {
  readonly rows: readonly ReqRow[];
  readonly order: readonly string[];
  readonly layers: readonly (readonly string[])[];
  readonly iteration: number;
  readonly maxIterations: number;
  readonly runState: ReqRunState;
  readonly cycle: readonly string[] | null;
  readonly current: string | null;
  readonly learnings: readonly Learning[];
  readonly checkpointAt: string | null;
  /** The user asked the run to stop (a `stop` decision since the run started). */
  readonly stopRequested: boolean;
}

/** A requirement's commit title: its `title`, else its description's first line. */
export function reqTitle(r: Pick<ReqItem, 'title' | 'description'>): string {
  const t = r.title ?? r.description.split('\n')[0] ?? r.description;
  return t.replace(/\s+/g, ' ').trim();
}

interface Mutable {
  status: ReqState;
  round: number;
  layer: ReqLayer | null;
  lastFailure: string | null;
  blockKind: ReqBlockKind | null;
  blockReason: string | null;
  options: ReqDecision[];
  commit: string | null;
  worktree: string | null;
  worktreeBase: string | null;
}

const FILE_STATUS: Record<string, ReqState> = {
  done: 'done',
  skipped: 'skipped',
  blocked: 'blocked',
  in_progress: 'pending',
  pending: 'pending',
};

/**
 * Folds the req.* events (in append order) over the requirements. `order` and `layers` are
 * the build order (Kahn, project/specification.ts); the latest `req.run_started` overrides them.
 */
export function foldReqView(
  reqs: readonly ReqItem[],
  build: { readonly order: readonly string[]; readonly layers: readonly (readonly string[])[] },
  events: readonly RecordedEvent[],
  maxIterations: number,
): ReqView {
  const state = new Map<string, Mutable>();
  for (const r of reqs)
    state.set(r.id, {
      status: FILE_STATUS[r.status] ?? 'pending',
      round: 0,
      layer: null,
      lastFailure: null,
      blockKind: null,
      blockReason: null,
      options: [],
      commit: null,
      worktree: null,
      worktreeBase: null,
    });
  let order = build.order;
  let layers = build.layers;
  let iteration = 0;
  let max = maxIterations;
  let runState: ReqRunState = 'idle';
  let cycle: string[] | null = null;
  let current: string | null = null;
  let checkpointAt: string | null = null;
  let stopRequested = false;
  const learnings: Learning[] = [];
  for (const e of events) {
    if (!e.type.startsWith('req.')) continue;
    const s = state.get(e.entity_id);
    switch (e.type) {
      case 'req.run_started':
        order = e.data.order;
        layers = e.data.layers;
        max = e.data.max_iterations;
        if (!e.data.resume) iteration = 0;
        runState = 'running';
        cycle = null;
        stopRequested = false;
        break;
      case 'req.cycle':
        cycle = e.data.chain;
        runState = 'WAIT_USER';
        break;
      case 'req.run_finished':
        runState = e.data.state;
        current = null;
        break;
      case 'req.checkpoint':
        checkpointAt = e.data.at;
        break;
      case 'req.started':
        if (!s) break;
        if (e.data.round === 1) iteration = e.data.iteration;
        s.status = 'in_progress';
        s.round = e.data.round;
        s.layer = null;
        s.worktree = e.data.worktree;
        s.worktreeBase = e.data.base ?? null;
        current = e.entity_id;
        break;
      case 'req.layer':
        if (s) s.layer = e.data.layer;
        break;
      case 'req.round_failed':
        if (s) s.lastFailure = e.data.summary;
        break;
      case 'req.done':
        if (!s) break;
        s.status = 'done';
        s.commit = e.data.commit;
        s.layer = null;
        if (current === e.entity_id) current = null;
        break;
      case 'req.blocked':
        if (!s) break;
        s.status = 'blocked';
        s.blockKind = e.data.kind;
        s.blockReason = e.data.reason;
        s.options = [...e.data.options];
        if (current === e.entity_id) current = null;
        break;
      case 'req.decided':
        if (e.data.decision === 'stop') stopRequested = true;
        if (s && e.data.decision === 'manual') s.status = 'manual';
        break;
      case 'req.skipped':
        if (!s) break;
        s.status = 'skipped';
        if (current === e.entity_id) current = null;
        break;
      case 'req.reset':
        if (!s) break;
        s.status = 'pending';
        s.round = 0;
        s.layer = null;
        s.blockKind = null;
        s.blockReason = null;
        s.options = [];
        if (!e.data.keep_worktree) {
          s.worktree = null;
          s.worktreeBase = null;
        }
        break;
      case 'req.learning':
        learnings.push({ text: e.data.text, kind: e.data.kind as LearningKind, source: e.entity_id, why: e.data.why ?? null });
        break;
      case 'req.learning_promoted':
        for (const l of learnings)
          if (l.text === e.data.text && l.kind === 'contextual') Object.assign(l, { kind: 'permanent', why: e.data.why });
        break;
      default:
        break;
    }
  }
  // blocked(auto): waiting on a (transitively) blocked REQ. `order` is topological, so one pass.
  const byId = new Map(reqs.map((r) => [r.id, r] as const));
  const blockedBy = new Map<string, string>();
  for (const id of order) {
    const r = byId.get(id);
    const s = state.get(id);
    if (!r || !s || s.status !== 'pending') continue;
    for (const d of r.depends_on) {
      const ds = state.get(d);
      if (ds?.status === 'blocked' || ds?.status === 'manual') blockedBy.set(id, d);
      else if (ds?.status === 'blocked_auto') blockedBy.set(id, blockedBy.get(d) ?? d);
      if (blockedBy.has(id)) {
        s.status = 'blocked_auto';
        break;
      }
    }
  }
  const levelOf = new Map<string, number>();
  layers.forEach((l, i) => l.forEach((id) => levelOf.set(id, i)));
  const rows = order
    .map((id) => byId.get(id))
    .filter((r): r is ReqItem => r !== undefined)
    .map((r): ReqRow => {
      const s = state.get(r.id) as Mutable;
      return {
        id: r.id,
        title: reqTitle(r),
        level: levelOf.get(r.id) ?? 0,
        status: s.status,
        round: s.round,
        layer: s.layer,
        lastFailure: s.lastFailure,
        blockedBy: blockedBy.get(r.id) ?? null,
        blockKind: s.blockKind,
        blockReason: s.blockReason,
        options: s.options,
        commit: s.commit,
        worktree: s.worktree,
        worktreeBase: s.worktreeBase,
      };
    });
  return { rows, order, layers, iteration, maxIterations: max, runState, cycle, current, learnings, checkpointAt, stopRequested };
}

/** The seed's output contract, plus the order, the iteration and one line per REQ. */
export interface ReqStatusReport {
  readonly skill_name: 'ralph-loop';
  readonly version: '2.0.0';
  readonly requirements: { total: number; done: number; pending: number; blocked: number; skipped: number };
  readonly learnings: { permanent: string[]; contextual: string[] };
  readonly status: ReqRunState;
  readonly checkpoint_at: string | null;
  readonly order: string[];
  readonly iteration: number;
  readonly max_iterations: number;
  readonly cycle: string[] | null;
  readonly current: string | null;
  readonly reqs: {
    id: string;
    title: string;
    level: number;
    status: ReqState;
    round: number;
    layer: ReqLayer | null;
    blocked_by: string | null;
    commit: string | null;
  }[];
}

/** The status object of a view (pending counts in-progress REQs; blocked counts blocked(auto) and manual). */
export function reqStatusReport(v: ReqView): ReqStatusReport {
  const count = (...s: ReqState[]): number => v.rows.filter((r) => s.includes(r.status)).length;
  return {
    skill_name: 'ralph-loop',
    version: '2.0.0',
    requirements: {
      total: v.rows.length,
      done: count('done'),
      pending: count('pending', 'in_progress'),
      blocked: count('blocked', 'blocked_auto', 'manual'),
      skipped: count('skipped'),
    },
    learnings: {
      permanent: v.learnings.filter((l) => l.kind === 'permanent').map((l) => l.text),
      contextual: contextualWindow(v.learnings).map((l) => l.text),
    },
    status: v.runState,
    checkpoint_at: v.checkpointAt,
    order: [...v.order],
    iteration: v.iteration,
    max_iterations: v.maxIterations,
    cycle: v.cycle ? [...v.cycle] : null,
    current: v.current,
    reqs: v.rows.map((r) => ({
      id: r.id,
      title: r.title,
      level: r.level,
      status: r.status,
      round: r.round,
      layer: r.layer,
      blocked_by: r.blockedBy,
      commit: r.commit,
    })),
  };
}

/** The contract's invariants that do not hold (empty when all do). */
export function reqStatusProblems(r: ReqStatusReport): string[] {
  const q = r.requirements;
  const problems: string[] = [];
  if (q.done + q.pending + q.blocked + q.skipped !== q.total)
    problems.push(`done ${q.done} + pending ${q.pending} + blocked ${q.blocked} + skipped ${q.skipped} != total ${q.total}`);
  if (r.iteration > r.max_iterations) problems.push(`iteration ${r.iteration} > max_iterations ${r.max_iterations}`);
  if (r.iteration < 0) problems.push(`iteration ${r.iteration} < 0`);
  if (r.order.length !== q.total) problems.push(`order lists ${r.order.length} REQs of ${q.total}`);
  return problems;
}

/** `4/6 done, 1 blocked, 1 skipped` (the PARTIAL summary). */
export function reqSummaryLine(r: ReqStatusReport): string {
  const q = r.requirements;
  return `${q.done}/${q.total} done, ${q.blocked} blocked, ${q.skipped} skipped, ${q.pending} pending`;
}
