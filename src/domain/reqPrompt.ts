// The one prompt of a REQ round and what it is made of (seed 001): exactly the current REQ
// with its acceptance criteria, the permanent learnings, the last 3 contextual ones,
// AGENTS.md, `git log -5`, the mock boundary policy, the test utilities' API when present,
// and from round 2 the failure summaries (round 3 also asks for a different approach).
// Nothing of earlier REQs' dialogues: each round is a fresh invocation built only from this.
// Also the answer's schema and the failure summary the next round is given. Pure.
import { z } from 'zod';
import type { ReqItem } from './reqStatus';

/** The seed's mock boundary policy, as the agent is told it. */
export const MOCK_BOUNDARY_POLICY = [
  'Mock boundary policy:',
  '- Mock: external HTTP APIs, LLM calls, third-party platforms; time, random numbers and UUIDs (inject them as dependencies).',
  '- Do not mock: the database (a real test database or sqlite in memory), HTTP routing (e.g. app.inject()), template engines (real rendering), pure business logic (real inputs and outputs).',
  '- Mock density: when mock/spy/fn lines are more than 30% of the test lines you add, justify each file with a `// @mock-justified: <reason>` comment.',
].join('\n');

export const DIFFERENT_APPROACH = 'Use a different implementation approach than the previous two attempts.';

export interface RoundFailure {
  readonly round: number;
  readonly layer: string;
  readonly summary: string;
}

export interface ReqPromptInput {
  readonly req: ReqItem;
  readonly title: string;
  readonly round: number;
  readonly rounds: number;
  readonly permanent: readonly string[];
  readonly contextual: readonly string[];
  readonly agentsMd: string;
  readonly gitLog: string;
  readonly testUtils: { readonly path: string; readonly summary: string } | null;
  /** Earlier rounds' failures of this REQ (round 2: one, round 3: two). */
  readonly failures: readonly RoundFailure[];
}

/** The answer a REQ round ends with (a JSON block). */
export const reqAnswerSchema = z.looseObject({
  req_id: z.string().optional(),
  summary: z.string().optional(),
  learnings: z
    .array(z.strictObject({ kind: z.enum(['permanent', 'contextual']), text: z.string().min(1).max(2000) }))
    .max(20)
    .default([]),
  /** Earlier contextual learnings this REQ relied on (their text): referenced by 2 REQs, they become permanent. */
  learnings_used: z.array(z.string()).max(20).default([]),
  /** Lines for AGENTS.md; only the orchestrator writes the file. */
  agentmd_addition: z.string().max(20_000).nullish(),
});
export type ReqAnswer = z.output<typeof reqAnswerSchema>;

const section = (title: string, body: string): string => `## ${title}\n${body.trim() === '' ? '(none)' : body.trim()}\n`;

/** The round's prompt; its first lines key the scripted model's scenarios (RALPH-KEY). */
export function reqPrompt(p: ReqPromptInput): string {
  const { req } = p;
  const acs = req.acceptance_criteria.map((a) => `- ${a.id}: ${a.criteria}`).join('\n');
  const parts = [
    'RALPH-PHASE: req',
    'RALPH-AGENT: req',
    `RALPH-TASK: ${req.id}`,
    `RALPH-KEY: req/${req.id}/round-${p.round}/`,
    '',
    `You are building one requirement of this project's specification.yaml, round ${p.round} of ${p.rounds}.`,
    'Work test-first (TDD): write the tests for every acceptance criterion first, see them fail, then write the code that makes them pass.',
    'Work only in the current directory. Do not commit; the harness verifies (typecheck, lint, test share, the whole test suite, coverage) and commits.',
    'Do not edit AGENTS.md: put what future work must know in `agentmd_addition`.',
    '',
    section(`Requirement ${req.id}: ${p.title}`, `${req.description}\n\nAcceptance criteria:\n${acs || '(none given)'}`),
    section('Permanent learnings', p.permanent.map((l) => `- ${l}`).join('\n')),
    section('Recent contextual learnings (last 3)', p.contextual.map((l) => `- ${l}`).join('\n')),
    section('AGENTS.md', p.agentsMd),
    section('git log -5', p.gitLog),
    section('Mock boundary policy', MOCK_BOUNDARY_POLICY),
  ];
  if (p.testUtils) parts.push(section(`Test utilities (${p.testUtils.path}): use these`, p.testUtils.summary));
  if (p.failures.length > 0) {
    const f = p.failures.map((x) => `Round ${x.round} failed at ${x.layer}:\n${x.summary}`).join('\n\n');
    parts.push(section('Previous failures', p.round >= 3 ? `${f}\n\n${DIFFERENT_APPROACH}` : f));
  }
  parts.push(
    section(
      'Answer',
      'End with one JSON block: {"req_id": "' +
        req.id +
        '", "summary": "...", "learnings": [{"kind": "permanent"|"contextual", "text": "..."}], "learnings_used": ["<text of a learning above you relied on>"], "agentmd_addition": "lines for AGENTS.md or null"}',
    ),
  );
  return parts.join('\n');
}

// Lines worth keeping from a failing gate's output: errors, failing tests, lint findings.
const INTERESTING = /error|fail|✗|✖|not ok|assert|expected|warning|\d+:\d+|below|threshold|missing|timed out/i;

/** The failure summary of a layer: the gate and the lines that say what failed (at most 20). */
export function failureSummary(layer: string, gate: string, output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  const picked = lines.filter((l) => INTERESTING.test(l));
  const shown = (picked.length > 0 ? picked : lines.slice(-10)).slice(0, 20).map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l));
  return [`${layer} (${gate}) failed:`, ...shown.map((l) => `  ${l}`)].join('\n');
}
