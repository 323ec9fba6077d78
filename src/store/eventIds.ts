// Event ids, timestamps and run ids. Ids sort in append order at any rate and stay
// monotonic when the wall clock steps back (the reference's one-second ids collided).

const SEQ_WIDTH = 6;
const SEQ_LIMIT = 10 ** SEQ_WIDTH;
const ID_PATTERN = /^evt_(\d{17})_(\d{6})$/;

/** Milliseconds since the epoch; injectable so tests can step the clock back. */
export type Clock = () => number;

function compactUtc(ms: number): string {
  // 2026-11-29T17:26:33.123Z -> 20261129172633123 (fixed width, so strings sort like numbers)
  return new Date(ms).toISOString().replace(/[-:.TZ]/g, '');
}

function parseCompactUtc(s: string): number {
  const iso = `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(8, 10)}:${s.slice(10, 12)}:${s.slice(12, 14)}.${s.slice(14, 17)}Z`;
  return Date.parse(iso);
}

/**
 * Issues ids `evt_<yyyymmddhhmmssSSS>_<seq>`. The time part is a logical clock:
 * max(wall clock, last issued), so a clock stepping back never reorders ids; the
 * sequence counts within one millisecond and carries into the next when full.
 */
export class EventIdGenerator {
  private lastMs = 0;
  private seq = -1;
  private prefixMs = -1;
  private prefix = '';

  constructor(private readonly clock: Clock = Date.now) {}

  /** Continues after an id already in the store (so a restarted writer sorts after it). */
  observe(eventId: string): void {
    const m = ID_PATTERN.exec(eventId);
    if (!m) return; // foreign ids (emitted by other tools) do not constrain ours
    const ms = parseCompactUtc(m[1] ?? '');
    const seq = Number(m[2]);
    if (ms > this.lastMs || (ms === this.lastMs && seq > this.seq)) {
      this.lastMs = ms;
      this.seq = seq;
    }
  }

  next(): string {
    const now = this.clock();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.seq = 0;
    } else if (this.seq + 1 < SEQ_LIMIT) {
      this.seq += 1;
    } else {
      this.lastMs += 1;
      this.seq = 0;
    }
    if (this.prefixMs !== this.lastMs) {
      this.prefixMs = this.lastMs;
      this.prefix = `evt_${compactUtc(this.lastMs)}_`;
    }
    return this.prefix + String(this.seq).padStart(SEQ_WIDTH, '0');
  }
}

/** ISO 8601 UTC with milliseconds, e.g. 2026-11-29T17:26:33.123Z. */
export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

/** The reference's run id shape: run_YYYYMMDD_<pid> (UTC date). */
export function defaultRunId(ms: number, pid: number): string {
  return `run_${new Date(ms).toISOString().slice(0, 10).replace(/-/g, '')}_${pid}`;
}
