// The per-invocation metrics log: one JSON line per agent run in
// `.ralph/logs/par-metrics-YYYYMMDD.jsonl` with the seed's field names, plus backend and
// task id; and its reader, which sums cost per day, task and agent for budget caps and the
// monitor. Every string field is redacted before it is written.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { redactSecrets } from './secrets';
import type { AgentResult } from './types';

export const metricsLineSchema = z.looseObject({
  ts: z.string(),
  agent: z.string(),
  iter: z.number(),
  phase_from: z.string(),
  phase_to: z.string(),
  /** Seconds, wall clock. */
  duration: z.number(),
  /** USD. */
  cost: z.number(),
  prompt_bytes: z.number(),
  turns: z.number(),
  input_tokens: z.number(),
  cache_read: z.number(),
  cache_create: z.number(),
  output_tokens: z.number(),
  model: z.string(),
  subtype: z.string(),
  backend: z.string(),
  task_id: z.string().nullable(),
  status: z.string().optional(),
});
export type MetricsLine = z.infer<typeof metricsLineSchema>;

/** Who ran and why: the parts of a metrics line the result does not know. */
export interface MetricsContext {
  /** 'A' (primary), 'B' (worker), 'judge', ... */
  readonly agent: string;
  readonly iter: number;
  readonly phaseFrom: string;
  readonly phaseTo: string;
  readonly promptBytes: number;
  readonly backend: string;
  readonly taskId?: string | null;
  /** Defaults to now. */
  readonly ts?: Date;
  /** Extra secret values to scrub (from the agent's env). */
  readonly secrets?: readonly string[];
}

export function metricsFileName(date: Date): string {
  const iso = date.toISOString();
  return `par-metrics-${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}.jsonl`;
}

export function metricsDir(projectRoot: string): string {
  return join(projectRoot, '.ralph', 'logs');
}

/** The metrics line for a run. Pure. */
export function metricsLineFor(result: AgentResult, ctx: MetricsContext): MetricsLine {
  const ts = (ctx.ts ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const scrub = (s: string): string => redactSecrets(s, ctx.secrets ?? []);
  return {
    ts,
    agent: scrub(ctx.agent),
    iter: ctx.iter,
    phase_from: scrub(ctx.phaseFrom),
    phase_to: scrub(ctx.phaseTo),
    duration: Math.round(result.durationMs / 100) / 10,
    cost: Math.round(result.costUsd * 1e6) / 1e6,
    prompt_bytes: ctx.promptBytes,
    turns: result.turns,
    input_tokens: result.tokens.input,
    cache_read: result.tokens.cacheRead,
    cache_create: result.tokens.cacheCreate,
    output_tokens: result.tokens.output,
    model: scrub(result.model),
    subtype: scrub(result.subtype),
    backend: scrub(ctx.backend),
    task_id: ctx.taskId === undefined || ctx.taskId === null ? null : scrub(ctx.taskId),
    status: result.status,
  };
}

/** Appends one line to today's (the line's day's) metrics file; returns the file path. */
export function appendMetrics(projectRoot: string, line: MetricsLine): string {
  return appendMetricsIn(metricsDir(projectRoot), line);
}

/** appendMetrics for a logs directory given directly (the loop knows `.ralph/logs`). */
export function appendMetricsIn(logsDir: string, line: MetricsLine): string {
  mkdirSync(logsDir, { recursive: true });
  const file = join(logsDir, metricsFileName(new Date(line.ts)));
  // One write call per line: O_APPEND keeps concurrent writers' lines whole.
  appendFileSync(file, JSON.stringify(line) + '\n');
  return file;
}

export interface MetricsProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export interface MetricsRead {
  readonly lines: MetricsLine[];
  /** Malformed lines, named by file and line number (never silently dropped). */
  readonly problems: MetricsProblem[];
}

/** Calls `take` with each non-blank line's JSON; a line that is not JSON, or that `take` refuses (returns a message), becomes a problem. */
function eachJsonLine(file: string, problems: MetricsProblem[], take: (json: unknown) => string | null): void {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim().length === 0) return;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        problems.push({ file, line: i + 1, message: 'not JSON' });
        return;
      }
      const message = take(json);
      if (message !== null) problems.push({ file, line: i + 1, message });
    });
}

