// Over 400 lines because every agent prompt (primary phases, worker, judge, decompose) is assembled here from shared sections that must stay consistent.
// Prompt builders for every agent invocation (primary per phase, worker, judge, decompose),
// pure functions of plain inputs: core.md text, the phase file text, a slim state, the
// backlog, guardrails and, for retries, the failing gate's output. Token-efficient by
// construction: only the task and its direct dependencies from the backlog, only the few
// relevant guardrails, bounded tails, markdown comments and blank runs dropped. Every
// prompt starts with the `RALPH-*` markers scripted scenarios and logs match on.

/** Byte budgets of the variable parts; the fixed parts (core, phase file) are the user's. */
export const PROMPT_LIMITS = {
  gateTailBytes: 1500,
  guardrailCount: 4,
  guardrailBytes: 700,
  candidateTasks: 6,
  diffBytes: 24_000,
  notesBytes: 600,
  planStepBytes: 600,
  rejectionBytes: 1000,
} as const;

export interface PromptTask {
  readonly id: string;
  readonly title: string | null;
  readonly status?: string | null;
  readonly source?: string | null;
  readonly effort?: string | null;
  /** Comma-separated ids or '-' (the backlog's form), or a list. */
  readonly deps?: string | readonly string[] | null;
  readonly wave?: number | null;
  readonly risk_tier?: number | null;
}

export interface Guardrail {
  readonly id: string;
  readonly name: string;
  readonly trigger: string;
  readonly instruction: string;
}

export interface GateOutcome {
  readonly gate: string;
  /** 'passed' | 'failed' | 'skipped' | 'timeout' ... */
  readonly status: string;
  /** Output, bounded before use. */
  readonly output?: string;
}

export interface BuiltPrompt {
  readonly text: string;
  readonly bytes: number;
  /** Bytes per section, for the metrics and the bench. */
  readonly sections: Readonly<Record<string, number>>;
}

export interface PromptBase {
  /** core.md text. */
  readonly core: string;
  /** GUARDRAILS.md text or already parsed entries. */
  readonly guardrails?: string | readonly Guardrail[];
  /** Project rules from the config (domain constraints). */
  readonly constraints?: readonly string[];
}

export interface PrimaryPromptInput extends PromptBase {
  readonly phase: string;
  /** The phase file text (.ralph/phases/<phase>.md). */
  readonly phaseText: string;
  /** STATE.json (or any object); only the keys a phase needs are kept. */
  readonly state?: Readonly<Record<string, unknown>>;
  readonly backlog?: readonly PromptTask[];
  /** The current task; undefined for assess and periodic phases. */
  readonly taskId?: string;
  /** Plan sub-step for implement. */
  readonly step?: {
    readonly index: number;
    readonly total: number;
    readonly description: string;
    readonly files: readonly string[];
    readonly acceptance: string;
  };
  /** The failing gate (reflect, retries). */
  readonly failure?: GateOutcome;
  /** Notes from earlier reviews or validation errors of a previous answer. */
  readonly notes?: readonly string[];
  /** Why the harness rejected this phase's previous answer (a schema or plan check). */
  readonly rejection?: string;
  /** Phase-specific extra facts (deferred queue, spec list) the caller already bounded. */
  readonly extra?: string;
  readonly agent?: string;
  /** Distinguishes invocations of the same phase and task (step-2, retry-1). */
  readonly key?: string;
}

export interface WorkerPromptInput extends PromptBase {
  readonly task: PromptTask;
  readonly backlog?: readonly PromptTask[];
  /** The worker's instruction text (a phase-like file), default a built-in one. */
  readonly instructions?: string;
  readonly failure?: GateOutcome;
  readonly notes?: readonly string[];
  readonly agent?: string;
  readonly attempt?: number;
}

export interface JudgePromptInput {
  readonly task: PromptTask;
  readonly diff: string;
  readonly gates: readonly GateOutcome[];
  /** The rules the change is judged by (core.md rules, risk policy, constraints). */
  readonly rules: string | readonly string[];
  readonly deferredReason?: string | null;
  /** The review_deferred phase file, if the project has one. */
  readonly instructions?: string;
  /** Diff budget; default PROMPT_LIMITS.diffBytes. */
  readonly diffBytes?: number;
}

