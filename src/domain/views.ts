// Text views derived from the control plane's state: STATE.json (the reference's keys)
// and the `status` summary (the reference's exact shape).
import { renderForecast, type Forecast } from './forecast';

/** The loop's own position; the harness owns these, render-state preserves them. */
export interface LoopPosition {
  readonly iteration: number;
  readonly phase: string;
  readonly current_item: string | null;
  readonly current_plan: string | null;
  readonly current_sub_step: number;
  readonly retry_count: number;
  readonly compile_status: string;
  readonly test_status: string;
  readonly progress_history: unknown[];
  readonly last_evolve_at: number;
  readonly last_dry_at: number;
  readonly last_integ_at: number;
  readonly last_ui_at: number;
}

export const DEFAULT_LOOP_POSITION: LoopPosition = {
  iteration: 0,
  phase: 'assess',
  current_item: null,
  current_plan: null,
  current_sub_step: 0,
  retry_count: 0,
  compile_status: 'unknown',
  test_status: 'unknown',
  progress_history: [],
  last_evolve_at: 0,
  last_dry_at: 0,
  last_integ_at: 0,
  last_ui_at: 0,
};

/** What the event log says (counts are derived, never carried over). */
export interface ControlFacts {
  readonly taskCounts: Readonly<Record<string, number>>;
  readonly commitsTotal: number;
  readonly currentWave: number;
}

type Json = Record<string, unknown>;

function pick<T>(prev: Json, key: string, ok: (v: unknown) => boolean, fallback: T): T {
  const v = prev[key];
  return ok(v) ? (v as T) : fallback;
}

const isNum = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown): boolean => typeof v === 'string';
const isStrOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

/** The loop position found in a previous STATE.json, defaults where absent or malformed. */
export function loopPositionFrom(prev: Json | undefined): LoopPosition {
  const p = prev ?? {};
  const d = DEFAULT_LOOP_POSITION;
  return {
    iteration: pick(p, 'iteration', isNum, d.iteration),
    phase: pick(p, 'phase', isStr, d.phase),
    current_item: pick(p, 'current_item', isStrOrNull, d.current_item),
    current_plan: pick(p, 'current_plan', isStrOrNull, d.current_plan),
    current_sub_step: pick(p, 'current_sub_step', isNum, d.current_sub_step),
    retry_count: pick(p, 'retry_count', isNum, d.retry_count),
    compile_status: pick(p, 'compile_status', isStr, d.compile_status),
    test_status: pick(p, 'test_status', isStr, d.test_status),
    progress_history: pick(p, 'progress_history', Array.isArray, d.progress_history),
    last_evolve_at: pick(p, 'last_evolve_at', isNum, d.last_evolve_at),
    last_dry_at: pick(p, 'last_dry_at', isNum, d.last_dry_at),
    last_integ_at: pick(p, 'last_integ_at', isNum, d.last_integ_at),
    last_ui_at: pick(p, 'last_ui_at', isNum, d.last_ui_at),
  };
}

/** STATE.json's object, keys in the reference's order; unknown keys of `prev` kept after. */
export function renderStateObject(facts: ControlFacts, prev?: Json, loop?: Partial<LoopPosition>): Json {
  const pos = { ...loopPositionFrom(prev), ...(loop ?? {}) };
  const n = (s: string): number => facts.taskCounts[s] ?? 0;
  const total = Object.values(facts.taskCounts).reduce((a, b) => a + b, 0);
  const state: Json = {
    iteration: pos.iteration,
    phase: pos.phase,
    current_item: pos.current_item,
    current_plan: pos.current_plan,
    current_sub_step: pos.current_sub_step,
    current_wave: facts.currentWave,
    retry_count: pos.retry_count,
    commits_total: facts.commitsTotal,
    compile_status: pos.compile_status,
    test_status: pos.test_status,
    progress_history: pos.progress_history,
    last_evolve_at: pos.last_evolve_at,
    last_dry_at: pos.last_dry_at,
    last_integ_at: pos.last_integ_at,
    last_ui_at: pos.last_ui_at,
    items_done_count: n('done'),
    items_blocked_count: n('blocked'),
    items_deferred_count: n('deferred'),
    items_pending_count: n('pending'),
    items_total_count: total,
  };
  for (const [k, v] of Object.entries(prev ?? {})) if (!(k in state)) state[k] = v;
  return state;
}

export function renderStateJson(facts: ControlFacts, prev?: Json, loop?: Partial<LoopPosition>): string {
  return `${JSON.stringify(renderStateObject(facts, prev, loop), null, 2)}\n`;
}

