// The time slider's index of the log's event times, by position: each event's ts and its
// julianday(), read once from the replay cursor's copy of the log. While the log's first N
// events are in time order (ts and julianday both never decrease, as an appending store
// writes them), the events panel's windowed counts at position N are two binary searches and
// its last ten events are the last ten positions, instead of a julianday() per event in the
// window and a walk of the ts index on every move. A log out of order past some position
// answers nothing there, and the snapshot runs its queries.
import type { SqlReader } from '../store/types';
import type { EventIndex, RecentEventDbRow } from './snapshot';
import { firstTrue } from './firstTrue';

export class EventTimes {
  private readonly ts: string[] = [];
  private readonly jd: number[] = [];
  /** Positions 1..sorted are in time order. */
  private sorted = 0;

  /** Reads the times of the positions `log` (replay_log: pos, ts) holds beyond those read. */
  extend(log: SqlReader): void {
    const rows = log.all<{ pos: number; ts: string; jd: number | null }>(
      'SELECT pos, ts, julianday(ts) AS jd FROM replay_log WHERE pos > ? ORDER BY pos',
      [this.ts.length],
    );
    for (const r of rows) {
      if (r.pos !== this.ts.length + 1) break; // a gap: read it next time
      const i = this.ts.length;
      this.ts.push(r.ts);
      this.jd.push(r.jd ?? Number.NaN);
      // JavaScript compares UTF-16 units, SQLite bytes: the same order for printable ASCII only.
      const inOrder =
        this.sorted === i &&
        r.jd !== null &&
        /^[\x20-\x7e]*$/.test(r.ts) &&
        (i === 0 || ((this.ts[i - 1] ?? '') <= r.ts && (this.jd[i - 1] ?? Number.NaN) <= r.jd));
      if (inOrder) this.sorted = i + 1;
    }
  }

  /** The index at position `at` over `db` (the cursor's scratch database there). */
  at(db: SqlReader, at: number): EventIndex {
    const ok = at <= this.sorted;
    return {
      countSince: (lo, bound) => {
        if (!ok || !/^[\x20-\x7e]*$/.test(lo)) return undefined;
        const b = db.get<{ j: number | null }>('SELECT julianday(?) AS j', [bound])?.j ?? null;
        if (b === null) return 0; // julianday(ts) >= NULL holds for no row
        // Both conditions hold from some position on: the later of the two first positions.
        const first = Math.max(
          firstTrue(at, (i) => (this.ts[i] ?? '') >= lo),
          firstTrue(at, (i) => (this.jd[i] ?? Number.NaN) >= b),
        );
        return at - first;
      },
      // The view holds positions 1..at, whatever their order.
      total: () => at,
      // In time order, ts DESC then event_id DESC is position descending.
      recent: (n) =>
        ok
          ? db.all<RecentEventDbRow>(
              'SELECT event_id, ts, entity_type, entity_id, event_type, actor, payload FROM replay_log WHERE pos > ? AND pos <= ? ORDER BY pos DESC',
              [at - n, at],
            )
          : undefined,
    };
  }
}