export interface DecomposePromptInput extends PromptBase {
  readonly task: PromptTask;
  /** The restricted files the change touched. */
  readonly files: readonly string[];
  readonly reason?: string;
  readonly instructions?: string;
  readonly maxSubtasks?: number;
}

// ------------------------------------------------------------------ small pure helpers

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Drops HTML comments, trailing spaces and runs of blank lines: same meaning, fewer tokens. */
export function compactMarkdown(text: string): string {
  return text
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** The last `maxBytes` of a text, cut at a line start, with a marker saying what was cut. */
export function tailBytes(text: string, maxBytes: number): string {
  const trimmed = text.replace(/\s+$/, '');
  if (byteLength(trimmed) <= maxBytes) return trimmed;
  const buf = Buffer.from(trimmed, 'utf8');
  let tail = buf
    .subarray(buf.length - maxBytes)
    .toString('utf8')
    .replace(/^\uFFFD+/, '');
  const nl = tail.indexOf('\n');
  if (nl >= 0 && nl < tail.length - 1) tail = tail.slice(nl + 1);
  return `[… ${buf.length - byteLength(tail)} earlier bytes omitted]\n${tail}`;
}

/** The first `maxBytes` of a text, cut at a line end, with a marker. */
export function headBytes(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text;
  let head = Buffer.from(text, 'utf8')
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD+$/, '');
  const nl = head.lastIndexOf('\n');
  if (nl > 0) head = head.slice(0, nl);
  return `${head}\n[… ${byteLength(text) - byteLength(head)} more bytes omitted]`;
}

function depsOf(task: PromptTask): string[] {
  const d = task.deps;
  if (d === undefined || d === null) return [];
  const list = typeof d === 'string' ? d.split(',') : [...d];
  return list.map((x) => x.trim()).filter((x) => x.length > 0 && x !== '-');
}

/** The facts of a task line: `(S, wave 1, src ES:42, deps W1-001)`, or '' when none. */
function taskFacts(task: PromptTask): string {
  const facts = [
    task.effort,
    task.wave !== undefined && task.wave !== null ? `wave ${task.wave}` : undefined,
    task.source ? `src ${task.source}` : undefined,
  ];
  const deps = depsOf(task);
  if (deps.length > 0) facts.push(`deps ${deps.join(',')}`);
  if (task.risk_tier !== undefined && task.risk_tier !== null && task.risk_tier !== 1) facts.push(`risk tier ${task.risk_tier}`);
  const f = facts.filter((x): x is string => typeof x === 'string' && x.length > 0);
  return f.length > 0 ? `(${f.join(', ')})` : '';
}

/** One compact line per task: `W1-003 [pending] Title (S, wave 1, src ES:42, deps W1-001)`. */
export function taskLine(task: PromptTask): string {
  const facts = taskFacts(task);
  return `${task.id}${task.status ? ` [${task.status}]` : ''} ${task.title ?? '(untitled)'}${facts ? ` ${facts}` : ''}`;
}

/** The task and its direct dependencies (with their status), nothing else of the backlog. */
export function backlogSlice(backlog: readonly PromptTask[], taskId: string): PromptTask[] {
  const task = backlog.find((t) => t.id === taskId);
  if (task === undefined) return [];
  const deps = depsOf(task);
  return [task, ...backlog.filter((t) => deps.includes(t.id))];
}

/** Ready candidates for assess: pending, dependencies done, lowest wave first, at most `limit`. */
export function readyCandidates(backlog: readonly PromptTask[], limit: number = PROMPT_LIMITS.candidateTasks): PromptTask[] {
  const done = new Set(backlog.filter((t) => t.status === 'done').map((t) => t.id));
  return backlog
    .filter((t) => (t.status ?? 'pending') === 'pending' && depsOf(t).every((d) => done.has(d)))
    .sort((a, b) => (a.wave ?? 0) - (b.wave ?? 0))
    .slice(0, limit);
}