export interface StatusFacts {
  readonly phase: string;
  readonly iteration: number;
  readonly commits: number;
  readonly current: string | null;
  readonly wave: number;
  /** Status -> count, in the order to print (the reference's GROUP BY order: by name). */
  readonly taskCounts: readonly (readonly [string, number])[];
  readonly patchCounts: readonly (readonly [string, number])[];
  readonly eventsTotal: number;
  readonly eventsLastHour: number;
  readonly deferred: number;
  /** What finishing the backlog will cost and take; absent or `none` before any agent ran. */
  readonly forecast?: Forecast;
  /** Today's (UTC) agent spend and the day's budget (0 = no limit); absent before any agent ran. */
  readonly spendToday?: { readonly spentUsd: number; readonly perDayUsd: number };
  /** Set while the loop's last lifecycle event is a pause: why, since when, and a shared failure's class. */
  readonly paused?: LoopPause;
}

export interface LoopPause {
  readonly reason: string;
  readonly since: string;
  readonly failureClass?: string;
  readonly agents?: readonly string[];
}

export const REVIEW_THRESHOLD = 3;

/** The reference's `status` text, line for line. */
export function renderStatus(f: StatusFacts): string {
  const total = f.taskCounts.reduce((a, [, n]) => a + n, 0);
  const kv = (xs: StatusFacts['taskCounts']): string => xs.map(([k, n]) => `${k}=${n}`).join(',');
  return [
    '=== Ralph Loop v3 Status ===',
    `Phase: ${f.phase} | Iteration: ${f.iteration} | Commits: ${f.commits}`,
    `Current: ${f.current ?? 'None'} | Wave: ${f.wave}`,
    `Tasks (${total}): ${kv(f.taskCounts)}`,
    `Patches: ${f.patchCounts.length ? kv(f.patchCounts) : 'none'}`,
    `Events: ${f.eventsTotal} total, ${f.eventsLastHour} last hour`,
    `Deferred: ${f.deferred} | Review needed: ${f.deferred >= REVIEW_THRESHOLD ? `YES (≥${REVIEW_THRESHOLD} items)` : 'no'}`,
    // The reference's lines stay as they are; the forecast follows once agents have spent.
    ...(f.forecast === undefined ? [] : [renderForecast(f.forecast)].filter((l): l is string => l !== undefined)),
    ...(f.spendToday === undefined ? [] : [renderSpendToday(f.spendToday)]),
    ...(f.paused === undefined ? [] : [`Paused since ${f.paused.since}: ${f.paused.reason} (\`ralph resume\` goes on)`]),
    '',
  ].join('\n');
}

/** "Spend today: $1.20 of $50.00 a day ($48.80 left)", or the cap reached, or no cap. */
export function renderSpendToday(s: NonNullable<StatusFacts['spendToday']>): string {
  const usd = (n: number): string => `$${n.toFixed(2)}`;
  if (s.perDayUsd <= 0) return `Spend today: ${usd(s.spentUsd)} (no daily budget: budgets.per_day is 0)`;
  const left = s.perDayUsd - s.spentUsd;
  return left > 0
    ? `Spend today: ${usd(s.spentUsd)} of ${usd(s.perDayUsd)} a day (${usd(left)} left)`
    : `Spend today: ${usd(s.spentUsd)} of ${usd(s.perDayUsd)} a day (the day's budget is spent: raise budgets.per_day or wait for tomorrow)`;
}

/** The ISO instant one hour before `now`, comparable as a string with stored `ts` values. */
export function lastHourCutoff(now: Date): string {
  return new Date(now.getTime() - 3600_000).toISOString();
}

export interface DeferredItem {
  readonly task_id: string;
  readonly title: string | null;
  readonly risk_tier: number;
  readonly deferred_reason: string | null;
  readonly deferred_at: string | null;
  readonly source: string | null;
}

/** get-deferred-queue --format prompt. */
export function renderDeferredPrompt(items: readonly DeferredItem[]): string {
  if (items.length === 0) return 'No deferred items.\n';
  const out = ['## Deferred Items for Review', ''];
  for (const t of items) {
    out.push(
      `### ${t.task_id}: ${t.title ?? ''}`,
      `- Risk Tier: ${t.risk_tier}`,
      `- Reason: ${t.deferred_reason ?? '-'}`,
      `- Deferred At: ${t.deferred_at ?? '-'}`,
      `- Source: ${t.source ?? '-'}`,
      '',
    );
  }
  return out.join('\n');
}
