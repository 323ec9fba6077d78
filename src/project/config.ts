// Over 400 lines because it is the one zod schema of ralph.config.json (validation, defaults, the JSON Schema) with its loader.
// ralph.config.json: the one zod schema (single source of truth for validation, defaults
// and the generated JSON Schema), and loading it with errors that name the file, the JSON
// path with its line:column, and what was expected.
//
// Forbidden patterns: each entry is a LITERAL SUBSTRING, except an entry written as
// `/source/flags`, which is a regular expression. The seed's string form `a|b|c` is split
// on `|` (write `\|` for a literal bar); an array is taken as is.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { DEFAULT_RISK_PATTERNS } from '../domain/risk';
import type { RiskPatterns } from '../domain/risk';
import { JsonSyntaxError, parseJsonWithPositions } from './jsonPositions';
import type { JsonPath, TextPosition } from './jsonPositions';
import { LANGUAGES, staticProfile } from './languages';
import type { Language } from './languages';
import { err, ok } from './result';
import type { Result } from './result';

export const CONFIG_FILE = 'ralph.config.json';
/** Where the generated JSON Schema ships inside the extension. */
export const CONFIG_SCHEMA_PATH = 'dist/schema/ralph.config.schema.json';

export const BACKEND_KINDS = ['claude', 'codex', 'scripted', 'vscode-lm'] as const;
export type BackendKind = (typeof BACKEND_KINDS)[number];

/** A USD amount: a number, or the seed's string form ("2.50", "$2.50"). */
const usd = (description: string, def: number) =>
  z
    .union([z.number().nonnegative(), z.string().regex(/^\s*\$?\d+(\.\d+)?\s*$/, 'a dollar amount such as "2.50"')])
    .transform((v) => (typeof v === 'number' ? v : Number(v.trim().replace('$', ''))))
    .optional()
    .transform((v) => v ?? def)
    .meta({ description: `${description} (USD; default ${def}; 0 = no limit).`, default: def });

/** Splits the seed's `a|b|c` form; `\|` is a literal bar. */
export function splitPatternString(s: string): string[] {
  return s
    .split(/(?<!\\)\|/)
    .map((p) => p.replace(/\\\|/g, '|').trim())
    .filter((p) => p.length > 0);
}

/** A forbidden pattern written `/source/flags` is a regex; anything else a literal substring. */
export function parseForbiddenPattern(p: string): { kind: 'literal'; text: string } | { kind: 'regex'; regex: RegExp } {
  const m = /^\/(.+)\/([dgimsuvy]*)$/.exec(p);
  if (m?.[1] !== undefined) {
    try {
      return { kind: 'regex', regex: new RegExp(m[1], (m[2] ?? '').replace('g', '')) };
    } catch {
      // not a valid regex: treat as the literal text it is
    }
  }
  return { kind: 'literal', text: p };
}

const regexEntriesValid = (list: readonly string[]): boolean =>
  list.every((p) => {
    const m = /^\/(.+)\/([dgimsuvy]*)$/.exec(p);
    if (!m) return true;
    try {
      new RegExp(m[1] ?? '', m[2]);
      return true;
    } catch {
      return false;
    }
  });

const stringList = (description: string) =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((v) => (typeof v === 'string' ? splitPatternString(v) : v))
    .meta({ description });

const globList = (description: string) => z.array(z.string().min(1)).meta({ description });

const command = (description: string) =>
  z
    .string()
    .optional()
    .meta({ description: `${description} Empty string disables the gate; omitted = the language default.` });

const seconds = (description: string, def: number) =>
  z
    .number()
    .int()
    .nonnegative()
    .default(def)
    .meta({ description: `${description} (seconds; default ${def}).` });

