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
}

/** Where the specification is and the iteration budget, from ralph.config.json (defaults without one). */
export function reqFileSettings(projectDir: string): ReqSettingsLite {
  const c = loadConfig(projectDir);
  const spec = c.ok ? c.value.req.spec : 'specification.yaml';
  return { specFile: join(projectDir, spec), specShownAs: spec, maxIterations: c.ok ? c.value.req.max_iterations : 15 };
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
  const s = reqFileSettings(projectDir);
  if (!existsSync(s.specFile)) return null;
  const loaded = loadSpecification(s.specFile, s.specShownAs);
  const events = store ? reqEvents(store) : [];
  if (!loaded.ok && loaded.error.kind !== 'cycle') return { problem: loaded.error.message };
  const spec = loaded.ok ? loaded.value.spec : (loaded.error as Extract<SpecProblem, { kind: 'cycle' }>).spec;
  const view = loaded.ok
    ? viewOf(loaded.value, events, s.maxIterations)
    : foldReqView(
        spec.requirements,
        { order: spec.requirements.map((r) => r.id), layers: [spec.requirements.map((r) => r.id)] },
        events,
        s.maxIterations,
      );
  const report = loaded.ok
    ? reqStatusReport(view)
    : {
        ...reqStatusReport(view),
        status: 'WAIT_USER' as const,
        cycle: [...(loaded.error as Extract<SpecProblem, { kind: 'cycle' }>).error.chain],
      };
  return {
    report,
    acs: new Map(spec.requirements.map((r) => [r.id, r.acceptance_criteria])),
    blocked: new Map(
      view.rows.filter((r) => r.status === 'blocked').map((r) => [r.id, { reason: r.blockReason ?? 'blocked', options: r.options }]),
    ),
  };
}
