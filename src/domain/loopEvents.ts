// The loop's facts as domain events, one zod schema each: what the harness decided about an
// attempt (task.reflected, task.follow_up), what it knows about a queued patch (patch.gates:
// the commit its gates ran on and their results; patch.waiting: why its promotion waits),
// the run itself (loop.*), every agent invocation (agent.started / agent.finished, with the
// reason when one fails) and incidents. Another host, an observer window or the next run
// reads them from the store instead of asking the process that wrote them.
import { z } from 'zod';
import { SHARED_FAILURE_CLASSES } from './agentFailure';

/** Statuses an agent run ends with (src/agents/types AgentStatus). */
export const AGENT_RUN_STATUSES = ['success', 'max_turns', 'budget', 'error', 'cancelled', 'crashed'] as const;
export const AGENT_ROLES = ['primary', 'worker', 'judge'] as const;
export const FAILURE_CLASSES = ['transient', 'recoverable', 'environment', 'fundamental'] as const;
export const ATTEMPT_DECISIONS = ['retry', 'replan', 'block', 'release'] as const;
/** Why a promotion waits: the user's checkout holds the files, or the harness failed mid-way (retried). */
export const WAITING_CAUSES = ['checkout', 'harness_error'] as const;

export const LOOP_EVENT_TYPES = [
  'task.reflected',
  'task.follow_up',
  'patch.gates',
  'patch.waiting',
  'loop.started',
  'loop.paused',
  'loop.resumed',
  'loop.stopped',
  'loop.periodic_done',
  'spec.evolved',
  'spec.evolve_failed',
  'agent.started',
  'agent.finished',
  'incident.raised',
] as const;

export function loopSchemas(tier: z.ZodNumber, optStr: z.ZodOptional<z.ZodNullable<z.ZodString>>) {
  const count = z.number().int().min(0);
  const taskRef = z.string().nullable();
  const agentRun = {
    role: z.enum(AGENT_ROLES),
    phase: z.string(),
    task_id: taskRef,
    backend: z.string(),
  };
  return {
    /** One failed attempt and what the harness decided from the machine facts. */
    'task.reflected': z.looseObject({
      attempt: z.number().int().min(1),
      gate: z.string(),
      origin: z.string(),
      class: z.enum(FAILURE_CLASSES),
      decision: z.enum(ATTEMPT_DECISIONS),
      lesson: optStr,
    }),
    /** A reviewer's modify taken up: where the attempt starts from. */
    'task.follow_up': z.looseObject({
      reviewed_patch_id: z.string(),
      patch_path: z.string().nullable(),
      started_from: z.enum(['patch', 'scratch']),
      base: z.string(),
      requested_by: z.string(),
      reason: optStr,
    }),
    /** The harness's gates passed for a queued patch on `base_commit`. */
    'patch.gates': z.looseObject({
      task_id: z.string(),
      gates: z.array(z.looseObject({ gate: z.string(), status: z.string() })),
      base_commit: z.string(),
      reverified_from: optStr,
      files: z.array(z.string()).optional(),
      risk_tier: tier.optional(),
    }),
    'patch.waiting': z.looseObject({ task_id: z.string(), reason: z.string(), cause: z.enum(WAITING_CAUSES).optional() }),
    'loop.started': z.looseObject({
      branch: z.string(),
      workers: count,
      once: z.boolean(),
      pid: z.number().int(),
      host: z.string(),
      backends: z.looseObject({ primary: z.string(), worker: z.string(), judge: z.string() }),
    }),
    /** `cause: agents_failing`: every agent failed the same way (src/domain/agentFailure.ts); resume clears it. */
    'loop.paused': z.looseObject({
      reason: z.string(),
      cause: z.literal('agents_failing').optional(),
      failure_class: z.enum(SHARED_FAILURE_CLASSES).optional(),
      agents: z.array(z.string()).optional(),
    }),
    'loop.resumed': z.looseObject({ reason: optStr }),
    /** The run's summary. */
    'loop.stopped': z.looseObject({
      stopReason: z.string(),
      iterations: count,
      invocations: count,
      promoted: count,
      deferred: count,
      blocked: count,
      released: count,
      costUsd: z.number().min(0),
      wallMs: z.number().min(0),
      modelMs: z.number().min(0),
      gateMs: z.number().min(0),
    }),
    /** A periodic phase ran at this commit count (its cadence counts from here). */
    'loop.periodic_done': z.looseObject({ phase: z.string(), at: count }),
    /** evolve_goals read these specs; what processProposals made of its proposals. */
    'spec.evolved': z.looseObject({ specs: z.array(z.string()), accepted: count, rejected: count, deferred: count }),
    /** evolve_goals failed; its specs stay unread and it is tried again at `retry_at`. */
    'spec.evolve_failed': z.looseObject({
      reason: z.string(),
      attempt: z.number().int().min(1),
      specs: z.array(z.string()),
      retry_at: z.string(),
    }),
    'agent.started': z.looseObject({ ...agentRun, prompt_bytes: count, budget_usd: z.number().min(0), transcript: optStr }),
    /** How the invocation ended; a failed one says why (exit code, errors, stderr tail, redacted). */
    'agent.finished': z.looseObject({
      ...agentRun,
      status: z.enum(AGENT_RUN_STATUSES),
      turns: count,
      cost_usd: z.number().min(0),
      duration_ms: z.number().min(0),
      exit_code: z.number().int().nullish(),
      errors: z.array(z.string()).optional(),
      stderr_tail: optStr,
    }),
    /** Something happened that the user must know about (an agent changed what it may not). */
    'incident.raised': z.looseObject({
      kind: z.string(),
      message: z.string(),
      paths: z.array(z.string()),
      agent: optStr,
      task_id: optStr,
    }),
  } as const;
}
