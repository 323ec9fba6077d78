// The structured JSON block each agent phase must end with, as zod schemas. The phase files
// (project/templates/phases.ts) describe the same shapes to the agent; the loop validates the
// block with these and treats a mismatch as a retryable failure whose message (from
// formatOutputIssues) is injected into the retry prompt.
import { z } from 'zod';

export const PHASES = [
  'assess',
  'plan',
  'implement',
  'verify',
  'reflect',
  'commit',
  'evolve_goals',
  'refactor_dry',
  'test_integration',
  'test_ui',
  'review_deferred',
] as const;
export type Phase = (typeof PHASES)[number];

/** The phases the harness does itself, with no agent: it picks the task, runs the gates, promotes. */
export const HARNESS_PHASES = ['assess', 'verify', 'commit'] as const satisfies readonly Phase[];
export type HarnessPhase = (typeof HARNESS_PHASES)[number];
/** The phases an agent runs, each answering with a JSON block of its own schema. */
export type AgentPhase = Exclude<Phase, HarnessPhase>;

export function isAgentPhase(phase: Phase): phase is AgentPhase {
  return !(HARNESS_PHASES as readonly Phase[]).includes(phase);
}

const effort = z.enum(['S', 'M', 'L', 'XL']);
const confidence = z.number().min(0).max(1);
const taskId = z.string().min(1);
const repoPath = z.string().min(1);

export const planStepSchema = z.looseObject({
  id: z.number().int().positive(),
  description: z.string().min(1),
  files: z.array(repoPath).min(1),
  acceptance: z.string().min(1),
});

export const planOutputSchema = z.looseObject({
  task_id: taskId,
  summary: z.string().min(1),
  steps: z.array(planStepSchema).min(1).max(12),
  /** Every file the plan expects to touch (union of the steps' files, plus any others). */
  files: z.array(repoPath).min(1),
  tests: z.array(z.string().min(1)).default([]),
  risks: z.array(z.string().min(1)).default([]),
});

export const implementOutputSchema = z.looseObject({
  step: z.number().int().positive(),
  summary: z.string().min(1),
  files_changed: z.array(repoPath),
  /** True when the agent ran the build/unit command after its edit and it passed. */
  build_passed: z.boolean(),
  /** True when every step of the plan is now implemented. */
  plan_complete: z.boolean(),
  notes: z.string().optional(),
});

export const REFLECTION_CLASSES = ['transient', 'recoverable', 'environment', 'fundamental'] as const;
export type ReflectionClass = (typeof REFLECTION_CLASSES)[number];

export const reflectOutputSchema = z.looseObject({
  class: z.enum(REFLECTION_CLASSES),
  diagnosis: z.string().min(1),
  lesson: z.string().min(1),
  decision: z.enum(['retry', 'replan', 'block']),
  /** A new guardrail when the failure reveals a reusable anti-pattern. */
  guardrail: z
    .looseObject({ trigger: z.string().min(1), instruction: z.string().min(1) })
    .nullable()
    .default(null),
});

const proposedTask = z.looseObject({
  id: taskId,
  title: z.string().min(1),
  source: z.string().default('-'),
  effort,
  wave: z.number().int().min(0),
  deps: z.string().default('-'),
});

/** A proposal as written to `.ralph/proposals/prop_*.json` (reference format). */
export const proposalSchema = z.discriminatedUnion('proposal_type', [
  z.looseObject({ proposal_type: z.literal('new_task'), confidence, task: proposedTask, rationale: z.string().min(1) }),
  z.looseObject({
    proposal_type: z.literal('decompose'),
    confidence,
    parent_task: taskId,
    sub_tasks: z.array(proposedTask).min(2),
    rationale: z.string().min(1),
  }),
  z.looseObject({ proposal_type: z.literal('drop_task'), confidence, task_id: taskId, rationale: z.string().min(1) }),
  z.looseObject({
    proposal_type: z.literal('reprioritize'),
    confidence,
    task_id: taskId,
    old_wave: z.number().int().min(0),
    new_wave: z.number().int().min(0),
    rationale: z.string().min(1),
  }),
]);
export type Proposal = z.infer<typeof proposalSchema>;

