// Guards that bound the loop: spend per invocation / task / day summed from the metrics
// lines, max iterations, max consecutive failures, and identical-failure detection (the same
// gate failing with the same normalized output twice means: stop retrying that way). Pure.
import { createHash } from 'node:crypto';

export interface BudgetLimits {
  /** USD per agent invocation, passed to the CLI (`--max-budget-usd`). */
  readonly perInvocationPrimary: number;
  readonly perInvocationWorker: number;
  /** USD summed over every invocation for one task. */
  readonly perTask: number;
  /** USD summed over every invocation of the UTC day. */
  readonly perDay: number;
}

/** The part of a metrics line (par-metrics-YYYYMMDD.jsonl) budgets need. */
export interface CostLine {
  readonly ts: string;
  readonly cost: number;
  readonly task?: string | null | undefined;
}

export interface SpendSummary {
  readonly day: string;
  readonly today: number;
  readonly byTask: ReadonlyMap<string, number>;
}

/** UTC day of an ISO timestamp, `YYYY-MM-DD`. */
export function utcDay(iso: string): string {
  return iso.slice(0, 10);
}

export function summarizeSpend(lines: Iterable<CostLine>, day: string): SpendSummary {
  let today = 0;
  const byTask = new Map<string, number>();
  for (const l of lines) {
    const cost = Number.isFinite(l.cost) ? l.cost : 0;
    if (utcDay(l.ts) === day) today += cost;
    if (l.task) byTask.set(l.task, (byTask.get(l.task) ?? 0) + cost);
  }
  return { day, today, byTask };
}

export type BudgetVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly scope: 'day' | 'task'; readonly spent: number; readonly limit: number; readonly message: string };

/** Checked before each invocation. Day first: reaching it pauses the whole loop. */
export function checkBudget(spend: SpendSummary, limits: BudgetLimits, taskId: string | null): BudgetVerdict {
  if (limits.perDay > 0 && spend.today >= limits.perDay) {
    return {
      ok: false,
      scope: 'day',
      spent: spend.today,
      limit: limits.perDay,
      message: `daily budget reached: $${spend.today.toFixed(2)} of $${limits.perDay.toFixed(2)} spent on ${spend.day}`,
    };
  }
  if (taskId !== null && limits.perTask > 0) {
    const spent = spend.byTask.get(taskId) ?? 0;
    if (spent >= limits.perTask) {
      return {
        ok: false,
        scope: 'task',
        spent,
        limit: limits.perTask,
        message: `task budget reached for ${taskId}: $${spent.toFixed(2)} of $${limits.perTask.toFixed(2)}`,
      };
    }
  }
  return { ok: true };
}

/**
 * The budget for the next invocation: the per-invocation cap, never more than what is left
 * of the day's and the task's budgets (so one run cannot overshoot them by a whole cap).
 */
export function invocationBudget(spend: SpendSummary, limits: BudgetLimits, role: 'primary' | 'worker', taskId: string | null): number {
  let cap = role === 'primary' ? limits.perInvocationPrimary : limits.perInvocationWorker;
  if (limits.perDay > 0) cap = Math.min(cap, limits.perDay - spend.today);
  if (taskId !== null && limits.perTask > 0) cap = Math.min(cap, limits.perTask - (spend.byTask.get(taskId) ?? 0));
  return Math.max(0, Math.round(cap * 10000) / 10000);
}

export interface RunLimits {
  /** 0 = unlimited. */
  readonly maxIterations: number;
  readonly maxConsecutiveFailures: number;
}

export interface RunCounters {
  readonly iterations: number;
  readonly consecutiveFailures: number;
}

export const ZERO_COUNTERS: RunCounters = { iterations: 0, consecutiveFailures: 0 };

export function countIteration(c: RunCounters, failed: boolean): RunCounters {
  return { iterations: c.iterations + 1, consecutiveFailures: failed ? c.consecutiveFailures + 1 : 0 };
}

export type StopVerdict = { readonly stop: false } | { readonly stop: true; readonly reason: string };

export function checkRunLimits(c: RunCounters, l: RunLimits): StopVerdict {
  if (l.maxIterations > 0 && c.iterations >= l.maxIterations) {
    return { stop: true, reason: `max iterations reached (${l.maxIterations})` };
  }
  if (l.maxConsecutiveFailures > 0 && c.consecutiveFailures >= l.maxConsecutiveFailures) {
    return { stop: true, reason: `${c.consecutiveFailures} consecutive failures (limit ${l.maxConsecutiveFailures})` };
  }
  return { stop: false };
}

/**
 * Strips what changes between two runs of the same failure: timestamps, durations, temp and
 * worktree paths, hex ids, line:column positions keep (they matter), counts of ms/s drop.
 */
export function normalizeFailureOutput(output: string): string {
  return (
    output
      // eslint-disable-next-line no-control-regex -- ANSI colour codes differ between runs
      .replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')
      .replace(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<ts>')
      .replace(/\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|m)\b/g, '<dur>')
      .replace(/\(\d+(?:\.\d+)?(?:ms|s)\)/g, '(<dur>)')
      .replace(/(?:\/tmp|\/var\/folders|\/private\/var)\/[^\s:'"]+/g, '<tmp>')
      .replace(/\/[^\s:'"]*\/(?:worktrees?|\.ralph)\/[^\s:'"/]+/g, '<wt>')
      .replace(/\b[0-9a-f]{7,40}\b/g, '<hex>')
      .replace(/\bpid[ =:]?\d+/gi, 'pid <n>')
      .replace(/[ \t]+/g, ' ')
      .replace(/\n{2,}/g, '\n')
      .trim()
  );
}

export function failureSignature(gate: string, output: string): string {
  return createHash('sha256').update(gate).update('\0').update(normalizeFailureOutput(output)).digest('hex').slice(0, 16);
}

/** Per task: remembers failure signatures; `record` says whether this one was seen before. */
export class IdenticalFailureTracker {
  private readonly seen = new Map<string, Set<string>>();

  record(taskId: string, gate: string, output: string): boolean {
    const sig = failureSignature(gate, output);
    let set = this.seen.get(taskId);
    if (set === undefined) {
      set = new Set();
      this.seen.set(taskId, set);
    }
    if (set.has(sig)) return true;
    set.add(sig);
    return false;
  }

  forget(taskId: string): void {
    this.seen.delete(taskId);
  }
}