const STATE_KEYS = [
  'iteration',
  'phase',
  'current_item',
  'current_sub_step',
  'current_wave',
  'retry_count',
  'commits_total',
  'compile_status',
  'test_status',
];
const COUNT_KEYS = ['items_done_count', 'items_pending_count', 'items_blocked_count', 'items_deferred_count', 'items_total_count'];

/** STATE.json reduced to one line of the facts an agent can use. */
export function slimState(state: Readonly<Record<string, unknown>> | undefined): string {
  if (state === undefined) return '';
  const parts: string[] = [];
  for (const k of STATE_KEYS) {
    const v = state[k];
    if (v !== undefined && v !== null && v !== '' && typeof v !== 'object') parts.push(`${k}=${String(v)}`);
  }
  const counts = COUNT_KEYS.map((k) => [k.replace(/^items_|_count$/g, ''), state[k]] as const).filter(([, v]) => typeof v === 'number');
  if (counts.length > 0) parts.push(`items ${counts.map(([k, v]) => `${k}=${String(v)}`).join(' ')}`);
  return parts.join(' · ');
}

/**
 * Parses GUARDRAILS.md entries: `## G-001: name` with `- Trigger:` and `- Instruction:`
 * bullets, and the one-line form the harness appends after a reflection,
 * `- **trigger** → instruction (source)`, numbered `L-1`, `L-2`, … in file order.
 */
export function parseGuardrails(markdown: string): Guardrail[] {
  const out: { at: number; g: Guardrail }[] = [];
  const text = markdown.replace(/<!--[\s\S]*?-->/g, '');
  const re = /^##\s+([A-Za-z]+-\d+)\s*:?\s*(.*)$/gm;
  const heads = [...text.matchAll(re)];
  heads.forEach((m, i) => {
    const start = (m.index ?? 0) + m[0].length;
    const end = heads[i + 1]?.index ?? text.length;
    const body = text.slice(start, end);
    const field = (name: string): string => new RegExp(`^-\\s*${name}\\s*:\\s*(.+)$`, 'im').exec(body)?.[1]?.trim() ?? '';
    out.push({
      at: m.index ?? 0,
      g: {
        id: m[1] ?? '',
        name: (m[2] ?? '').trim(),
        trigger: field('Trigger'),
        instruction: field('Instruction') || body.trim().split('\n')[0]?.trim() || '',
      },
    });
  });
  let learned = 0;
  for (const m of text.matchAll(/^-\s*\*\*(.+?)\*\*\s*(?:→|->)\s*(.+)$/gm)) {
    learned++;
    out.push({ at: m.index ?? 0, g: { id: `L-${learned}`, name: '', trigger: (m[1] ?? '').trim(), instruction: (m[2] ?? '').trim() } });
  }
  return out.sort((a, b) => a.at - b.at).map((x) => x.g);
}

const WORD = /[a-z][a-z0-9_]{2,}/g;
const STOP = new Set(['the', 'and', 'for', 'with', 'when', 'this', 'that', 'from', 'into', 'not', 'use', 'add', 'all', 'any']);
const words = (text: string): Set<string> => new Set([...text.toLowerCase().matchAll(WORD)].map((m) => m[0]).filter((w) => !STOP.has(w)));

/**
 * The guardrails worth sending: those sharing words with the context (task title, files,
 * failure), most overlap first, then the most recent; at most `limit` and `maxBytes`.
 */
export function selectGuardrails(
  all: readonly Guardrail[],
  context: string,
  limit: number = PROMPT_LIMITS.guardrailCount,
  maxBytes: number = PROMPT_LIMITS.guardrailBytes,
): Guardrail[] {
  const ctx = words(context);
  const scored = all.map((g, index) => {
    const w = words(`${g.name} ${g.trigger}`);
    let overlap = 0;
    for (const x of w) if (ctx.has(x)) overlap++;
    return { g, index, overlap };
  });
  scored.sort((a, b) => b.overlap - a.overlap || b.index - a.index);
  const picked: { g: Guardrail; index: number }[] = [];
  let bytes = 0;
  for (const s of scored) {
    if (picked.length >= limit) break;
    const size = byteLength(guardrailLine(s.g)) + 1;
    if (bytes + size > maxBytes) continue;
    bytes += size;
    picked.push(s);
  }
  return picked.sort((a, b) => a.index - b.index).map((p) => p.g);
}

