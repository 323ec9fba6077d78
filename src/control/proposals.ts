// process-proposals: every `.ralph/proposals/prop_*.json` is accepted, deferred or
// rejected with its reason, as an event in one transaction with the task events; then
// the file moves to proposals/processed/ (accepted, deferred) or proposals/rejected/
// (beside it `<name>.error.txt`). A file whose outcome is already in the log (a crash
// between append and move) is just moved.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { domainEvent, readEvent, type DomainEvent } from '../domain/events';
import { evaluateProposal, parseProposal, proposalSchemas } from '../domain/proposals';
import { formatZodIssues } from '../domain/events';
import { InvalidArgumentError, InvalidStateError } from '../domain/errors';
import type { Task } from '../domain/model';
import type { SqlReader, StoredEvent } from '../store/types';
import { CONTROL_ACTOR, ralphPaths, type ControlContext } from './context';
import { decideAndAppend } from './tasks';
import { allTasks } from './views';

export interface ProposalCounts {
  accepted: number;
  rejected: number;
  deferred: number;
}

export interface ProposalReport {
  readonly file: string;
  readonly outcome: 'accepted' | 'rejected' | 'deferred';
  readonly detail: string;
  readonly tasks: readonly string[];
}

export function listProposalFiles(ralphDir: string): string[] {
  const dir = ralphPaths(ralphDir).proposals;
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => /^prop_.*\.json$/.test(f) && fs.statSync(path.join(dir, f)).isFile())
    .sort();
}

function moveTo(src: string, dir: string, name: string): string {
  fs.mkdirSync(dir, { recursive: true });
  let dest = path.join(dir, name);
  if (fs.existsSync(dest)) {
    const ext = path.extname(name);
    for (let i = 2; fs.existsSync(dest); i++) dest = path.join(dir, `${path.basename(name, ext)}.${i}${ext}`);
  }
  fs.renameSync(src, dest);
  return dest;
}

function priorOutcome(ctx: ControlContext, file: string): ProposalReport | undefined {
  const evs = ctx.store.events({ entityType: 'proposal', entityId: file });
  for (let i = evs.length - 1; i >= 0; i--) {
    const e = readEvent(evs[i] as StoredEvent);
    if (e?.type === 'proposal.accepted') return { file, outcome: 'accepted', detail: 'already processed', tasks: e.data.tasks };
    if (e?.type === 'proposal.deferred') return { file, outcome: 'deferred', detail: e.data.reason, tasks: [] };
    if (e?.type === 'proposal.rejected') return { file, outcome: 'rejected', detail: e.data.error, tasks: [] };
  }
  return undefined;
}

/** Processes every pending proposal file; returns the counts and a line per file. */
export async function processProposals(
  ctx: ControlContext,
  actor = CONTROL_ACTOR,
): Promise<{ counts: ProposalCounts; reports: ProposalReport[] }> {
  const paths = ralphPaths(ctx.ralphDir);
  const counts: ProposalCounts = { accepted: 0, rejected: 0, deferred: 0 };
  const reports: ProposalReport[] = [];
  for (const file of listProposalFiles(ctx.ralphDir)) {
    const full = path.join(paths.proposals, file);
    let report = priorOutcome(ctx, file);
    if (report === undefined) {
      const text = fs.readFileSync(full, 'utf8');
      const { result } = await decideAndAppend(ctx, (db) => {
        const parsed = parseProposal(text, `proposals/${file}`);
        if (!parsed.ok) {
          return {
            events: [domainEvent('proposal.rejected', file, actor, { file, error: parsed.error })],
            result: { file, outcome: 'rejected' as const, detail: parsed.error, tasks: [] },
          };
        }
        const p = parsed.proposal;
        const tasks = new Map(allTasks(db).map((t): [string, Task] => [t.task_id, t]));
        const o = evaluateProposal(p, { tasks }, actor);
        let events: DomainEvent[];
        let r: ProposalReport;
        if (o.outcome === 'accepted') {
          events = [
            ...o.events,
            domainEvent('proposal.accepted', file, actor, {
              file,
              proposal_type: p.proposal_type,
              tasks: o.tasks,
              confidence: p.confidence,
            }),
          ];
          r = { file, outcome: 'accepted', detail: o.tasks.join(', '), tasks: o.tasks };
        } else if (o.outcome === 'deferred') {
          events = [domainEvent('proposal.deferred', file, actor, { file, proposal_type: p.proposal_type, reason: o.reason, proposal: p })];
          r = { file, outcome: 'deferred', detail: o.reason, tasks: [] };
        } else {
          events = [domainEvent('proposal.rejected', file, actor, { file, error: o.error, proposal_type: p.proposal_type })];
          r = { file, outcome: 'rejected', detail: o.error, tasks: [] };
        }
        return { events, result: r };
      });
      report = result;
    }
    if (report.outcome === 'rejected') {
      const dest = moveTo(full, paths.rejected, file);
      fs.writeFileSync(`${dest.replace(/\.json$/, '')}.error.txt`, `${report.detail}\n`);
    } else {
      moveTo(full, paths.processed, file);
    }
    counts[report.outcome]++;
    reports.push(report);
  }
  return { counts, reports };
}

