import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore } from '../../../src/store/sqlJsStore';
import { counterProjection, counterRows } from '../../unit/store/counterProjection';
import { pythonSqlite, spawnStoreChild } from './childProcess';

// Invariant 3: every acknowledged command survives kill -9 at any instant.
describe('store kill test (SIGKILL at random moments)', function () {
  this.timeout(300_000);

  it('given a child appending bursts and acknowledging ids, when it is SIGKILLed, then every acknowledged id is in the reopened db', async () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-kill-')), '.ralph');
    const allAcked = new Set<string>();
    const rounds = 8;
    let ackedRounds = 0;
    for (let round = 0; round < rounds; round++) {
      const burst = [1, 7, 50][round % 3] ?? 1;
      const child = spawnStoreChild(['append-loop', dir, String(burst)]);
      if (round % 2 === 0) {
        // a random moment 0..600 ms after the first acknowledgement
        await child.waitForLine((l) => l.startsWith('ack '));
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 600)));
      } else {
        // a random moment from spawn: may land in start-up, the open (replay, takeover,
        // first checkpoint) or the first appends
        await new Promise((r) => setTimeout(r, 200 + Math.floor(Math.random() * 2500)));
      }
      await child.kill9();
      const acked = child.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));
      if (acked.length > 0) ackedRounds++;
      for (const id of acked) allAcked.add(id);

      // the file on disk is always a whole checkpoint: a real SQLite client opens it cleanly
      const check = pythonSqlite<{ ok: string; n: number }>(
        path.join(dir, 'ralph.db'),
        'print(json.dumps({"ok": con.execute("PRAGMA integrity_check").fetchone()[0], "n": con.execute("SELECT count(*) FROM events").fetchone()[0]}))',
      );
      assert.equal(check.ok, 'ok');

      const store = await openStore({ ralphDir: dir, mode: 'writer', projections: [counterProjection()], checkpointDebounceMs: 3_600_000 });
      try {
        const have = new Set(store.all<{ event_id: string }>('SELECT event_id FROM events').map((r) => r.event_id));
        const missing = [...allAcked].filter((id) => !have.has(id));
        assert.deepEqual(missing, [], `round ${round}: acknowledged ids missing after kill -9`);
        // the dead child's lock (if it got that far) was taken over, with an event
        const takeovers = store.events({ entityType: 'run' }).filter((e) => e.event_type === 'lock.taken_over');
        if (child.lines.some((l) => l.startsWith('open '))) {
          assert.equal(takeovers.at(-1)?.payload['reason'], 'pid_dead');
          assert.equal((takeovers.at(-1)?.payload['previous'] as { pid: number }).pid, child.proc.pid);
        }
        // views rebuilt from events equal the stored views
        const stored = counterRows(store);
        await store.rebuild();
        assert.deepEqual(counterRows(store), stored);
      } finally {
        await store.close();
      }
    }
    assert.ok(ackedRounds >= rounds / 2, 'most rounds acknowledged events before the kill');
    const after = pythonSqlite<{ ok: string; n: number }>(
      path.join(dir, 'ralph.db'),
      'print(json.dumps({"ok": con.execute("PRAGMA integrity_check").fetchone()[0], "n": con.execute("SELECT count(*) FROM events WHERE actor = \'kill-test\'").fetchone()[0]}))',
    );
    assert.equal(after.ok, 'ok');
    assert.ok(after.n >= allAcked.size);
  });
});