const claudeOptions = z
  .strictObject({
    binary: z.string().min(1).default('claude').meta({ description: 'Path or name of the Claude Code CLI.' }),
    permission_mode: z.string().min(1).default('acceptEdits').meta({
      description:
        'Value of --permission-mode (acceptEdits, dontAsk, ...). Default acceptEdits: its checks refuse edits and commands outside the worktree, one layer of confinement; bypassPermissions turns them off (ralph doctor warns).',
    }),
    max_turns: z.number().int().positive().default(80).meta({ description: 'Value of --max-turns per invocation.' }),
    model: z.string().min(1).optional().meta({ description: 'Model for this backend; default: the top-level "model".' }),
    extra_args: z.array(z.string()).default([]).meta({ description: 'Extra command-line arguments appended to every invocation.' }),
    env: z.record(z.string(), z.string()).default({}).meta({ description: 'Extra environment variables for the CLI process.' }),
  })
  .prefault({})
  .meta({ description: 'Options of the Claude Code CLI backend (`claude -p --output-format stream-json`).' });

const codexPrices = z
  .strictObject({
    input_per_mtok: z.number().nonnegative().default(1.25).meta({ description: 'USD per million input tokens.' }),
    cached_input_per_mtok: z.number().nonnegative().default(0.125).meta({ description: 'USD per million cached input tokens.' }),
    output_per_mtok: z.number().nonnegative().default(10).meta({ description: 'USD per million output tokens.' }),
  })
  .prefault({})
  .meta({ description: 'Price table used to compute cost from Codex token usage (Codex reports tokens, not dollars).' });

const codexOptions = z
  .strictObject({
    binary: z.string().min(1).default('codex').meta({ description: 'Path or name of the Codex CLI.' }),
    sandbox: z
      .enum(['read-only', 'workspace-write', 'danger-full-access'])
      .default('workspace-write')
      .meta({ description: 'Value of --sandbox for `codex exec`.' }),
    model: z.string().min(1).optional().meta({ description: 'Model for this backend (-m); default: the CLI default.' }),
    extra_args: z.array(z.string()).default([]).meta({ description: 'Extra command-line arguments (e.g. ["-c", "key=value"]).' }),
    env: z.record(z.string(), z.string()).default({}).meta({ description: 'Extra environment variables for the CLI process.' }),
    prices: codexPrices,
  })
  .prefault({})
  .meta({ description: 'Options of the Codex CLI backend (`codex exec --json`).' });

const scriptedOptions = z
  .strictObject({
    binary: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Executable speaking the Claude stream-json format; default: the bundled scripted model.' }),
    scenario: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Scenario file driving the scripted backend (relative to the project root).' }),
    extra_args: z.array(z.string()).default([]).meta({ description: 'Extra command-line arguments.' }),
  })
  .prefault({})
  .meta({ description: 'Options of the scripted backend (tests and demo).' });

const vscodeLmOptions = z
  .strictObject({
    vendor: z.string().min(1).optional().meta({ description: 'Language model vendor for vscode.lm.selectChatModels (e.g. "copilot").' }),
    family: z.string().min(1).optional().meta({ description: 'Language model family (e.g. "gpt-4o").' }),
  })
  .prefault({})
  .meta({ description: 'Options of the VS Code Language Model API backend (only inside VS Code).' });

const backendKind = (role: string, def: BackendKind) =>
  z
    .enum(BACKEND_KINDS)
    .default(def)
    .meta({ description: `Backend running the ${role} agent (default "${def}").` });

const backendsSchema = z
  .strictObject({
    primary: backendKind('primary', 'claude'),
    worker: backendKind('worker', 'claude'),
    judge: backendKind('judge (independent reviewer of deferred items)', 'claude'),
    claude: claudeOptions,
    codex: codexOptions,
    scripted: scriptedOptions,
    'vscode-lm': vscodeLmOptions,
  })
  .prefault({})
  .meta({ description: 'Which agent CLI runs each role, and per-CLI options.' });

const budgetsSchema = z
  .strictObject({
    primary: usd('Spend limit per primary-agent invocation', 2.5),
    worker: usd('Spend limit per worker invocation', 5),
    judge: usd('Spend limit per judge invocation', 1),
    per_task: usd('Spend limit summed over every invocation for one task', 20),
    per_day: usd('Spend limit summed over every invocation of the UTC day; the loop pauses when reached', 50),
  })
  .prefault({})
  .meta({ description: 'Spend limits. Numbers or dollar strings ("2.50").' });