/** Reads metrics files, optionally limited to days `from`..`to` (YYYYMMDD, inclusive). */
export function readMetrics(projectRoot: string, range: { from?: string; to?: string } = {}): MetricsRead {
  return readMetricsIn(metricsDir(projectRoot), range);
}

/** readMetrics for a logs directory given directly. */
export function readMetricsIn(dir: string, range: { from?: string; to?: string } = {}): MetricsRead {
  const lines: MetricsLine[] = [];
  const problems: MetricsProblem[] = [];
  if (!existsSync(dir)) return { lines, problems };
  const files = readdirSync(dir)
    .filter((f) => /^par-metrics-\d{8}\.jsonl$/.test(f))
    .filter((f) => {
      const day = f.slice(12, 20);
      return (range.from === undefined || day >= range.from) && (range.to === undefined || day <= range.to);
    })
    .sort();
  for (const name of files) {
    eachJsonLine(join(dir, name), problems, (json) => {
      const parsed = metricsLineSchema.safeParse(json);
      if (parsed.success) lines.push(parsed.data);
      return parsed.success ? null : parsed.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; ');
    });
  }
  return { lines, problems };
}

/** The part of a metrics line budgets need. */
export interface CostEntry {
  readonly ts: string;
  readonly cost: number;
  readonly task_id: string | null;
}

/**
 * The cost entries of the given UTC days (YYYY-MM-DD), for budget guards. Lenient where
 * readMetrics is strict: any JSON line with a `ts` counts, since spend recorded by a partial
 * line is still spend; `cost` not a number counts 0; the task is `task_id`, or `task` as
 * older loop lines named it. Entries keep the line's other fields. Lines that are not JSON
 * (a torn write) are reported.
 */
export function readCostEntries(logsDir: string, days: readonly string[]): { entries: (CostEntry & Readonly<Record<string, unknown>>)[]; problems: MetricsProblem[] } {
  const entries: (CostEntry & Readonly<Record<string, unknown>>)[] = [];
  const problems: MetricsProblem[] = [];
  for (const day of days) {
    const file = join(logsDir, `par-metrics-${day.replace(/-/g, '')}.jsonl`);
    if (!existsSync(file)) continue;
    eachJsonLine(file, problems, (json) => {
      const v = (typeof json === 'object' && json !== null ? json : {}) as Record<string, unknown>;
      if (typeof v.ts !== 'string') return 'ts: not a string';
      const task = typeof v.task_id === 'string' ? v.task_id : typeof v.task === 'string' ? v.task : null;
      entries.push({ ...v, ts: v.ts, cost: Number(v.cost) || 0, task_id: task });
      return null;
    });
  }
  return { entries, problems };
}

export interface CostSummary {
  readonly total: number;
  readonly invocations: number;
  /** YYYY-MM-DD -> USD. */
  readonly byDay: Readonly<Record<string, number>>;
  readonly byTask: Readonly<Record<string, number>>;
  readonly byAgent: Readonly<Record<string, number>>;
}

/** Sums cost per day, task and agent. Pure. */
export function summarizeCost(lines: readonly MetricsLine[]): CostSummary {
  const byDay: Record<string, number> = {};
  const byTask: Record<string, number> = {};
  const byAgent: Record<string, number> = {};
  let total = 0;
  const add = (m: Record<string, number>, k: string, v: number): void => {
    m[k] = Math.round(((m[k] ?? 0) + v) * 1e6) / 1e6;
  };
  for (const l of lines) {
    total += l.cost;
    add(byDay, l.ts.slice(0, 10), l.cost);
    if (l.task_id !== null) add(byTask, l.task_id, l.cost);
    add(byAgent, l.agent, l.cost);
  }
  return { total: Math.round(total * 1e6) / 1e6, invocations: lines.length, byDay, byTask, byAgent };
}

/** Today's spend (UTC day), for the daily budget cap. */
export function costToday(projectRoot: string, now: Date = new Date()): number {
  const day = metricsFileName(now).slice(12, 20);
  return summarizeCost(readMetrics(projectRoot, { from: day, to: day }).lines).total;
}
