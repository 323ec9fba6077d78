// The inbox: observers (a second window, a CLI beside a running loop) cannot write the
// store, so they drop command files into `.ralph/inbox/`; the writer drains them in name
// order, validates each with zod, runs it, and moves it to inbox/processed/ or
// inbox/failed/ (with `<name>.error.txt` and an `inbox.failed` event). Each command is
// applied exactly once: its id is recorded with its events (the store's command.applied
// marker, in the same journal record), so a writer killed before the move leaves a replay
// that the next drain recognises and only finishes moving.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomHex } from '../shared/randomHex';
import { z } from 'zod';
import { domainEvent, formatZodIssues } from '../domain/events';
import { proposalSchemas } from '../domain/proposals';
import { idProblem, idSchema, quoteId } from '../domain/ids';
import { onFile, writeFileAtomicSync } from '../shared/fs';
import { StoreFailedError } from '../store/errors';
import type { CommandStamp, EventStore, ExecuteOptions, NewEvent } from '../store/types';
import { DEFAULT_WORKER_EFFORTS } from '../domain/task';
import { CONTROL_ACTOR, ralphPaths, withClient, type ControlContext } from './context';
import { claimReadyTask, decideAndAppend, emitEvent, parseRole, transitionTask } from './tasks';
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
    z.object({
      command: z.literal('claim-ready-task'),
      role: z.enum(['worker', 'primary']),
      owner: z.string().min(1).optional(),
      exclude: z.array(z.string()).optional(),
      efforts: z.array(z.string().min(1)).optional(),
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

const COMMAND_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The id an inbox file's command is applied under: its `id` field, else its name without `.json`. */
export function inboxCommandId(file: string, json?: unknown): string {
  const id = (json as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' && COMMAND_ID.test(id) ? id : path.basename(file).replace(/\.json$/, '');
}

/** Writes a command file atomically; returns its path. Validates before writing. */
export function submitToInbox(ralphDir: string, cmd: InboxCommand, now: Date = new Date()): string {
  const parsed = inboxCommandSchema().parse(cmd);
  const dir = ralphPaths(ralphDir).inbox;
  onFile('mkdir', dir, () => fs.mkdirSync(dir, { recursive: true }));
  const id = `cmd_${now.toISOString().replace(/[-:.]/g, '')}_${process.pid}_${randomHex(3)}`;
  const name = `${id}.json`;
  // Durable before the caller reports it queued: a power loss must not take it back. The id
  // is applied exactly once, however often a writer dies while draining it.
  writeFileAtomicSync(path.join(dir, name), `${JSON.stringify({ id, ...parsed, submitted_at: now.toISOString() }, null, 2)}\n`);
  return path.join(dir, name);
}

export interface InboxResult {
  readonly file: string;
  /** The id the command was applied under (see inboxCommandId). */
  readonly id: string;
  readonly ok: boolean;
  readonly command?: string;
  readonly error?: string;
  /** Events the command appended (its `command.applied` marker last). */
  readonly eventIds?: readonly string[];
  /** True when an earlier writer had applied it and died before moving the file. */
  readonly replayed?: boolean;
}

/**
 * The store as one inbox command sees it: its one transaction carries the command's id,
 * so the id is recorded with its events and a replay is refused by the store.
 */
function commandScoped(ctx: ControlContext, stamp: CommandStamp): { ctx: ControlContext; used: () => boolean } {
  const store = ctx.store;
  let used = false;
  const execute: EventStore['execute'] = (decide, options) => {
    if (used) throw new Error(`inbox command ${stamp.id} (${stamp.name}) asked for a second transaction; an inbox command must be one`);
    used = true;
    return store.execute(decide, { ...options, command: stamp });
  };
  const scoped = new Proxy(store, {
    get(target, prop): unknown {
      if (prop === 'execute') return execute;
      if (prop === 'append')
        return async (events: readonly NewEvent[], options?: ExecuteOptions) =>
          (await execute(() => ({ events, result: undefined }), options)).events;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  // Copies the descriptors, not the values: riskPatterns is read on first use (openControl).
  const scopedCtx = Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(ctx), store: { value: scoped, enumerable: true } });
  return { ctx: scopedCtx as ControlContext, used: () => used };
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
    case 'claim-ready-task': {
      const role = parseRole(cmd.role);
      await claimReadyTask(ctx, role, cmd.owner ?? role, cmd.exclude ?? [], cmd.efforts ?? DEFAULT_WORKER_EFFORTS);
      return;
    }
    default:
      if (!onHostCommand) throw new Error(`no host is listening for '${cmd.command}'`);
      // The request is a fact of its own (who asked the loop to stop, through what), and it
      // is recorded before the host acts: a stop is honoured at most once, never again by a
      // later run that finds the same file.
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
  onFile('mkdir', dir, () => fs.mkdirSync(dir, { recursive: true }));
  onFile('rename', src, () => fs.renameSync(src, path.join(dir, name)));
  if (error !== undefined) writeFileAtomicSync(path.join(dir, `${name.replace(/\.json$/, '')}.error.txt`), `${error}\n`);
}

export interface DrainOptions {
  readonly onHostCommand?: (c: HostCommand) => void | Promise<void>;
  /** Only these file names (a CLI applying its own queued command). */
  readonly only?: readonly string[];
  /**
   * Called after a command's events are durable and before its file is moved: the window
   * in which a writer that dies leaves a replay behind (the fault-injection suite kills it
   * there).
   */
  readonly afterApply?: (result: InboxResult) => void | Promise<void>;
}

/** The writer's side: runs every waiting command file in name order, each exactly once. */
export async function drainInbox(ctx: ControlContext, opts: DrainOptions = {}): Promise<InboxResult[]> {
  const dir = ralphPaths(ctx.ralphDir).inbox;
  if (!fs.existsSync(dir)) return [];
  const results: InboxResult[] = [];
  const files = onFile('list', dir, () => fs.readdirSync(dir))
    .filter((f) => f.endsWith('.json') && !f.startsWith('.') && (opts.only === undefined || opts.only.includes(f)))
    .sort();
  for (const file of files) {
    const full = path.join(dir, file);
    let error: string | undefined;
    let command: string | undefined;
    let id = inboxCommandId(file);
    let actor = CONTROL_ACTOR;
    const before = ctx.store.get<{ m: string | null }>('SELECT max(event_id) AS m FROM events')?.m ?? '';
    try {
      let json: unknown;
      try {
        json = JSON.parse(onFile('read', full, () => fs.readFileSync(full, 'utf8')));
      } catch (e) {
        if (e instanceof SyntaxError) throw new Error(`inbox/${file}: not valid JSON (${e.message})`);
        throw e;
      }
      id = inboxCommandId(file, json);
      const prior = ctx.store.appliedCommand(id);
      if (prior) {
        // An earlier writer applied it and died before moving the file: finish the move only.
        const ok = prior.outcome === 'applied';
        const error = ok ? undefined : 'failed when first applied (see its inbox.failed event)';
        moveWithError(full, path.join(dir, ok ? 'processed' : 'failed'), file, error);
        results.push({
          file,
          id,
          ok,
          command: prior.command,
          eventIds: [...prior.eventIds, prior.markerId],
          replayed: true,
          ...(error ? { error } : {}),
        });
        continue;
      }
      const parsed = inboxCommandSchema().safeParse(json);
      if (!parsed.success) throw new Error(`inbox/${file}: ${formatZodIssues(parsed.error)}`);
      command = parsed.data.command;
      actor = parsed.data.actor ?? CONTROL_ACTOR;
      const scoped = commandScoped(ctx, { id, name: command, actor, source: `inbox/${file}` });
      await runCommand(scoped.ctx, parsed.data, opts.onHostCommand);
      if (!scoped.used()) await scoped.ctx.store.append([]); // a command that needed no transaction is still recorded once
    } catch (e) {
      if (e instanceof StoreFailedError) throw e; // nothing more can be recorded
      error = e instanceof Error ? e.message : String(e);
    }
    if (error !== undefined && !ctx.store.appliedCommand(id)) {
      await ctx.store.append(
        [{ entity_type: 'inbox', entity_id: file, event_type: 'inbox.failed', actor: 'control_plane', payload: { file, error } }],
        { command: { id, name: command ?? 'unknown', actor, source: `inbox/${file}`, outcome: 'failed' } },
      );
    }
    const eventIds = ctx.store.events({ afterId: before }).map((e) => e.event_id);
    const result: InboxResult = {
      file,
      id,
      ok: error === undefined,
      eventIds,
      ...(command ? { command } : {}),
      ...(error !== undefined ? { error } : {}),
    };
    await opts.afterApply?.(result);
    moveWithError(full, path.join(dir, error === undefined ? 'processed' : 'failed'), file, error);
    results.push(result);
  }
  return results;
}
