// The REQ view of a project: the specification's requirements in build order folded with the
// req.* events of the store (domain/reqStatus.ts). The engine reads it before each step and
// `ralph req status` prints it; both see exactly what the event log says.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readEvent } from '../domain/events';
import type { RecordedEvent } from '../domain/events';
import { foldReqView, reqStatusReport } from '../domain/reqStatus';
import type { ReqStatusReport, ReqView } from '../domain/reqStatus';
import { CONTROL_PROJECTIONS } from '../control/views';
import { loadConfig } from '../project/config';
import { openStore } from '../store/sqlJsStore';
import type { EventStore } from '../store/types';
import { loadSpecification } from './spec';
import type { OrderedSpecification, SpecProblem } from './spec';
import type { Specification } from '../project/specification';

/** The req.* events of the store, validated, in append order. */
export function reqEvents(store: EventStore): RecordedEvent[] {
  return store
    .events({ entityType: 'req' })
    .map(readEvent)
    .filter((e): e is RecordedEvent => e !== null);
}

export function viewOf(ordered: OrderedSpecification, events: readonly RecordedEvent[], maxIterations: number): ReqView {
  return foldReqView(
    ordered.spec.requirements,
    { order: ordered.order.map((r) => r.id), layers: ordered.layers.map((l) => l.map((r) => r.id)) },
    events,
    maxIterations,
  );
}

export interface ReqSettingsLite {
  readonly specFile: string;
  readonly specShownAs: string;
  readonly maxIterations: number;
  /** Rounds per REQ before it blocks (`req.retries`). */
  readonly rounds: number;
}

/** Where the specification is and the iteration budget, from ralph.config.json (defaults without one). */
export function reqFileSettings(projectDir: string): ReqSettingsLite {
  const c = loadConfig(projectDir);
  const spec = c.ok ? c.value.req.spec : 'specification.yaml';
  return {
    specFile: join(projectDir, spec),
    specShownAs: spec,
    maxIterations: c.ok ? c.value.req.max_iterations : 15,
    rounds: c.ok ? Math.max(1, c.value.req.retries) : 3,
  };
}

function hasStore(ralphDir: string): boolean {
  if (existsSync(join(ralphDir, 'ralph.db'))) return true;
  try {
    return readdirSync(ralphDir).some((f) => f.startsWith('ralph.') && f.includes('journal'));
  } catch {
    return false;
  }
}

export type StatusRead = { ok: true; report: ReqStatusReport } | { ok: false; problem: SpecProblem };

/** `ralph req status`: the spec and the store (read as an observer, beside a running loop). */
export async function readReqStatus(projectDir: string): Promise<StatusRead> {
  const s = reqFileSettings(projectDir);
  const loaded = loadSpecification(s.specFile, s.specShownAs);
  if (!loaded.ok && loaded.error.kind !== 'cycle') return { ok: false, problem: loaded.error };
  const ralphDir = join(projectDir, '.ralph');
  let events: RecordedEvent[] = [];
  if (hasStore(ralphDir)) {
    const store = await openStore({ ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      events = reqEvents(store);
    } finally {
      await store.close();
    }
  }
  if (!loaded.ok) {
    // A cycle: nothing can run; the status says so with the chain.
    const e = loaded.error as Extract<SpecProblem, { kind: 'cycle' }>;
    const reqs = e.spec.requirements;
    const v = foldReqView(reqs, { order: reqs.map((r) => r.id), layers: [reqs.map((r) => r.id)] }, events, s.maxIterations);
    return { ok: true, report: { ...reqStatusReport(v), status: 'WAIT_USER', cycle: [...e.error.chain] } };
  }
  return { ok: true, report: reqStatusReport(viewOf(loaded.value, events, s.maxIterations)) };
}

export interface ReqProjectView {
  readonly view: ReqView;
  /** The status contract; a cycle makes it WAIT_USER with the chain. */
  readonly report: ReqStatusReport;
  readonly spec: Specification;
  readonly settings: ReqSettingsLite;
}

/**
 * The project's specification folded with its req.* events (`readEvents`, in append order;
 * not read without a specification file):
 * null without a specification file; a problem when it does not load. A cycle still folds,
 * in file order, so the REQs show with the chain.
 */
export function reqProjectView(
  projectDir: string,
  readEvents: () => readonly RecordedEvent[],
): ReqProjectView | { problem: string } | null {
  const s = reqFileSettings(projectDir);
  if (!existsSync(s.specFile)) return null;
  const loaded = loadSpecification(s.specFile, s.specShownAs);
  if (loaded.ok) {
    const view = viewOf(loaded.value, readEvents(), s.maxIterations);
    return { view, report: reqStatusReport(view), spec: loaded.value.spec, settings: s };
  }
  if (loaded.error.kind !== 'cycle') return { problem: loaded.error.message };
  const { spec, error } = loaded.error;
  const ids = spec.requirements.map((r) => r.id);
  const view = foldReqView(spec.requirements, { order: ids, layers: [ids] }, readEvents(), s.maxIterations);
  return { view, report: { ...reqStatusReport(view), status: 'WAIT_USER', cycle: [...error.chain] }, spec, settings: s };
}

export interface ReqTreeData {
  readonly report: ReqStatusReport;
  /** Each REQ's acceptance criteria, from specification.yaml. */
  readonly acs: ReadonlyMap<string, readonly { readonly id: string; readonly criteria: string }[]>;
  /** Blocked REQs: why, and the decisions that apply. */
  readonly blocked: ReadonlyMap<string, { readonly reason: string; readonly options: readonly string[] }>;
}

/**
 * What the VS Code Requirements view shows, from a store the caller keeps open (the
 * extension's session): null without a specification.yaml; a problem when it does not load.
 */
export function reqTreeData(projectDir: string, store: EventStore | undefined): ReqTreeData | { problem: string } | null {
  const p = reqProjectView(projectDir, () => (store ? reqEvents(store) : []));
  if (p === null || 'problem' in p) return p;
  return {
    report: p.report,
    acs: new Map(p.spec.requirements.map((r) => [r.id, r.acceptance_criteria])),
    blocked: new Map(
      p.view.rows.filter((r) => r.status === 'blocked').map((r) => [r.id, { reason: r.blockReason ?? 'blocked', options: r.options }]),
    ),
  };
}
