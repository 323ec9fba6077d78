import * as assert from 'node:assert/strict';
import { EventIdGenerator, defaultRunId, isoTimestamp } from '../../../src/store/eventIds';

describe('store/eventIds', () => {
  it('given a frozen clock, when 10k ids are issued in a tight loop, then all are unique and sorted', () => {
    const gen = new EventIdGenerator(() => Date.UTC(2026, 10, 29, 12, 0, 0, 0));
    const ids = Array.from({ length: 10_000 }, () => gen.next());
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual([...ids].sort(), ids);
  });

  it('given the clock steps back, then ids keep increasing', () => {
    let now = Date.UTC(2026, 10, 29, 12, 0, 0, 500);
    const gen = new EventIdGenerator(() => now);
    const a = gen.next();
    now -= 60_000; // NTP step back one minute
    const b = gen.next();
    const c = gen.next();
    assert.ok(a < b && b < c, `${a} < ${b} < ${c}`);
  });

  it('given a full millisecond, then the sequence carries into the next one', () => {
    const gen = new EventIdGenerator(() => 0);
    let last = '';
    for (let i = 0; i < 1_000_001; i++) last = gen.next();
    assert.equal(last, 'evt_19700101000000001_000000');
  });

  it('given an observed id from an earlier writer, then new ids sort after it even with an older clock', () => {
    const gen = new EventIdGenerator(() => Date.UTC(2020, 0, 1));
    gen.observe('evt_20261129120000000_000041');
    gen.observe('not-ours'); // ignored
    assert.equal(gen.next(), 'evt_20261129120000000_000042');
  });

  it('formats ts as ISO 8601 UTC with milliseconds and run ids like the reference', () => {
    const ms = Date.UTC(2026, 10, 29, 7, 5, 3, 9);
    assert.equal(isoTimestamp(ms), '2026-11-29T07:05:03.009Z');
    assert.equal(defaultRunId(ms, 4242), 'run_20261129_4242');
  });
});
