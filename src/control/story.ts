// Over 400 lines because a task's story is one fold of its events and the markdown rendering of that fold's one record type.
// A task's story: everything the event log knows about one task — where it came from, each
// attempt (who claimed it, reflections, patches with their gates and risk tier), the judge's
// and humans' decisions, the commit it landed as, time (and cost, once agent events carry
// it) spent — folded from events by a pure function, and rendered as markdown. The reader
// picks the events that may concern the task; the fold decides which really do, so any
// superset of events gives the same story. `ralph show`, the MCP story tool and VS Code's
// chat all tell the story from here.
import type { SqlReader, StoredEvent } from '../store/types';

export interface StoryEvent {
  readonly id: string;
  readonly ts: string;
  readonly actor: string;
  readonly type: string;
  /** One line saying what happened (empty when the type says it all). */
  readonly detail: string;
  /** The relaying client (an MCP client's name) when the event came through one. */
  readonly client?: string;
}

export interface GateResult {
  readonly gate: string;
  readonly status: string;
}

export interface StoryPatch {
  readonly patchId: string;
  readonly createdBy: string;
  readonly createdAt: string;
  status: string;
  tier?: number;
  files: string[];
  gates: GateResult[];
  commit?: string;
  /** Why it was discarded, or why it waits. */
  reason?: string;
}

export interface StoryReflection {
  readonly ts: string;
  readonly gate: string;
  readonly klass: string;
  readonly decision: string;
  readonly lesson: string;
}

export interface StoryAttempt {
  readonly owner: string;
  readonly claimedAt: string;
  endedAt?: string;
  /** How it ended: promoted, deferred, released, blocked, dropped, superseded…; 'in progress' while open. */
  outcome: string;
  reason?: string;
  readonly patches: string[];
  readonly reflections: StoryReflection[];
}

export interface StoryDecision {
  readonly ts: string;
  readonly actor: string;
  /** The judge, or anyone else (a human, a chat client): the latter override the judge. */
  readonly by: 'judge' | 'human';
  readonly decision: string;
  readonly rationale: string;
  readonly patchId?: string;
  readonly client?: string;
}

export interface TaskStory {
  readonly taskId: string;
  title: string;
  status: string;
  source: string;
  effort: string;
  wave: number;
  tier?: number;
  provenance: string;
  createdBy: string;
  createdAt: string;
  confidence?: number;
  rationale?: string;
  parentTask?: string;
  /** The proposal (file or chat proposal id) the task was accepted from. */
  proposal?: string;
  readonly attempts: StoryAttempt[];
  readonly patches: StoryPatch[];
  readonly decisions: StoryDecision[];
  readonly events: StoryEvent[];
  commit?: string;
  doneAt?: string;
  /** From the first claim to done (or to the last event while open). */
  elapsedMs?: number;
  /** Summed from agent events that carry a cost for this task; undefined when none do. */
  costUsd?: number;
  /** Every invocation for the task that kept a transcript, in order (paths relative to `.ralph/`). */
  readonly transcripts: StoryTranscript[];
  /** The files the landing commit changed, when the caller read them from git (withCommitFiles). */
  commitFiles?: CommitFile[];
}

/** A file a commit changed: `git diff-tree --name-status` (src/git/commitFiles.ts reads it). */
export interface CommitFile {
  readonly path: string;
  readonly status: string;
  readonly oldPath?: string;
}

export interface StoryTranscript {
  readonly ts: string;
  readonly agent: string;
  readonly phase: string;
  readonly path: string;
}

type Payload = Readonly<Record<string, unknown>>;
const str = (p: Payload, k: string): string | undefined => (typeof p[k] === 'string' ? (p[k] as string) : undefined);
const num = (p: Payload, k: string): number | undefined => (typeof p[k] === 'number' ? (p[k] as number) : undefined);
const oneLine = (s: string, max = 160): string => {
  const l = s.replace(/\s+/g, ' ').trim();
  return l.length > max ? `${l.slice(0, max - 1)}…` : l;
};

/** Whether an event concerns the task (its own, its patches', a proposal naming it, an agent's about it). */
function concerns(e: StoredEvent, taskId: string, patchIds: ReadonlySet<string>): boolean {
  const p = e.payload;
  if (e.entity_type === 'task') return e.entity_id === taskId;
  if (e.entity_type === 'patch') return patchIds.has(e.entity_id) || str(p, 'task_id') === taskId;
  if (e.entity_type === 'proposal') {
    const tasks = Array.isArray(p['tasks']) ? (p['tasks'] as unknown[]) : [];
    return tasks.includes(taskId) || str(p, 'task_id') === taskId;
  }
  return str(p, 'task_id') === taskId || str(p, 'taskId') === taskId;
}

