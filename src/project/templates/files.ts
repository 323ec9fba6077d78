// The non-phase files `ralph init` writes into .ralph/: coding standards, the learned-
// knowledge logs, the backlog skeleton, the initial STATE.json and .ralph/.gitignore.
import type { TemplateContext } from './context';
import { gateList } from './context';

/** core.md: the coding standards injected into every prompt. */
export function renderCore(ctx: TemplateContext): string {
  const constraints = ctx.domain_constraints.length ? ctx.domain_constraints.map((c) => `- ${c}`).join('\n') : '- (none yet: add project rules here or in ralph.config.json `domain_constraints`)';
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

/** Titles the reference gives waves 0..8; higher waves are just `Wave N`. */
export const WAVE_TITLES: readonly string[] = [
  'Critical Fixes & Foundation',
  'Core Infrastructure',
  'Core Features',
  'Extended Features',
  'Polish & Testing',
  'Documentation & Deployment',
  'Optimization',
  'Future Enhancements',
  'Stretch Goals',
];

export const BACKLOG_TABLE_HEADER = '| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|';

/** BACKLOG.md skeleton in the reference format: waves 0-2 with empty tables. */
export function renderBacklogSkeleton(): string {
  const waves = [0, 1, 2].map((n) => `## Wave ${n}: ${WAVE_TITLES[n] ?? `Wave ${n}`}\n\n${BACKLOG_TABLE_HEADER}\n`);
  return `# BACKLOG\n\n${waves.join('\n')}`;
}

/** The reference's STATE.json keys with their starting values. */
export function initialState(): Record<string, unknown> {
  return {
    iteration: 0,
    phase: 'assess',
    current_item: null,
    current_plan: null,
    current_sub_step: 0,
    current_wave: 0,
    retry_count: 0,
    commits_total: 0,
    compile_status: 'unknown',
    test_status: 'unknown',
    progress_history: [],
    last_evolve_at: 0,
    last_dry_at: 0,
    last_integ_at: 0,
    last_ui_at: 0,
    items_done_count: 0,
    items_blocked_count: 0,
    items_deferred_count: 0,
    items_pending_count: 0,
    items_total_count: 0,
  };
}

export function renderInitialState(): string {
  return `${JSON.stringify(initialState(), null, 2)}\n`;
}

/**
 * .ralph/.gitignore: what is machine-local or rebuilt, never committed. Committed (not
 * listed): phases/, core.md, GUARDRAILS.md, REFLECTIONS.md, EVOLVE_LOG.md,
 * SPEC_REGISTRY.md, BACKLOG.md (the reviewable, importable snapshot of the tasks).
 * The database is ignored: it is rewritten on every checkpoint, binary, and would make
 * every branch conflict; the backlog snapshot in git is what a fresh clone imports.
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
  'locks/',
  'logs/',
  'inbox/',
  'worktrees/',
  'proposals/',
  'commits/',
  'backup/',
];

export function renderRalphGitignore(): string {
  return `# Managed by \`ralph init\`: machine-local state, rebuilt or re-derived, never committed.\n${RALPH_GITIGNORE_LINES.join('\n')}\n`;
}
