// The review commands of `ralph`: the deferred queue (read, whether to review, resolve,
// expire) and the agents' proposals (process, read, resolve).
import { opt, UsageError } from './args';
import type { CommandSpec } from './commandSpec';
import { J, json, need, noMore, pyJson } from './commandSpec';
import { loadControl } from './lazy';

export const REVIEW_COMMANDS: readonly CommandSpec[] = [
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
];