function gatesOf(p: Payload): GateResult[] {
  const g = p['gates'];
  if (!Array.isArray(g)) return [];
  return g.flatMap((x): GateResult[] => {
    const r = x as Payload;
    return typeof r['gate'] === 'string' && typeof r['status'] === 'string' ? [{ gate: r['gate'], status: r['status'] }] : [];
  });
}

function detailOf(e: StoredEvent): string {
  const p = e.payload;
  switch (e.event_type) {
    case 'task.created':
    case 'task.migrated':
      return oneLine(`${str(p, 'title') ?? ''} (wave ${num(p, 'wave') ?? '?'}, effort ${str(p, 'effort') ?? '?'})`);
    case 'task.claimed':
      return `by ${str(p, 'claimed_by') ?? e.actor}`;
    case 'task.reflected':
      return oneLine(
        `${str(p, 'gate') ?? '?'} failed (${str(p, 'class') ?? '?'}), ${str(p, 'decision') ?? '?'}: ${str(p, 'lesson') ?? ''}`,
      );
    case 'task.risk_classified':
      return `tier ${num(p, 'risk_tier') ?? '?'}: ${Array.isArray(p['files']) ? (p['files'] as string[]).join(', ') : ''}`;
    case 'task.deferral_resolved':
      return oneLine(`${str(p, 'decision') ?? '?'}: ${str(p, 'rationale') ?? ''}`);
    case 'task.deferral_expired':
      return `tier ${num(p, 'old_tier') ?? '?'} → ${num(p, 'new_tier') ?? '?'} after ${num(p, 'commits_since') ?? '?'} commits`;
    case 'task.reprioritized':
      return `wave ${num(p, 'old_wave') ?? '?'} → ${num(p, 'new_wave') ?? '?'}`;
    case 'task.completed':
    case 'patch.promoted':
      return `commit ${(str(p, 'commit_hash') ?? '').slice(0, 8)}`;
    case 'patch.queued':
      return `${e.entity_id} by ${str(p, 'created_by') ?? e.actor}`;
    case 'patch.gates':
      return gatesOf(p)
        .map((g) => `${g.gate} ${g.status}`)
        .join(', ');
    case 'patch.discarded':
    case 'patch.waiting':
      return oneLine(str(p, 'reason') ?? '');
    case 'proposal.accepted':
      return `${e.entity_id}`;
    case 'proposal.deferred':
      return oneLine(`${e.entity_id}: ${str(p, 'reason') ?? ''}`);
    case 'proposal.rejected':
      return oneLine(`${e.entity_id}: ${str(p, 'error') ?? ''}`);
    default:
      if (e.event_type.startsWith('task.')) return oneLine(str(p, 'reason') ?? '');
      return '';
  }
}

