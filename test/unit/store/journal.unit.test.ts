import * as assert from 'node:assert/strict';
import * as zlib from 'node:zlib';
import { crc32, encodeRecord, scanJournal } from '../../../src/store/journal';
import type { StoredEvent } from '../../../src/store/types';

function event(i: number): StoredEvent {
  return {
    event_id: `evt_20261129120000000_${String(i).padStart(6, '0')}`,
    ts: '2026-11-29T12:00:00.000Z',
    run_id: 'run_20261129_1',
    entity_type: 'task',
    entity_id: `T${i}`,
    event_type: 'task.created',
    actor: 'test',
    payload: { text: 'line\nbreak ✓', i },
  };
}

describe('store/journal', () => {
  it('computes the same CRC-32 as zlib', () => {
    const buf = Buffer.from('hello, journal ✓');
    const z = (zlib as unknown as { crc32?: (b: Buffer) => number }).crc32;
    assert.equal(crc32(buf), z ? z(buf) : 0x4b5a0a8e);
  });

  it('given encoded records, when scanned, then they come back in order', () => {
    const buf = Buffer.concat([encodeRecord([event(1), event(2)]), encodeRecord([event(3)])]);
    const scan = scanJournal(buf);
    assert.deepEqual(
      scan.records.map((r) => r.events.map((e) => e.entity_id)),
      [['T1', 'T2'], ['T3']],
    );
    assert.equal(scan.validEnd, buf.length);
    assert.equal(scan.tornBytes, 0);
  });

  it('given a record cut off mid-write, then the valid prefix is kept and the tail reported torn', () => {
    const a = encodeRecord([event(1)]);
    const b = encodeRecord([event(2)]);
    for (const cut of [1, 9, Math.floor(b.length / 2), b.length - 1]) {
      const scan = scanJournal(Buffer.concat([a, b.subarray(0, cut)]));
      assert.equal(scan.records.length, 1, `cut at ${cut}`);
      assert.equal(scan.validEnd, a.length);
      assert.equal(scan.tornBytes, cut);
    }
  });

  it('given a flipped byte in the last record, then its checksum rejects it', () => {
    const a = encodeRecord([event(1)]);
    const b = Buffer.from(encodeRecord([event(2)]));
    b[20] = (b[20] ?? 0) ^ 0x01;
    const scan = scanJournal(Buffer.concat([a, b]));
    assert.equal(scan.records.length, 1);
    assert.match(scan.tornReason ?? '', /checksum mismatch/);
  });

  it('given a valid checksum over JSON that is not a record, then it is rejected with the place', () => {
    const body = Buffer.from(JSON.stringify({ v: 1, events: [{ event_id: 3 }] }));
    const rec = Buffer.concat([Buffer.from(`${crc32(body).toString(16).padStart(8, '0')} `), body, Buffer.from('\n')]);
    const scan = scanJournal(rec, 100);
    assert.equal(scan.records.length, 0);
    assert.match(scan.tornReason ?? '', /invalid record at byte 100/);
  });
});