export const evolveGoalsOutputSchema = z.looseObject({
  specs_read: z.array(repoPath),
  proposals: z.array(proposalSchema).max(50),
  summary: z.string().min(1),
});

export const refactorDryOutputSchema = z.looseObject({
  summary: z.string().min(1),
  changes: z.array(z.looseObject({ description: z.string().min(1), files: z.array(repoPath).min(1) })),
  files_changed: z.array(repoPath),
});

const testRunOutput = z.looseObject({
  passed: z.boolean(),
  tests_run: z.number().int().min(0).nullable().default(null),
  failures: z.array(z.looseObject({ test: z.string().min(1), message: z.string() })).default([]),
  /** Fixes made in this phase (files changed to repair tests or code). */
  files_changed: z.array(repoPath).default([]),
  summary: z.string().min(1),
});
export const testIntegrationOutputSchema = testRunOutput;
export const testUiOutputSchema = testRunOutput;

/** The independent judge's verdict on one deferred item. */
export const judgeVerdictSchema = z.looseObject({
  task_id: taskId,
  verdict: z.enum(['approve', 'reject', 'modify']),
  rationale: z.string().min(1),
  confidence,
  /** For `modify`: what must change (becomes the follow-up task's description). */
  modification: z.string().min(1).optional(),
});
export type JudgeVerdict = z.infer<typeof judgeVerdictSchema>;
export const reviewDeferredOutputSchema = judgeVerdictSchema.refine((v) => v.verdict !== 'modify' || v.modification !== undefined, {
  message: 'a "modify" verdict needs a "modification"',
  path: ['modification'],
});

/** REQ mode (specification.yaml): one iteration's result. */
export const reqIterationOutputSchema = z.looseObject({
  req_id: z.string().min(1),
  status: z.enum(['done', 'failed']),
  summary: z.string().min(1),
  files_changed: z.array(repoPath),
  learnings: z.looseObject({ permanent: z.array(z.string()).default([]), contextual: z.array(z.string()).default([]) }).prefault({}),
  agentmd_addition: z.string().optional(),
});

export const PHASE_OUTPUT_SCHEMAS = {
  plan: planOutputSchema,
  implement: implementOutputSchema,
  reflect: reflectOutputSchema,
  evolve_goals: evolveGoalsOutputSchema,
  refactor_dry: refactorDryOutputSchema,
  test_integration: testIntegrationOutputSchema,
  test_ui: testUiOutputSchema,
  review_deferred: reviewDeferredOutputSchema,
} as const satisfies Record<AgentPhase, z.ZodType>;

export type PhaseOutput<P extends AgentPhase> = z.output<(typeof PHASE_OUTPUT_SCHEMAS)[P]>;

/** One line per problem, `path: message`, for the retry prompt. */
export function formatOutputIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const p = i.path
        .map((s) => (typeof s === 'number' ? `[${s}]` : `.${String(s)}`))
        .join('')
        .replace(/^\./, '');
      return `${p || '(root)'}: ${i.message}`;
    })
    .join('\n');
}

export type PhaseOutputResult<P extends AgentPhase> = { ok: true; value: PhaseOutput<P> } | { ok: false; message: string };

/** Validates an already-extracted JSON answer against the phase's schema. */
export function validatePhaseOutput<P extends AgentPhase>(phase: P, value: unknown): PhaseOutputResult<P> {
  if (value === undefined) {
    return { ok: false, message: `the ${phase} answer did not end with a fenced \`\`\`json block` };
  }
  const r = PHASE_OUTPUT_SCHEMAS[phase].safeParse(value);
  if (r.success) return { ok: true, value: r.data as PhaseOutput<P> };
  return { ok: false, message: `the ${phase} JSON block is invalid:\n${formatOutputIssues(r.error)}` };
}

/**
 * The JSON Schema of a phase's answer, for backends with native structured output
 * (`claude -p --json-schema`). Refinements (e.g. modify needs a modification) are not
 * representable there; validatePhaseOutput still checks them.
 */
export function phaseOutputJsonSchema(phase: AgentPhase): Record<string, unknown> {
  return z.toJSONSchema(PHASE_OUTPUT_SCHEMAS[phase], { io: 'input', target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown>;
}