/** Folds the events (any superset of the task's) into its story; undefined when the task never existed. */
export function buildTaskStory(taskId: string, events: readonly StoredEvent[]): TaskStory | undefined {
  const sorted = [...events].sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
  const patchIds = new Set<string>();
  for (const e of sorted) if (e.entity_type === 'patch' && str(e.payload, 'task_id') === taskId) patchIds.add(e.entity_id);
  let story: TaskStory | undefined;
  const patches = new Map<string, StoryPatch>();
  /** The open attempt; `latest` stays on the last one after it ends (a decision may still settle it). */
  let attempt: StoryAttempt | undefined;
  let latest: StoryAttempt | undefined;
  let firstClaim: string | undefined;
  let cost: number | undefined;
  const endAttempt = (ts: string, outcome: string, reason?: string): void => {
    if (attempt === undefined) return;
    attempt.endedAt = ts;
    attempt.outcome = outcome;
    if (reason !== undefined) attempt.reason = reason;
    attempt = undefined;
  };

  for (const e of sorted) {
    if (!concerns(e, taskId, patchIds)) continue;
    const p = e.payload;
    if (story === undefined) {
      if (e.event_type !== 'task.created' && e.event_type !== 'task.migrated' && !e.event_type.startsWith('task.')) continue;
      // A transition of an unknown task creates it from its payload's fields (the reference's
      // transition-task): those are its title, source, effort and wave.
      story = {
        taskId,
        title: str(p, 'title') ?? '',
        status: 'pending',
        source: str(p, 'source') ?? '-',
        effort: str(p, 'effort') ?? '?',
        wave: num(p, 'wave') ?? 0,
        provenance: 'spec',
        createdBy: e.actor,
        createdAt: e.ts,
        attempts: [],
        patches: [],
        decisions: [],
        events: [],
        transcripts: [],
      };
    }
    const s: TaskStory = story;
    const client = str(p, 'client');
    s.events.push({ id: e.event_id, ts: e.ts, actor: e.actor, type: e.event_type, detail: detailOf(e), ...(client ? { client } : {}) });

    switch (e.event_type) {
      case 'task.created':
      case 'task.migrated': {
        s.title = str(p, 'title') ?? s.title;
        s.source = str(p, 'source') ?? s.source;
        s.effort = str(p, 'effort') ?? s.effort;
        s.wave = num(p, 'wave') ?? s.wave;
        s.status = e.event_type === 'task.migrated' ? (str(p, 'status') ?? 'pending') : 'pending';
        s.provenance = str(p, 'provenance') ?? (e.event_type === 'task.migrated' ? 'spec' : s.provenance);
        const confidence = num(p, 'confidence');
        if (confidence !== undefined) s.confidence = confidence;
        const rationale = str(p, 'rationale');
        if (rationale) s.rationale = rationale;
        const parent = str(p, 'parent_task');
        if (parent) s.parentTask = parent;
        continue;
      }
      case 'proposal.accepted':
        s.proposal ??= e.entity_id;
        continue;
      case 'task.reprioritized':
        s.wave = num(p, 'new_wave') ?? s.wave;
        continue;
      case 'task.risk_classified': {
        const tier = num(p, 'risk_tier');
        if (tier !== undefined) s.tier = tier;
        const patch = patches.get(str(p, 'patch_id') ?? '');
        if (patch && tier !== undefined) {
          patch.tier = tier;
          patch.files = Array.isArray(p['files']) ? (p['files'] as string[]) : patch.files;
        }
        continue;
      }
      case 'task.reflected':
        attempt?.reflections.push({
          ts: e.ts,
          gate: str(p, 'gate') ?? '?',
          klass: str(p, 'class') ?? '?',
          decision: str(p, 'decision') ?? '?',
          lesson: str(p, 'lesson') ?? '',
        });
        continue;
      case 'task.deferral_resolved': {
        const patchId = str(p, 'patch_id');
        s.decisions.push({
          ts: e.ts,
          actor: e.actor,
          by: e.actor === 'judge' ? 'judge' : 'human',
          decision: str(p, 'decision') ?? '?',
          rationale: str(p, 'rationale') ?? '',
          ...(patchId ? { patchId } : {}),
          ...(client ? { client } : {}),
        });
        s.status = str(p, 'new_status') ?? s.status;
        const verb = { approve: 'approved', reject: 'rejected', modify: 'sent back' }[str(p, 'decision') ?? ''] ?? 'decided';
        if (latest && latest.outcome === 'deferred') latest.outcome = `${verb} by ${e.actor}`;
        continue;
      }
      case 'task.deferral_expired':
        s.status = str(p, 'new_status') ?? s.status;
        s.tier = num(p, 'new_tier') ?? s.tier;
        if (latest && latest.outcome === 'deferred') latest.outcome = 'deferral expired';
        continue;
      case 'task.completed':
        s.commit = str(p, 'commit_hash') ?? s.commit;
        s.doneAt = e.ts;
        continue;
      case 'patch.queued': {
        patches.set(e.entity_id, {
          patchId: e.entity_id,
          createdBy: str(p, 'created_by') ?? e.actor,
          createdAt: e.ts,
          status: 'queued',
          files: [],
          gates: [],
        });
        attempt?.patches.push(e.entity_id);
        continue;
      }
      case 'patch.gates': {
        const patch = patches.get(e.entity_id);
        if (patch) patch.gates = gatesOf(p);
        continue;
      }
      case 'patch.promoted': {
        const patch = patches.get(e.entity_id);
        if (patch) {
          patch.status = 'promoted';
          patch.commit = str(p, 'commit_hash');
          delete patch.reason;
        }
        continue;
      }
      case 'patch.discarded':
      case 'patch.applied':
      case 'patch.verified': {
        const patch = patches.get(e.entity_id);
        if (patch) {
          patch.status = e.event_type.slice('patch.'.length);
          const reason = str(p, 'reason');
          if (reason) patch.reason = reason;
        }
        continue;
      }
      case 'patch.waiting': {
        const patch = patches.get(e.entity_id);
        const reason = str(p, 'reason');
        if (patch && reason) patch.reason = reason;
        continue;
      }
    }
    if (e.event_type === 'agent.started' && str(p, 'task_id') === taskId) {
      const file = str(p, 'transcript');
      if (file) s.transcripts.push({ ts: e.ts, agent: e.actor, phase: str(p, 'phase') ?? '', path: file });
    }
    if (e.entity_type !== 'task') {
      // Agents' events (their invocations) may carry what they cost.
      const c = num(p, 'cost_usd') ?? num(p, 'costUsd');
      if (c !== undefined) cost = (cost ?? 0) + c;
      continue;
    }
    // A status transition (`task.<status>`).
    const to = str(p, 'new_status');
    if (to === undefined) continue;
    s.status = to;
    const tier = num(p, 'risk_tier');
    if (tier !== undefined) s.tier = tier;
    const reason = str(p, 'reason');
    if (to === 'claimed') {
      endAttempt(e.ts, 'superseded');
      attempt = { owner: str(p, 'claimed_by') ?? e.actor, claimedAt: e.ts, outcome: 'in progress', patches: [], reflections: [] };
      latest = attempt;
      s.attempts.push(attempt);
      firstClaim ??= e.ts;
    } else if (to === 'done') {
      if (attempt) endAttempt(e.ts, 'promoted');
      else if (latest) {
        // Promoted after a decision (or a late promotion): the attempt that made the patch landed.
        latest.outcome = 'promoted';
        latest.endedAt = e.ts;
      }
    } else if (to === 'deferred') {
      const patch = patches.get(str(p, 'patch_id') ?? '');
      if (patch && reason) patch.reason = reason;
      endAttempt(e.ts, 'deferred', reason);
    } else if (to === 'pending') endAttempt(e.ts, 'released', reason);
    else if (to === 'blocked' || to === 'dropped') endAttempt(e.ts, to, reason);
  }
  if (story === undefined) return undefined;
  story.patches.push(...patches.values());
  const last = story.events.at(-1)?.ts;
  const end = story.doneAt ?? last;
  if (firstClaim !== undefined && end !== undefined) story.elapsedMs = Math.max(0, Date.parse(end) - Date.parse(firstClaim));
  if (cost !== undefined) story.costUsd = cost;
  return story;
}

