// `ralph store migrate --to postgres://…` on the built CLI: a project's embedded history
// copied into a throwaway PostgreSQL cluster and verified event by event; then every
// command, pointed at the URL by RALPH_STORE_URL, sees the same state (`status` the same
// facts) and continues on PostgreSQL. The password is printed nowhere.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { git } from '../../kit/git';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

describe('ralph store migrate (built CLI, real PostgreSQL)', function () {
  this.timeout(180_000);
  let cluster: PgCluster | undefined;
  let repo: string;

  function ralph(env: Record<string, string>, ...args: string[]): { code: number; out: string; err: string } {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd: repo, encoding: 'utf8', env: { ...process.env, ...env } });
    const out = { code: r.status ?? -1, out: r.stdout, err: r.stderr };
    assert.ok(!`${r.stdout}${r.stderr}`.includes((cluster as PgCluster).password), `ralph ${args.join(' ')} printed the password`);
    return out;
  }
  function ok(env: Record<string, string>, ...args: string[]): string {
    const r = ralph(env, ...args);
    assert.equal(r.code, 0, `ralph ${args.join(' ')} failed (${r.code}): ${r.err}`);
    return r.out;
  }

  before(async function () {
    if (!fs.existsSync(CLI)) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    cluster = await startPgClusterOrSkip(this);
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-migrate-'));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-q', '--allow-empty', '-m', 'init');
  });
  after(() => {
    cluster?.destroy();
    if (repo) fs.rmSync(repo, { recursive: true, force: true });
  });

  it('copies the history verified event by event; status on PostgreSQL says the same; commands continue there', async () => {
    const c = cluster as PgCluster;
    fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
    fs.writeFileSync(
      path.join(repo, '.ralph', 'BACKLOG.md'),
      [
        '# BACKLOG',
        '',
        '## Wave 0: Foundation',
        '',
        '| ID | Status | Title | Source | Effort | Deps |',
        '|----|--------|-------|--------|--------|------|',
        '| W0-001 | pending | Add greeting helper | ES:1 | S | - |',
        '| W0-002 | pending | Users migration | ES:2 | S | - |',
        '| W0-003 | planned | Docs for helper | ES:3 | S | W0-001 |',
        '',
      ].join('\n'),
    );
    const none = {};
    ok(none, 'init');
    assert.equal(ok(none, 'claim-ready-task', 'worker', '--owner', 'worker-b'), 'W0-001\n');
    ok(none, 'emit-event', 'task', 'W0-002', 'task.note', 'primary', '{"note":"keys ordered {\\"z\\":1,\\"a\\":2} stay as written"}');
    const before = JSON.parse(ok(none, 'status', '--json')) as Record<string, unknown>;

    const url = c.createDatabase('team');
    const first = ralph(none, 'store', 'migrate', '--to', url);
    assert.equal(first.code, 0, first.err);
    const m = /^MIGRATED (\d+) events to (\S+) \(0 were there already\); verified (\d+)\/(\d+) event by event$/m.exec(first.out);
    assert.ok(m, first.out);
    assert.equal(m[1], m[3]);
    assert.equal(m[3], m[4]);
    assert.equal(m[2], url.replace(c.password, '***'));
    const total = Number(m[1]);
    assert.ok(total >= 5, `a real history (${total} events)`);

    // PostgreSQL holds the same rows, readable by any client.
    const pg = new Client({ connectionString: url });
    await pg.connect();
    try {
      const rows = await pg.query<{ seq: string; event_type: string }>('SELECT seq, event_type FROM events ORDER BY seq');
      assert.equal(rows.rows.length, total);
      assert.deepEqual(
        rows.rows.map((r) => Number(r.seq)),
        Array.from({ length: total }, (_, i) => i + 1),
      );
      const note = await pg.query<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'task.note'");
      assert.match(note.rows[0]?.payload ?? '', /stay as written/);

      // A second run copies nothing and verifies all again.
      assert.match(
        ok(none, 'store', 'migrate', '--to', url),
        new RegExp(`^MIGRATED 0 events to .* \\(${total} were there already\\); verified ${total}/${total}`),
      );

      const team = { RALPH_STORE_URL: url };
      assert.match(ok(team, 'store', 'where'), /^postgres postgres:\/\/ralph:\*\*\*@127\.0\.0\.1:\d+\/team \(from RALPH_STORE_URL\)\n$/);
      const after = JSON.parse(ok(team, 'status', '--json')) as Record<string, unknown>;
      assert.deepEqual(after, before);
      assert.equal(ok(team, 'show', 'W0-001', '--json'), ok(none, 'show', 'W0-001', '--json'));

      // The project continues on PostgreSQL: a claim lands there, not in .ralph/ralph.db.
      assert.equal(ok(team, 'claim-ready-task', 'worker', '--owner', 'worker-c'), 'W0-002\n');
      const grown = await pg.query<{ n: string }>('SELECT count(*) AS n FROM events');
      assert.ok(Number(grown.rows[0]?.n) > total);
      assert.deepEqual(JSON.parse(ok(none, 'status', '--json')), before, 'the embedded store is untouched');
      assert.notDeepEqual(JSON.parse(ok(team, 'status', '--json')), before);

      // Migrating into a database holding another history is refused, naming the event.
      const other = c.createDatabase('other');
      ok({ RALPH_STORE_URL: other }, 'emit-event', 'run', 'r', 'run.note', 'primary', '{}');
      const refused = ralph(none, 'store', 'migrate', '--to', other);
      assert.equal(refused.code, 1);
      assert.match(refused.err, /already holds a different history: event 1 \(evt_\d+_\d+\) differs in event_id/);
    } finally {
      await pg.end();
    }
  });
});
