// One promoter per team store, elected with a PostgreSQL session advisory lock: the holder
// keeps a connection of its own, and the lock goes with that session. A promoter that dies
// (kill -9, a lost network) loses its session, hence the lock, and a waiting candidate
// takes over on its next poll (default every second). Election only decides who tries:
// a promotion is made once by the store (a patch already promoted is refused by the
// compare-and-swap append) and by the remote (the push is compare-and-swap on the branch).
import { Client } from 'pg';
import { pgClientConfig } from '../store/postgres/pgConfig';
import { redactStoreUrl } from '../store/storeUrl';

/** pg_advisory_lock(classid, objid): 'Ralp', 1 = the promoter. */
const LOCK_CLASS = 0x52616c70;
const LOCK_PROMOTER = 1;

export class PromoterLock {
  private readonly lostController = new AbortController();
  private released = false;

  private constructor(
    private readonly client: Client,
    readonly url: string,
  ) {
    const lost = (): void => {
      if (!this.released && !this.lostController.signal.aborted)
        this.lostController.abort(new Error(`the promoter lock's session on ${url} ended`));
    };
    client.on('error', lost);
    client.on('end', lost);
  }

  /** Aborts when the session holding the lock ends: stop promoting at once. */
  get lost(): AbortSignal {
    return this.lostController.signal;
  }

  /** Takes the lock if nobody holds it; undefined when another promoter does. */
  static async tryAcquire(url: string): Promise<PromoterLock | undefined> {
    const client = new Client(pgClientConfig(url, 'ralph promoter'));
    client.on('error', () => undefined);
    await client.connect();
    try {
      const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [LOCK_CLASS, LOCK_PROMOTER]);
      if (r.rows[0]?.ok === true) return new PromoterLock(client, redactStoreUrl(url));
    } catch (e) {
      await client.end().catch(() => undefined);
      throw e;
    }
    await client.end().catch(() => undefined);
    return undefined;
  }

  /** Polls until elected (or aborted); a lost server only delays the next poll. */
  static async waitUntilElected(url: string, signal: AbortSignal, pollMs = 1000): Promise<PromoterLock | undefined> {
    while (!signal.aborted) {
      try {
        const lock = await PromoterLock.tryAcquire(url);
        if (lock) return lock;
      } catch {
        // the server is away: keep polling
      }
      await new Promise<void>((resolve) => {
        // The listener goes with its poll: a long wait must not pile them up on the signal.
        const done = (): void => {
          clearTimeout(t);
          signal.removeEventListener('abort', done);
          resolve();
        };
        const t = setTimeout(done, pollMs);
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return undefined;
  }

  /** Who holds the lock now (pid and application of the backend), for `status` and tests. */
  static async holder(url: string): Promise<{ pid: number; application: string } | undefined> {
    const client = new Client(pgClientConfig(url));
    client.on('error', () => undefined);
    await client.connect();
    try {
      const r = await client.query<{ pid: number; application_name: string }>(
        `SELECT a.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objid = $2 AND l.granted`,
        [LOCK_CLASS, LOCK_PROMOTER],
      );
      const row = r.rows[0];
      return row ? { pid: row.pid, application: row.application_name } : undefined;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, LOCK_PROMOTER]).catch(() => undefined);
    await this.client.end().catch(() => undefined);
  }
}