interface EventRow {
  event_id: string;
  ts: string;
  run_id: string;
  entity_type: string;
  entity_id: string;
  event_type: string;
  actor: string;
  payload: string;
}

/** Reads the events that may concern a task (a superset; the fold sorts them out) and tells its story. */
export function readTaskStory(db: SqlReader, taskId: string): TaskStory | undefined {
  const rows = db.all<EventRow>(
    `SELECT event_id, ts, run_id, entity_type, entity_id, event_type, actor, payload FROM events
     WHERE (entity_type = 'task' AND entity_id = ?1)
        OR (entity_type = 'patch' AND entity_id IN (SELECT patch_id FROM patch_view WHERE task_id = ?1))
        OR (entity_type <> 'task' AND instr(payload, ?2) > 0)
     ORDER BY event_id`,
    [taskId, JSON.stringify(taskId)],
  );
  const events = rows.flatMap((r): StoredEvent[] => {
    try {
      return [{ ...r, payload: JSON.parse(r.payload) as Record<string, unknown> }];
    } catch {
      return [];
    }
  });
  return buildTaskStory(taskId, events);
}

/**
 * The story with the files its landing commit changed, read through `read` (git lives at the
 * edge: the CLI and VS Code pass src/git/commitFiles.ts). A commit git does not know leaves
 * the story as it is.
 */
export async function withCommitFiles(story: TaskStory, read: (hash: string) => Promise<readonly CommitFile[] | null>): Promise<TaskStory> {
  if (story.commit === undefined) return story;
  const files = await read(story.commit);
  return files === null ? story : { ...story, commitFiles: [...files] };
}

/** Where the rendered story's links point (VS Code: command links); none gives plain text. */
export interface StoryLinks {
  patch?(patchId: string): string | undefined;
  /** The commit's diff. */
  commit?(hash: string): string | undefined;
  /** A file as it is at a commit. */
  file?(path: string, hash: string): string | undefined;
  task?(taskId: string): string | undefined;
  /** A transcript, by its path relative to `.ralph/`. */
  transcript?(path: string): string | undefined;
}

const time = (ts: string): string => ts.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
const link = (text: string, url: string | undefined): string => (url ? `[${text}](${url})` : text);
const mdCell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

const GATE_MARK: Record<string, string> = { passed: '✓', failed: '✗', skipped: '–' };

