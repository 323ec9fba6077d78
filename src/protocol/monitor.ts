// Over 400 lines because it is the one typed host-webview protocol: one zod schema per message, compiled by both sides.
// The one typed protocol between the extension host and the monitor webview; both sides
// compile this file. Every message is `{ method, params, id? }`, one zod schema per method,
// validated on receipt on both sides: an invalid message is reported with a reason and
// dropped, never thrown into the page or the host.
//
// Handshake: the webview posts `ready`; the host answers with one `snapshot`, then sends
// `update`s carrying only the top-level snapshot keys that changed. Requests from the
// webview carry an `id`; the host answers each with a `reply` bearing the same id.
//
// zod/mini rather than zod: its functions tree-shake, so the page bundle carries the few
// parts of zod it uses (about 30 KB) instead of all of classic zod (about 190 KB).
import * as z from 'zod/mini';
import type { IdKind } from '../domain/ids';
import { idProblem, quoteId } from '../domain/ids';

// ---------------------------------------------------------------------------------------
// The snapshot: everything the monitor shows, computed by src/monitor/snapshot.ts.

export const TASK_STATUSES = ['pending', 'claimed', 'proposed', 'done', 'deferred', 'blocked', 'dropped'] as const;
export const PATCH_STATUSES = ['queued', 'applied', 'verified', 'promoted', 'discarded'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export type PatchStatus = (typeof PATCH_STATUSES)[number];

const count = z.int().check(z.nonnegative());
const isoTs = z.string().check(z.minLength(1));

/** What the loop is doing, as the window showing the monitor knows it. */
export const LOOP_RUNS = ['running', 'paused', 'stopped'] as const;
export type LoopRun = (typeof LOOP_RUNS)[number];

export const loopStateSchema = z.object({
  /** The primary's phase while the loop runs; `stopped` when no loop runs. */
  phase: z.string(),
  run: z.enum(LOOP_RUNS),
  /** The loop runs in another process (the CLI, another window) and this window follows it. */
  observing: z.boolean(),
  iteration: count,
  wave: count,
  commits: count,
  currentTask: z.nullable(z.string()),
  /** Where these numbers come from: STATE.json, or derived from events and metrics. */
  source: z.enum(['state', 'derived']),
  /** While paused: the loop.paused event's reason, and a few words of it for the header. */
  pause: z.optional(z.object({ reason: z.string(), short: z.string() })),
});

export const taskSummarySchema = z.object({
  total: count,
  byStatus: z.record(z.enum(TASK_STATUSES), count),
  /** done / (total - dropped), 0..1; 0 when there is nothing to do. */
  progress: z.number().check(z.minimum(0), z.maximum(1)),
});

export const patchSummarySchema = z.object({
  total: count,
  byStatus: z.record(z.enum(PATCH_STATUSES), count),
  /** Patch files of patches still waiting to be promoted (queued, applied or verified), by file name. */
  pendingFiles: z.array(z.string()),
});

export const eventRowSchema = z.object({
  eventId: z.string(),
  ts: isoTs,
  entityType: z.string(),
  entityId: z.string(),
  eventType: z.string(),
  actor: z.string(),
  /** A short human line from the payload (status change, reason), may be empty. */
  summary: z.string(),
});

export const eventSummarySchema = z.object({
  total: count,
  lastHour: count,
  last10Min: count,
  /** Newest first, at most 10. */
  recent: z.array(eventRowSchema),
});

export const deferredItemSchema = z.object({
  taskId: z.string(),
  title: z.string(),
  riskTier: z.int().check(z.minimum(0), z.maximum(3)),
  reason: z.string(),
  deferredAt: z.nullable(z.string()),
  source: z.string(),
  patchId: z.nullable(z.string()),
  /** The latest judge verdict for this task, when one was recorded. */
  verdict: z.nullable(z.object({ decision: z.string(), rationale: z.string(), ts: isoTs })),
});

export const agentCostSchema = z.object({
  agent: z.string(),
  invocations: count,
  failures: count,
  cost: z.number().check(z.nonnegative()),
  inputTokens: count,
  outputTokens: count,
  cacheRead: count,
  cacheCreate: count,
  durationSec: z.number().check(z.nonnegative()),
});

export const costSummarySchema = z.object({
  /** The UTC day the figures are for, YYYY-MM-DD. */
  day: z.string(),
  cost: z.number().check(z.nonnegative()),
  invocations: count,
  failures: count,
  byAgent: z.array(agentCostSchema),
});

export const runningAgentSchema = z.object({
  name: z.string(),
  role: z.string(),
  phase: z.string(),
  taskId: z.nullable(z.string()),
  /** When the current invocation started; null while the agent waits between invocations. */
  startedAt: z.nullable(isoTs),
  /** An invocation (agent process) is running now. */
  busy: z.boolean(),
  cost: z.number().check(z.nonnegative()),
});

export const costPointSchema = z.object({
  /** Bucket start, ISO 8601 UTC. */
  t: isoTs,
  cost: z.number().check(z.nonnegative()),
  inputTokens: count,
  outputTokens: count,
  cacheTokens: count,
  invocations: count,
});

export const flowPointSchema = z.object({
  t: isoTs,
  counts: z.record(z.enum(TASK_STATUSES), count),
});

export const phaseDurationSchema = z.object({
  phase: z.string(),
  invocations: count,
  totalSec: z.number().check(z.nonnegative()),
  avgSec: z.number().check(z.nonnegative()),
  maxSec: z.number().check(z.nonnegative()),
});

export const monitorSeriesSchema = z.object({
  /**
   * Width of one cost bucket. The cost and flow series cover the latest run: from its first
   * invocation to now while the loop runs, to its last activity once it stopped.
   */
  costBucketSec: z.int().check(z.positive()),
  /** Width of one flow bucket; the counts at the first bucket include all earlier history. */
  flowBucketSec: z.int().check(z.positive()),
  cost: z.array(costPointSchema),
  flow: z.array(flowPointSchema),
  phases: z.array(phaseDurationSchema),
});

export const logLineSchema = z.object({
  ts: z.nullable(isoTs),
  level: z.enum(['trace', 'debug', 'info', 'warn', 'error']),
  text: z.string(),
});

export const projectInfoSchema = z.object({
  /** The workspace folder's name (several folders: each has its own monitor). */
  name: z.string(),
  /** `.ralph/ralph.db` exists. */
  initialized: z.boolean(),
  /** Spec files Ralph found (specs/, docs/, adrs/, specification.yaml), for the empty state. */
  specs: count,
});

export const timelineSchema = z.object({
  /** Events in the live log: the time slider moves over 1..total. */
  total: count,
  firstTs: z.nullable(isoTs),
  lastTs: z.nullable(isoTs),
  /**
   * Set while the page shows a past moment (the time slider moved back): how many events of
   * the log were replayed, and the last one's id and time. Null: the live state.
   */
  at: z.nullable(z.object({ index: count, eventId: z.string(), ts: isoTs })),
});

/** How the last run confined its agents and what the integrity check found. */
const safetySchema = z.object({
  /** Roles the last run's agents ran with no confinement (`agents.unconfined`), as `role (backend)`. */
  unconfined: z.array(z.string()),
  /** Incidents the integrity check recorded in this project. */
  incidents: count,
});

/** REQ mode (specification.yaml built requirement by requirement), folded from the store's req.* events. */
export const reqSectionSchema = z.object({
  /** idle, running, or the run's terminal state (COMPLETE, PARTIAL, WAIT_USER). */
  state: z.string(),
  total: count,
  done: count,
  pending: count,
  blocked: count,
  skipped: count,
  iteration: count,
  maxIterations: count,
  /** Per topological level (index = level, as the Requirements view numbers them). */
  levels: z.array(z.object({ done: count, total: count })),
  /** The REQ being built, its round and where its verification is. */
  current: z.nullable(
    z.object({
      id: z.string(),
      title: z.string(),
      round: count,
      rounds: count,
      /** `agent` while the agent writes tests and code, else the layer running now, or the one that failed. */
      step: z.string(),
      layers: z.array(z.object({ layer: z.enum(['L1', 'L1b', 'L2', 'L3']), state: z.enum(['passed', 'failed', 'running', 'waiting']) })),
      /** What the previous round failed with (the next round is given it). */
      lastFailure: z.nullable(z.string()),
    }),
  ),
  /** Newest first, at most 5; `kind` is permanent or contextual. */
  learnings: z.array(z.object({ text: z.string(), kind: z.string(), source: z.string() })),
  permanentLearnings: count,
  /** Blocked REQs (auto: waiting on a blocked one) and why, in build order. */
  blockedReqs: z.array(z.object({ id: z.string(), title: z.string(), auto: z.boolean(), why: z.string(), options: z.array(z.string()) })),
  cycle: z.nullable(z.array(z.string())),
  /** The specification could not be read: the message names the file and the place. */
  problem: z.nullable(z.string()),
});

export const monitorSnapshotSchema = z.object({
  generatedAt: isoTs,
  project: projectInfoSchema,
  /** True when there is no event yet: the page shows a welcome instead of empty charts. */
  empty: z.boolean(),
  state: loopStateSchema,
  tasks: taskSummarySchema,
  patches: patchSummarySchema,
  events: eventSummarySchema,
  deferred: z.array(deferredItemSchema),
  cost: costSummarySchema,
  agents: z.array(runningAgentSchema),
  logLines: z.array(logLineSchema),
  series: monitorSeriesSchema,
  /** Inputs that could not be read (a bad metrics line, an unreadable STATE.json), named. */
  warnings: z.array(z.string()),
  /** The spend forecast's line (src/domain/forecast.ts), or null while nothing has been spent. */
  forecast: z._default(z.nullable(z.string()), null),
  timeline: z._default(timelineSchema, { total: 0, firstTs: null, lastTs: null, at: null }),
  safety: z._default(safetySchema, { unconfined: [], incidents: 0 }),
  /** Null when the project has no specification.yaml (REQ mode unused). */
  req: z._default(z.nullable(reqSectionSchema), null),
});

export type LoopState = z.infer<typeof loopStateSchema>;
export type ProjectInfo = z.infer<typeof projectInfoSchema>;
export type TaskSummary = z.infer<typeof taskSummarySchema>;
export type PatchSummary = z.infer<typeof patchSummarySchema>;
export type EventRow = z.infer<typeof eventRowSchema>;
export type EventSummary = z.infer<typeof eventSummarySchema>;
export type DeferredItem = z.infer<typeof deferredItemSchema>;
export type AgentCost = z.infer<typeof agentCostSchema>;
export type CostSummary = z.infer<typeof costSummarySchema>;
export type RunningAgent = z.infer<typeof runningAgentSchema>;
export type CostPoint = z.infer<typeof costPointSchema>;
export type FlowPoint = z.infer<typeof flowPointSchema>;
export type PhaseDuration = z.infer<typeof phaseDurationSchema>;
export type MonitorSeries = z.infer<typeof monitorSeriesSchema>;
export type LogLine = z.infer<typeof logLineSchema>;
export type Timeline = z.infer<typeof timelineSchema>;
export type ReqSection = z.infer<typeof reqSectionSchema>;
export type MonitorSnapshot = z.infer<typeof monitorSnapshotSchema>;
export type MonitorSnapshotPatch = Partial<MonitorSnapshot>;

// ---------------------------------------------------------------------------------------
// Message descriptors.

export type Direction = 'host-to-webview' | 'webview-to-host';

export interface Message<M extends string = string, P = unknown> {
  readonly method: M;
  readonly params: P;
  /** Present on requests (webview → host) and on the host's replies to them. */
  readonly id?: number;
}

export interface MessageDescriptor<M extends string, S extends z.ZodMiniType> {
  readonly method: M;
  readonly direction: Direction;
  /** Requests expect a `reply` with the same id. */
  readonly request: boolean;
  readonly schema: S;
  /** True when `msg` has this method and valid params. */
  is(msg: unknown): msg is Message<M, z.infer<S>>;
  /** Builds a message (params are typed, not re-validated). */
  create(params: z.infer<S>, id?: number): Message<M, z.infer<S>>;
}

function descriptor<M extends string, S extends z.ZodMiniType>(
  method: M,
  direction: Direction,
  schema: S,
  request = false,
): MessageDescriptor<M, S> {
  return {
    method,
    direction,
    request,
    schema,
    is(msg: unknown): msg is Message<M, z.infer<S>> {
      if (typeof msg !== 'object' || msg === null) return false;
      const m = msg as { method?: unknown; params?: unknown };
      return m.method === method && schema.safeParse(m.params).success;
    },
    create(params: z.infer<S>, id?: number): Message<M, z.infer<S>> {
      return id === undefined ? { method, params } : { method, params, id };
    },
  };
}

/** Ids the page sends back are ids the host sent it: they follow the id grammar (src/domain/ids.ts). */
const pageId = (kind: IdKind): z.ZodMiniType<string, string> =>
  z.string().check(
    z.superRefine((s, ctx) => {
      const problem = idProblem(s, kind);
      if (problem !== null) ctx.addIssue({ code: 'custom', message: `${kind} id ${quoteId(s)}: ${problem}` });
    }),
  );
const pageTaskId = pageId('task');
const pagePatchId = pageId('patch');
const taskRef = z.object({ taskId: pageTaskId });

// host → webview
export const SnapshotMessage = descriptor('snapshot', 'host-to-webview', z.object({ snapshot: monitorSnapshotSchema }));
export const UpdateMessage = descriptor('update', 'host-to-webview', z.object({ seq: count, patch: z.partial(monitorSnapshotSchema) }));
export const ReplyMessage = descriptor(
  'reply',
  'host-to-webview',
  z.object({ requestId: count, ok: z.boolean(), error: z.optional(z.string()) }),
);

// webview → host
export const ReadyMessage = descriptor('ready', 'webview-to-host', z.object({}));
export const OpenTaskRequest = descriptor('openTask', 'webview-to-host', taskRef, true);
export const ShowDiffRequest = descriptor(
  'showDiff',
  'webview-to-host',
  z.object({ taskId: pageTaskId, patchId: z.nullable(pagePatchId) }),
  true,
);
export const ResolveDeferredRequest = descriptor(
  'resolveDeferred',
  'webview-to-host',
  z.object({ taskId: pageTaskId, decision: z.enum(['approve', 'reject']) }),
  true,
);
export const OpenSettingsRequest = descriptor('openSettings', 'webview-to-host', z.object({}), true);
/** Show the project as it was after the log's first `index` events; null: live again. */
export const TravelRequest = descriptor('travel', 'webview-to-host', z.object({ index: z.nullable(count) }), true);
/** The longest page log text kept: the page can send anything, the host's log keeps a line. */
export const MAX_WEBVIEW_LOG_TEXT = 2000;

/** The page reports what it dropped (invalid host messages, render errors) to the host log. */
export const WebviewLogMessage = descriptor(
  'log',
  'webview-to-host',
  z.object({
    level: z.enum(['info', 'warn', 'error']),
    text: z.pipe(
      z.string(),
      z.transform((t: string) =>
        t.length > MAX_WEBVIEW_LOG_TEXT
          ? `${t.slice(0, MAX_WEBVIEW_LOG_TEXT)}… (${t.length - MAX_WEBVIEW_LOG_TEXT} more characters cut)`
          : t,
      ),
    ),
  }),
);

export const hostToWebview = [SnapshotMessage, UpdateMessage, ReplyMessage] as const;
export const webviewToHost = [
  ReadyMessage,
  OpenTaskRequest,
  ShowDiffRequest,
  ResolveDeferredRequest,
  OpenSettingsRequest,
  TravelRequest,
  WebviewLogMessage,
] as const;

type MessageOf<D> = D extends MessageDescriptor<infer M, infer S> ? Message<M, z.infer<S>> : never;
export type HostToWebviewMessage = MessageOf<(typeof hostToWebview)[number]>;
export type WebviewToHostMessage = MessageOf<(typeof webviewToHost)[number]>;
export type WebviewRequest = Extract<
  WebviewToHostMessage,
  { method: 'openTask' | 'showDiff' | 'resolveDeferred' | 'openSettings' | 'travel' }
>;

export type ParseResult<T> = { ok: true; message: T } | { ok: false; reason: string };

const envelope = z.object({
  method: z.string().check(z.minLength(1), z.maxLength(100)),
  params: z.optional(z.unknown()),
  id: z.optional(count),
});

function parseWith<T>(descriptors: readonly MessageDescriptor<string, z.ZodMiniType>[], raw: unknown, side: string): ParseResult<T> {
  const env = envelope.safeParse(raw);
  if (!env.success) {
    return { ok: false, reason: `${side}: not a message envelope {method, params, id?}: ${z.prettifyError(env.error)}` };
  }
  const d = descriptors.find((x) => x.method === env.data.method);
  if (!d) return { ok: false, reason: `${side}: unknown method ${quoteId(env.data.method)}` };
  if (d.request && env.data.id === undefined) {
    return { ok: false, reason: `${side}: request '${d.method}' has no id` };
  }
  const params = d.schema.safeParse(env.data.params ?? {});
  if (!params.success) {
    return { ok: false, reason: `${side}: invalid params for '${d.method}': ${z.prettifyError(params.error)}` };
  }
  const message = { method: d.method, params: params.data, ...(env.data.id === undefined ? {} : { id: env.data.id }) };
  return { ok: true, message: message as T };
}

/** Validates a message the webview received from the host. */
export function parseHostToWebview(raw: unknown): ParseResult<HostToWebviewMessage> {
  return parseWith<HostToWebviewMessage>(hostToWebview, raw, 'host→webview');
}

/** Validates a message the host received from the webview. */
export function parseWebviewToHost(raw: unknown): ParseResult<WebviewToHostMessage> {
  return parseWith<WebviewToHostMessage>(webviewToHost, raw, 'webview→host');
}

/** Applies an update's changed keys to the previous snapshot. */
export function applySnapshotPatch(prev: MonitorSnapshot, patch: MonitorSnapshotPatch): MonitorSnapshot {
  return { ...prev, ...patch };
}

/** The snapshot of a project with no `.ralph/` activity at all. */
export function emptySnapshot(now: Date): MonitorSnapshot {
  const zeroTasks = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<TaskStatus, number>;
  const zeroPatches = Object.fromEntries(PATCH_STATUSES.map((s) => [s, 0])) as Record<PatchStatus, number>;
  return {
    generatedAt: now.toISOString(),
    project: { name: '', initialized: false, specs: 0 },
    empty: true,
    state: { phase: 'stopped', run: 'stopped', observing: false, iteration: 0, wave: 0, commits: 0, currentTask: null, source: 'derived' },
    tasks: { total: 0, byStatus: zeroTasks, progress: 0 },
    patches: { total: 0, byStatus: zeroPatches, pendingFiles: [] },
    events: { total: 0, lastHour: 0, last10Min: 0, recent: [] },
    deferred: [],
    cost: { day: now.toISOString().slice(0, 10), cost: 0, invocations: 0, failures: 0, byAgent: [] },
    agents: [],
    logLines: [],
    series: { costBucketSec: 60, flowBucketSec: 60, cost: [], flow: [], phases: [] },
    warnings: [],
    forecast: null,
    timeline: { total: 0, firstTs: null, lastTs: null, at: null },
    safety: { unconfined: [], incidents: 0 },
    req: null,
  };
}
