import * as assert from 'node:assert/strict';
import * as zlib from 'node:zlib';
import fc from 'fast-check';
import {
  crc32,
  encodeHeader,
  encodeRecord,
  headerOf,
  journalRecordSchema,
  recordOf,
  salvageRecords,
  scanJournal,
} from '../../../src/store/journal';
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

  it('given buffers on both sides of the size it hands to zlib, and ranges within them, then the same CRC-32 as zlib', () => {
    const z = (zlib as unknown as { crc32?: (b: Buffer) => number }).crc32;
    if (!z) return;
    for (const size of [0, 1, 300, 64 * 1024 - 1, 64 * 1024, 200_000]) {
      const buf = Buffer.alloc(size);
      for (let i = 0; i < size; i++) buf[i] = (i * 7919 + (i >> 5)) & 0xff;
      assert.equal(crc32(buf), z(buf) >>> 0, `whole, ${size} bytes`);
      const [from, to] = [Math.floor(size / 3), size - Math.floor(size / 5)];
      assert.equal(crc32(buf, from, to), z(buf.subarray(from, to)) >>> 0, `range ${from}..${to} of ${size} bytes`);
    }
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

  it('given a flipped byte in the last record, then its checksum rejects it, and a complete line is damage, not a torn tail', () => {
    const a = encodeRecord([event(1)]);
    const b = Buffer.from(encodeRecord([event(2)]));
    b[20] = (b[20] ?? 0) ^ 0x01;
    const scan = scanJournal(Buffer.concat([a, b]));
    assert.equal(scan.records.length, 1);
    assert.match(scan.tornReason ?? '', /checksum mismatch/);
    assert.deepEqual(scan.damage, { offset: a.length, reason: `checksum mismatch at byte ${a.length}`, intactAfter: 0, eventsAfter: 0 });
  });

  it('given one flipped byte in the first of three records, then the scan reports damage with the two intact records after it', () => {
    const recs = [encodeRecord([event(1)]), encodeRecord([event(2), event(3)]), encodeRecord([event(4)])];
    const first = Buffer.from(recs[0] as Buffer);
    first[40] = (first[40] ?? 0) ^ 0x20;
    const scan = scanJournal(Buffer.concat([first, recs[1] as Buffer, recs[2] as Buffer]), 500);
    assert.equal(scan.records.length, 0);
    assert.deepEqual(scan.damage, { offset: 500, reason: 'checksum mismatch at byte 500', intactAfter: 2, eventsAfter: 3 });
  });

  it('given a complete last record whose newline is missing, then only the writer takes it (and finishes the line)', () => {
    const a = encodeRecord([event(1)]);
    const b = encodeRecord([event(2)]);
    const buf = Buffer.concat([a, b.subarray(0, b.length - 1)]);
    const observer = scanJournal(buf);
    assert.equal(observer.records.length, 1);
    assert.equal(observer.tornBytes, b.length - 1);
    assert.equal(observer.damage, undefined);
    const writer = scanJournal(buf, 0, { acceptUnterminated: true });
    assert.equal(writer.records.length, 2);
    assert.equal(writer.unterminated, true);
    assert.equal(writer.validEnd, buf.length);
  });

  it('given a checkpoint header, then headerEnd is just past it and headerOf reads it', () => {
    const h = encodeHeader({ upTo: 'evt_1', db: { size: 10, crc: 5, upTo: 'evt_1' } });
    const scan = scanJournal(Buffer.concat([h, encodeRecord([event(1)])]));
    assert.equal(scan.headerEnd, h.length);
    assert.deepEqual(headerOf(scan.records), { upTo: 'evt_1', db: { size: 10, crc: 5, upTo: 'evt_1' } });
    assert.equal(scanJournal(encodeRecord([event(1)])).headerEnd, 0);
  });

  // Headers of older Ralphs count the covered bytes; newer ones also carry their sum, which
  // checks them at once. Both must skip exactly the same, and report exactly the same damage.
  for (const withSum of [false, true]) {
    describe(`a header that counts the records ralph.db holds${withSum ? ', with their sum' : ''}`, () => {
      const held = [encodeRecord([event(1), event(2)]), encodeRecord([event(3)])];
      const after = encodeRecord([event(4)]);
      const covered = held[0]!.length + held[1]!.length;
      const sum = withSum ? { coveredCrc: crc32(Buffer.concat(held)) } : {};
      const journal = (...rest: Buffer[]): Buffer => Buffer.concat([encodeHeader({ upTo: event(3).event_id, covered, ...sum }), ...rest]);

      it('given skipCovered, then they are checked but not parsed, and the full scan returns them', () => {
        const buf = journal(...held, after);
        const scan = scanJournal(buf, 0, { skipCovered: true });
        assert.deepEqual(
          scan.records.map((r) => r.events.map((e) => e.entity_id)),
          [[], ['T4']],
        );
        assert.equal(scan.skipped?.lastId, event(3).event_id);
        assert.equal(scan.validEnd, buf.length);
        assert.deepEqual(scan.skipped?.full(), scanJournal(buf));
        assert.equal(scanJournal(buf).skipped, undefined, 'only when asked');
      });

      it('given a flipped byte in a covered record, then it is the same damage as without skipping', () => {
        const bad = Buffer.from(held[1]!);
        bad[20] = bad[20] === 0x41 ? 0x42 : 0x41;
        const buf = journal(held[0]!, bad, after);
        const scan = scanJournal(buf, 0, { skipCovered: true });
        assert.ok(scan.damage, 'damage reported');
        assert.deepEqual(scan, scanJournal(buf));
      });

      it('given a count the records do not fill exactly (the file cut short, or a record straddling it), then nothing is skipped', () => {
        for (const count of [covered + 10_000, covered - 1, covered + 1]) {
          const buf = Buffer.concat([encodeHeader({ upTo: event(3).event_id, covered: count, ...sum }), ...held, after]);
          const scan = scanJournal(buf, 0, { skipCovered: true });
          assert.equal(scan.skipped, undefined, `count ${count}`);
          assert.deepEqual(scan, scanJournal(buf), `count ${count}`);
        }
      });

      it('given a last covered record of several events, then the id of its last one is what an open looks up', () => {
        const last = encodeRecord([event(3), event(5)]);
        const buf = Buffer.concat([
          encodeHeader({
            upTo: event(5).event_id,
            covered: held[0]!.length + last.length,
            ...(withSum ? { coveredCrc: crc32(Buffer.concat([held[0]!, last])) } : {}),
          }),
          held[0]!,
          last,
        ]);
        assert.equal(scanJournal(buf, 0, { skipCovered: true }).skipped?.lastId, event(5).event_id);
      });
    });
  }

  describe('a header that names the last covered event', () => {
    const held = [encodeRecord([event(1)]), encodeRecord([event(2)])];
    // A record Ralph would never write, under a checksum that holds: parsed, it is not a record.
    const body = Buffer.from(JSON.stringify({ v: 1, events: [{ event_id: 3 }] }));
    const unparsable = Buffer.concat([Buffer.from(`${crc32(body).toString(16).padStart(8, '0')} `), body, Buffer.from('\n')]);
    const covered = [held[0]!, unparsable];
    const header = (sum: number): Buffer =>
      encodeHeader({
        upTo: event(2).event_id,
        covered: held[0]!.length + unparsable.length,
        coveredCrc: sum,
        coveredLast: event(3).event_id,
      });

    it('given its sum holding, then the covered records are skipped on its word, the last one not parsed either', () => {
      const buf = Buffer.concat([header(crc32(Buffer.concat(covered))), ...covered, held[1]!]);
      const scan = scanJournal(buf, 0, { skipCovered: true });
      assert.equal(scan.skipped?.lastId, event(3).event_id);
      assert.deepEqual(
        scan.records.map((r) => r.events.map((e) => e.entity_id)),
        [[], ['T2']],
      );
      assert.match(scan.skipped?.full().tornReason ?? '', /invalid record/, 'the full scan still parses them all');
    });

    it('given a sum that does not hold, then its word is not taken and the last record is parsed', () => {
      const buf = Buffer.concat([header(12345), ...covered, held[1]!]);
      const scan = scanJournal(buf, 0, { skipCovered: true });
      assert.equal(scan.skipped, undefined);
      assert.deepEqual(scan, scanJournal(buf));
    });
  });

  it('given a header whose sum does not hold over intact records, then they are checked one by one and skipped all the same', () => {
    const held = [encodeRecord([event(1)]), encodeRecord([event(2)])];
    const covered = held[0]!.length + held[1]!.length;
    const buf = Buffer.concat([encodeHeader({ upTo: event(2).event_id, covered, coveredCrc: 12345 }), ...held, encodeRecord([event(3)])]);
    const scan = scanJournal(buf, 0, { skipCovered: true });
    assert.equal(scan.skipped?.lastId, event(2).event_id);
    assert.deepEqual(scan.skipped?.full(), scanJournal(buf));
  });

  it('salvage finds every record whose checksum holds, across a damaged newline and a damaged record, and names the damaged bytes', () => {
    const r = [1, 2, 3, 4].map((i) => Buffer.from(encodeRecord([event(i)])));
    (r[0] as Buffer)[(r[0] as Buffer).length - 1] = 0x21; // record 1's newline
    const body3 = (r[2] as Buffer).length - 12;
    (r[2] as Buffer)[body3] = ((r[2] as Buffer)[body3] ?? 0) ^ 0x04; // record 3 (its payload)
    const buf = Buffer.concat(r);
    const s = salvageRecords(buf, 1000);
    assert.deepEqual(
      s.records.map((x) => x.record.events.map((e) => e.entity_id)),
      [['T1'], ['T2'], ['T4']],
    );
    const at3 = 1000 + (r[0] as Buffer).length + (r[1] as Buffer).length;
    assert.deepEqual(
      s.damaged.map((d) => [d.offset, d.length]),
      [[at3, (r[2] as Buffer).length]],
    );
    assert.deepEqual(s.damaged[0]?.legibleIds, [event(3).event_id]);
  });

  it('given a valid checksum over JSON that is not a record, then it is rejected with the place', () => {
    const body = Buffer.from(JSON.stringify({ v: 1, events: [{ event_id: 3 }] }));
    const rec = Buffer.concat([Buffer.from(`${crc32(body).toString(16).padStart(8, '0')} `), body, Buffer.from('\n')]);
    const scan = scanJournal(rec, 100);
    assert.equal(scan.records.length, 0);
    assert.match(scan.tornReason ?? '', /invalid record at byte 100/);
  });

  it('the hand-written record check accepts and returns exactly what the zod schema does', () => {
    const str = fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('', 'evt_1'));
    // Values a field may wrongly hold, beside the right kind.
    const wrong = fc.oneof(fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.constant([]), fc.constant({}), str);
    const field = <T>(right: fc.Arbitrary<T>): fc.Arbitrary<unknown> => fc.oneof({ weight: 4, arbitrary: right }, wrong);
    const ev = fc.record(
      {
        event_id: field(str),
        ts: field(str),
        run_id: field(str),
        entity_type: field(str),
        entity_id: field(str),
        event_type: field(str),
        actor: field(str),
        payload: field(fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }))),
        extra: fc.jsonValue({ maxDepth: 1 }),
      },
      { requiredKeys: ['event_id', 'ts', 'run_id', 'entity_type', 'entity_id', 'event_type', 'actor', 'payload'] },
    );
    const count = fc.oneof(fc.nat(), fc.integer({ min: -3, max: -1 }), fc.double(), fc.constant(2 ** 60));
    const sum = field(fc.record({ size: field(count), crc: field(count), upTo: field(str) }));
    const rec = fc.record(
      {
        v: fc.oneof({ weight: 5, arbitrary: fc.constant(1) }, wrong),
        events: field(fc.array(ev, { maxLength: 3 })),
        upTo: field(str),
        db: sum,
        prev: sum,
        covered: field(count),
        coveredCrc: field(count),
        coveredLast: field(str),
      },
      { requiredKeys: ['v', 'events'] },
    );
    const schema = journalRecordSchema();
    fc.assert(
      fc.property(fc.oneof({ weight: 9, arbitrary: rec }, wrong), (x) => {
        const json: unknown = JSON.parse(JSON.stringify(x));
        const byZod = schema.safeParse(json);
        const byHand = recordOf(json);
        assert.equal(byHand !== undefined, byZod.success, JSON.stringify(json));
        // The record is what the schema returns, without the version.
        const { v, ...record } = (byZod.data ?? {}) as Record<string, unknown>;
        if (byHand !== undefined) assert.deepEqual({ v: 1, ...byHand }, { v, ...record });
      }),
      { numRuns: 1000 },
    );
  });
});
