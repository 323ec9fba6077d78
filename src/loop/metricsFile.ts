// The loop's MetricsSink port over src/agents/metrics (`.ralph/logs/par-metrics-YYYYMMDD.jsonl`,
// the seed's field names): a thin adapter that maps the port's `task` to the file's `task_id`
// (the name the monitor and the agents reader use) and back.
import { appendMetricsIn, readCostEntries } from '../agents/metrics';
import type { MetricsLine, MetricsSink } from './ports';

export class JsonlMetrics implements MetricsSink {
  constructor(private readonly logsDir: string) {}

  append(line: MetricsLine): Promise<void> {
    // A failed write rejects (the harness logs it) rather than throwing at the caller.
    return new Promise((resolve) => {
      const { task, ...rest } = line;
      appendMetricsIn(this.logsDir, { ...rest, task_id: task });
      resolve();
    });
  }

  /**
   * Spend lines of the given days. Torn lines (not JSON) are left out here; budgets only
   * lose what a crash cut off, and `ralph repair` names them.
   */
  read(days: readonly string[]): Promise<MetricsLine[]> {
    return new Promise((resolve) => {
      const { entries } = readCostEntries(this.logsDir, days);
      resolve(entries.map(({ task_id, ...rest }) => ({ ...(rest as unknown as MetricsLine), task: task_id })));
    });
  }
}
