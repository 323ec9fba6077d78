// One machine on PostgreSQL without a shared remote: the demo project finished on its
// embedded store, `ralph store migrate` (the built CLI) copies its history into a real
// PostgreSQL database, a task is added there, and `ralph start --once` with the store URL
// runs the loop itself (no remote: no promoter election) with the REAL claude CLI, confined,
// against the scripted model server, to done. Nothing of the migrated history is lost or
// doubled, the primary claims by lease, and the promotion is local.
import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startModelServer, type ModelServer } from '../../../src/agents/scripted/modelServer';
import { claudeSandbox, type Sandbox } from '../../../src/agents/scripted/sandbox';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import { runDemo } from '../../../src/cli/demo';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventRow } from '../../../src/store/eventRows';
import { TEAM_PROJECTIONS } from '../../../src/team/teamHost';
import { ensureAgentClis } from '../../kit/agentEnv';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { plan, script } from '../loop/sampleProject';
import { git } from '../../kit/git';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const FIELDS = ['event_id', 'ts', 'run_id', 'entity_type', 'entity_id', 'event_type', 'actor', 'payload'] as const;

describe('one machine on PostgreSQL, no git remote: the demo migrated, then the loop continues there (real claude)', function () {
  this.timeout(600_000);
  let cluster: PgCluster | undefined;
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  let dir: string | undefined;

  before(async function () {
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
    cluster = await startPgClusterOrSkip(this);
  });
  after(async () => {
    await server?.close();
    sandbox?.cleanup();
    cluster?.destroy();
    if (dir && process.env['RALPH_TEAM_KEEP'] === undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('given a finished demo migrated to PostgreSQL and a new task, then the loop runs it to done there, no event lost or doubled', async () => {
    const pg = cluster as PgCluster;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-team-local-'));
    const project = path.join(dir, 'demo');
    // The demo to its end on the embedded store (its fast scripted agents: the history is what matters here).
    const demo = await runDemo(() => undefined, { dir: project, scripted: true });
    assert.ok(demo.testsPass, 'the demo finished');
    const embedded = await openStore({ ralphDir: path.join(project, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
    const before = embedded.all<EventRow>(`SELECT ${FIELDS.join(', ')} FROM events ORDER BY event_id`);
    await embedded.close();
    assert.ok(before.length > 20, `the demo's history (${before.length} events)`);
    assert.equal(spawnSync('git', ['remote'], { cwd: project, encoding: 'utf8' }).stdout.trim(), '', 'the demo has no remote');

    const url = pg.createDatabase('team_local');
    const env = { ...process.env, RALPH_STORE_URL: url };
    const migrate = spawnSync(process.execPath, [CLI, '--dir', project, 'store', 'migrate', '--to', url], {
      cwd: project,
      encoding: 'utf8',
      env,
    });
    assert.equal(migrate.status, 0, `${migrate.stdout}${migrate.stderr}`);

    // A new task on PostgreSQL: M-sized, so the loop's primary takes it (workers take S).
    const store = await openPgStore({ url, mode: 'writer', projections: TEAM_PROJECTIONS });
    try {
      await store.append([
        toNewEvent(
          domainEvent('task.created', 'CALC-7', 'test', {
            title: 'Division',
            source: 'CALC-7',
            effort: 'M',
            deps: '-',
            wave: 2,
            provenance: 'spec',
          }),
        ),
      ]);
    } finally {
      await store.close();
    }

    // The loop's agents: the real claude, confined, against the scripted model.
    const claude = ensureAgentClis().claude;
    server = await startModelServer({
      scripts: [
        script(
          'plan/CALC-7/',
          [],
          plan('CALC-7', [{ description: 'Write div() with its test', files: ['src/div.js', 'test/div.test.js'] }]),
        ),
        script(
          'implement/CALC-7/step-1/',
          [
            { tool: 'write', path: 'src/div.js', content: 'module.exports = (a, b) => a / b;\n' },
            { tool: 'write', path: 'test/div.test.js', content: "require('assert').equal(require('../src/div.js')(6, 3), 2);\n" },
          ],
          'div() written',
        ),
        { name: 'fallback', turns: [{ text: 'nothing to do' }] },
      ],
    });
    sandbox = claudeSandbox(server.url);
    const configFile = path.join(project, 'ralph.config.json');
    const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as Record<string, unknown>;
    config['backends'] = { primary: 'claude', worker: 'claude', judge: 'claude', claude: { binary: claude, env: sandbox.env } };
    fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
    git(project, 'commit', '-q', '-am', 'agents: the real claude');
    const base = git(project, 'rev-parse', 'main');

    // Not spawnSync: the model server answers from this process's event loop.
    const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, '--dir', project, 'start', '--once'], {
        cwd: project,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('exit', (code) => resolve({ code, out }));
    });
    const story = run.out;
    assert.equal(run.code, 0, story);
    assert.doesNotMatch(story, /elected|promoter/, 'the loop ran, not a promoter');
    assert.match(story, /agents: primary \(claude[^)]*\) (bwrap|bubblewrap)/, story);
    assert.ok(!story.includes(pg.password), 'the password is printed nowhere');

    // Promoted locally: one commit on main for the new task, and its tests pass there.
    assert.deepEqual(
      git(project, 'log', '--format=%s', `${base}..main`)
        .split('\n')
        .filter((s) => /CALC-7/.test(s)).length,
      1,
      story,
    );
    assert.ok(
      fs.existsSync(path.join(project, 'src', 'div.js')) || git(project, 'ls-tree', '--name-only', 'main', 'src/').includes('div.js'),
    );

    const after = await openPgStore({ url, mode: 'observer', projections: TEAM_PROJECTIONS });
    try {
      const rows = after.all<EventRow>(`SELECT ${FIELDS.join(', ')} FROM events ORDER BY rowid`);
      // Nothing lost: the migrated history is the prefix, field by field; nothing doubled.
      assert.ok(rows.length > before.length);
      before.forEach((e, i) => assert.deepEqual(rows[i], e, `event ${i + 1}`));
      assert.equal(new Set(rows.map((r) => r.event_id)).size, rows.length, 'no event twice');
      const fresh = rows.slice(before.length);
      const of = (type: string, id = 'CALC-7'): EventRow[] => fresh.filter((e) => e.event_type === type && e.entity_id === id);
      assert.equal(of('task.created').length, 1);
      assert.equal(of('task.completed').length, 1, fresh.map((e) => `${e.entity_id} ${e.event_type}`).join('\n'));
      assert.equal(fresh.filter((e) => e.event_type === 'patch.promoted').length, 1);
      assert.equal(after.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'CALC-7'")?.status, 'done');
      // No claim without a lease: each claim is granted a lease in the same step, by the loop's primary.
      const claims = fresh.filter((e) => e.event_type === 'task.claimed');
      const leases = fresh.filter((e) => e.event_type === 'lease.granted');
      assert.ok(claims.length >= 1);
      assert.equal(leases.length, claims.length, fresh.map((e) => `${e.entity_id} ${e.event_type}`).join('\n'));
      assert.match(leases[0]?.actor ?? '', /^primary@.+:\d+$/);
      // The demo's old tasks are untouched: still done, as migrated.
      const notDone = after.all<{ task_id: string }>("SELECT task_id FROM task_view WHERE status <> 'done' AND status <> 'dropped'");
      assert.deepEqual(notDone, [], JSON.stringify(notDone));
    } finally {
      await after.close();
    }
    // The embedded store was left as it was: the project works on PostgreSQL now.
    const left = await openStore({ ralphDir: path.join(project, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      assert.equal(left.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n, before.length);
    } finally {
      await left.close();
    }
  });
});
