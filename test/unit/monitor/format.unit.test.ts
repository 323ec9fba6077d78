// The monitor's number and time formatting: ticks that never repeat, elapsed times that read
// the same in the page and in the Agents tree.
import { strict as assert } from 'node:assert';
import { bucketLabel, formatAgo, formatElapsed, usdTick } from '../../../src/protocol/format';

describe('monitor formatting', () => {
  it('given cent-sized axis steps, then neighbouring USD ticks never read the same', () => {
    const ticks = (step: number, n: number): string[] => Array.from({ length: n }, (_, i) => usdTick(i * step, step));
    for (const step of [0.002, 0.0005, 0.01, 0.25, 2]) {
      const t = ticks(step, 6);
      assert.equal(new Set(t).size, t.length, `${step}: ${t.join(' ')}`);
    }
    assert.deepEqual(ticks(0.002, 3), ['$0.000', '$0.002', '$0.004']);
    assert.deepEqual(ticks(0.5, 3), ['$0.00', '$0.50', '$1.00']);
  });

  it('formats elapsed times as the Agents tree does, and relative times', () => {
    assert.equal(formatElapsed(0), '0s');
    assert.equal(formatElapsed(65_400), '1m 5s');
    assert.equal(formatElapsed(2 * 3_600_000 + 14 * 60_000 + 9_000), '2h 14m');
    assert.equal(formatElapsed(-5), '0s');
    const now = Date.parse('2026-11-29T12:00:00Z');
    assert.equal(formatAgo('2026-11-29T11:59:48Z', now), '12s ago');
    assert.equal(formatAgo('2026-11-29T09:00:00Z', now), '3h ago');
    assert.equal(formatAgo(null, now), '—');
  });

  it('labels sub-minute buckets with seconds', () => {
    const iso = new Date(2026, 10, 29, 9, 5, 30).toISOString();
    assert.equal(bucketLabel(iso, 5, false), '09:05:30');
    assert.equal(bucketLabel(iso, 300, false), '09:05');
  });
});
