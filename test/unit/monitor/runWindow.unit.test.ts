// The charts' run window walks the two activity lists back from their ends; it must give what
// sorting every time together and walking back from the newest gives, in order or not.
import { strict as assert } from 'node:assert';
import { RUN_GAP_MS, runWindow } from '../../../src/monitor/series';

/** The window by the definition: every time at or before now, sorted, walked back to the first gap. */
function byDefinition(
  a: readonly number[],
  b: readonly number[],
  nowMs: number,
  running: boolean,
): { fromMs: number; toMs: number } | null {
  const times = [...a, ...b].filter((t) => t <= nowMs).sort((x, y) => x - y);
  const last = times.at(-1);
  if (last === undefined) return null;
  let from = last;
  for (let i = times.length - 2; i >= 0 && from - (times[i] ?? from) <= RUN_GAP_MS; i--) from = times[i] ?? from;
  return { fromMs: from, toMs: running ? nowMs : last };
}

describe('monitor: the run window', () => {
  it('given lists in time order, out of order, with gaps, times after now and unreadable times, then it equals the definition', () => {
    let seed = 11;
    const rand = (n: number): number => {
      seed = (seed * 48271) % 2147483647;
      return seed % n;
    };
    for (let k = 0; k < 400; k++) {
      const list = (): number[] => {
        let t = 0;
        const xs = Array.from({ length: rand(30) }, () => (t += rand(4) === 0 ? RUN_GAP_MS + rand(5) - 2 : rand(600_000)));
        if (k % 3 === 1 && xs.length > 2) xs.reverse();
        if (k % 7 === 2) xs.push(Number.NaN);
        return xs;
      };
      const a = list();
      const b = list();
      const nowMs = rand(2) === 0 ? Number.MAX_SAFE_INTEGER : rand(10 * RUN_GAP_MS);
      const running = rand(2) === 0;
      const got = runWindow(
        a.map((tsMs) => ({ tsMs })),
        b.map((tsMs) => ({ tsMs })),
        nowMs,
        running,
      );
      assert.deepEqual(got, byDefinition(a, b, nowMs, running), `case ${k}: ${JSON.stringify({ a, b, nowMs, running })}`);
    }
  });
});