function guardrailLine(g: Guardrail): string {
  return `- ${g.id}${g.trigger ? ` when ${g.trigger}` : g.name ? ` (${g.name})` : ''}: ${g.instruction}`;
}

// ------------------------------------------------------------------ assembly

class Sections {
  private readonly parts: { name: string; text: string }[] = [];
  add(name: string, text: string | undefined): this {
    if (text !== undefined && text.trim().length > 0) this.parts.push({ name, text: text.trim() });
    return this;
  }
  build(): BuiltPrompt {
    const text = this.parts.map((p) => p.text).join('\n\n') + '\n';
    const sections: Record<string, number> = {};
    // Separators count with the section after them and the final newline with the last, so
    // the sections add up to the prompt's size.
    this.parts.forEach((p, i) => {
      sections[p.name] = (sections[p.name] ?? 0) + byteLength(p.text) + (i > 0 ? 2 : 0) + (i === this.parts.length - 1 ? 1 : 0);
    });
    return { text, bytes: byteLength(text), sections };
  }
}

/** `RALPH-KEY: <phase>/<task>/<key>/` names the invocation (scripted scenarios match on it). */
function header(phase: string, agent: string, taskId: string | undefined, key: string | undefined): string {
  const id = taskId ?? '-';
  return `RALPH-PHASE: ${phase}\nRALPH-AGENT: ${agent}\nRALPH-TASK: ${id}\nRALPH-KEY: ${phase}/${id}/${key ? `${key}/` : ''}`;
}

function guardrailBlock(base: PromptBase, context: string): string | undefined {
  if (base.guardrails === undefined) return undefined;
  const all = typeof base.guardrails === 'string' ? parseGuardrails(base.guardrails) : base.guardrails;
  const chosen = selectGuardrails(all, context);
  return chosen.length > 0 ? `## Guardrails\n${chosen.map(guardrailLine).join('\n')}` : undefined;
}

function constraintsBlock(base: PromptBase): string | undefined {
  const c = base.constraints ?? [];
  return c.length > 0 ? `## Project rules\n${c.map((x) => `- ${x}`).join('\n')}` : undefined;
}

function failureBlock(f: GateOutcome | undefined): string | undefined {
  if (f === undefined) return undefined;
  const out =
    f.output !== undefined && f.output.trim().length > 0 ? `\n\`\`\`\n${tailBytes(f.output, PROMPT_LIMITS.gateTailBytes)}\n\`\`\`` : '';
  return `## Failing gate: ${f.gate} (${f.status})${out}`;
}

function notesBlock(notes: readonly string[] | undefined): string | undefined {
  if (notes === undefined || notes.length === 0) return undefined;
  return `## Notes from earlier attempts\n${headBytes(notes.map((n) => `- ${n}`).join('\n'), PROMPT_LIMITS.notesBytes)}`;
}

/** `## Task W1-003: Title` then its status and facts (the judge's form too). */
function taskHeading(task: PromptTask): string {
  const facts = [task.status ? `[${task.status}]` : '', taskFacts(task)].filter((x) => x.length > 0).join(' ');
  return `## Task ${task.id}: ${task.title ?? '(untitled)'}${facts ? `\n${facts}` : ''}`;
}

function taskBlock(slice: readonly PromptTask[]): string | undefined {
  const [task, ...deps] = slice;
  if (task === undefined) return undefined;
  return `${taskHeading(task)}${deps.length > 0 ? `\nDependencies:\n${deps.map((d) => `- ${taskLine(d)}`).join('\n')}` : ''}`;
}