const riskPatternsSchema = z
  .strictObject({
    tier3: globList('Globs of restricted files (secrets, keys): a change touching one is decomposed.').default([
      ...DEFAULT_RISK_PATTERNS.tier3,
    ]),
    tier2: globList('Globs of sensitive files (auth, migrations): a change touching one is deferred to the judge.').default([
      ...DEFAULT_RISK_PATTERNS.tier2,
    ]),
    tier2_sources: globList('Globs matched against a task\'s spec source (e.g. "ES:30.*"): such tasks are deferred to the judge.').default([
      ...DEFAULT_RISK_PATTERNS.tier2_sources,
    ]),
    tier0: globList('Globs of trivial files (docs, fixtures): an S-effort change touching only these is tier 0.').default([
      ...DEFAULT_RISK_PATTERNS.tier0,
    ]),
  })
  .prefault({})
  .meta({
    description: 'Risk tier globs (picomatch, case-insensitive, repo-relative paths). Each list replaces the default list when given.',
  });

const workersSchema = z
  .strictObject({
    count: z
      .number()
      .int()
      .min(0)
      .max(16)
      .default(1)
      .meta({ description: 'Number of worker agents beside the primary (0 = primary only; default 1).' }),
    effort: z
      .array(z.enum(['S', 'M', 'L', 'XL']))
      .min(1)
      .default(['S'])
      .meta({ description: 'Task efforts a worker may pick (default ["S"]).' }),
  })
  .prefault({})
  .meta({ description: 'Worker agents: full-cycle runs in their own worktrees.' });

const intervalsSchema = z
  .strictObject({
    primary: seconds('First wait of the idle primary before it looks for work again (grows while idle; new work cuts it short)', 20),
    worker: seconds('First wait of an idle worker before it looks for work again (grows while idle; new work cuts it short)', 30),
  })
  .prefault({})
  .meta({ description: 'Pacing of the loop.' });

const gateTimeoutsSchema = z
  .strictObject({
    build: seconds('Build gate timeout', 600),
    test: seconds('Test gate timeout', 1800),
    test_unit: seconds('Unit test gate timeout', 900),
    lint: seconds('Lint gate timeout', 300),
    fmt: seconds('Format gate timeout', 120),
  })
  .prefault({})
  .meta({ description: 'Timeouts of the machine gates.' });

const limitsSchema = z
  .strictObject({
    max_retries: z
      .number()
      .int()
      .min(0)
      .default(3)
      .meta({ description: 'Retries per sub-step after a failed verify before the task is blocked (default 3).' }),
    max_iterations: z.number().int().min(0).default(0).meta({ description: 'Stop after this many primary iterations (0 = unlimited).' }),
    max_consecutive_failures: z
      .number()
      .int()
      .min(1)
      .default(5)
      .meta({ description: 'Pause the loop after this many consecutive failed invocations (default 5).' }),
    invocation_timeout: seconds('Wall-clock limit of one agent invocation', 1800),
    gate_timeouts: gateTimeoutsSchema,
    deferral_expiry_commits: z
      .number()
      .int()
      .min(1)
      .default(20)
      .meta({ description: 'Deferred items expire back to pending after this many commits (default 20).' }),
    review_deferred_at: z
      .number()
      .int()
      .min(1)
      .default(3)
      .meta({ description: 'Run review_deferred when this many items are deferred (default 3).' }),
    max_backlog: z
      .number()
      .int()
      .min(1)
      .default(300)
      .meta({ description: 'Maximum non-dropped tasks; proposals beyond it are deferred (default 300).' }),
    max_pending_per_wave: z.number().int().min(1).default(50).meta({ description: 'Maximum pending tasks per wave (default 50).' }),
  })
  .prefault({})
  .meta({ description: 'Hard limits of the loop.' });

