// The domain's events: one zod schema per event type, a typed discriminated union built
// from them, and the conversions to and from the store's rows. Known event types are
// validated whenever they are read; other types (run.*, lock.*, whatever emit-event
// appends) pass through untouched and no projection reacts to them.
import { z } from 'zod';
import type { NewEvent, StoredEvent } from './eventRows';
import { EFFORTS, TASK_STATUSES } from './model';
import { checkId } from './ids';
import { LOOP_EVENT_TYPES, loopSchemas } from './loopEvents';
import { buildReqSchemas, isReqRunEvent, REQ_EVENT_TYPES } from './reqEvents';

// Schemas are built on first use: constructing them costs CLI start-up time that
// commands which never validate an event should not pay.
function buildSchemas() {
  const taskStatus = z.enum(TASK_STATUSES);
  const tier = z.number().int().min(0).max(3);
  const optStr = z.string().nullish();

  /** Descriptive fields a task may be created from. */
  const taskFields = {
    title: optStr,
    source: optStr,
    effort: optStr,
    deps: optStr,
    wave: z.number().int().min(0).nullish(),
  };

  /** `task.<status>`: `{old_status, new_status, ...extra}` as the reference writes it. */
  const transitionSchema = z.looseObject({
    old_status: taskStatus.nullable(),
    new_status: taskStatus,
    claimed_by: optStr,
    patch_id: optStr,
    risk_tier: tier.nullish(),
    reason: optStr,
    ...taskFields,
  });

  return {
    'task.migrated': z.looseObject({
      title: z.string(),
      source: z.string(),
      effort: z.string(),
      deps: z.string(),
      wave: z.number().int().min(0),
      status: taskStatus,
      backlog_status: z.string().optional(),
    }),
    'task.created': z.looseObject({
      title: z.string(),
      source: z.string(),
      effort: z.enum(EFFORTS),
      deps: z.string(),
      wave: z.number().int().min(0),
      provenance: z.enum(['spec', 'auto']),
      confidence: z.number().nullish(),
      rationale: optStr,
      parent_task: optStr,
    }),
    'task.pending': transitionSchema,
    'task.claimed': transitionSchema,
    'task.proposed': transitionSchema,
    'task.done': transitionSchema,
    'task.deferred': transitionSchema,
    'task.blocked': transitionSchema,
    'task.dropped': transitionSchema,
    'task.completed': z.looseObject({ patch_id: z.string(), commit_hash: z.string() }),
    'task.deferral_resolved': z.looseObject({
      decision: z.enum(['approve', 'reject', 'modify']),
      rationale: z.string(),
      old_status: taskStatus,
      new_status: taskStatus,
      modification: optStr,
      patch_id: optStr,
      confidence: z.number().nullish(),
    }),
    'task.deferral_expired': z.looseObject({
      old_status: taskStatus,
      new_status: taskStatus,
      old_tier: tier,
      new_tier: tier,
      commits_since: z.number().int().min(0),
    }),
    'task.risk_classified': z.looseObject({
      old_tier: tier,
      risk_tier: tier,
      files: z.array(z.string()),
      patch_id: optStr,
      reasons: z.array(z.string()).optional(),
    }),
    'task.reprioritized': z.looseObject({ old_wave: z.number().int().min(0), new_wave: z.number().int().min(0) }),
    'patch.queued': z.looseObject({ task_id: z.string(), patch_path: z.string(), created_by: z.string() }),
    'patch.applied': z.looseObject({ task_id: z.string() }),
    'patch.verified': z.looseObject({ task_id: z.string() }),
    'patch.promoted': z.looseObject({ task_id: z.string(), commit_hash: z.string() }),
    'patch.discarded': z.looseObject({ task_id: z.string(), reason: z.string() }),
    /** A closed patch's file left commits/pending/ (src/control/patchArchive.ts): where it is now. */
    'patch.archived': z.looseObject({ task_id: z.string(), patch_path: z.string(), from: z.string() }),
    /**
     * A patch file in commits/pending/ that no patch names (a run died between writing and
     * queueing it) was moved out of pending/ to `patch_path`; its entity is the file's name.
     */
    'patch_file.orphaned': z.looseObject({ from: z.string(), patch_path: z.string(), reason: z.string() }),
    /** A closed patch's file could not leave commits/pending/ (left there; the next start tries again). */
    'patch.archive_failed': z.looseObject({
      task_id: z.string(),
      patch_path: z.string(),
      to: z.string(),
      error: z.string(),
      code: z.string().optional(),
    }),
    'proposal.accepted': z.looseObject({ file: z.string(), proposal_type: z.string(), tasks: z.array(z.string()) }),
    'proposal.deferred': z.looseObject({ file: z.string(), proposal_type: z.string(), reason: z.string(), proposal: z.unknown() }),
    'proposal.rejected': z.looseObject({ file: z.string(), error: z.string() }),
    'inbox.failed': z.looseObject({ file: z.string(), error: z.string() }),
    ...loopSchemas(tier, optStr),
    ...buildReqSchemas(),
    /**
     * Something went wrong that a human should know of, and what was done about it: the
     * integrity check caught an agent (kind `integrity`, src/integrity), the store was
     * restored from damage (`store_restored`, src/project/repair).
     */
    incident: z.union([
      z.looseObject({
        kind: z.literal('integrity'),
        incident_id: z.string(),
        task_id: z.string().nullable(),
        agent: z.string(),
        phase: z.string(),
        backend: z.string(),
        confinement: z.enum(['bwrap', 'cli-sandbox', 'none']),
        changes: z.array(z.looseObject({ path: z.string(), change: z.enum(['added', 'removed', 'modified']), restorable: z.boolean() })),
        summary: z.string(),
        /** What Ralph did: the invocation's work discarded, the task blocked. */
        action: z.string(),
        record_file: z.string(),
        /** The command that puts back what can be restored. */
        restore: z.string().nullable(),
      }),
      z.looseObject({
        kind: z
          .string()
          .min(1)
          .refine((k) => k !== 'integrity', 'an integrity incident has its own fields'),
        summary: z.string(),
      }),
    ]),
    /**
     * Written by the store with a command's events when the command carries an id (the
     * inbox): a replay of the same id finds it and is skipped.
     */
    'command.applied': z.looseObject({
      command: z.string(),
      outcome: z.enum(['applied', 'failed']),
      event_ids: z.array(z.string()),
      source: z.string().optional(),
    }),
    /** How each role's agents are confined for this run (status bar, monitor, `ralph status`). */
    'agents.confinement': z.looseObject({
      roles: z.array(z.looseObject({ role: z.string(), backend: z.string(), kind: z.string(), summary: z.string() })),
      unconfined: z.boolean(),
      opted_in: z.boolean(),
    }),
  } as const;
}

