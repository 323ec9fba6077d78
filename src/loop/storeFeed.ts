// The loop's notifications and totals, derived from what the store appended: a patch queued
// (its gates recorded), promoted, deferred, waiting or discarded, a task released, blocked
// or decomposed, a verdict, an agent started or finished. The writer's Loop emits them from
// its store's appends and an observer window from what it reads, with the same function,
// so the CLI, the extension and every window see one stream that cannot drift from the log.
import type { StoredEvent } from '../store/types';
import type { AgentStatus } from '../agents/types';
import type { LoopEvent } from './events';

type LoopIncidentChange = Extract<LoopEvent, { type: 'incident' }>['changes'][number];
type LoopConfinementRole = Extract<LoopEvent, { type: 'agents.confinement' }>['roles'][number];

/** What a run's summary counts, from its appended events. */
export interface StoreTally {
  invocations: number;
  costUsd: number;
  modelMs: number;
  promoted: number;
  deferred: number;
  blocked: number;
  released: number;
}

export function emptyTally(): StoreTally {
  return { invocations: 0, costUsd: 0, modelMs: 0, promoted: 0, deferred: 0, blocked: 0, released: 0 };
}

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const strOrNull = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A return to pending from work in progress (not a review's reject or an expiry). */
function isRelease(e: StoredEvent): boolean {
  const from = e.payload['old_status'];
  return e.event_type === 'task.pending' && (from === 'claimed' || from === 'proposed');
}

/** The notifications for one appended batch (one command's events, or an observer's refresh). */
export function notificationsOf(batch: readonly StoredEvent[]): LoopEvent[] {
  const out: LoopEvent[] = [];
  for (const e of batch) {
    const p = e.payload;
    switch (e.event_type) {
      case 'patch.gates':
        out.push({
          type: 'patch.queued',
          taskId: str(p['task_id']),
          patchId: e.entity_id,
          files: Array.isArray(p['files']) ? (p['files'] as unknown[]).map((f) => String(f)) : [],
          tier: num(p['risk_tier']),
        });
        break;
      case 'patch.promoted':
        out.push({ type: 'patch.promoted', taskId: str(p['task_id']), patchId: e.entity_id, commit: str(p['commit_hash']) });
        break;
      case 'task.deferred':
        if (typeof p['patch_id'] === 'string')
          out.push({ type: 'patch.deferred', taskId: e.entity_id, patchId: p['patch_id'], reason: str(p['reason']) });
        break;
      case 'patch.waiting':
        out.push({ type: 'patch.waiting', taskId: str(p['task_id']), patchId: e.entity_id, reason: str(p['reason']) });
        break;
      case 'patch.discarded':
        out.push({ type: 'patch.discarded', taskId: str(p['task_id']), patchId: e.entity_id, reason: str(p['reason']) });
        break;
      case 'task.pending':
        if (isRelease(e)) out.push({ type: 'task.released', taskId: e.entity_id, reason: str(p['reason']) });
        break;
      case 'task.blocked':
        out.push({ type: 'task.blocked', taskId: e.entity_id, reason: str(p['reason']) });
        break;
      case 'task.dropped': {
        // Decomposed: the sub-tasks are created in the same command as the parent's drop.
        const subs = batch.filter((c) => c.event_type === 'task.created' && c.payload['parent_task'] === e.entity_id).length;
        if (subs > 0) out.push({ type: 'task.decomposed', taskId: e.entity_id, accepted: subs });
        break;
      }
      case 'task.deferral_resolved': {
        const decision = p['decision'];
        if (decision === 'approve' || decision === 'reject' || decision === 'modify')
          out.push({
            type: 'verdict',
            taskId: e.entity_id,
            verdict: decision,
            rationale: str(p['rationale']),
            confidence: typeof p['confidence'] === 'number' ? p['confidence'] : null,
            by: e.actor === 'judge' ? 'judge' : 'human',
          });
        break;
      }
      case 'agent.started':
        out.push({
          type: 'agent.started',
          agent: e.entity_id,
          phase: str(p['phase']),
          taskId: strOrNull(p['task_id']),
          promptBytes: num(p['prompt_bytes']),
          budgetUsd: num(p['budget_usd']),
        });
        break;
      case 'agent.finished':
        out.push({
          type: 'agent.finished',
          agent: e.entity_id,
          phase: str(p['phase']),
          taskId: strOrNull(p['task_id']),
          status: str(p['status'], 'crashed') as AgentStatus,
          costUsd: num(p['cost_usd']),
          durationMs: num(p['duration_ms']),
          turns: num(p['turns']),
        });
        break;
      case 'incident':
        // The store's own incidents (a restored journal) are not an agent's doing.
        if (p['kind'] !== 'integrity') break;
        out.push({
          type: 'incident',
          incidentId: e.entity_id,
          agent: str(p['agent']),
          phase: str(p['phase']),
          taskId: strOrNull(p['task_id']),
          changes: Array.isArray(p['changes']) ? (p['changes'] as LoopIncidentChange[]) : [],
          summary: str(p['summary']),
          restore: strOrNull(p['restore']),
        });
        break;
      case 'agents.confinement':
        out.push({
          type: 'agents.confinement',
          roles: Array.isArray(p['roles']) ? (p['roles'] as LoopConfinementRole[]) : [],
          unconfined: p['unconfined'] === true,
        });
        break;
      default:
        break;
    }
  }
  return out;
}

/** Adds one appended batch to the run's totals. */
export function tallyOf(t: StoreTally, batch: readonly StoredEvent[]): void {
  for (const e of batch) {
    switch (e.event_type) {
      case 'agent.finished':
        t.invocations++;
        t.costUsd += num(e.payload['cost_usd']);
        t.modelMs += num(e.payload['duration_ms']);
        break;
      case 'patch.promoted':
        t.promoted++;
        break;
      case 'task.deferred':
        t.deferred++;
        break;
      case 'task.blocked':
        t.blocked++;
        break;
      case 'task.pending':
        if (isRelease(e)) t.released++;
        break;
      default:
        break;
    }
  }
}
