// The inbox: observers (a second window, a CLI beside a running loop) cannot write the
// store, so they drop command files into `.ralph/inbox/`; the writer drains them in name
// order, validates each with zod, runs it, and moves it to inbox/processed/ or
// inbox/failed/ (with `<name>.error.txt` and an `inbox.failed` event).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { domainEvent, formatZodIssues } from '../domain/events';
import { proposalSchemas } from '../domain/proposals';
import { idProblem, idSchema, quoteId } from '../domain/ids';
import { writeFileAtomicSync } from '../shared/fs';
import { ralphPaths, withClient, type ControlContext } from './context';
import { decideAndAppend, emitEvent, transitionTask } from './tasks';
import { discardPatch } from './patches';
import { resolveDeferred } from './deferred';
import { getTask } from './views';
import { reprioritizeTask } from './reprioritize';
import { proposeTask } from './proposeTask';
import { InvalidStateError } from '../domain/errors';

function buildSchema() {
  const actor = z.string().min(1);
  const payload = z.record(z.string(), z.unknown()).optional();

  const commands = z.discriminatedUnion('command', [
    z.object({ command: z.literal('transition-task'), task_id: idSchema('task'), status: z.string().min(1), actor, payload }),
    z.object({
      command: z.literal('resolve-deferred'),
      task_id: idSchema('task'),
      decision: z.enum(['approve', 'reject', 'modify']),
      actor,
      rationale: z.string().min(1),
    }),
    z
      .object({
        command: z.literal('emit-event'),
        entity_type: z.string().min(1),
        entity_id: z.string().min(1),
        event_type: z.string().min(1),
        actor,
        payload,
      })
      .superRefine((c, ctx) => {
        const kind = c.entity_type === 'task' || c.entity_type === 'patch' ? c.entity_type : null;
        const problem = kind === null ? null : idProblem(c.entity_id, kind);
        if (problem !== null)
          ctx.addIssue({ code: 'custom', path: ['entity_id'], message: `invalid ${kind} id ${quoteId(c.entity_id)}: ${problem}` });
      }),
    z.object({ command: z.literal('discard-patch'), patch_id: idSchema('patch'), reason: z.string().min(1), actor: actor.optional() }),
    z.object({ command: z.literal('add-task'), task: proposalSchemas().proposedTask, actor }),
    z.object({
      command: z.literal('reprioritize-task'),
      task_id: idSchema('task'),
      new_wave: z.number().int().min(0),
      actor,
      rationale: z.string().optional(),
    }),
    // A task asked for through a chat: a new_task proposal decided by the policy.
    z.object({
      command: z.literal('propose-task'),
      proposal_id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/),
      task: proposalSchemas().proposedTask.extend({ id: proposalSchemas().proposedTask.shape.id.optional() }),
      confidence: z.number().min(0).max(1),
      rationale: z.string(),
      actor,
    }),
    // Commands for the host (the loop), not the control plane: handed to `onHostCommand`.
    z.object({ command: z.enum(['stop', 'pause', 'resume']), actor, reason: z.string().optional() }),
  ]);
  // Who relayed the command (an MCP client), stamped into the events it appends.
  const client = z.object({ name: z.string().min(1).max(200), version: z.string().max(100).optional() });
  return z.intersection(commands, z.object({ client: client.optional() }));
}

type InboxSchema = ReturnType<typeof buildSchema>;
let schema: InboxSchema | undefined;

/** The inbox command file schema (built on first use). */
export function inboxCommandSchema(): InboxSchema {
  return (schema ??= buildSchema());
}

export type InboxCommand = z.infer<InboxSchema>;
export type HostCommand = Extract<InboxCommand, { command: 'stop' | 'pause' | 'resume' }>;

/** Writes a command file atomically; returns its path. Validates before writing. */
export function submitToInbox(ralphDir: string, cmd: InboxCommand, now: Date = new Date()): string {
  const parsed = inboxCommandSchema().parse(cmd);
  const dir = ralphPaths(ralphDir).inbox;
  fs.mkdirSync(dir, { recursive: true });
  const name = `cmd_${now.toISOString().replace(/[-:.]/g, '')}_${process.pid}_${randomBytes(3).toString('hex')}.json`;
  // Durable before the caller reports it queued: a power loss must not take it back.
  writeFileAtomicSync(path.join(dir, name), `${JSON.stringify({ ...parsed, submitted_at: now.toISOString() }, null, 2)}\n`);
  return path.join(dir, name);
}