/** The primary agent's prompt for one phase. */
export function buildPrimaryPrompt(input: PrimaryPromptInput): BuiltPrompt {
  const backlog = input.backlog ?? [];
  const slice = input.taskId !== undefined ? backlogSlice(backlog, input.taskId) : [];
  const candidates = input.phase === 'assess' ? readyCandidates(backlog) : [];
  const step = input.step;
  const context = [
    slice.map((t) => t.title ?? '').join(' '),
    step?.description ?? '',
    step?.files.join(' ') ?? '',
    input.failure?.gate ?? '',
    input.failure?.output?.slice(-400) ?? '',
  ].join(' ');
  const state = slimState(input.state);
  return new Sections()
    .add('header', header(input.phase, input.agent ?? 'primary', input.taskId, input.key))
    .add('core', compactMarkdown(input.core))
    .add('constraints', constraintsBlock(input))
    .add('guardrails', guardrailBlock(input, context))
    .add('phase', compactMarkdown(input.phaseText))
    .add('state', state ? `## State\n${state}` : undefined)
    .add('task', taskBlock(slice))
    .add('candidates', candidates.length > 0 ? `## Ready tasks\n${candidates.map((t) => `- ${taskLine(t)}`).join('\n')}` : undefined)
    .add(
      'step',
      step !== undefined
        ? headBytes(
            `## Sub-step ${step.index + 1}/${step.total}: ${step.description}\nFiles: ${step.files.join(', ') || '-'}\nAcceptance: ${step.acceptance}`,
            PROMPT_LIMITS.planStepBytes,
          )
        : undefined,
    )
    .add('failure', failureBlock(input.failure))
    .add('notes', notesBlock(input.notes))
    .add(
      'rejection',
      input.rejection
        ? `## Your previous answer was rejected by the harness\n${headBytes(input.rejection.trim(), PROMPT_LIMITS.rejectionBytes)}`
        : undefined,
    )
    .add('extra', input.extra)
    .build();
}

const WORKER_INSTRUCTIONS = `## Do
Plan, implement and verify this one task in your working directory, in one pass:
1. Read the relevant code and the task's source; keep the change small.
2. Implement it with tests; run the unit tests and the build yourself.
3. Do not commit: the harness captures your change, runs the gates (build, tests, lint, forbidden patterns) and promotes it.
End with one line: DONE: <what changed> or BLOCKED: <why>.`;

/** A worker's single full-cycle prompt (plan -> implement -> verify in a worktree). */
export function buildWorkerPrompt(input: WorkerPromptInput): BuiltPrompt {
  const slice = backlogSlice(input.backlog ?? [input.task], input.task.id);
  const context = [input.task.title ?? '', input.failure?.gate ?? '', input.failure?.output?.slice(-400) ?? ''].join(' ');
  return new Sections()
    .add('header', header('worker', input.agent ?? 'worker', input.task.id, `attempt-${input.attempt ?? 1}`))
    .add('core', compactMarkdown(input.core))
    .add('constraints', constraintsBlock(input))
    .add('guardrails', guardrailBlock(input, context))
    .add('task', taskBlock(slice.length > 0 ? slice : [input.task]))
    .add('instructions', compactMarkdown(input.instructions ?? WORKER_INSTRUCTIONS))
    .add(
      'failure',
      input.failure !== undefined
        ? `Your previous attempt failed a gate; fix it without weakening tests.\n${failureBlock(input.failure) ?? ''}`
        : undefined,
    )
    .add('notes', notesBlock(input.notes))
    .build();
}

