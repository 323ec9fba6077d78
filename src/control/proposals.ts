// process-proposals: every `.ralph/proposals/prop_*.json` is accepted, deferred or
// rejected with its reason, as an event in one transaction with the task events. Each file
// is first claimed under a unique name (moved to proposals/processing/<stem>.<stamp>-<rand>.json,
// the proposal's entity id), so a later file reusing a name (prop_001.json again) is a new
// proposal, and archives never overwrite one another. Then the file moves to
// proposals/processed/ (accepted, deferred) or proposals/rejected/ (beside it
// `<name>.error.txt`). A claimed file whose outcome is already in the log (a crash between
// append and move) is just moved; one claimed but not decided is decided on the next run.
import { randomHex } from '../shared/randomHex';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { domainEvent, readEvent, type DomainEvent } from '../domain/events';
import { MAX_PROPOSAL_BYTES, evaluateProposal, parseProposal, proposalSchemas } from '../domain/proposals';
import { formatZodIssues } from '../domain/events';
import { InvalidArgumentError, InvalidStateError } from '../domain/errors';
import type { Task } from '../domain/model';
import { fileError, onFile, writeFileAtomicSync } from '../shared/fs';
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
  /** The name the proposal was written under, e.g. `prop_001.json`. */
  readonly file: string;
  /** Its unique name: the entity id of its events and its name in the archive. */
  readonly id: string;
  readonly outcome: 'accepted' | 'rejected' | 'deferred';
  readonly detail: string;
  readonly tasks: readonly string[];
}

const PROPOSAL_FILE = /^prop_.*\.json$/;
/** `<stem>.<yyyymmddhhmmssSSS>-<6 hex>.json`: the suffix a claim adds to a proposal's name. */
const CLAIM_SUFFIX = /\.\d{17}-[0-9a-f]{6}\.json$/;

/** Where claimed proposals wait for their outcome (inside proposals/, out of the listing). */
export function processingDir(ralphDir: string): string {
  return path.join(ralphPaths(ralphDir).proposals, 'processing');
}

function isCandidate(dir: string, name: string): boolean {
  try {
    const st = fs.lstatSync(path.join(dir, name));
    // A directory named like a proposal is someone's folder; links are claimed and rejected.
    return st.isFile() || st.isSymbolicLink();
  } catch {
    return false;
  }
}

/** Proposal files waiting in `.ralph/proposals/` (not yet claimed), sorted by name. */
export function listProposalFiles(ralphDir: string): string[] {
  const dir = ralphPaths(ralphDir).proposals;
  if (!fs.existsSync(dir)) return [];
  return onFile('list', dir, () => fs.readdirSync(dir))
    .filter((f) => PROPOSAL_FILE.test(f) && isCandidate(dir, f))
    .sort();
}

/** The name a claimed proposal was written under. */
export function originalProposalName(id: string): string {
  return CLAIM_SUFFIX.test(id) ? id.replace(CLAIM_SUFFIX, '.json') : id;
}

function claimName(file: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:.TZ]/g, '');
  return `${file.replace(/\.json$/, '')}.${stamp}-${randomHex(3)}.json`;
}

/** Moves a proposal file out of the listing under a unique name; undefined when it is gone (another process took it). */
function claim(ctx: ControlContext, file: string): string | undefined {
  const from = path.join(ralphPaths(ctx.ralphDir).proposals, file);
  const dir = processingDir(ctx.ralphDir);
  onFile('mkdir', dir, () => fs.mkdirSync(dir, { recursive: true }));
  for (;;) {
    const id = claimName(file, ctx.now());
    const to = path.join(dir, id);
    if (fs.existsSync(to)) continue;
    try {
      fs.renameSync(from, to);
      return id;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !fs.existsSync(from)) return undefined;
      throw fileError('rename', from, e);
    }
  }
}

/** Moves a file into `dir` under `name`, never over an existing file. */
function moveTo(src: string, dir: string, name: string): string {
  onFile('mkdir', dir, () => fs.mkdirSync(dir, { recursive: true }));
  let dest = path.join(dir, name);
  const ext = path.extname(name);
  for (let i = 2; fs.existsSync(dest); i++) dest = path.join(dir, `${path.basename(name, ext)}.${i}${ext}`);
  onFile('rename', src, () => fs.renameSync(src, dest));
  return dest;
}

