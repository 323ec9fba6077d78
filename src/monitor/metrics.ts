// Reads the per-invocation metrics files `.ralph/logs/par-metrics-YYYYMMDD.jsonl` (one JSON
// object per line, field names from the seed README). Lines that do not parse are reported
// by file and line number, never dropped silently.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

const num = z.coerce.number().finite().nonnegative().catch(0);

const metricsLineSchema = z.object({
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
  backend: z.string().optional().catch(undefined),
  task_id: z.string().nullable().optional().catch(null),
});

/** One invocation, as written by the loop. `tsMs` is the parsed time. */
export type MetricsLine = z.infer<typeof metricsLineSchema> & { readonly tsMs: number };

export interface MetricsRead {
  readonly lines: MetricsLine[];
  readonly problems: string[];
}

const FILE_RE = /^par-metrics-(\d{4})(\d{2})(\d{2})\.jsonl$/;

/** `par-metrics-YYYYMMDD.jsonl` for the UTC day of `at`. */
export function metricsFileName(at: Date): string {
  return `par-metrics-${at.toISOString().slice(0, 10).replace(/-/g, '')}.jsonl`;
}

/** True for an invocation that did not succeed (the CLI's result subtype). */
export function isFailure(line: MetricsLine): boolean {
  return line.subtype !== '' && line.subtype !== 'success';
}

/** Parses one file's text; `name` is used in problem messages. */
export function parseMetricsText(text: string, name: string): MetricsRead {
  const lines: MetricsLine[] = [];
  const problems: string[] = [];
  const rows = text.split('\n');
  for (let i = 0; i < rows.length; i++) {
    const raw = rows[i]?.trim();
    if (!raw) continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (e) {
      problems.push(`${name}:${i + 1}: not JSON (${(e as Error).message})`);
      continue;
    }
    const r = metricsLineSchema.safeParse(json);
    if (!r.success) {
      problems.push(`${name}:${i + 1}: ${r.error.issues.map((x) => `${x.path.join('.') || '(line)'}: ${x.message}`).join('; ')}`);
      continue;
    }
    lines.push({ ...r.data, tsMs: Date.parse(r.data.ts) });
  }
  return { lines, problems };
}

/** Parsed files by name, reused while their size and mtime are unchanged. */
export type MetricsFileCache = Map<string, { readonly size: number; readonly mtimeMs: number; readonly read: MetricsRead }>;

/**
 * Reads the metrics files for the `days` UTC days ending with the day of `now`
 * (missing files are simply days without invocations). Lines come back in time order.
 * With `cache`, only files that changed since the last call are parsed again.
 */
export function readMetrics(logsDir: string, now: Date, days: number, cache?: MetricsFileCache): MetricsRead {
  let names: string[];
  try {
    names = readdirSync(logsDir);
  } catch {
    return { lines: [], problems: [] };
  }
  const first = new Date(now.getTime() - (days - 1) * 86_400_000);
  const minName = metricsFileName(first);
  const maxName = metricsFileName(now);
  const lines: MetricsLine[] = [];
  const problems: string[] = [];
  const wanted = names.filter((n) => FILE_RE.test(n) && n >= minName && n <= maxName).sort();
  for (const name of wanted) {
    const file = join(logsDir, name);
    let r: MetricsRead;
    try {
      const st = statSync(file);
      const hit = cache?.get(name);
      if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) {
        r = hit.read;
      } else {
        r = parseMetricsText(readFileSync(file, 'utf8'), name);
        cache?.set(name, { size: st.size, mtimeMs: st.mtimeMs, read: r });
      }
    } catch (e) {
      problems.push(`${name}: unreadable (${(e as Error).message})`);
      continue;
    }
    lines.push(...r.lines);
    problems.push(...r.problems);
  }
  if (cache) for (const name of cache.keys()) if (!wanted.includes(name)) cache.delete(name);
  lines.sort((a, b) => a.tsMs - b.tsMs);
  return { lines, problems };
}
