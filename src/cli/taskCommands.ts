// The task commands of `ralph`: init (import BACKLOG.md), emit-event, transition-task, and
// picking or claiming the next ready task, with the reference's arguments and output.
import type { IdKind } from '../domain/ids';
import { opt } from './args';
import type { CommandSpec } from './commandSpec';
import { effortsOf, J, json, need, noMore, parsePayload } from './commandSpec';
import { loadControl } from './lazy';

export const TASK_COMMANDS: readonly CommandSpec[] = [
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
];
