// The events of REQ mode (seed 001: specification.yaml built requirement by requirement), one
// zod schema each. They join the domain's typed union in events.ts; every REQ-mode fact the
// status, the views, a resume or an observer needs is one of these. Entity ids are REQ ids
// (id grammar, kind 'requirement'), except `req.run_*`, `req.cycle` and `req.checkpoint`,
// whose entity is the run (`req-run`). Pure.
import { z } from 'zod';

/** The entity of run-level REQ events. */
export const REQ_RUN_ENTITY = 'req-run';

export const REQ_LAYERS = ['L1', 'L1b', 'L2', 'L3'] as const;
export type ReqLayer = (typeof REQ_LAYERS)[number];

export const REQ_DECISIONS = ['skip', 'manual', 'stop', 'rollback', 'split', 'continue'] as const;
export type ReqDecision = (typeof REQ_DECISIONS)[number];

export const REQ_TERMINAL_STATES = ['COMPLETE', 'PARTIAL', 'WAIT_USER'] as const;
export type ReqTerminalState = (typeof REQ_TERMINAL_STATES)[number];

export const LEARNING_KINDS = ['permanent', 'contextual'] as const;
export type LearningKind = (typeof LEARNING_KINDS)[number];

export const REQ_BLOCK_KINDS = ['retries', 'too_large', 'risk', 'no_change'] as const;
export type ReqBlockKind = (typeof REQ_BLOCK_KINDS)[number];

export function buildReqSchemas() {
  const reqId = z.string().min(1);
  return {
    /** A REQ run began: the build order it follows and its iteration budget. */
    'req.run_started': z.looseObject({
      spec_file: z.string(),
      order: z.array(reqId),
      layers: z.array(z.array(reqId)),
      max_iterations: z.number().int().min(1),
      resume: z.boolean(),
    }),
    /** The specification's dependencies form a cycle: nothing runs. */
    'req.cycle': z.looseObject({ spec_file: z.string(), chain: z.array(reqId).min(2) }),
    /** One iteration took this REQ (round 1) or retried it (round 2, 3). */
    'req.started': z.looseObject({
      iteration: z.number().int().min(1),
      round: z.number().int().min(1),
      title: z.string(),
      worktree: z.string(),
      /** The commit the worktree started from (a manual fix is captured against it). */
      base: z.string().nullish(),
    }),
    /** The test-utilities check before a REQ: present, dispatched (and with what result), or given up. */
    'req.test_infra': z.looseObject({
      path: z.string(),
      outcome: z.enum(['present', 'created', 'extended', 'failed']),
      missing: z.array(z.string()),
      tries: z.number().int().min(0),
    }),
    /** One verification layer the harness ran on the REQ's change. */
    'req.layer': z.looseObject({
      round: z.number().int().min(1),
      layer: z.enum(REQ_LAYERS),
      ok: z.boolean(),
      summary: z.string(),
    }),
    /** A round failed: the layer (or `agent`, `timeout`), and the summary the next round is given. */
    'req.round_failed': z.looseObject({
      round: z.number().int().min(1),
      layer: z.string(),
      summary: z.string(),
      timed_out: z.boolean(),
    }),
    /**
     * The REQ's change passed every layer and is about to be committed: what its PASS records
     * (the answer's learnings, the AGENTS.md write), so a run killed between the commit and
     * `req.done` finishes the REQ on resume from its patch instead of building it again.
     */
    'req.verified': z.looseObject({
      round: z.number().int().min(1),
      patch_id: z.string(),
      base_commit: z.string(),
      learnings: z.array(z.looseObject({ kind: z.enum(LEARNING_KINDS), text: z.string().min(1) })),
      learnings_used: z.array(z.string()),
      agents_md: z
        .looseObject({
          lines_added: z.number().int().min(0),
          total_lines: z.number().int().min(0),
          archived_to: z.string().nullish(),
          archived_lines: z.number().int().min(0),
        })
        .nullish(),
    }),
    /** PASS: the harness committed the REQ (the task's patch.promoted is the same commit). */
    'req.done': z.looseObject({ commit: z.string().min(7), patch_id: z.string(), title: z.string(), round: z.number().int().min(1) }),
    /** BLOCK: the REQ waits for the user's decision; `options` are what they may decide. */
    'req.blocked': z.looseObject({
      kind: z.enum(REQ_BLOCK_KINDS),
      reason: z.string(),
      options: z.array(z.enum(REQ_DECISIONS)).min(1),
      rounds: z.number().int().min(0),
    }),
    /** A REQ that cannot run because one it depends on (transitively) is blocked. */
    'req.blocked_auto': z.looseObject({ by: reqId }),
    /** The user's decision on a blocked REQ (CLI, VS Code). */
    'req.decided': z.looseObject({
      decision: z.enum(REQ_DECISIONS),
      note: z.string().nullish(),
      /** The decision file it came from (applied exactly once). */
      file: z.string().nullish(),
    }),
    /** Skipped: by decision, or because a REQ it depends on was skipped (`because`). */
    'req.skipped': z.looseObject({ reason: z.string(), because: z.string().nullish() }),
    /** Back to pending with a fresh round budget (rollback, continue, a dependent released). */
    'req.reset': z.looseObject({ reason: z.string(), keep_worktree: z.boolean() }),
    /** A learning recorded from a REQ's answer (entity: the REQ it came from). */
    'req.learning': z.looseObject({
      kind: z.enum(LEARNING_KINDS),
      text: z.string().min(1),
      /** Why it is permanent when it is (`tagged`, `interface`, `referenced`, `user`). */
      why: z.string().nullish(),
    }),
    /** A contextual learning became permanent (referenced by a second REQ, or the user marked it). */
    'req.learning_promoted': z.looseObject({
      text: z.string().min(1),
      why: z.string(),
      /** The queued file it came from, when the user marked it beside a running engine (applied once). */
      file: z.string().nullish(),
    }),
    /** The orchestrator appended a REQ's agentmd_addition to AGENTS.md (and archived when past the limit). */
    'req.agents_md': z.looseObject({
      lines_added: z.number().int().min(0),
      total_lines: z.number().int().min(0),
      archived_to: z.string().nullish(),
      archived_lines: z.number().int().min(0),
    }),
    /** The checkpoint file was written (atomically) after a REQ. */
    'req.checkpoint': z.looseObject({ file: z.string(), at: z.string() }),
    /** The run ended in one of the seed's terminal states. */
    'req.run_finished': z.looseObject({
      state: z.enum(REQ_TERMINAL_STATES),
      iteration: z.number().int().min(0),
      summary: z.string(),
    }),
  } as const;
}

export const REQ_EVENT_TYPES = [
  'req.run_started',
  'req.cycle',
  'req.started',
  'req.test_infra',
  'req.layer',
  'req.round_failed',
  'req.verified',
  'req.done',
  'req.blocked',
  'req.blocked_auto',
  'req.decided',
  'req.skipped',
  'req.reset',
  'req.learning',
  'req.learning_promoted',
  'req.agents_md',
  'req.checkpoint',
  'req.run_finished',
] as const satisfies readonly (keyof ReturnType<typeof buildReqSchemas>)[];

/** Whether an event of this type is about the run rather than one REQ. */
export function isReqRunEvent(type: string): boolean {
  return type === 'req.run_started' || type === 'req.cycle' || type === 'req.checkpoint' || type === 'req.run_finished';
}