const periodicSchema = z
  .strictObject({
    evolve_every: z.number().int().min(1).default(5).meta({ description: 'evolve_goals every N commits (default 5).' }),
    refactor_every: z.number().int().min(1).default(5).meta({ description: 'refactor_dry every N commits (default 5).' }),
    integration_every: z.number().int().min(1).default(10).meta({ description: 'test_integration every N commits (default 10).' }),
    ui_every: z.number().int().min(1).default(15).meta({ description: 'test_ui every N commits (default 15), when periodic.ui is true.' }),
    overdue_at: z
      .number()
      .int()
      .min(1)
      .default(30)
      .meta({ description: 'A test phase this many commits late runs before anything else (default 30).' }),
    ui: z.boolean().default(false).meta({ description: 'Whether the project has a UI worth browser/E2E tests (enables test_ui).' }),
  })
  .prefault({})
  .meta({ description: 'When the periodic phases run.' });

const agentsSchema = z
  .strictObject({
    unconfined: z.boolean().default(false).meta({
      description:
        'Run agents even where no confinement is available (no bubblewrap on Linux): they can then write anything your user can. The integrity check still runs around every invocation and covers your checkout too. Default false: the loop refuses to start unconfined agents.',
    }),
    confine_gates: z.boolean().default(true).meta({
      description:
        "Run the build, test and lint gates in the agents' sandbox (default true, where agents run in bubblewrap): the gates run code the agents wrote, so they may write only the worktree and their own scratch folder. Set false only if your gates must write elsewhere (a shared cache, a local database); agent-written code then runs unconfined.",
    }),
  })
  .prefault({})
  .meta({ description: "How agent processes are run (see the README's Safety section and `ralph doctor`)." });

const reqSchema = z
  .strictObject({
    spec: z
      .string()
      .min(1)
      .default('specification.yaml')
      .meta({ description: 'Path of the REQ-mode specification (default specification.yaml).' }),
    max_iterations: z.number().int().min(1).default(15).meta({ description: 'Maximum REQ iterations per run (default 15).' }),
    coverage: z.number().min(0).max(100).default(80).meta({ description: 'Minimum line coverage percent (L3 gate; default 80).' }),
    test_line_share: z
      .number()
      .min(0)
      .max(100)
      .default(40)
      .meta({ description: 'Minimum share of test lines in the change, percent (L1b gate; default 40).' }),
    retries: z.number().int().min(0).default(3).meta({ description: 'Retries per REQ before it is blocked (default 3).' }),
    coverage_command: z.string().optional().meta({ description: 'Command printing coverage; omitted = the language default.' }),
    round_timeout: z
      .number()
      .int()
      .min(1)
      .default(300)
      .meta({ description: 'Seconds per REQ round (one agent invocation; default 300). Two timeouts block the REQ as too large.' }),
    mock_density: z
      .number()
      .min(0)
      .max(100)
      .default(30)
      .meta({ description: 'Mock/spy/fn lines over this percent of the test lines need // @mock-justified: (L1b; default 30).' }),
    test_utils: z
      .strictObject({
        path: z.string().min(1).optional().meta({ description: 'The test-utilities module; omitted = the language default.' }),
        exports: z.array(z.string().min(1)).default([]).meta({ description: 'Names it must export; missing ones are dispatched first.' }),
      })
      .prefault({})
      .meta({ description: 'Test infrastructure checked before each REQ.' }),
    test_files: globList('Globs of test files (L1b counts their lines as test lines). Omitted = the language default.').optional(),
  })
  .prefault({})
  .meta({ description: 'REQ-level build mode (specification.yaml).' });

