// The monitor's view of the metrics log (src/agents/metrics owns the format). Lenient: the
// monitor shows whatever history a project has, including lines written before a field
// existed, so odd or missing numbers read as 0 and only a line without a valid `ts` is refused.
import { basename } from 'node:path';
import { z } from 'zod';
import { metricsDay, readMetricsLog } from '../agents/metrics';
import type { MetricsCache } from '../agents/metrics';

const num = z.coerce.number().finite().nonnegative().catch(0);

const monitorLineSchema = z
  .object({
    ts: z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'ts is not an ISO 8601 time'),
    agent: z.coerce.string(),
    iter: num,
    phase_from: z.string().catch(''),
    phase_to: z.string().catch(''),
    duration: num,
    cost: num,
    prompt_bytes: num,
    turns: num,
    input_tokens: num,
    cache_read: num,
    cache_create: num,
    output_tokens: num,
    model: z.string().catch(''),
    subtype: z.string().catch(''),
    status: z.string().optional().catch(undefined),
    stop_reason: z.string().optional().catch(undefined),
    backend: z.string().optional().catch(undefined),
    task_id: z.string().nullable().optional().catch(null),
  })
  .transform((l) => ({ ...l, tsMs: Date.parse(l.ts) }));

/** One invocation, as written by the loop. `tsMs` is the parsed time. */
export type MetricsLine = z.output<typeof monitorLineSchema>;

export type MetricsFileCache = MetricsCache<MetricsLine>;

export interface MetricsRead {
  readonly lines: MetricsLine[];
  /** `file:line: message`, shown as snapshot warnings. */
  readonly problems: string[];
}

/**
 * True for an invocation that did not succeed (the CLI's result subtype). A run cancelled
 * because someone decided (a human's verdict aborting the judge, a stop) is not a failure;
 * one cancelled by its timeout is. Lines from before `stop_reason` existed count as aborts.
 */
export function isFailure(line: MetricsLine): boolean {
  if (line.subtype === '' || line.subtype === 'success') return false;
  if (line.subtype === 'cancelled' || line.status === 'cancelled') return line.stop_reason === 'timeout';
  return true;
}

/** The `days` UTC days ending with the day of `now`, lines in time order. */
export function readMetrics(logsDir: string, now: Date, days: number, cache?: MetricsFileCache): MetricsRead {
  const from = metricsDay(new Date(now.getTime() - (days - 1) * 86_400_000));
  const r = readMetricsLog(logsDir, { from, to: metricsDay(now) }, monitorLineSchema, cache);
  return {
    lines: r.lines.sort((a, b) => a.tsMs - b.tsMs),
    problems: r.problems.map((p) => `${basename(p.file)}${p.line > 0 ? `:${p.line}` : ''}: ${p.message}`),
  };
}