function priorOutcome(ctx: ControlContext, id: string): ProposalReport | undefined {
  const file = originalProposalName(id);
  const evs = ctx.store.events({ entityType: 'proposal', entityId: id });
  for (let i = evs.length - 1; i >= 0; i--) {
    const e = readEvent(evs[i] as StoredEvent);
    if (e?.type === 'proposal.accepted') return { file, id, outcome: 'accepted', detail: 'already processed', tasks: e.data.tasks };
    if (e?.type === 'proposal.deferred') return { file, id, outcome: 'deferred', detail: e.data.reason, tasks: [] };
    if (e?.type === 'proposal.rejected') return { file, id, outcome: 'rejected', detail: e.data.error, tasks: [] };
  }
  return undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The proposal's text, or why it cannot be one (a link, too big, not UTF-8). */
function readProposal(full: string, shown: string): { text: string } | { error: string } {
  const st = onFile('stat', full, () => fs.lstatSync(full));
  if (st.isSymbolicLink()) return { error: `${shown}: is a symbolic link; a proposal must be a regular file` };
  if (st.size > MAX_PROPOSAL_BYTES)
    return { error: `${shown}: ${st.size} bytes; a proposal file is at most ${MAX_PROPOSAL_BYTES / 1024} KiB` };
  const bytes = onFile('read', full, () => fs.readFileSync(full));
  try {
    return { text: UTF8.decode(bytes) };
  } catch {
    return { error: `${shown}: not UTF-8 text` };
  }
}

/** Decides one claimed proposal: its events (the outcome and any task events) in one transaction. */
async function decide(ctx: ControlContext, id: string, actor: string): Promise<ProposalReport> {
  const file = originalProposalName(id);
  const shown = `proposals/${file}`;
  const read = readProposal(path.join(processingDir(ctx.ralphDir), id), shown);
  const { result } = await decideAndAppend(ctx, (db): { events: DomainEvent[]; result: ProposalReport } => {
    const rejected = (error: string, extra: Record<string, unknown> = {}): { events: DomainEvent[]; result: ProposalReport } => ({
      events: [domainEvent('proposal.rejected', id, actor, { file: id, original: file, error, ...extra })],
      result: { file, id, outcome: 'rejected', detail: error, tasks: [] },
    });
    if ('error' in read) return rejected(read.error);
    const parsed = parseProposal(read.text, shown);
    if (!parsed.ok) return rejected(parsed.error);
    const p = parsed.proposal;
    const tasks = new Map(allTasks(db).map((t): [string, Task] => [t.task_id, t]));
    const o = evaluateProposal(p, { tasks }, actor);
    if (o.outcome === 'accepted') {
      return {
        events: [
          ...o.events,
          domainEvent('proposal.accepted', id, actor, {
            file: id,
            original: file,
            proposal_type: p.proposal_type,
            tasks: o.tasks,
            confidence: p.confidence,
          }),
        ],
        result: { file, id, outcome: 'accepted', detail: o.tasks.join(', '), tasks: o.tasks },
      };
    }
    if (o.outcome === 'deferred') {
      return {
        events: [
          domainEvent('proposal.deferred', id, actor, {
            file: id,
            original: file,
            proposal_type: p.proposal_type,
            reason: o.reason,
            proposal: p,
          }),
        ],
        result: { file, id, outcome: 'deferred', detail: o.reason, tasks: [] },
      };
    }
    return rejected(o.error, { proposal_type: p.proposal_type });
  });
  return result;
}

/** Moves a decided proposal to processed/ or rejected/ (with its error beside it). */
function archive(ctx: ControlContext, report: ProposalReport): void {
  const paths = ralphPaths(ctx.ralphDir);
  const full = path.join(processingDir(ctx.ralphDir), report.id);
  if (report.outcome === 'rejected') {
    // The reason first: a crash before the move leaves the file claimed, and the next run
    // writes the same reason again and moves it.
    writeFileAtomicSync(path.join(paths.rejected, report.id.replace(/\.json$/, '.error.txt')), `${report.detail}\n`, { mkdir: true });
    moveTo(full, paths.rejected, report.id);
  } else {
    moveTo(full, paths.processed, report.id);
  }
}

/** Claimed proposals left by an interrupted run, oldest claim first. */
function claimedProposals(ralphDir: string): string[] {
  const dir = processingDir(ralphDir);
  if (!fs.existsSync(dir)) return [];
  return onFile('list', dir, () => fs.readdirSync(dir))
    .filter((f) => f.endsWith('.json') && isCandidate(dir, f))
    .sort((a, b) => claimStamp(a).localeCompare(claimStamp(b)) || a.localeCompare(b));
}

function claimStamp(id: string): string {
  return /\.(\d{17})-[0-9a-f]{6}\.json$/.exec(id)?.[1] ?? '';
}

/** Processes every pending proposal file; returns the counts and a line per file. */
export async function processProposals(
  ctx: ControlContext,
  actor = CONTROL_ACTOR,
): Promise<{ counts: ProposalCounts; reports: ProposalReport[] }> {
  const counts: ProposalCounts = { accepted: 0, rejected: 0, deferred: 0 };
  const reports: ProposalReport[] = [];
  const one = async (id: string): Promise<void> => {
    const report = priorOutcome(ctx, id) ?? (await decide(ctx, id, actor));
    archive(ctx, report);
    counts[report.outcome]++;
    reports.push(report);
  };
  for (const id of claimedProposals(ctx.ralphDir)) await one(id);
  for (const file of listProposalFiles(ctx.ralphDir)) {
    const id = claim(ctx, file);
    if (id !== undefined) await one(id);
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
  /** The proposal's unique name (what resolve-proposal takes; its name as written works when unambiguous). */
  readonly file: string;
  /** The name it was written under. */
  readonly original: string;
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
      return {
        file: r.entity_id,
        original: originalProposalName(r.entity_id),
        proposal_type: p.proposal_type,
        reason: p.reason,
        deferred_at: r.ts,
        proposal: p.proposal,
      };
    });
}

