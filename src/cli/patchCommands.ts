// The patch commands of `ralph`: queue, promote and discard a patch, classify its risk and
// check it against the policy, with the reference's arguments and output.
import { opt } from './args';
import type { CommandSpec } from './commandSpec';
import { J, json, need, noMore, pyJson } from './commandSpec';
import { loadControl } from './lazy';

export const PATCH_COMMANDS: readonly CommandSpec[] = [
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
];