/** The schema of ralph.config.json (input: what users write; output: fully defaulted). */
export const configSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ description: 'JSON Schema reference (ignored by Ralph).' }),
    name: z.string().min(1).meta({ description: 'Project name.' }),
    lang: z
      .enum(LANGUAGES)
      .default('generic')
      .meta({ description: 'Project language; picks the default gate commands and forbidden patterns.' }),
    build: command("Build gate command, run in the agent's worktree."),
    lint: command('Lint gate command.'),
    test: command('Full test suite command.'),
    test_unit: command('Fast unit test command (run after each implement step).'),
    fmt: command('Format check command.'),
    forbidden_patterns: stringList(
      'Patterns that must not appear in added lines: literal substrings, or /regex/flags entries. The seed form "a|b|c" is split on | (\\| for a literal bar). Omitted = the language default.',
    )
      .refine(regexEntriesValid, { message: 'a /regex/ entry is not a valid regular expression' })
      .optional(),
    forbidden_exclude: globList('Globs of files the forbidden-pattern gate skips (e.g. tests). Omitted = the language default.').optional(),
    domain_constraints: stringList('Project rules injected into every prompt (string, or a list of rules).').optional(),
    store: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/, 'a postgres:// or postgresql:// URL')
      .optional()
      .meta({
        description:
          'Team mode: the event store on PostgreSQL (postgres://user:password@host:5432/db). Omitted = the embedded store in .ralph/ralph.db. RALPH_STORE_URL overrides it.',
      }),
    model: z.string().min(1).default('opus').meta({ description: 'Model alias or id for the agents (default "opus").' }),
    effort: z.string().min(1).optional().meta({ description: 'Reasoning effort hint passed to backends that support one.' }),
    budget_primary: usd('Seed-compatible alias of budgets.primary', 2.5).optional(),
    budget_worker: usd('Seed-compatible alias of budgets.worker', 5).optional(),
    backends: backendsSchema,
    budgets: budgetsSchema,
    risk_patterns: riskPatternsSchema,
    workers: workersSchema,
    intervals: intervalsSchema,
    limits: limitsSchema,
    periodic: periodicSchema,
    target_branch: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Branch promoted commits land on; default: the branch checked out when the loop starts.' }),
    req: reqSchema,
    agents: agentsSchema,
  })
  .meta({
    title: 'Ralph Loop configuration',
    description: 'ralph.config.json: project settings for the Ralph Loop autonomous engineering loop.',
  });

type ParsedConfig = z.output<typeof configSchema>;

/** The configuration with every default applied and the language defaults resolved. */
export interface RalphConfig extends Omit<
  ParsedConfig,
  | '$schema'
  | 'budget_primary'
  | 'budget_worker'
  | 'build'
  | 'lint'
  | 'test'
  | 'test_unit'
  | 'fmt'
  | 'forbidden_patterns'
  | 'forbidden_exclude'
  | 'domain_constraints'
> {
  readonly build: string;
  readonly lint: string;
  readonly test: string;
  readonly test_unit: string;
  readonly fmt: string;
  readonly forbidden_patterns: string[];
  readonly forbidden_exclude: string[];
  readonly domain_constraints: string[];
}

/** What a user may write (for building configs in code, e.g. init). */
export type RalphConfigInput = z.input<typeof configSchema>;

/** Applies language defaults and the seed's flat budget aliases to a parsed config. */
function resolve(parsed: ParsedConfig, explicitBudgets: { primary: boolean; worker: boolean }): RalphConfig {
  const profile = staticProfile(parsed.lang as Language);
  const { $schema: _s, budget_primary, budget_worker, ...rest } = parsed;
  const budgets = { ...parsed.budgets };
  // The nested form wins when both are written; the flat seed keys fill in otherwise.
  if (budget_primary !== undefined && !explicitBudgets.primary) budgets.primary = budget_primary;
  if (budget_worker !== undefined && !explicitBudgets.worker) budgets.worker = budget_worker;
  return {
    ...rest,
    budgets,
    build: parsed.build ?? profile.build,
    lint: parsed.lint ?? profile.lint,
    test: parsed.test ?? profile.test,
    test_unit: parsed.test_unit ?? parsed.test ?? profile.test_unit,
    fmt: parsed.fmt ?? profile.fmt,
    forbidden_patterns: parsed.forbidden_patterns ?? [...profile.forbidden_patterns],
    forbidden_exclude: parsed.forbidden_exclude ?? [...profile.forbidden_exclude],
    domain_constraints: parsed.domain_constraints ?? [],
  };
}

