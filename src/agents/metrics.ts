// The per-invocation metrics log `.ralph/logs/par-metrics-YYYYMMDD.jsonl`: one JSON line per
// agent run with the seed's field names plus backend and task id, string fields redacted.
// This module owns the format: file naming, the day range, writing, and reading lines through
// a schema with problems named by file and line (never dropped), with a size/mtime cache.
// Readers differ only in the schema they pass, i.e. in how lenient they are:
// - strict (`metricsLineSchema`, `readMetrics` here): what this writer writes; for tests and
//   tools that check our own output, so a missing field is a problem.
// - spend (src/loop/metricsFile.ts): any line with a `ts` counts, since spend recorded by a
//   partial line is still spend; budgets must not undercount.
// - monitor (src/monitor/metrics.ts): coerces and defaults, since it shows whatever history a
//   project has, including lines written before a field existed.
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { redactText } from '../shared/redaction';
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
  /** Why a cancelled run stopped: `abort` (a stop or a human decision) or `timeout`. */
  stop_reason: z.string().optional(),
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

const FILE_RE = /^par-metrics-(\d{8})\.jsonl$/;

/** `YYYYMMDD`, the UTC day of `at` as file names spell it. */
export function metricsDay(at: Date): string {
  return at.toISOString().slice(0, 10).replace(/-/g, '');
}

/** `par-metrics-YYYYMMDD.jsonl` for the UTC day of `at`. */
export function metricsFileName(at: Date): string {
  return `par-metrics-${metricsDay(at)}.jsonl`;
}

export function metricsDir(projectRoot: string): string {
  return join(projectRoot, '.ralph', 'logs');
}

/** The metrics line for a run. Pure. */
export function metricsLineFor(result: AgentResult, ctx: MetricsContext): MetricsLine {
  const ts = (ctx.ts ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const scrub = (s: string): string => redactText(s, ctx.secrets ?? []);
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
    ...(result.stopReason ? { stop_reason: result.stopReason } : {}),
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
  /** 1-based; 0 when the whole file (or the directory) could not be read. */
  readonly line: number;
  readonly message: string;
}

export interface MetricsRead<T = MetricsLine> {
  /** Files in day order, lines in file order. */
  readonly lines: T[];
  readonly problems: MetricsProblem[];
}

/** Days `from`..`to` (YYYYMMDD, inclusive); an open end takes every day on that side. */
export interface MetricsDays {
  readonly from?: string;
  readonly to?: string;
}

/** Parsed files by name, reused while size and mtime are unchanged. One cache per schema. */
export type MetricsCache<T> = Map<string, { readonly size: number; readonly mtimeMs: number; readonly read: MetricsRead<T> }>;

function parseFile<T>(file: string, schema: z.ZodType<T>): MetricsRead<T> {
  const lines: T[] = [];
  const problems: MetricsProblem[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (text.trim().length === 0) return;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        // A torn write (a crash mid-line): reported like any other bad line.
        problems.push({ file, line: i + 1, message: 'not JSON' });
        return;
      }
      const r = schema.safeParse(json);
      if (r.success) lines.push(r.data);
      else
        problems.push({
          file,
          line: i + 1,
          message: r.error.issues.map((x) => `${x.path.join('.') || '(line)'}: ${x.message}`).join('; '),
        });
    });
  return { lines, problems };
}

/**
 * Reads the metrics files of `days` in `dir` through `schema`. A missing directory is a log
 * without invocations; anything else unreadable is a problem at line 0. With `cache`, only
 * files that changed since the last call are parsed again.
 */
export function readMetricsLog<T>(dir: string, days: MetricsDays, schema: z.ZodType<T>, cache?: MetricsCache<T>): MetricsRead<T> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    return { lines: [], problems: missing ? [] : [{ file: dir, line: 0, message: `unreadable (${(e as Error).message})` }] };
  }
  const wanted = names
    .filter((name) => {
      const day = FILE_RE.exec(name)?.[1];
      return day !== undefined && (days.from === undefined || day >= days.from) && (days.to === undefined || day <= days.to);
    })
    .sort();
  const lines: T[] = [];
  const problems: MetricsProblem[] = [];
  for (const name of wanted) {
    const file = join(dir, name);
    try {
      const { size, mtimeMs } = statSync(file);
      let hit = cache?.get(name);
      if (hit?.size !== size || hit.mtimeMs !== mtimeMs) {
        hit = { size, mtimeMs, read: parseFile(file, schema) };
        cache?.set(name, hit);
      }
      // Not push(...): a long day would overflow the call stack.
      for (const l of hit.read.lines) lines.push(l);
      for (const p of hit.read.problems) problems.push(p);
    } catch (e) {
      problems.push({ file, line: 0, message: `unreadable (${(e as Error).message})` });
    }
  }
  if (cache) for (const name of cache.keys()) if (!wanted.includes(name)) cache.delete(name);
  return { lines, problems };
}

/** The strict reader of a project's log, optionally limited to some days. */
export function readMetrics(projectRoot: string, days: MetricsDays = {}): MetricsRead {
  return readMetricsLog(metricsDir(projectRoot), days, metricsLineSchema);
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
  const day = metricsDay(now);
  return summarizeCost(readMetrics(projectRoot, { from: day, to: day }).lines).total;
}
