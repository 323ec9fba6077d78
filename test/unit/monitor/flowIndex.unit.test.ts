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

  it('given steps of exactly the gap and of one millisecond more, between rows and between a line and a row, then the window joins the first and splits at the second, as the walk does', () => {
    const G = RUN_GAP_MS;
    const row = (tsMs: number): TaskEventRow => ({ tsMs, taskId: 'T1', status: 'pending' });
    const cases: { name: string; rows: number[]; lines: number[]; fromMs: number }[] = [
      { name: 'rows a gap apart', rows: [0, G, 2 * G], lines: [], fromMs: 0 },
      { name: 'rows a gap and 1 ms apart', rows: [0, G + 1, 2 * G + 1], lines: [], fromMs: G + 1 },
      { name: 'a line a gap before the rows', rows: [G, G + 10], lines: [0], fromMs: 0 },
      { name: 'a line a gap and 1 ms before the rows', rows: [G + 1, G + 10], lines: [0], fromMs: G + 1 },
      { name: 'a row a gap before a line', rows: [0], lines: [G], fromMs: 0 },
      { name: 'a row a gap and 1 ms before a line', rows: [0], lines: [G + 1], fromMs: G + 1 },
    ];
    for (const c of cases) {
      const rows = c.rows.map(row);
      const lines = c.lines.map((tsMs) => ({ tsMs }));
      const nowMs = Math.max(...c.rows, ...c.lines);
      const index = new FlowIndex();
      index.extend(rows);
      const walk = runWindow(lines, rows, nowMs, false);
      assert.deepEqual(walk, { fromMs: c.fromMs, toMs: nowMs }, `${c.name}: the walk`);
      assert.deepEqual(index.runWindow(lines, rows.length, nowMs, false), walk, `${c.name}: the index`);
    }
  });
});