export type EventSchemas = ReturnType<typeof buildSchemas>;
let schemas: EventSchemas | undefined;

/** One zod schema per domain event type. */
export function eventSchemas(): EventSchemas {
  return (schemas ??= buildSchemas());
}

const DOMAIN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'task.migrated',
  'task.created',
  'task.pending',
  'task.claimed',
  'task.proposed',
  'task.done',
  'task.deferred',
  'task.blocked',
  'task.dropped',
  'task.completed',
  'task.deferral_resolved',
  'task.deferral_expired',
  'task.risk_classified',
  'task.reprioritized',
  'patch.queued',
  'patch.applied',
  'patch.verified',
  'patch.promoted',
  'patch.discarded',
  'patch.archived',
  'patch_file.orphaned',
  'patch.archive_failed',
  'proposal.accepted',
  'proposal.deferred',
  'proposal.rejected',
  'inbox.failed',
  ...LOOP_EVENT_TYPES,
  ...REQ_EVENT_TYPES,
  'incident',
  'command.applied',
  'agents.confinement',
] satisfies DomainEventType[]);
export type DomainEventType = keyof EventSchemas;
export type EventData<K extends DomainEventType> = z.infer<EventSchemas[K]>;

/** A domain event: its type, the entity it is about, who caused it, and its data. */
export type DomainEvent = {
  [K in DomainEventType]: { readonly type: K; readonly entity_id: string; readonly actor: string; readonly data: EventData<K> };
}[DomainEventType];

/** A domain event as stored (the store stamped id, time and run). */
export type RecordedEvent = DomainEvent & { readonly event_id: string; readonly ts: string; readonly run_id: string };

export type TransitionEventType = `task.${(typeof TASK_STATUSES)[number]}`;
export type TransitionData = EventData<'task.pending'>;

export function isDomainEventType(t: string): t is DomainEventType {
  return DOMAIN_EVENT_TYPES.has(t);
}

export function isTransitionType(t: string): t is TransitionEventType {
  return t.startsWith('task.') && (TASK_STATUSES as readonly string[]).includes(t.slice(5));
}

/** A stored event of a known type whose payload does not match its schema. */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
  constructor(
    readonly eventId: string,
    readonly eventType: string,
    readonly issues: string,
  ) {
    super(`event ${eventId} (${eventType}) has an invalid payload: ${issues}`);
  }
}

export function formatZodIssues(err: z.ZodError): string {
  return err.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

/**
 * Builds a domain event, validating its data (a bug in a decider fails loudly here) and the
 * ids it names: whatever path a task or patch id came in by, no event stores one that
 * breaks the id grammar (src/domain/ids.ts).
 */
export function domainEvent<K extends DomainEventType>(type: K, entityId: string, actor: string, data: EventData<K>): DomainEvent {
  const parsed = eventSchemas()[type].safeParse(data);
  if (!parsed.success) throw new InvalidEventError('(new)', type, formatZodIssues(parsed.error));
  const named = parsed.data as { task_id?: unknown; patch_id?: unknown; parent_task?: unknown };
  if (type.startsWith('task.')) checkId('task', entityId);
  if (type.startsWith('patch.')) checkId('patch', entityId);
  if (type.startsWith('req.') && !isReqRunEvent(type)) checkId('requirement', entityId);
  if (typeof named.task_id === 'string') checkId('task', named.task_id);
  if (typeof named.patch_id === 'string') checkId('patch', named.patch_id);
  if (typeof named.parent_task === 'string' && named.parent_task !== '') checkId('task', named.parent_task);
  return { type, entity_id: entityId, actor, data: parsed.data } as DomainEvent;
}

export function entityTypeOf(eventType: string): string {
  const dot = eventType.indexOf('.');
  return dot > 0 ? eventType.slice(0, dot) : eventType;
}

/** The store's row for a domain event. */
export function toNewEvent(e: DomainEvent): NewEvent {
  return {
    entity_type: entityTypeOf(e.type),
    entity_id: e.entity_id,
    event_type: e.type,
    actor: e.actor,
    payload: e.data as Record<string, unknown>,
  };
}

/** Validates a stored event: a RecordedEvent for known types, null for other types. */
export function readEvent(e: StoredEvent): RecordedEvent | null {
  if (!isDomainEventType(e.event_type)) return null;
  const parsed = eventSchemas()[e.event_type].safeParse(e.payload);
  if (!parsed.success) throw new InvalidEventError(e.event_id, e.event_type, formatZodIssues(parsed.error));
  return {
    type: e.event_type,
    entity_id: e.entity_id,
    actor: e.actor,
    data: parsed.data,
    event_id: e.event_id,
    ts: e.ts,
    run_id: e.run_id,
  } as RecordedEvent;
}