const OUTCOMES = ['proposal.accepted', 'proposal.deferred', 'proposal.rejected'];

interface OutcomeRow {
  entity_id: string;
  event_type: string;
  ts: string;
  payload: string;
}

/** The latest outcome event of every proposal file, by file name. */
function latestOutcomes(db: SqlReader): Map<string, OutcomeRow> {
  const rows = db.all<OutcomeRow>(
    `SELECT entity_id, event_type, ts, payload FROM events WHERE entity_type = 'proposal' AND event_type IN (${OUTCOMES.map(() => '?').join(', ')}) ORDER BY event_id`,
    OUTCOMES,
  );
  return new Map(rows.map((r) => [r.entity_id, r]));
}

export interface DeferredProposal {
  readonly file: string;
  readonly proposal_type: string;
  readonly reason: string;
  readonly deferred_at: string;
  readonly proposal: unknown;
}

/** Proposals waiting for the judge: deferred, and not resolved since. */
export function deferredProposals(ctx: ControlContext): DeferredProposal[] {
  return [...latestOutcomes(ctx.store).values()]
    .filter((r) => r.event_type === 'proposal.deferred')
    .map((r) => {
      const p = JSON.parse(r.payload) as { proposal_type: string; reason: string; proposal: unknown };
      return { file: r.entity_id, proposal_type: p.proposal_type, reason: p.reason, deferred_at: r.ts, proposal: p.proposal };
    });
}

/**
 * The judge's verdict on a deferred proposal. approve applies it (the auto-accept
 * thresholds lifted; validity and limits still checked, else it is rejected with the
 * reason); reject records the rationale. Returns the outcome.
 */
export async function resolveProposal(
  ctx: ControlContext,
  cmd: { file: string; decision: 'approve' | 'reject'; actor: string; rationale: string },
): Promise<ProposalReport> {
  if (cmd.decision !== 'approve' && cmd.decision !== 'reject')
    throw new InvalidArgumentError(`decision must be approve or reject, not '${String(cmd.decision)}'`);
  const { result } = await decideAndAppend(ctx, (db): { events: DomainEvent[]; result: ProposalReport } => {
    const last = latestOutcomes(db).get(cmd.file);
    if (last?.event_type !== 'proposal.deferred') {
      throw new InvalidStateError(
        cmd.file,
        last?.event_type ?? 'unknown',
        `proposal ${cmd.file} is not waiting for the judge${last ? ` (last: ${last.event_type})` : ''}`,
      );
    }
    const stored = JSON.parse(last.payload) as { proposal: unknown; proposal_type: string };
    const base = { file: cmd.file, proposal_type: stored.proposal_type, resolved_by: cmd.actor, rationale: cmd.rationale };
    const reject = (error: string): { events: DomainEvent[]; result: ProposalReport } => ({
      events: [domainEvent('proposal.rejected', cmd.file, cmd.actor, { ...base, error })],
      result: { file: cmd.file, outcome: 'rejected', detail: error, tasks: [] },
    });
    if (cmd.decision === 'reject') return reject(`judge rejected: ${cmd.rationale}`);
    const parsed = proposalSchemas().proposal.safeParse(stored.proposal);
    if (!parsed.success) return reject(`stored proposal no longer valid: ${formatZodIssues(parsed.error)}`);
    const tasks = new Map(allTasks(db).map((t): [string, Task] => [t.task_id, t]));
    const o = evaluateProposal(parsed.data, { tasks }, cmd.actor, { judged: true });
    if (o.outcome === 'rejected') return reject(o.error);
    if (o.outcome === 'deferred') return reject(o.reason);
    return {
      events: [...o.events, domainEvent('proposal.accepted', cmd.file, cmd.actor, { ...base, tasks: o.tasks })],
      result: { file: cmd.file, outcome: 'accepted', detail: o.tasks.join(', '), tasks: o.tasks },
    };
  });
  return result;
}
