// The slider's flow index must answer exactly what runWindow and flowSeries answer over the
// same prefix of a task history in time order, whatever its gaps, statuses and lines.
import { strict as assert } from 'node:assert';
import { FlowIndex } from '../../../src/monitor/flowIndex';
import { RUN_GAP_MS, flowSeries, runWindow } from '../../../src/monitor/series';
import type { TaskEventRow } from '../../../src/monitor/series';
import { TASK_STATUSES } from '../../../src/protocol/monitor';

describe('monitor: the time slider flow index', () => {
  it('given histories with gaps, repeated and null statuses, and lines in order or not, then every prefix answers as the walk does', () => {
    let seed = 5;
    const rand = (n: number): number => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let k = 0; k < 60; k++) {
      let t = rand(3) * RUN_GAP_MS;
      const rows: TaskEventRow[] = Array.from({ length: 1 + rand(200) }, () => ({
        tsMs: (t += rand(5) === 0 ? RUN_GAP_MS + rand(3) - 1 : rand(k % 2 === 0 ? 90_000 : 600_000)),
        taskId: `T${rand(12)}`,
        status: rand(6) === 0 ? null : (TASK_STATUSES[rand(TASK_STATUSES.length)] ?? null),
      }));
      let u = 0;
      const lines = Array.from({ length: rand(15) }, () => ({ tsMs: (u += rand(4) === 0 ? 2 * RUN_GAP_MS : rand(20 * 60_000)) }));
      if (k % 5 === 3) lines.reverse();
      const index = new FlowIndex();
      // Extended in pieces, as the slider reads the live history.
      while (index.length < rows.length) index.extend(rows.slice(index.length, index.length + 1 + rand(50)));
      assert.equal(index.length, rows.length);
      for (let n = 0; n <= rows.length; n += 1 + rand(9)) {
        const prefix = rows.slice(0, n);
        const nowMs = (prefix.at(-1)?.tsMs ?? 0) + (rand(4) === 0 ? 5 * 3_600_000 : rand(3) * 60_000 - 60_000);
        const running = rand(2) === 0;
        const window = runWindow(lines, prefix, nowMs, running);
        assert.deepEqual(index.runWindow(lines, n, nowMs, running), window, `history ${k}, prefix ${n}: window`);
        const buckets = 1 + rand(48);
        assert.deepEqual(index.flow(n, window, buckets), flowSeries(prefix, window, buckets), `history ${k}, prefix ${n}: flow`);
      }
    }
  });
});
