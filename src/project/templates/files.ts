// The non-phase files `ralph init` writes into .ralph/: coding standards, the learned-
// knowledge logs, the backlog skeleton, the initial STATE.json and .ralph/.gitignore.
import { skeletonBacklog } from '../../domain/backlog';
import { renderStateObject } from '../../domain/views';
import type { TemplateContext } from './context';
import { gateList } from './context';

/** core.md: the coding standards injected into every prompt. */
export function renderCore(ctx: TemplateContext): string {
  const constraints = ctx.domain_constraints.length
    ? ctx.domain_constraints.map((c) => `- ${c}`).join('\n')
    : '- (none yet: add project rules here or in ralph.config.json `domain_constraints`)';
  return `# ${ctx.name}: coding standards

Injected into every agent prompt. Keep it short; edit freely.

## ${ctx.profile.displayName}
${ctx.profile.conventions.map((c) => `- ${c}`).join('\n')}

## Gates (run by the harness, never skipped)
${gateList(ctx)}

## Always
- Small, focused changes: one task, one concern. Tests with every behaviour change.
- Never weaken or delete a test to make it pass; never skip verification.
- No secrets in code or logs. No force-push, no history rewrites.
- Agents propose; the control plane decides. Never edit .ralph/STATE.json, .ralph/BACKLOG.md or .ralph/ralph.db.

## Domain constraints
${constraints}
`;
}

export const GUARDRAILS_MD = `# Guardrails

Learned anti-patterns. Each entry: a trigger and the corrective instruction. Added by the
reflect phase (through the harness) and by you; injected into prompts.

<!-- Format:
## G-001: <short name>
- Trigger: <when this applies>
- Instruction: <what to do instead>
- Source: <task id / reflection>
-->
`;

export const REFLECTIONS_MD = `# Reflections

Failure diagnoses, newest last, appended by the harness after each reflect phase:
task, class (transient | recoverable | environment | fundamental), diagnosis, lesson.
`;

export const EVOLVE_LOG_MD = `# Evolve log

One entry per evolve_goals run, appended by the harness: specs read, proposals made,
and what the control plane's policy decided (accepted / deferred / rejected).
`;

/** BACKLOG.md skeleton in the reference format: waves 0-2 with empty tables (src/domain/backlog owns the format). */
export function renderBacklogSkeleton(): string {
  return skeletonBacklog();
}

/** The reference's STATE.json keys with their starting values (src/domain/views owns the keys). */
export function initialState(): Record<string, unknown> {
  // A copy: the defaults' progress_history array is shared.
  return structuredClone(renderStateObject({ taskCounts: {}, commitsTotal: 0, currentWave: 0 }));
}

export function renderInitialState(): string {
  return `${JSON.stringify(initialState(), null, 2)}\n`;
}

/**
 * .ralph/.gitignore: what is machine-local, rebuilt from the event store or written by the
 * harness as it runs, never committed, so `git status` after a run shows only the user's own
 * changes. Derived views (BACKLOG.md, SPEC_REGISTRY.md, STATE.json) are projections of the
 * events; GUARDRAILS.md, REFLECTIONS.md and EVOLVE_LOG.md are the harness's logs. Committed
 * (not listed): phases/, core.md and templates.json — the inputs you edit. Rules you want
 * versioned belong in core.md or `domain_constraints` in ralph.config.json.
 */
export const RALPH_GITIGNORE_LINES: readonly string[] = [
  'ralph.db',
  'ralph.db.*',
  '*.journal',
  '*.journal.*',
  '*.tmp',
  '*.tmp-*',
  'STATE.json',
  'specs.json',
  'BACKLOG.md',
  'SPEC_REGISTRY.md',
  'GUARDRAILS.md',
  'REFLECTIONS.md',
  'EVOLVE_LOG.md',
  'locks/',
  'logs/',
  'inbox/',
  'worktrees/',
  'proposals/',
  'commits/',
  'backup/',
];

/** The files of RALPH_GITIGNORE_LINES a run rewrites (a repository initialized before they were ignored may still track them). */
export const DERIVED_FILES: readonly string[] = [
  'BACKLOG.md',
  'SPEC_REGISTRY.md',
  'GUARDRAILS.md',
  'REFLECTIONS.md',
  'EVOLVE_LOG.md',
  'STATE.json',
];

export function renderRalphGitignore(): string {
  return `# Managed by \`ralph init\`: machine-local state, rebuilt or re-derived, never committed.\n${RALPH_GITIGNORE_LINES.join('\n')}\n`;
}