export interface InboxResult {
  readonly file: string;
  readonly ok: boolean;
  readonly command?: string;
  readonly error?: string;
}

async function runCommand(
  outer: ControlContext,
  cmd: InboxCommand,
  onHostCommand?: (c: HostCommand) => void | Promise<void>,
): Promise<void> {
  const ctx = withClient(outer, cmd.client);
  switch (cmd.command) {
    case 'transition-task':
      await transitionTask(ctx, {
        taskId: cmd.task_id,
        status: cmd.status,
        actor: cmd.actor,
        ...(cmd.payload ? { payload: cmd.payload } : {}),
      });
      return;
    case 'resolve-deferred':
      await resolveDeferred(ctx, { taskId: cmd.task_id, decision: cmd.decision, actor: cmd.actor, rationale: cmd.rationale });
      return;
    case 'emit-event':
      await emitEvent(ctx, {
        entityType: cmd.entity_type,
        entityId: cmd.entity_id,
        eventType: cmd.event_type,
        actor: cmd.actor,
        ...(cmd.payload ? { payload: cmd.payload } : {}),
      });
      return;
    case 'discard-patch':
      await discardPatch(ctx, { patchId: cmd.patch_id, reason: cmd.reason, ...(cmd.actor ? { actor: cmd.actor } : {}) });
      return;
    case 'add-task':
      await decideAndAppend(ctx, (db) => {
        if (getTask(db, cmd.task.id)) throw new InvalidStateError(cmd.task.id, 'exists', `task ${cmd.task.id} already exists`);
        return { events: [domainEvent('task.created', cmd.task.id, cmd.actor, { ...cmd.task, provenance: 'spec' })], result: undefined };
      });
      return;
    case 'reprioritize-task':
      await reprioritizeTask(ctx, {
        taskId: cmd.task_id,
        newWave: cmd.new_wave,
        actor: cmd.actor,
        ...(cmd.rationale ? { rationale: cmd.rationale } : {}),
      });
      return;
    case 'propose-task':
      await proposeTask(ctx, {
        proposalId: cmd.proposal_id,
        task: cmd.task,
        confidence: cmd.confidence,
        rationale: cmd.rationale,
        actor: cmd.actor,
      });
      return;
    default:
      if (!onHostCommand) throw new Error(`no host is listening for '${cmd.command}'`);
      // The request is a fact of its own (who asked the loop to stop, through what).
      await ctx.store.append([
        {
          entity_type: 'run',
          entity_id: 'loop',
          event_type: `loop.${cmd.command}_requested`,
          actor: cmd.actor,
          payload: {
            ...(cmd.reason !== undefined ? { reason: cmd.reason } : {}),
            ...(cmd.client ? { client: cmd.client.name, ...(cmd.client.version ? { client_version: cmd.client.version } : {}) } : {}),
          },
        },
      ]);
      await onHostCommand(cmd);
  }
}

function moveWithError(src: string, dir: string, name: string, error?: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.renameSync(src, path.join(dir, name));
  if (error !== undefined) fs.writeFileSync(path.join(dir, `${name.replace(/\.json$/, '')}.error.txt`), `${error}\n`);
}

/** The writer's side: runs every waiting command file in name order. */
export async function drainInbox(
  ctx: ControlContext,
  opts: { onHostCommand?: (c: HostCommand) => void | Promise<void> } = {},
): Promise<InboxResult[]> {
  const dir = ralphPaths(ctx.ralphDir).inbox;
  if (!fs.existsSync(dir)) return [];
  const results: InboxResult[] = [];
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.startsWith('.'))
    .sort();
  for (const file of files) {
    const full = path.join(dir, file);
    let error: string | undefined;
    let command: string | undefined;
    try {
      const json: unknown = JSON.parse(fs.readFileSync(full, 'utf8'));
      const parsed = inboxCommandSchema().safeParse(json);
      if (!parsed.success) throw new Error(`inbox/${file}: ${formatZodIssues(parsed.error)}`);
      command = parsed.data.command;
      await runCommand(ctx, parsed.data, opts.onHostCommand);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    if (error === undefined) {
      moveWithError(full, path.join(dir, 'processed'), file);
      results.push({ file, ok: true, ...(command ? { command } : {}) });
    } else {
      await ctx.store.append([
        { entity_type: 'inbox', entity_id: file, event_type: 'inbox.failed', actor: 'control_plane', payload: { file, error } },
      ]);
      moveWithError(full, path.join(dir, 'failed'), file, error);
      results.push({ file, ok: false, error, ...(command ? { command } : {}) });
    }
  }
  return results;
}