/** One thing wrong with the config. */
export interface ConfigIssue {
  /** Dotted JSON path, e.g. `budgets.primary` or `workers.effort[0]`; '' for the whole file. */
  readonly path: string;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly message: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly issues: readonly ConfigIssue[],
  ) {
    super(formatIssues(file, issues));
  }
}

function formatIssues(file: string, issues: readonly ConfigIssue[]): string {
  const lines = issues.map((i) => {
    const where = i.line !== undefined ? `${file}:${i.line}:${i.column ?? 1}` : file;
    return `${where}: ${i.path ? `${i.path}: ` : ''}${i.message}`;
  });
  return lines.length === 1 ? (lines[0] ?? '') : `${file} has ${issues.length} problems:\n  ${lines.join('\n  ')}`;
}

export function formatJsonPath(p: JsonPath): string {
  let s = '';
  for (const seg of p) {
    if (typeof seg === 'number') s += `[${seg}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(seg)) s += s ? `.${seg}` : seg;
    else s += `[${JSON.stringify(seg)}]`;
  }
  return s;
}

/** Levenshtein distance, for "did you mean" suggestions. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j] ?? 0;
      row[j] = Math.min(cur + 1, (row[j - 1] ?? 0) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length] ?? 0;
}

/** The closest known key, if close enough to be a likely typo. */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  const norm = (s: string): string => s.toLowerCase().replace(/[-_\s]/g, '');
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = norm(unknown) === norm(k) ? 0 : distance(unknown.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  const limit = Math.max(2, Math.floor(unknown.length / 3));
  return best !== undefined && bestD <= limit ? best : undefined;
}

/** Known keys of the object schema at a path of the config, for suggestions. */
function knownKeysAt(p: readonly PropertyKey[]): string[] {
  let schema: z.ZodType = configSchema;
  for (const seg of p) {
    const obj = unwrapObject(schema);
    if (!obj || typeof seg !== 'string') return [];
    const child = obj.shape[seg] as z.ZodType | undefined;
    if (!child) return [];
    schema = child;
  }
  const obj = unwrapObject(schema);
  return obj ? Object.keys(obj.shape) : [];
}

function unwrapObject(schema: z.ZodType): z.ZodObject | undefined {
  let s: unknown = schema;
  for (let n = 0; n < 8; n++) {
    if (s instanceof z.ZodObject) return s;
    const def = (s as { _zod?: { def?: { innerType?: unknown; in?: unknown } } })._zod?.def;
    const inner = def?.innerType ?? def?.in;
    if (inner === undefined) return undefined;
    s = inner;
  }
  return undefined;
}

function describeReceived(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (typeof v === 'object') return 'an object';
  return `${typeof v} ${String(v)}`;
}

function valueAt(root: unknown, p: readonly PropertyKey[]): unknown {
  let v = root;
  for (const seg of p) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

/**
 * Keys earlier versions accepted and nothing ever read, with what to do instead: an old file
 * that still has one is refused with this message, never read as if it worked.
 */
const REMOVED_KEYS: ReadonlyMap<string, string> = new Map([
  [
    'intervals.sleep',
    'removed: the loop never sleeps between phases while work is ready; intervals.primary and intervals.worker set the waits when none is. Delete the key',
  ],
]);

/** Turns zod issues into ConfigIssues with positions and plain-English expectations. */
function toIssues(error: z.ZodError, raw: unknown, positionOf: (p: JsonPath) => TextPosition | undefined): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    const p = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path);
      for (const key of issue.keys) {
        const full = [...p, key];
        const pos = positionOf(full);
        const hint = suggestKey(key, known);
        // A Map, not an object: a key such as __proto__ must not find Object.prototype.
        const removed = REMOVED_KEYS.get(formatJsonPath(full));
        out.push({
          path: formatJsonPath(full),
          line: pos?.line,
          column: pos?.column,
          message:
            removed ??
            `unknown key "${key}"${hint ? `; did you mean "${hint}"?` : known.length ? `; known keys: ${known.join(', ')}` : ''}`,
        });
      }
      continue;
    }
    const pos = positionOf(p);
    const got = valueAt(raw, issue.path);
    let message = issue.message;
    if (issue.code === 'invalid_type') {
      message =
        got === undefined ? `missing required key; expected ${issue.expected}` : `expected ${issue.expected}, got ${describeReceived(got)}`;
    } else if (issue.code === 'invalid_value') {
      message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeReceived(got)}`;
    } else if (issue.code === 'invalid_union' || isBudgetPath(p)) {
      message = `${unionExpectation(p)}, got ${describeReceived(got)}`;
    } else if (got !== undefined) {
      message = `${issue.message}, got ${describeReceived(got)}`;
    }
    out.push({ path: formatJsonPath(p), line: pos?.line, column: pos?.column, message });
  }
  // In file order, so the message reads top to bottom.
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
}

