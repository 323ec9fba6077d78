// Team mode end to end: three clones of one repository each run `ralph worker` (the built
// CLI), a fourth runs `ralph start --once` as the elected promoter, all on one real
// PostgreSQL store and one bare git remote, with the REAL claude CLI (pinned in .tools/,
// confined by the sandbox the product uses) against the scripted model server. PostgreSQL
// is stopped for 20 s mid-run and the team carries on. Every task is done once: one commit
// per task on the remote's branch, no patch promoted twice, and the store tells the story
// (leases granted, patches queued with their refs, promotions).
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import { controlContext } from '../../../src/control/context';
import { promotePatch } from '../../../src/control/index';
import { claimWithLease, queuePatchFenced, type Lease } from '../../../src/team/leases';
import { startModelServer, type ModelServer } from '../../../src/agents/scripted/modelServer';
import { claudeSandbox, type Sandbox } from '../../../src/agents/scripted/sandbox';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import { DEFAULT_ROLES, teamRolesSql } from '../../../src/team/roles';
import { TEAM_PROJECTIONS } from '../../../src/team/teamHost';
import { ensureAgentClis } from '../../kit/agentEnv';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { createSampleProject, script } from '../loop/sampleProject';
import { git } from '../../kit/git';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const ROLE_PASSWORD = 'team-role-pw-51c2';
const TASKS = Array.from({ length: 12 }, (_, i) => `T-${String(i + 1).padStart(2, '0')}`);

interface Proc {
  readonly name: string;
  readonly child: ChildProcess;
  output: string;
  readonly exited: Promise<number | null>;
}

