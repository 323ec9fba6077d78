// The loop's MetricsSink port over the metrics log (src/agents/metrics owns the format): the
// port's `task` is the file's `task_id`. Reads spend for budgets leniently: any JSON line with
// a `ts` counts, since spend recorded by a partial line is still spend.
import { z } from 'zod';
import { appendMetricsIn, readMetricsLog } from '../agents/metrics';
import type { MetricsProblem } from '../agents/metrics';
import type { MetricsLine, MetricsSink } from './ports';

/** A cost that is not a number counts 0; older loop lines named the task `task`. Other fields are kept as they are. */
const spendLineSchema = z.looseObject({ ts: z.string() }).transform(
  ({ cost, task_id, task, ...rest }) =>
    ({
      ...rest,
      cost: Number(cost) || 0,
      task: typeof task_id === 'string' ? task_id : typeof task === 'string' ? task : null,
    }) as unknown as MetricsLine,
);

/** Budgets fail closed: a metrics file that cannot be read may hold the day's spend. */
export class MetricsUnreadableError extends Error {
  override readonly name = 'MetricsUnreadableError';
  constructor(readonly problem: MetricsProblem) {
    super(`${problem.file}: ${problem.message}`);
  }
}

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
   * Spend lines of the given days (YYYY-MM-DD), and the torn lines (not JSON, no `ts`) as
   * `file:line: message` for the harness to report: they lose only what a crash cut off.
   */
  read(days: readonly string[]): Promise<{ lines: MetricsLine[]; problems: string[] }> {
    return new Promise((resolve) => {
      const reads = days
        .map((day) => day.replace(/-/g, ''))
        .map((day) => readMetricsLog(this.logsDir, { from: day, to: day }, spendLineSchema));
      const problems = reads.flatMap((r) => r.problems);
      const unreadable = problems.find((p) => p.line === 0);
      if (unreadable) throw new MetricsUnreadableError(unreadable);
      resolve({ lines: reads.flatMap((r) => r.lines), problems: problems.map((p) => `${p.file}:${p.line}: ${p.message}`) });
    });
  }
}
