// What every template is rendered from: the project's name, language profile and the
// gate commands actually configured (so the prompt names the commands the gates run).
import type { LanguageProfile } from '../languages';

export interface TemplateContext {
  readonly name: string;
  readonly profile: LanguageProfile;
  readonly build: string;
  readonly test: string;
  readonly test_unit: string;
  readonly lint: string;
  readonly fmt: string;
  readonly forbidden_patterns: readonly string[];
  readonly domain_constraints: readonly string[];
}

/** `cmd` in backticks, or a note that the gate is off. */
export function cmd(command: string): string {
  return command.trim() ? `\`${command}\`` : '(not configured)';
}

/** The gate commands as a short bullet list. */
export function gateList(ctx: TemplateContext): string {
  return [
    `- build: ${cmd(ctx.build)}`,
    `- tests: ${cmd(ctx.test)}`,
    `- lint: ${cmd(ctx.lint)}`,
    `- format: ${cmd(ctx.fmt)}`,
    `- forbidden in added lines: ${ctx.forbidden_patterns.length ? ctx.forbidden_patterns.map((p) => `\`${p}\``).join(', ') : '(none)'}`,
  ].join('\n');
}

/** The rules every phase repeats: where to work, what never to touch, how to answer. */
export function commonRules(): string {
  return [
    '## Rules',
    '- Work only inside your current working directory (your git worktree). Do not `cd` elsewhere, push, or rewrite history.',
    '- NEVER edit `.ralph/STATE.json`, `.ralph/BACKLOG.md`, `.ralph/ralph.db` or anything under `.ralph/` except where this phase says so: the control plane owns them and rebuilds them from its event log.',
    '- Do not commit: the harness commits, verifies and promotes your change.',
    '- End your answer with ONE fenced ```json block, exactly as specified below, and nothing after it. The harness validates it; an invalid block is a failed run.',
  ].join('\n');
}
