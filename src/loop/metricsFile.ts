// A MetricsSink over `.ralph/logs/par-metrics-YYYYMMDD.jsonl` (the seed's file and field
// names). Used until src/agents' metrics writer is wired in; the format is the same.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MetricsLine, MetricsSink } from './ports';

export function metricsFileName(day: string): string {
  return `par-metrics-${day.replace(/-/g, '')}.jsonl`;
}

export class JsonlMetrics implements MetricsSink {
  constructor(private readonly logsDir: string) {}

  async append(line: MetricsLine): Promise<void> {
    await mkdir(this.logsDir, { recursive: true });
    await appendFile(join(this.logsDir, metricsFileName(line.ts.slice(0, 10))), `${JSON.stringify(line)}\n`);
  }

  async read(days: readonly string[]): Promise<MetricsLine[]> {
    const out: MetricsLine[] = [];
    for (const d of days) {
      let text: string;
      try {
        text = await readFile(join(this.logsDir, metricsFileName(d)), 'utf8');
      } catch {
        continue;
      }
      for (const l of text.split('\n')) {
        if (l.trim().length === 0) continue;
        try {
          const v = JSON.parse(l) as Partial<MetricsLine> & { task_id?: string };
          // Lines from other writers may name the task `task_id`; cost must be a number.
          out.push({ ...(v as MetricsLine), cost: Number(v.cost) || 0, task: v.task ?? v.task_id ?? null });
        } catch {
          // a torn last line after a crash: ignored for budgets, repair reports it
        }
      }
    }
    return out;
  }
}
