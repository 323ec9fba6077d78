// The ralphctl-compatible commands of `ralph`: arguments and output text as the reference
// prints them (REFERENCE.md), plus `--json` where a program reads the answer.
import * as path from 'node:path';
import type { ControlContext } from '../control/context';
import type * as ControlModule from '../control/index';
import type { InboxCommand } from '../control/inbox';
import type { StoredEvent } from '../store/types';
import type { IdKind } from '../domain/ids';
import { opt, UsageError, type ParsedArgs } from './args';
import { loadConfigVerdict, loadControl, loadProjectConfig, loadSafetyStatus, loadStatusPath } from './lazy';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** How a command needs the store: as the writer, read-only, or writer when free. */
export type StoreNeed = 'writer' | 'observer' | 'prefer-writer';

export interface CommandSpec {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly store: StoreNeed;
  /** Fewest and most positional arguments (checked before the store is opened). */
  readonly arity: readonly [number, number];
  readonly values?: readonly string[];
  readonly switches?: readonly string[];
  /**
   * The ids among the arguments (kind, value, how the usage names it): checked against the
   * id grammar before the store opens, for the command and its inbox file alike.
   */
  ids?(a: ParsedArgs): readonly (readonly [IdKind, string | undefined, string])[];
  /** The command classifies risk: the CLI loads the config module for the project's risk patterns. */
  readonly riskPatterns?: true;
  /** Beside a running loop, the command goes to the loop's inbox as this. */
  toInbox?(a: ParsedArgs): Promise<InboxCommand>;
  /** What the command prints once the loop applied its inbox copy: the same as `run` prints. */
  formatApplied?(events: readonly StoredEvent[], a: ParsedArgs, ctx: ControlContext): string | Promise<string>;
  run(ctx: ControlContext, a: ParsedArgs, io: CliIo): Promise<number>;
}

/** Python's json.dumps layout for a flat object, as the reference prints. */
export function pyJson(o: Readonly<Record<string, unknown>>): string {
  return `{${Object.entries(o)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
}

function need(a: ParsedArgs, n: number, usage: string): string[] {
  if (a.positionals.length < n) throw new UsageError(`missing arguments; usage: ralph ${usage}`);
  return a.positionals;
}

function noMore(a: ParsedArgs, n: number, usage: string): void {
  if (a.positionals.length > n) throw new UsageError(`too many arguments; usage: ralph ${usage}`);
}

function parsePayload(s: string | undefined): Record<string, unknown> | undefined {
  if (s === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch (e) {
    throw new UsageError(`payload_json is not valid JSON: ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError('payload_json must be a JSON object');
  return v as Record<string, unknown>;
}

const json = (a: ParsedArgs): boolean => a.switches.has('json');

/** `--efforts S,M` (repeatable) for a worker's pick; absent = the default (S). */
function effortsOf(a: ParsedArgs, parseEfforts: (typeof ControlModule)['parseEfforts']): string[] | undefined {
  const given = a.options.get('efforts');
  return given === undefined ? undefined : parseEfforts(given.join(','));
}
const J = ['json'];