/** The story as markdown: a header, how it ended, each attempt, the decisions, every event. */
export function renderTaskStory(s: TaskStory, links: StoryLinks = {}): string {
  const out: string[] = [];
  out.push(`# ${s.taskId}: ${s.title || '(untitled)'}`, '');
  const facts = [
    `**${s.status}**`,
    `wave ${s.wave}`,
    `effort ${s.effort}`,
    ...(s.tier !== undefined ? [`tier ${s.tier}`] : []),
    `source ${s.source}`,
  ];
  out.push(facts.join(' · '));
  const origin = [`created ${time(s.createdAt)} by ${s.createdBy}`];
  if (s.proposal) origin.push(`from proposal ${s.proposal}`);
  if (s.confidence !== undefined) origin.push(`confidence ${s.confidence}`);
  if (s.parentTask) origin.push(`part of ${link(s.parentTask, links.task?.(s.parentTask))}`);
  out.push(`${origin.join(', ')}${s.rationale ? ` — ${oneLine(s.rationale, 200)}` : ''}`, '');

  const spent = [
    ...(s.elapsedMs !== undefined ? [`${formatDuration(s.elapsedMs)} from the first claim`] : []),
    ...(s.costUsd !== undefined ? [`$${s.costUsd.toFixed(4)} spent`] : []),
  ];
  if (s.commit) {
    const promoted = s.patches.find((p) => p.commit === s.commit);
    out.push(
      `Landed as commit ${link(s.commit.slice(0, 8), links.commit?.(s.commit))}${promoted ? ` (patch ${link(promoted.patchId, links.patch?.(promoted.patchId))})` : ''} at ${time(s.doneAt ?? '')}${spent.length ? `; ${spent.join(', ')}` : ''}.`,
      '',
    );
    const commit = s.commit;
    if (s.commitFiles !== undefined) {
      out.push(`Files changed in commit ${link(commit, links.commit?.(commit))}:`, '');
      for (const f of s.commitFiles) {
        const shown = link(f.path, f.status === 'deleted' ? undefined : links.file?.(f.path, commit));
        out.push(`- ${f.status} ${f.oldPath !== undefined ? `${f.oldPath} → ` : ''}${shown}`);
      }
      if (s.commitFiles.length === 0) out.push('- (no file)');
      out.push('');
    }
  } else if (spent.length) out.push(`${spent.join(', ')}.`, '');

  if (s.attempts.length) {
    out.push('## Attempts', '');
    s.attempts.forEach((a, i) => {
      const ended = a.endedAt ? ` → ${a.outcome} ${time(a.endedAt)}` : ` (${a.outcome})`;
      out.push(`${i + 1}. **${a.owner}**, claimed ${time(a.claimedAt)}${ended}${a.reason ? `: ${oneLine(a.reason)}` : ''}`);
      for (const r of a.reflections) out.push(`   - ${r.gate} failed (${r.klass}, ${r.decision}): ${oneLine(r.lesson)}`);
      for (const id of a.patches) {
        const p = s.patches.find((x) => x.patchId === id);
        if (!p) continue;
        const gates = p.gates.map((g) => `${g.gate} ${GATE_MARK[g.status] ?? g.status}`).join(' ');
        const bits = [
          `patch ${link(p.patchId, links.patch?.(p.patchId))}: ${p.status}`,
          ...(p.tier !== undefined ? [`tier ${p.tier}${p.files.length ? ` (${p.files.join(', ')})` : ''}`] : []),
          ...(gates ? [`gates ${gates}`] : []),
          ...(p.commit ? [`commit ${link(p.commit.slice(0, 8), links.commit?.(p.commit))}`] : []),
          ...(p.reason ? [oneLine(p.reason)] : []),
        ];
        out.push(`   - ${bits.join('; ')}`);
      }
    });
    out.push('');
  }

  if (s.decisions.length) {
    out.push('## Decisions', '');
    for (const d of s.decisions)
      out.push(
        `- ${time(d.ts)} **${d.actor}**${d.client ? ` (via ${d.client})` : ''} ${d.decision}${d.rationale ? `: ${oneLine(d.rationale, 300)}` : ''}`,
      );
    out.push('');
  }

  if (s.transcripts.length) {
    out.push('## Transcripts', '');
    for (const t of s.transcripts) out.push(`- ${time(t.ts)} ${t.agent} ${t.phase}: ${link(t.path, links.transcript?.(t.path))}`);
    out.push('');
  }

  out.push('## Events', '', '| time | actor | event | detail |', '|------|-------|-------|--------|');
  for (const e of s.events)
    out.push(`| ${time(e.ts)} | ${mdCell(e.actor)}${e.client ? ` (${mdCell(e.client)})` : ''} | ${e.type} | ${mdCell(e.detail)} |`);
  out.push('');
  return out.join('\n');
}