function ralph(name: string, cwd: string, env: NodeJS.ProcessEnv, args: string[]): Proc {
  const child = spawn(process.execPath, [CLI, '--dir', cwd, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = {
    name,
    child,
    output: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  child.stdout?.on('data', (d: Buffer) => (p.output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (p.output += d.toString()));
  return p;
}

async function count(url: string, sql: string): Promise<number> {
  const c = new Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(sql);
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await c.end().catch(() => undefined);
  }
}

describe('team mode: `ralph worker` in clones, `ralph start` as the elected promoter (real claude, real PostgreSQL)', function () {
  this.timeout(600_000);
  let cluster: PgCluster | undefined;
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  let root: string | undefined;
  const procs: Proc[] = [];

  before(async function () {
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
    cluster = await startPgClusterOrSkip(this);
  });
  after(async () => {
    for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await server?.close();
    sandbox?.cleanup();
    cluster?.destroy();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  interface Team {
    readonly remote: string;
    readonly base: string;
    /** The owner's URL (the test's own queries). */
    readonly url: string;
    readonly workerEnv: NodeJS.ProcessEnv;
    readonly promoterEnv: NodeJS.ProcessEnv;
    readonly workerUrl: string;
    clone(name: string): string;
  }

  /** A bare remote of the sample repository (its config names the pinned claude), a database with `tasks`. */
  async function team(db: string, tasks: readonly string[], scripts: Record<string, unknown>[]): Promise<Team> {
    const claude = ensureAgentClis().claude;
    root ??= fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-team-e2e-'));
    const dir = path.join(root, db);
    fs.mkdirSync(dir);
    await server?.close();
    sandbox?.cleanup();
    server = await startModelServer({ scripts: [...scripts, { name: 'fallback', turns: [{ text: 'nothing to do' }] }] });
    sandbox = claudeSandbox(server.url);
    const seed = createSampleProject();
    const config = {
      name: 'team-sample',
      lang: 'generic',
      build: 'node scripts/build.js',
      test: 'node scripts/test.js',
      lint: '',
      model: 'claude-sonnet-4-5-20250929',
      workers: { count: 1 },
      backends: { primary: 'claude', worker: 'claude', judge: 'claude', claude: { binary: claude, env: sandbox.env } },
    };
    fs.writeFileSync(path.join(seed.dir, 'ralph.config.json'), `${JSON.stringify(config, null, 2)}\n`);
    git(seed.dir, 'add', 'ralph.config.json');
    git(seed.dir, 'commit', '-q', '-m', 'ralph config');
    const remote = path.join(dir, 'remote.git');
    git(dir, 'clone', '-q', '--bare', seed.dir, remote);
    fs.rmSync(seed.dir, { recursive: true, force: true });
    const url = (cluster as PgCluster).createDatabase(db);
    const store = await openPgStore({ url, mode: 'writer', projections: TEAM_PROJECTIONS });
    await store.append(
      tasks.map((id, i) =>
        toNewEvent(
          domainEvent('task.created', id, 'test', {
            title: `Add f${i + 1}`,
            source: 'ES:1',
            effort: 'S',
            deps: '-',
            wave: 0,
            provenance: 'spec',
          }),
        ),
      ),
    );
    await store.close();
    // Least privilege, as the README sets it up: workers and the promoter on roles of their own.
    const owner = new Client({ connectionString: url });
    await owner.connect();
    try {
      await owner.query(teamRolesSql({ database: db, ...DEFAULT_ROLES }));
      for (const r of [DEFAULT_ROLES.worker, DEFAULT_ROLES.promoter]) await owner.query(`ALTER ROLE ${r} PASSWORD '${ROLE_PASSWORD}'`);
    } finally {
      await owner.end();
    }
    const as = (role: string): string => url.replace(/\/\/[^@]*@/, `//${role}:${ROLE_PASSWORD}@`);
    return {
      remote,
      base: git(remote, 'rev-parse', 'main'),
      url,
      workerEnv: { ...process.env, RALPH_STORE_URL: as(DEFAULT_ROLES.worker) },
      promoterEnv: { ...process.env, RALPH_STORE_URL: as(DEFAULT_ROLES.promoter) },
      workerUrl: as(DEFAULT_ROLES.worker),
      clone: (name) => {
        const c = path.join(dir, name);
        git(dir, 'clone', '-q', remote, c);
        git(c, 'config', 'user.name', `User ${name}`);
        git(c, 'config', 'user.email', `${name}@example.com`);
        fs.mkdirSync(path.join(c, '.ralph', 'logs'), { recursive: true });
        fs.writeFileSync(path.join(c, '.ralph', 'core.md'), '# Core\n');
        return c;
      },
    };
  }

  /** The worker's answer for task `id`: write src/f<i+1>.js; `delayMs` holds the first model turn back. */
  const writeScript = (id: string, i: number, delayMs = 0): Record<string, unknown> => {
    const s = script(`worker/${id}/`, [{ tool: 'write', path: `src/f${i + 1}.js`, content: `module.exports = () => ${i + 1};\n` }]);
    return { ...s, turns: (s['turns'] as object[]).map((t, k) => (k === 0 && delayMs > 0 ? { ...t, delayMs } : t)) };
  };

  it('given 12 tasks, then each is one commit on the remote branch, none promoted twice, and the log tells the story', async () => {
    const pg = cluster as PgCluster;
    const { remote, base, url, workerEnv, promoterEnv, clone } = await team(
      'team_e2e',
      TASKS,
      TASKS.map((id, i) => writeScript(id, i)),
    );
    const t0 = Date.now();
    procs.push(ralph('promoter', clone('promoter'), promoterEnv, ['start', '--once']));
    const machines = ['machine-a', 'machine-b', 'machine-c'];
    for (const [k, w] of ['a', 'b', 'c'].entries()) {
      // A lease outlives the outage: the heartbeat cannot renew while the server is down.
      // Each clone says which machine it is: the agent names in the log carry it.
      const env = { ...workerEnv, RALPH_MACHINE: machines[k] };
      procs.push(ralph(`worker-${w}`, clone(`clone-${w}`), env, ['worker', '--exit-when-idle', '--lease-ttl', '60']));
    }

    // PostgreSQL goes away for 20 s once the first promotions are in (polled, not slept on).
    const promoted = (): Promise<number> => count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'patch.promoted'");
    for (;;) {
      const n = await promoted().catch(() => 0);
      if (n >= 3) break;
      const dead = procs.find((p) => p.child.exitCode !== null);
      if (dead) assert.fail(`${dead.name} exited early:\n${dead.output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const before = await promoted();
    pg.stop();
    const outage = Date.now();
    await new Promise((r) => setTimeout(r, 20_000)); // the scenario: the server stays down for 20 s
    pg.start();
    const outageMs = Date.now() - outage;

    const codes = await Promise.all(procs.map((p) => p.exited));
    const wallMs = Date.now() - t0;
    const story = procs.map((p) => `--- ${p.name} (exit ${String(p.child.exitCode)}):\n${p.output}`).join('\n');
    assert.deepEqual(codes, [0, 0, 0, 0], story);
    if (process.env['RALPH_TEAM_DEBUG']) console.log(story);
    // Every worker ran its agents confined, as the product does on this machine.
    for (const p of procs.slice(1)) assert.match(p.output, /agents: worker \(claude[^)]*\) (bwrap|bubblewrap)/, p.output);

    // Done once: one commit per task on the remote's branch, each with its own patch trailer.
    const subjects = git(remote, 'log', '--format=%s', `${base}..main`).split('\n').filter(Boolean);
    assert.equal(subjects.length, TASKS.length, `${subjects.join('\n')}\n${story}`);
    for (const id of TASKS) assert.equal(subjects.filter((s) => s.startsWith(`ralph(${id}):`)).length, 1, `${id}\n${story}`);
    const trailers = git(remote, 'log', '--format=%(trailers:key=Ralph-Patch,valueonly)', `${base}..main`).split('\n').filter(Boolean);
    assert.equal(new Set(trailers).size, TASKS.length);
    const files = git(remote, 'ls-tree', '--name-only', 'main', 'src/').split('\n');
    for (let i = 1; i <= TASKS.length; i++) assert.ok(files.includes(`src/f${i}.js`), `src/f${i}.js on main`);

    // The store: every task done, one promotion per task, every patch queued through a ref.
    const after = await openPgStore({ url, mode: 'writer', projections: TEAM_PROJECTIONS });
    try {
      const status = after.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view ORDER BY task_id');
      assert.deepEqual(
        status.map((s) => s.status),
        TASKS.map(() => 'done'),
      );
      const promotions = after.all<{ entity_id: string; n: number }>(
        "SELECT entity_id, COUNT(*) AS n FROM events WHERE event_type = 'task.completed' GROUP BY entity_id",
      );
      assert.equal(promotions.length, TASKS.length);
      assert.ok(
        promotions.every((p) => Number(p.n) === 1),
        JSON.stringify(promotions),
      );
      const promotedPatches = after.all<{ entity_id: string }>("SELECT entity_id FROM events WHERE event_type = 'patch.promoted'");
      assert.equal(new Set(promotedPatches.map((p) => p.entity_id)).size, promotedPatches.length, 'no patch promoted twice');
      assert.equal(promotedPatches.length, TASKS.length);
      const granted = after.all<{ actor: string }>("SELECT actor FROM events WHERE event_type = 'lease.granted'");
      assert.ok(granted.length >= TASKS.length);
      // Owners are worker-1@<machine>:<pid>, the machine each clone was given.
      const ownerShape = /^worker-1@(machine-[abc]):\d+$/;
      for (const g of granted) assert.match(g.actor, ownerShape);
      assert.ok(new Set(granted.map((g) => ownerShape.exec(g.actor)?.[1])).size >= 2, 'more than one clone claimed tasks');
      // The agents' own events name them worker-1@<machine>: the task each ran, by machine.
      const claimed = after.all<{ entity_id: string; actor: string }>(
        "SELECT entity_id, actor FROM events WHERE event_type = 'task.claimed'",
      );
      assert.ok(claimed.length >= TASKS.length);
      for (const c of claimed) assert.match(c.actor, ownerShape, c.entity_id);
      const ran = after.all<{ entity_id: string; actor: string; task_id: string }>(
        "SELECT entity_id, actor, json_extract(payload, '$.task_id') AS task_id FROM events WHERE event_type IN ('agent.started', 'agent.finished')",
      );
      const workerRuns = ran.filter((r) => r.task_id !== null && r.entity_id.startsWith('worker-'));
      assert.ok(workerRuns.length >= 2 * TASKS.length, JSON.stringify(ran));
      for (const r of workerRuns) {
        assert.match(r.entity_id, /^worker-1@machine-[abc]$/);
        assert.equal(r.actor, r.entity_id);
      }
      // Every task's agent ran on the machine that held its lease.
      for (const r of workerRuns) {
        const holders = claimed.filter((c) => c.entity_id === r.task_id).map((c) => ownerShape.exec(c.actor)?.[1]);
        assert.ok(holders.includes(r.entity_id.split('@')[1]), `${r.task_id}: ${r.entity_id} vs ${holders.join(', ')}`);
      }
      const refs = after.all<{ ref: string }>('SELECT ref FROM team_patch');
      assert.ok(refs.length >= TASKS.length && refs.every((r) => r.ref.startsWith('refs/ralph/patches/')));
    } finally {
      await after.close();
    }
    // The patch refs are on the remote, one per queued patch.
    assert.ok(git(remote, 'for-each-ref', '--format=%(refname)', 'refs/ralph/patches/').split('\n').length >= TASKS.length);
    console.log(
      `      team: ${TASKS.length} tasks in ${(wallMs / 1000).toFixed(1)} s (PostgreSQL down ${(outageMs / 1000).toFixed(1)} s after ${before} promotions)`,
    );
  });
  it('given a worker killed -9 mid-task, then its lease expires and another worker in another clone finishes the task', async () => {
    const { remote, base, url, workerEnv, promoterEnv, clone } = await team('team_kill', ['T-01'], [writeScript('T-01', 0, 4000)]);
    const granted = (): Promise<number> => count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'lease.granted'");
    const doomed = ralph('worker-doomed', clone('clone-doomed'), workerEnv, ['worker', '--lease-ttl', '3']);
    procs.push(doomed);
    // Killed once it holds the lease and its agent waits on the model (the first turn is held 4 s).
    while ((await granted()) < 1) {
      if (doomed.child.exitCode !== null) assert.fail(`the worker exited early:\n${doomed.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    while (!/claimed T-01/.test(doomed.output)) await new Promise((r) => setTimeout(r, 50));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const heir = ralph('worker-heir', clone('clone-heir'), workerEnv, ['worker', '--exit-when-idle', '--lease-ttl', '3']);
    const promoter = ralph('promoter', clone('promoter'), promoterEnv, ['start', '--once']);
    procs.push(heir, promoter);
    const codes = await Promise.all([heir.exited, promoter.exited]);
    const story = [doomed, heir, promoter].map((p) => `--- ${p.name}:\n${p.output}`).join('\n');
    assert.deepEqual(codes, [0, 0], story);
    const events = await new Promise<{ event_type: string; actor: string; payload: string }[]>((resolve, reject) => {
      const c = new Client({ connectionString: url });
      c.connect()
        .then(() =>
          c.query<{ event_type: string; actor: string; payload: string }>(
            "SELECT event_type, actor, payload FROM events WHERE entity_id = 'T-01' ORDER BY seq",
          ),
        )
        .then((r) => resolve(r.rows), reject)
        .finally(() => void c.end());
    });
    const types = events.map((e) => e.event_type);
    const grants = events.filter((e) => e.event_type === 'lease.granted');
    assert.equal(grants.length, 2, types.join(' '));
    assert.notEqual(grants[0]?.actor, grants[1]?.actor);
    const expired = events.find((e) => e.event_type === 'lease.expired');
    assert.ok(expired, types.join(' '));
    assert.equal((JSON.parse(expired.payload) as { owner: string }).owner, grants[0]?.actor);
    // Expired, back to pending, claimed again by the heir, proposed by it, done.
    const at = (t: string, from = 0): number => types.indexOf(t, from);
    assert.ok(at('lease.expired') < at('task.pending') && at('task.pending') < at('lease.granted', at('lease.expired')), types.join(' '));
    assert.ok(types.includes('task.done') || types.includes('task.completed'), types.join(' '));
    const proposed = events.filter((e) => e.event_type === 'task.proposed');
    assert.equal(proposed.length, 1, 'only the heir handed a patch over');
    assert.equal(proposed[0]?.actor, grants[1]?.actor);
    assert.deepEqual(git(remote, 'log', '--format=%s', `${base}..main`).split('\n'), ['ralph(T-01): Add f1'], story);
  });
  it("given the worker's role, then PostgreSQL refuses a promotion or a task done from it, and takes its claims and patches", async () => {
    const { workerUrl } = await team('team_roles', ['T-01'], []);
    const store = await openPgStore({ url: workerUrl, mode: 'writer', projections: TEAM_PROJECTIONS });
    try {
      // The control plane would allow it (the commit "exists"): the refusal is the server's.
      const ctx = controlContext(store, { ralphDir: '/nonexistent/.ralph', git: { commitExists: async () => true } });
      const lease = await claimWithLease(ctx, { owner: 'w@host', ttlMs: 60_000 });
      assert.equal(lease?.taskId, 'T-01');
      const patchId = await queuePatchFenced(ctx, lease as Lease, { patchPath: '/tmp/x.patch', createdBy: 'w@host' });
      await assert.rejects(promotePatch(ctx, { patchId, commitHash: 'a'.repeat(40), actor: 'w@host' }), /row-level security|commit/);
      await assert.rejects(
        store.append([toNewEvent(domainEvent('task.done', 'T-01', 'w@host', { old_status: 'proposed', new_status: 'done' }))]),
        /row-level security/,
      );
      assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-01'")?.status, 'proposed');
    } finally {
      await store.close();
    }
  });
  it('given the elected promoter killed -9 mid-run, then the standby takes over and no promotion is lost or doubled', async () => {
    const ids = ['T-01', 'T-02', 'T-03', 'T-04'];
    const { remote, base, url, promoterEnv, clone } = await team(
      'team_promoter_kill',
      ids,
      ids.map((id, i) => writeScript(id, i)),
    );
    const first = ralph('promoter-1', clone('promoter-1'), promoterEnv, ['start', '--once']);
    procs.push(first);
    while (!/elected the team's promoter/.test(first.output)) {
      if (first.child.exitCode !== null) assert.fail(first.output);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The standby works the tasks with two leased workers of its own while it waits.
    const standby = ralph('promoter-2', clone('promoter-2'), promoterEnv, ['start', '--once', '--workers', '2']);
    procs.push(standby);
    while (!/standing by to take over/.test(standby.output)) await new Promise((r) => setTimeout(r, 50));
    // Killed right after its first promotion reached the store.
    while ((await count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'patch.promoted'")) < 1) {
      await new Promise((r) => setTimeout(r, 50));
    }
    first.child.kill('SIGKILL');
    await first.exited;
    const codes = await Promise.all([standby.exited]);
    const story = [first, standby].map((p) => `--- ${p.name}:\n${p.output}`).join('\n');
    assert.deepEqual(codes, [0], story);
    assert.match(standby.output, /elected the team's promoter/);
    assert.match(standby.output, /worker-2: claimed/);
    const subjects = git(remote, 'log', '--format=%s', `${base}..main`).split('\n').sort();
    assert.deepEqual(subjects, ['ralph(T-01): Add f1', 'ralph(T-02): Add f2', 'ralph(T-03): Add f3', 'ralph(T-04): Add f4'], story);
    assert.equal(await count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'patch.promoted'"), 4);
    assert.equal(await count(url, "SELECT COUNT(DISTINCT entity_id) AS n FROM events WHERE event_type = 'task.completed'"), 4);
  });
  it('given tier-2 patches from a worker, then the promoter judges them confined: approved is promoted, a bad verdict waits for a human', async () => {
    const judge = (id: string, taskId: string): Record<string, unknown> =>
      script(`review_deferred/${id}/`, [], {
        task_id: taskId,
        verdict: 'approve',
        rationale: `${id} checks its input; tests pass.`,
        confidence: 0.8,
      });
    const { remote, base, url, workerEnv, promoterEnv, clone } = await team(
      'team_judge',
      ['T-01', 'T-02'],
      [
        script('worker/T-01/', [{ tool: 'write', path: 'src/auth/token.js', content: 'module.exports = (t) => t.length === 32;\n' }]),
        script('worker/T-02/', [{ tool: 'write', path: 'src/auth/rotate.js', content: 'module.exports = () => 2;\n' }]),
        judge('T-01', 'T-01'),
        // A verdict naming another task: the harness refuses it, nothing is decided.
        judge('T-02', 'T-99'),
      ],
    );
    const promoter = ralph('promoter', clone('promoter'), promoterEnv, ['start', '--once']);
    const worker = ralph('worker', clone('clone-w'), workerEnv, ['worker', '--exit-when-idle']);
    procs.push(promoter, worker);
    const codes = await Promise.all([promoter.exited, worker.exited]);
    const story = [promoter, worker].map((p) => `--- ${p.name}:\n${p.output}`).join('\n');
    assert.deepEqual(codes, [0, 0], story);
    assert.match(promoter.output, /agents: judge \(claude[^)]*\) (bwrap|bubblewrap)/, story);
    assert.match(promoter.output, /T-01: the judge approved patch patch_T-01_/, story);
    assert.match(
      promoter.output,
      /T-02: judge verdict invalid on patch patch_T-02_\S+; the task is deferred \(a human decides it\)/,
      story,
    );
    // Only the approved patch reached the remote's branch, as one commit.
    assert.deepEqual(git(remote, 'log', '--format=%s', `${base}..main`).split('\n'), ['ralph(T-01): Add f1'], story);
    assert.ok(git(remote, 'ls-tree', '--name-only', '-r', 'main').split('\n').includes('src/auth/token.js'));
    const store = await openPgStore({ url, mode: 'observer', projections: TEAM_PROJECTIONS });
    try {
      const status = store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view ORDER BY task_id');
      assert.deepEqual(status, [
        { task_id: 'T-01', status: 'done' },
        { task_id: 'T-02', status: 'deferred' },
      ]);
      const ev = store.all<{ entity_id: string; event_type: string; actor: string; payload: string }>(
        "SELECT entity_id, event_type, actor, payload FROM events WHERE event_type IN ('task.deferred', 'task.deferral_resolved', 'patch.promoted', 'agent.started') ORDER BY rowid",
      );
      const of = (id: string): string[] =>
        ev.filter((e) => e.entity_id === id).map((e) => `${e.event_type}:${e.actor.split('@')[0] ?? ''}`);
      assert.deepEqual(of('T-01'), ['task.deferred:promoter', 'task.deferral_resolved:judge'], JSON.stringify(ev));
      assert.deepEqual(of('T-02'), ['task.deferred:promoter'], JSON.stringify(ev));
      const resolved = ev.find((e) => e.event_type === 'task.deferral_resolved');
      const payload = (typeof resolved?.payload === 'string' ? JSON.parse(resolved.payload) : resolved?.payload) as { decision?: string };
      assert.equal(payload.decision, 'approve');
      const judges = ev.filter((e) => e.event_type === 'agent.started' && e.entity_id === 'judge');
      assert.equal(judges.length, 2, 'one judge invocation per deferred patch, none repeated');
      assert.equal(ev.filter((e) => e.event_type === 'patch.promoted').length, 1);
    } finally {
      await store.close();
    }
    // The judge saw its task's diff, fetched from the worker's ref, and nothing of the other task.
    const asked = (server as ModelServer).requests.filter((q) => q.prompt.includes('RALPH-KEY: review_deferred/T-01/'));
    assert.ok(asked.length >= 1, story);
    for (const q of asked) {
      assert.ok(q.prompt.includes('src/auth/token.js'), 'the diff is in the prompt');
      assert.ok(!q.prompt.includes('src/auth/rotate.js'), 'nothing of the other task');
    }
  });
  it("given a worker killed -9 between its patch ref's push and its store record, then the ref is never promoted, the task is re-taken and the orphan ref deleted", async () => {
    const { remote, base, url, workerEnv, promoterEnv, clone } = await team('team_orphan', ['T-01'], [writeScript('T-01', 0)]);
    // The window forced: a worker that pushed its patch's ref and was killed before recording it.
    const doomedClone = clone('clone-doomed');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(__dirname, 'teamChild.ts'), 'pushed', url, 'worker-1@doomed:1', '3000', doomedClone],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
      });
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.on('exit', (code) => reject(new Error(`the doomed worker exited ${String(code)}: ${err}`)));
    });
    const doomed = JSON.parse(line) as { taskId: string; leaseId: string; patchId: string; sha: string };
    child.kill('SIGKILL');
    await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(undefined) : child.once('exit', r)));
    assert.equal(git(remote, 'rev-parse', `refs/ralph/patches/${doomed.patchId}`), doomed.sha, 'the ref reached the remote');

    const promoter = ralph('promoter', clone('promoter'), promoterEnv, ['start', '--once']);
    const heir = ralph('worker-heir', clone('clone-heir'), workerEnv, ['worker', '--exit-when-idle', '--lease-ttl', '3']);
    procs.push(promoter, heir);
    const codes = await Promise.all([promoter.exited, heir.exited]);
    const story = [promoter, heir].map((p) => `--- ${p.name}:\n${p.output}`).join('\n');
    assert.deepEqual(codes, [0, 0], story);
    // The heir's work is on the branch, never the unrecorded commit.
    assert.deepEqual(git(remote, 'log', '--format=%s', `${base}..main`).split('\n'), ['ralph(T-01): Add f1'], story);
    assert.equal(git(remote, 'show', 'main:src/f1.js'), 'module.exports = () => 1;');
    assert.ok(!git(remote, 'rev-list', 'main').split('\n').includes(doomed.sha), 'the orphan commit is not on main');
    // The orphan ref is gone from the remote; the heir's ref is there.
    const refs = git(remote, 'for-each-ref', '--format=%(refname)', 'refs/ralph/patches/').split('\n').filter(Boolean);
    assert.ok(!refs.includes(`refs/ralph/patches/${doomed.patchId}`), refs.join('\n'));
    assert.equal(refs.length, 1, refs.join('\n'));
    assert.match(promoter.output, new RegExp(`orphan patch ref ${doomed.patchId} \\(${doomed.sha.slice(0, 8)}\\) deleted`), story);
    // The store: the dead lease expired, the task re-taken by the heir; no event names the orphan patch.
    assert.equal(
      await count(
        url,
        `SELECT COUNT(*) AS n FROM events WHERE event_type = 'lease.expired' AND payload::jsonb->>'lease_id' = '${doomed.leaseId}'`,
      ),
      1,
    );
    assert.equal(await count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'lease.granted'"), 2);
    assert.equal(
      await count(url, `SELECT COUNT(*) AS n FROM events WHERE entity_id = '${doomed.patchId}' OR payload LIKE '%${doomed.patchId}%'`),
      0,
    );
    assert.equal(await count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'patch.promoted'"), 1);
  });
  it('given a re-based patch a promoter on another machine left queued, then it is discarded and the task worked again', async () => {
    const { remote, base, url, workerEnv, promoterEnv, clone } = await team('team_stranded', ['T-01'], [writeScript('T-01', 0)]);
    // The state a promoter killed mid re-verification leaves: the task proposed with a patch
    // whose file is on its own disk.
    const store = await openPgStore({ url, mode: 'writer', projections: TEAM_PROJECTIONS });
    try {
      const ctx = controlContext(store, { ralphDir: '/elsewhere/.ralph' });
      await claimWithLease(ctx, { owner: 'w@gone', ttlMs: 60_000 });
      await store.append([
        toNewEvent(
          domainEvent('patch.queued', 'patch_T-01_20260101000000000', 'promoter@gone', {
            task_id: 'T-01',
            patch_path: '/elsewhere/.ralph/commits/pending/x.patch',
            created_by: 'promoter@gone',
          }),
        ),
        toNewEvent(
          domainEvent('task.proposed', 'T-01', 'promoter@gone', {
            old_status: 'claimed',
            new_status: 'proposed',
            patch_id: 'patch_T-01_20260101000000000',
          }),
        ),
      ]);
    } finally {
      await store.close();
    }
    const promoter = ralph('promoter', clone('promoter'), promoterEnv, ['start', '--once']);
    const worker = ralph('worker', clone('clone-w'), workerEnv, ['worker', '--exit-when-idle']);
    procs.push(promoter, worker);
    const codes = await Promise.all([promoter.exited, worker.exited]);
    const story = [promoter, worker].map((p) => `--- ${p.name}:\n${p.output}`).join('\n');
    assert.deepEqual(codes, [0, 0], story);
    assert.match(promoter.output, /patch_T-01_20260101000000000 discarded: its file \/elsewhere\//, story);
    assert.deepEqual(git(remote, 'log', '--format=%s', `${base}..main`).split('\n'), ['ralph(T-01): Add f1'], story);
    assert.equal(await count(url, "SELECT COUNT(*) AS n FROM events WHERE event_type = 'task.completed'"), 1);
  });
});