export const CONTROL_COMMANDS: readonly CommandSpec[] = [
  {
    name: 'init',
    arity: [0, 0],
    usage: 'init',
    summary: 'write a skeleton BACKLOG.md if none, import its rows, render the views',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { formatMigrated, importBacklog } = await loadControl();
      noMore(a, 0, this.usage);
      const r = await importBacklog(ctx);
      for (const n of r.notes) io.err(`${n}\n`);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `${formatMigrated(r.migrated)}\n`);
      return 0;
    },
  },
  {
    name: 'emit-event',
    arity: [4, 5],
    usage: 'emit-event <entity_type> <entity_id> <event_type> <actor> [payload_json]',
    summary: 'append a free-form event; prints its id',
    store: 'writer',
    ids: (a) => (['task', 'patch'].includes(a.positionals[0] ?? '') ? [[a.positionals[0] as IdKind, a.positionals[1], '<entity_id>']] : []),
    async toInbox(a) {
      const [entity_type, entity_id, event_type, actor, p] = need(a, 4, this.usage) as [string, string, string, string, string | undefined];
      const payload = parsePayload(p);
      return { command: 'emit-event', entity_type, entity_id, event_type, actor, ...(payload ? { payload } : {}) };
    },
    formatApplied: (events) => `${events[0]?.event_id ?? ''}\n`,
    async run(ctx, a, io) {
      const { emitEvent } = await loadControl();
      const [entityType, entityId, eventType, actor, p] = need(a, 4, this.usage) as [string, string, string, string, string | undefined];
      noMore(a, 5, this.usage);
      const payload = parsePayload(p);
      io.out(`${await emitEvent(ctx, { entityType, entityId, eventType, actor, ...(payload ? { payload } : {}) })}\n`);
      return 0;
    },
  },
  {
    name: 'transition-task',
    arity: [3, 4],
    usage: 'transition-task <id> <status> <actor> [payload_json]',
    summary: 'change a task status (done needs a promoted patch)',
    store: 'writer',
    ids: (a) => [['task', a.positionals[0], '<id>']],
    switches: J,
    async toInbox(a) {
      const [task_id, status, actor, p] = need(a, 3, this.usage) as [string, string, string, string | undefined];
      const payload = parsePayload(p);
      return { command: 'transition-task', task_id, status, actor, ...(payload ? { payload } : {}) };
    },
    formatApplied(events, a) {
      const e = events.find((x) => x.entity_type === 'task' && typeof x.payload['new_status'] === 'string');
      const r = {
        taskId: e?.entity_id ?? a.positionals[0] ?? '',
        oldStatus: (e?.payload['old_status'] as string | null | undefined) ?? null,
        newStatus: (e?.payload['new_status'] as string | undefined) ?? a.positionals[1] ?? '',
        eventId: e?.event_id ?? '',
      };
      return json(a) ? `${JSON.stringify(r)}\n` : `${r.taskId}: ${r.oldStatus ?? 'new'} -> ${r.newStatus}\n`;
    },
    async run(ctx, a, io) {
      const { transitionTask } = await loadControl();
      const [taskId, status, actor, p] = need(a, 3, this.usage) as [string, string, string, string | undefined];
      noMore(a, 4, this.usage);
      const payload = parsePayload(p);
      const r = await transitionTask(ctx, { taskId, status, actor, ...(payload ? { payload } : {}) });
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `${r.taskId}: ${r.oldStatus ?? 'new'} -> ${r.newStatus}\n`);
      return 0;
    },
  },
  {
    name: 'pick-ready-task',
    arity: [1, 1],
    usage: 'pick-ready-task <worker|primary> [--exclude id] [--efforts S,M]',
    summary: 'print the next ready task id (or NONE) without claiming it',
    store: 'observer',
    ids: (a) => (a.options.get('exclude') ?? []).map((v) => ['task', v, '--exclude'] as const),
    values: ['exclude', 'efforts'],
    switches: J,
    async run(ctx, a, io) {
      const { parseRole, pickReadyTask, parseEfforts } = await loadControl();
      const [role] = need(a, 1, this.usage) as [string];
      noMore(a, 1, this.usage);
      const t = pickReadyTask(ctx, parseRole(role), a.options.get('exclude') ?? [], effortsOf(a, parseEfforts));
      io.out(json(a) ? `${JSON.stringify(t ?? null)}\n` : `${t?.task_id ?? 'NONE'}\n`);
      return 0;
    },
  },
  {
    name: 'claim-ready-task',
    arity: [1, 1],
    usage: 'claim-ready-task <worker|primary> [--owner name] [--exclude id] [--efforts S,M]',
    summary: 'pick and claim the next ready task atomically; prints its id or NONE',
    store: 'writer',
    ids: (a) => (a.options.get('exclude') ?? []).map((v) => ['task', v, '--exclude'] as const),
    values: ['exclude', 'owner', 'efforts'],
    switches: J,
    async toInbox(a) {
      const { parseRole, parseEfforts } = await loadControl();
      const [roleArg] = need(a, 1, this.usage) as [string];
      const role = parseRole(roleArg);
      const owner = opt(a, 'owner') ?? role;
      const efforts = effortsOf(a, parseEfforts);
      return {
        command: 'claim-ready-task',
        role,
        owner,
        exclude: a.options.get('exclude') ?? [],
        ...(efforts ? { efforts } : {}),
        actor: owner,
      };
    },
    async formatApplied(events, a, ctx) {
      const { getTask } = await loadControl();
      const id = events.find((e) => e.event_type === 'task.claimed')?.entity_id;
      const t = id === undefined ? undefined : getTask(ctx.store, id);
      return json(a) ? `${JSON.stringify(t ?? null)}\n` : `${id ?? 'NONE'}\n`;
    },
    async run(ctx, a, io) {
      const { claimReadyTask, parseRole, parseEfforts } = await loadControl();
      const [roleArg] = need(a, 1, this.usage) as [string];
      noMore(a, 1, this.usage);
      const role = parseRole(roleArg);
      const t = await claimReadyTask(ctx, role, opt(a, 'owner') ?? role, a.options.get('exclude') ?? [], effortsOf(a, parseEfforts));
      io.out(json(a) ? `${JSON.stringify(t ?? null)}\n` : `${t?.task_id ?? 'NONE'}\n`);
      return 0;
    },
  },
  {
    name: 'queue-patch',
    arity: [3, 3],
    usage: 'queue-patch <task> <path> <created_by>',
    summary: 'queue a patch file for a task (task -> proposed); prints the patch id',
    store: 'writer',
    ids: (a) => [['task', a.positionals[0], '<task>']],
    async run(ctx, a, io) {
      const { queuePatch } = await loadControl();
      const [taskId, p, createdBy] = need(a, 3, this.usage) as [string, string, string];
      noMore(a, 3, this.usage);
      io.out(`${await queuePatch(ctx, { taskId, patchPath: p, createdBy })}\n`);
      return 0;
    },
  },
  {
    name: 'promote-patch',
    arity: [2, 2],
    usage: 'promote-patch <patch_id> <commit_hash>',
    summary: 'patch -> promoted, task -> done (the commit must be on the target branch)',
    store: 'writer',
    ids: (a) => [['patch', a.positionals[0], '<patch_id>']],
    switches: J,
    async run(ctx, a, io) {
      const { formatPromoted, promotePatch } = await loadControl();
      const [patchId, commitHash] = need(a, 2, this.usage) as [string, string];
      noMore(a, 2, this.usage);
      const r = await promotePatch(ctx, { patchId, commitHash });
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `${formatPromoted(r)}\n`);
      return 0;
    },
  },
  {
    name: 'discard-patch',
    arity: [2, Infinity],
    usage: 'discard-patch <patch_id> <reason...>',
    summary: 'patch -> discarded, task -> pending',
    store: 'writer',
    ids: (a) => [['patch', a.positionals[0], '<patch_id>']],
    async toInbox(a) {
      const [patch_id, ...reason] = need(a, 2, this.usage) as [string, ...string[]];
      return { command: 'discard-patch', patch_id, reason: reason.join(' ') };
    },
    formatApplied(events, a) {
      const e = events.find((x) => x.event_type === 'patch.discarded');
      return `DISCARDED ${e?.entity_id ?? a.positionals[0] ?? ''} → ${String(e?.payload['task_id'] ?? '?')} pending\n`;
    },
    async run(ctx, a, io) {
      const { discardPatch } = await loadControl();
      const [patchId, ...reason] = need(a, 2, this.usage) as [string, ...string[]];
      const r = await discardPatch(ctx, { patchId, reason: reason.join(' ') });
      io.out(`DISCARDED ${r.patchId} → ${r.taskId} pending\n`);
      return 0;
    },
  },
  {
    name: 'classify-risk',
    riskPatterns: true,
    arity: [1, 1],
    usage: 'classify-risk <task> [--patch patch_id]',
    summary: "print the task's risk tier 0..3, from the files its patch touches",
    store: 'prefer-writer',
    ids: (a) => [
      ['task', a.positionals[0], '<task>'],
      ['patch', opt(a, 'patch'), '--patch'],
    ],
    values: ['patch'],
    switches: J,
    async run(ctx, a, io) {
      const { classifyTaskRisk } = await loadControl();
      const [taskId] = need(a, 1, this.usage) as [string];
      noMore(a, 1, this.usage);
      const patchId = opt(a, 'patch');
      const r = await classifyTaskRisk(ctx, taskId, patchId ? { patchId } : {});
      io.out(
        json(a) ? `${JSON.stringify({ task_id: r.taskId, risk_tier: r.tier, patch_id: r.patchId, files: r.files })}\n` : `${r.tier}\n`,
      );
      return 0;
    },
  },
  {
    name: 'policy-check',
    riskPatterns: true,
    arity: [1, 2],
    usage: 'policy-check <task> [patch_id] [--apply]',
    summary: 'print {"decision","reason","risk_tier"}; --apply defers / blocks the task as decided',
    store: 'prefer-writer',
    ids: (a) => [
      ['task', a.positionals[0], '<task>'],
      ['patch', a.positionals[1], '[patch_id]'],
    ],
    switches: ['apply', 'json'],
    async run(ctx, a, io) {
      const { applyPolicy, policyCheck } = await loadControl();
      const [taskId, patchId] = need(a, 1, this.usage) as [string, string | undefined];
      noMore(a, 2, this.usage);
      const v = a.switches.has('apply') ? await applyPolicy(ctx, taskId, patchId) : await policyCheck(ctx, taskId, patchId);
      io.out(`${json(a) ? JSON.stringify(v) : pyJson({ decision: v.decision, reason: v.reason, risk_tier: v.risk_tier })}\n`);
      return 0;
    },
  },
  {
    name: 'get-deferred-queue',
    arity: [0, 0],
    usage: 'get-deferred-queue [--format prompt|json]',
    summary: 'list deferred tasks for the judge',
    store: 'observer',
    values: ['format'],
    async run(ctx, a, io) {
      const { getDeferredQueue } = await loadControl();
      noMore(a, 0, this.usage);
      const f = opt(a, 'format') ?? 'prompt';
      if (f !== 'prompt' && f !== 'json') throw new UsageError(`--format must be prompt or json, not '${f}'`);
      io.out(getDeferredQueue(ctx, f));
      return 0;
    },
  },
  {
    name: 'should-review-deferred',
    arity: [0, 0],
    usage: 'should-review-deferred',
    summary: 'print true when >= 3 tasks are deferred or one has waited 10 commits',
    store: 'observer',
    switches: J,
    async run(ctx, a, io) {
      const { shouldReviewDeferred } = await loadControl();
      noMore(a, 0, this.usage);
      const r = shouldReviewDeferred(ctx);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `${r.review ? 'true' : 'false'}\n`);
      return 0;
    },
  },
  {
    name: 'resolve-deferred',
    arity: [4, Infinity],
    usage: 'resolve-deferred <task> <approve|reject|modify> <actor> <rationale...> [--commit hash]',
    summary: "the judge's verdict on a deferred task (approve promotes its patch, never a bare done)",
    store: 'writer',
    ids: (a) => [['task', a.positionals[0], '<task>']],
    values: ['commit'],
    switches: J,
    async toInbox(a) {
      const { parseDecision } = await loadControl();
      const [task_id, decision, actor, ...rationale] = need(a, 4, this.usage) as [string, string, string, ...string[]];
      return { command: 'resolve-deferred', task_id, decision: parseDecision(decision), actor, rationale: rationale.join(' ') };
    },
    formatApplied(events, a) {
      const e = events.find((x) => x.event_type === 'task.deferral_resolved');
      const p = e?.payload ?? {};
      const r = {
        taskId: e?.entity_id ?? a.positionals[0] ?? '',
        decision: String(p['decision'] ?? a.positionals[1] ?? ''),
        newStatus: String(p['new_status'] ?? ''),
        patchId: (p['patch_id'] as string | null | undefined) ?? null,
        promoted: events.some((x) => x.event_type === 'patch.promoted'),
      };
      const note =
        r.decision === 'approve' && !r.promoted && r.newStatus === 'proposed'
          ? ` (patch ${r.patchId ?? '?'} approved; done once promoted)`
          : '';
      return json(a) ? `${JSON.stringify(r)}\n` : `RESOLVED ${r.taskId} ${r.decision} → ${r.newStatus}${note}\n`;
    },
    async run(ctx, a, io) {
      const { parseDecision, resolveDeferred } = await loadControl();
      const [taskId, decision, actor, ...rationale] = need(a, 4, this.usage) as [string, string, string, ...string[]];
      const commitHash = opt(a, 'commit');
      const r = await resolveDeferred(ctx, {
        taskId,
        decision: parseDecision(decision),
        actor,
        rationale: rationale.join(' '),
        ...(commitHash ? { commitHash } : {}),
      });
      const note =
        r.decision === 'approve' && !r.promoted && r.newStatus === 'proposed' ? ` (patch ${r.patchId} approved; done once promoted)` : '';
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `RESOLVED ${r.taskId} ${r.decision} → ${r.newStatus}${note}\n`);
      return 0;
    },
  },
  {
    name: 'expire-stale-deferrals',
    arity: [0, 0],
    usage: 'expire-stale-deferrals',
    summary: 'deferred tasks older than 20 promoted commits -> pending, tier lowered by one',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { expireStaleDeferrals } = await loadControl();
      noMore(a, 0, this.usage);
      const ids = await expireStaleDeferrals(ctx);
      io.out(json(a) ? `${JSON.stringify({ expired: ids })}\n` : `Expired ${ids.length} stale deferrals\n`);
      return 0;
    },
  },
  {
    name: 'process-proposals',
    arity: [0, 0],
    usage: 'process-proposals',
    summary: 'accept, defer or reject proposals/prop_*.json',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { processProposals } = await loadControl();
      noMore(a, 0, this.usage);
      const r = await processProposals(ctx);
      for (const x of r.reports) if (x.outcome !== 'accepted') io.err(`${x.file}: ${x.outcome}: ${x.detail}\n`);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `${pyJson({ ...r.counts })}\n`);
      return 0;
    },
  },
  {
    name: 'get-deferred-proposals',
    arity: [0, 0],
    usage: 'get-deferred-proposals [--json]',
    summary: 'list proposals deferred to the judge',
    store: 'observer',
    switches: J,
    async run(ctx, a, io) {
      const { deferredProposals } = await loadControl();
      const list = deferredProposals(ctx);
      if (json(a)) io.out(`${JSON.stringify(list, null, 2)}\n`);
      else if (list.length === 0) io.out('No deferred proposals.\n');
      else for (const p of list) io.out(`${p.file}: ${p.proposal_type} (${p.reason})\n`);
      return 0;
    },
  },
  {
    name: 'resolve-proposal',
    arity: [4, Infinity],
    usage: 'resolve-proposal <file> <approve|reject> <actor> <rationale...>',
    summary: "the judge's verdict on a deferred proposal",
    store: 'writer',
    ids: (a) => [['proposal', a.positionals[0], '<file>']],
    switches: J,
    async run(ctx, a, io) {
      const { resolveProposal } = await loadControl();
      const [file, decision, actor, ...rationale] = a.positionals as [string, string, string, ...string[]];
      if (decision !== 'approve' && decision !== 'reject') throw new UsageError(`decision must be approve or reject, not '${decision}'`);
      const r = await resolveProposal(ctx, { file, decision, actor, rationale: rationale.join(' ') });
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `${r.file}: ${r.outcome}${r.detail ? ` (${r.detail})` : ''}\n`);
      return r.outcome === 'accepted' || decision === 'reject' ? 0 : 1;
    },
  },
  {
    name: 'render-state',
    arity: [0, 0],
    usage: 'render-state',
    summary: 'regenerate STATE.json from the event log',
    store: 'observer',
    async run(ctx, a) {
      const { renderState } = await loadControl();
      noMore(a, 0, this.usage);
      renderState(ctx);
      return 0;
    },
  },
  {
    name: 'render-backlog',
    arity: [0, 0],
    usage: 'render-backlog',
    summary: 'regenerate BACKLOG.md from the event log',
    store: 'observer',
    async run(ctx, a) {
      const { renderBacklogFile } = await loadControl();
      noMore(a, 0, this.usage);
      renderBacklogFile(ctx);
      return 0;
    },
  },
  {
    name: 'sync-backlog',
    arity: [0, 0],
    usage: 'sync-backlog',
    summary: 'import new BACKLOG.md rows; report done marks without a promoted patch',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { formatSync, syncBacklog } = await loadControl();
      noMore(a, 0, this.usage);
      const r = await syncBacklog(ctx);
      const f = formatSync(r);
      io.err(f.err);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : f.out);
      return 0;
    },
  },
  {
    name: 'status',
    arity: [0, 0],
    usage: 'status [--at <time|evt_id>] [--json]',
    summary: 'summary of phase, tasks, patches, events and deferrals (--at: as it was then)',
    store: 'observer',
    switches: J,
    values: ['at'],
    async run(ctx, a, io) {
      const { statusFacts, statusFactsAt, parseMoment, renderStatus } = await loadStatusPath();
      noMore(a, 0, this.usage);
      // A broken ralph.config.json is what `ralph start` would stop on: say so here too, in the
      // same file:line:col words (stderr, so the reference's status text stays as it was).
      // The verdict is cached per config text and build (configVerdict.ts): the schema is
      // most of what status would cost.
      const { configProblem } = await loadConfigVerdict();
      const { safetyFacts, safetyLines } = await loadSafetyStatus();
      const configError = (await configProblem(ctx.projectDir, loadProjectConfig)) ?? null;
      if (configError !== null) io.err(`ralph: warning: ${configError}\n`);
      const at = opt(a, 'at');
      const past = at === undefined ? undefined : await statusFactsAt(ctx, parseMoment(at));
      if (past !== undefined) io.err(`as of ${past.at} (${past.lastEventId === null ? 'no event yet' : `up to ${past.lastEventId}`})\n`);
      const f = past ?? statusFacts(ctx);
      if (json(a)) {
        io.out(
          `${JSON.stringify({ ...f, taskCounts: Object.fromEntries(f.taskCounts), patchCounts: Object.fromEntries(f.patchCounts), configError, safety: safetyFacts(ctx.store) })}\n`,
        );
      } else io.out(renderStatus(f) + (past === undefined ? safetyLines(safetyFacts(ctx.store)) : ''));
      return 0;
    },
  },
  {
    name: 'show',
    arity: [1, 1],
    usage: 'show <task> [--json]',
    summary: "a task's story: every event, attempt, gate, patch, verdict, the commit, time and cost",
    store: 'observer',
    switches: J,
    ids: (a) => [['task', a.positionals[0], '<task>']],
    async run(ctx, a, io) {
      const { readTaskStory, renderTaskStory } = await loadControl();
      const taskId = a.positionals[0] as string;
      const story = readTaskStory(ctx.store, taskId);
      if (story === undefined) {
        io.err(`ralph: no task '${taskId}' in the event log\n`);
        return 1;
      }
      io.out(json(a) ? `${JSON.stringify(story)}\n` : renderTaskStory(story));
      return 0;
    },
  },
  {
    name: 'rebuild',
    arity: [0, 0],
    usage: 'rebuild',
    summary: 'replay every event into fresh task_view and patch_view',
    store: 'writer',
    async run(ctx, a, io) {
      const { rebuildViews } = await loadControl();
      noMore(a, 0, this.usage);
      const n = await rebuildViews(ctx);
      io.out(`Rebuilt task_view and patch_view from ${n} events\n`);
      return 0;
    },
  },
  {
    name: 'release-claims',
    arity: [0, 0],
    usage: 'release-claims [--owner name] [--except id] [--reason text] [--actor name]',
    summary: 'return claimed tasks to pending, with an event each (repair)',
    store: 'writer',
    ids: (a) => (a.options.get('except') ?? []).map((v) => ['task', v, '--except'] as const),
    values: ['owner', 'except', 'reason', 'actor'],
    switches: J,
    async run(ctx, a, io) {
      const { releaseClaims } = await loadControl();
      const owner = opt(a, 'owner');
      const ids = await releaseClaims(ctx, {
        ...(owner ? { owner } : {}),
        except: a.options.get('except') ?? [],
        actor: opt(a, 'actor') ?? 'control_plane',
        reason: opt(a, 'reason') ?? 'released by release-claims',
      });
      io.out(
        json(a)
          ? `${JSON.stringify({ released: ids })}\n`
          : `Released ${ids.length} claimed tasks${ids.length ? `: ${ids.join(', ')}` : ''}\n`,
      );
      return 0;
    },
  },
  {
    name: 'drain-inbox',
    arity: [0, 0],
    usage: 'drain-inbox',
    summary: 'run the command files observers left in .ralph/inbox/',
    store: 'writer',
    switches: J,
    async run(ctx, a, io) {
      const { drainInbox } = await loadControl();
      noMore(a, 0, this.usage);
      const r = await drainInbox(ctx);
      for (const x of r) if (!x.ok) io.err(`${x.file}: ${x.error ?? 'failed'}\n`);
      io.out(json(a) ? `${JSON.stringify(r)}\n` : `Drained ${r.length} inbox commands (${r.filter((x) => !x.ok).length} failed)\n`);
      return r.some((x) => !x.ok) ? 1 : 0;
    },
  },
];

export function relativeToCwd(p: string): string {
  const r = path.relative(process.cwd(), p);
  return r.startsWith('..') ? p : r;
}