/** Keeps a diff within budget: whole file sections first, then the list of what was left out. */
export function boundDiff(diff: string, maxBytes: number = PROMPT_LIMITS.diffBytes): string {
  if (byteLength(diff) <= maxBytes) return diff;
  const files = diff.split(/(?=^diff --git )/m);
  const kept: string[] = [];
  const omitted: string[] = [];
  let cut = '';
  let used = 0;
  for (const f of files) {
    const size = byteLength(f);
    const name = /^diff --git a\/(\S+)/.exec(f)?.[1] ?? '(preamble)';
    if (used + size <= maxBytes) {
      kept.push(f);
      used += size;
    } else if (kept.length === 0) {
      // The first file alone is over budget: its head, cut at a line end.
      let head = Buffer.from(f, 'utf8')
        .subarray(0, maxBytes)
        .toString('utf8')
        .replace(/\uFFFD+$/, '');
      const nl = head.lastIndexOf('\n');
      if (nl > 0) head = head.slice(0, nl + 1);
      kept.push(head);
      cut = `\n[… diff truncated: ${size - byteLength(head)} more bytes of ${name} not shown]`;
      used = maxBytes;
    } else omitted.push(`${name} (${size} bytes)`);
  }
  return `${kept.join('')}${cut}${omitted.length > 0 ? `\n[… diff truncated; not shown: ${omitted.join(', ')}]` : ''}`;
}

const JUDGE_INSTRUCTIONS = `You are an independent reviewer with no part in writing this change. Decide whether it may land on the main branch: it must do what the task says, follow the rules, and not weaken tests or security.`;

/** The judge's prompt: only the task, the diff, the gate results and the rules. */
export function buildJudgePrompt(input: JudgePromptInput): BuiltPrompt {
  const rules = typeof input.rules === 'string' ? compactMarkdown(input.rules) : input.rules.map((r) => `- ${r}`).join('\n');
  // One summary line (`build=passed, test=failed`), then the tail of each gate that did not pass.
  const summary = `Gate results: ${input.gates.map((g) => `${g.gate}=${g.status}`).join(', ') || 'none recorded'}`;
  const tails = input.gates
    .filter((g) => g.status !== 'passed' && g.output)
    .map((g) => `- ${g.gate} ${g.status}:\n  ${tailBytes(g.output ?? '', 400).replace(/\n/g, '\n  ')}`);
  return new Sections()
    .add('header', header('review_deferred', 'judge', input.task.id, undefined))
    .add('instructions', compactMarkdown(input.instructions ?? JUDGE_INSTRUCTIONS))
    .add('task', `${taskHeading(input.task)}${input.deferredReason ? `\nDeferred because: ${input.deferredReason}` : ''}`)
    .add('gates', [summary, ...tails].join('\n'))
    .add('rules', rules ? `## Rules\n${rules}` : undefined)
    .add('diff', `## Diff\n\`\`\`diff\n${boundDiff(input.diff, input.diffBytes).replace(/\s+$/, '')}\n\`\`\``)
    .add(
      'answer',
      'End with one ```json block: {"task_id": "…", "verdict": "approve" | "reject" | "modify", "rationale": "…", "confidence": 0.0-1.0, "modification": "… (for modify)"}.',
    )
    .build();
}

/** The prompt that splits a restricted (tier 3) task into smaller proposals. */
export function buildDecomposePrompt(input: DecomposePromptInput): BuiltPrompt {
  const max = input.maxSubtasks ?? 5;
  return new Sections()
    .add('header', header('decompose', 'primary', input.task.id, undefined))
    .add('core', compactMarkdown(input.core))
    .add('constraints', constraintsBlock(input))
    .add('guardrails', guardrailBlock(input, `${input.task.title ?? ''} ${input.files.join(' ')}`))
    .add('task', taskHeading(input.task))
    .add(
      'instructions',
      compactMarkdown(
        input.instructions ??
          `## Do
This task touched restricted files (risk tier 3)${input.reason ? ` — ${input.reason}` : ''}:
${input.files.map((f) => `- ${f}`).join('\n')}
Split it into 2 to ${max} smaller tasks (effort S or M), each touching no restricted file where possible and isolating the part that must touch one. Do not edit files.`,
      ),
    )
    .add(
      'answer',
      `End with one \`\`\`json block (the evolve_goals shape): {"specs_read": [], "summary": "…", "proposals": [{"proposal_type": "decompose", "parent_task": "${input.task.id}", "confidence": 0.0-1.0, "rationale": "…", "sub_tasks": [{"id": "…", "title": "…", "source": "…", "effort": "S", "wave": ${input.task.wave ?? 1}, "deps": "-"}, …at least 2]}]}.`,
    )
    .build();
}