/** The unique name `name` stands for: itself, or the one waiting proposal written under that name. */
function resolveName(outcomes: ReadonlyMap<string, OutcomeRow>, name: string): string {
  if (outcomes.has(name)) return name;
  const waiting = [...outcomes.values()]
    .filter((r) => r.event_type === 'proposal.deferred' && originalProposalName(r.entity_id) === name)
    .map((r) => r.entity_id);
  if (waiting.length > 1)
    throw new InvalidArgumentError(`${waiting.length} proposals written as ${name} wait for the judge; name one: ${waiting.join(', ')}`);
  return waiting[0] ?? name;
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
    const outcomes = latestOutcomes(db);
    const id = resolveName(outcomes, cmd.file);
    const last = outcomes.get(id);
    if (last?.event_type !== 'proposal.deferred') {
      throw new InvalidStateError(
        id,
        last?.event_type ?? 'unknown',
        `proposal ${id} is not waiting for the judge${last ? ` (last: ${last.event_type})` : ''}`,
      );
    }
    const stored = JSON.parse(last.payload) as { proposal: unknown; proposal_type: string };
    const file = originalProposalName(id);
    const base = { file: id, original: file, proposal_type: stored.proposal_type, resolved_by: cmd.actor, rationale: cmd.rationale };
    const reject = (error: string): { events: DomainEvent[]; result: ProposalReport } => ({
      events: [domainEvent('proposal.rejected', id, cmd.actor, { ...base, error })],
      result: { file, id, outcome: 'rejected', detail: error, tasks: [] },
    });
    if (cmd.decision === 'reject') return reject(`judge rejected: ${cmd.rationale}`);
    const parsed = proposalSchemas().proposal.safeParse(stored.proposal);
    if (!parsed.success) return reject(`stored proposal no longer valid: ${formatZodIssues(parsed.error)}`);
    const tasks = new Map(allTasks(db).map((t): [string, Task] => [t.task_id, t]));
    const o = evaluateProposal(parsed.data, { tasks }, cmd.actor, { judged: true });
    if (o.outcome === 'rejected') return reject(o.error);
    if (o.outcome === 'deferred') return reject(o.reason);
    return {
      events: [...o.events, domainEvent('proposal.accepted', id, cmd.actor, { ...base, tasks: o.tasks })],
      result: { file, id, outcome: 'accepted', detail: o.tasks.join(', '), tasks: o.tasks },
    };
  });
  return result;
}
