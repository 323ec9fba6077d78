import { strict as assert } from 'node:assert';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metricsFileName } from '../../../src/agents/metrics';
import { readMetrics } from '../../../src/monitor/metrics';
import type { MetricsFileCache } from '../../../src/monitor/metrics';

const NOW = new Date('2026-11-29T12:00:00.000Z');
const line = (ts: string, cost: number): string => JSON.stringify({ ts, agent: 'A', cost, duration: 1, subtype: 'success' }) + '\n';

describe('readMetrics', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-metrics-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads only the files of the last N UTC days, in time order, missing numbers as 0', () => {
    writeFileSync(join(dir, 'par-metrics-20261120.jsonl'), line('2026-11-20T10:00:00Z', 5));
    writeFileSync(join(dir, 'par-metrics-20261128.jsonl'), line('2026-11-28T10:00:00Z', 2));
    writeFileSync(join(dir, metricsFileName(NOW)), line('2026-11-29T09:00:00Z', 1));
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    const r = readMetrics(dir, NOW, 7);
    assert.deepEqual(
      r.lines.map((l) => l.cost),
      [2, 1],
    );
    assert.equal(r.lines[0]?.output_tokens, 0);
    assert.deepEqual(r.problems, []);
  });

  it('given a cache, parses a file again only when it changed', () => {
    const file = join(dir, metricsFileName(NOW));
    writeFileSync(file, line('2026-11-29T09:00:00Z', 1));
    const cache: MetricsFileCache = new Map();
    const first = readMetrics(dir, NOW, 1, cache);
    const again = readMetrics(dir, NOW, 1, cache);
    assert.equal(again.lines[0], first.lines[0], 'the same parsed object is reused');
    appendFileSync(file, line('2026-11-29T10:00:00Z', 3));
    const grown = readMetrics(dir, NOW, 1, cache);
    assert.deepEqual(
      grown.lines.map((l) => l.cost),
      [1, 3],
    );
  });
});