function isBudgetPath(p: JsonPath): boolean {
  return (p[0] === 'budgets' && p.length === 2) || (p.length === 1 && (p[0] === 'budget_primary' || p[0] === 'budget_worker'));
}

function unionExpectation(p: JsonPath): string {
  const last = p[p.length - 1];
  if (isBudgetPath(p)) return 'expected a non-negative number or a dollar string such as "2.50"';
  if (last === 'forbidden_patterns' || last === 'domain_constraints') return 'expected a string ("a|b|c") or an array of strings';
  return 'expected a value of another type';
}

/** Validates an already-parsed config object (e.g. built in code). */
export function validateConfig(
  raw: unknown,
  file = CONFIG_FILE,
  positionOf: (p: JsonPath) => TextPosition | undefined = () => undefined,
): Result<RalphConfig, ConfigError> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return err(new ConfigError(file, [{ path: '', line: 1, column: 1, message: `expected a JSON object, got ${describeReceived(raw)}` }]));
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) return err(new ConfigError(file, toIssues(parsed.error, raw, positionOf)));
  const budgets = (raw as { budgets?: Record<string, unknown> }).budgets;
  return ok(
    resolve(parsed.data, {
      primary: budgets !== null && typeof budgets === 'object' && 'primary' in budgets,
      worker: budgets !== null && typeof budgets === 'object' && 'worker' in budgets,
    }),
  );
}

/** Parses and validates the text of a ralph.config.json. */
export function parseConfigText(text: string, file = CONFIG_FILE): Result<RalphConfig, ConfigError> {
  let doc;
  try {
    doc = parseJsonWithPositions(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) {
      return err(new ConfigError(file, [{ path: '', line: e.line, column: e.column, message: `not valid JSON: ${e.reason}` }]));
    }
    throw e;
  }
  return validateConfig(doc.value, file, (p) => doc.positionOf(p));
}

/** The largest ralph.config.json read (a full one is about 4 KiB). */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Reads `<projectDir>/ralph.config.json`. A missing or unreadable file is a ConfigError too. */
export function loadConfig(projectDir: string): Result<RalphConfig, ConfigError> {
  const file = path.join(projectDir, CONFIG_FILE);
  let text: string;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_CONFIG_BYTES)
      return err(
        new ConfigError(file, [
          { path: '', line: undefined, column: undefined, message: `${size} bytes; the limit is ${MAX_CONFIG_BYTES}` },
        ]),
      );
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const message = code === 'ENOENT' ? 'file not found; run `ralph init` to create it' : `cannot read the file (${code ?? String(e)})`;
    return err(new ConfigError(file, [{ path: '', line: undefined, column: undefined, message }]));
  }
  return parseConfigText(text, file);
}

/** loadConfig for callers that stop on a bad config: throws the ConfigError. */
export function requireConfig(projectDir: string): RalphConfig {
  const r = loadConfig(projectDir);
  if (!r.ok) throw r.error;
  return r.value;
}

/** The project's risk patterns: its config's risk_patterns, the defaults when it has no ralph.config.json. */
export function projectRiskPatterns(projectDir: string): RiskPatterns {
  if (!fs.existsSync(path.join(projectDir, CONFIG_FILE))) return DEFAULT_RISK_PATTERNS;
  return requireConfig(projectDir).risk_patterns;
}

/** The JSON Schema of ralph.config.json (what users may write), for editors. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input', target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown>;
}
