// VS Code attached to the team's store, inside VS Code 1.100.3's real extension host: a folder
// whose ralph.config.json names a real PostgreSQL store (a throwaway cluster) is added to the
// extension's projects; its Backlog shows the tasks in PostgreSQL and its Agents view the
// team's agents by machine, with their phase and cost, as other processes wrote them. The
// tree items are read through the extension's own providers (another bundle than this one,
// so by their fields, not instanceof).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { controlContext } from '../../../src/control/context';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import type { RalphApi } from '../../../src/extension/extension';
import type { ProjectFolder } from '../../../src/extension/projects';
import type { Engine } from '../../../src/session/engine';
import { openPgStore } from '../../../src/store/postgres/pgStore';
import type { NewEvent } from '../../../src/store/types';
import { claimWithLease, leaseProjection } from '../../../src/team/leases';
import { startPgClusterOrSkip, type PgCluster } from '../../kit/pgCluster';
import { backlogEvents } from '../../kit/teamChildren';
import { until } from './until';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

const run = (phase: string, taskId: string) => ({ role: 'worker' as const, phase, task_id: taskId, backend: 'claude' });
const agentStarted = (agent: string, taskId: string): NewEvent =>
  toNewEvent(domainEvent('agent.started', agent, agent, { ...run('worker', taskId), prompt_bytes: 10, budget_usd: 1 }));
const agentFinished = (agent: string, taskId: string, cost: number): NewEvent =>
  toNewEvent(
    domainEvent('agent.finished', agent, agent, { ...run('worker', taskId), status: 'success', turns: 2, cost_usd: cost, duration_ms: 5 }),
  );

type Node = vscode.TreeItem & { engine?: Engine; tasks?: readonly unknown[]; task?: { task_id: string } };

const label = (n: vscode.TreeItem): string => (typeof n.label === 'string' ? n.label : (n.label?.label ?? ''));

describe('exthost: a folder attached to the team store shows its backlog and its agents by machine (real PostgreSQL)', function () {
  this.timeout(180_000);
  let api: RalphApi;
  let cluster: PgCluster | undefined;
  let dir: string | undefined;
  let original: ProjectFolder[] = [];
  let engine: Engine;

  before(async function () {
    const ext = vscode.extensions.getExtension<RalphApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    cluster = await startPgClusterOrSkip(this);
    const url = cluster.createDatabase('exthost_team');
    // What the team's processes wrote: three tasks, one run on machine-a, machine-b at work.
    const store = await openPgStore({ url, mode: 'writer', projections: [...CONTROL_PROJECTIONS, leaseProjection] });
    try {
      await store.append(backlogEvents(['TEAM-1', 'TEAM-2', 'TEAM-3']));
      await store.append([agentStarted('worker-1@machine-a', 'TEAM-3'), agentFinished('worker-1@machine-a', 'TEAM-3', 0.3)]);
      const ctx = controlContext(store, { ralphDir: path.join(os.tmpdir(), 'unused-ralph'), projectDir: os.tmpdir() });
      const lease = await claimWithLease(ctx, { owner: 'worker-2@machine-b:7', ttlMs: 600_000, host: 'machine-b' });
      assert.ok(lease);
      await store.append([agentStarted('worker-2@machine-b', lease.taskId)]);
    } finally {
      await store.close();
    }
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-exthost-team-')));
    fs.writeFileSync(path.join(dir, 'ralph.config.json'), `${JSON.stringify({ store: url }, null, 2)}\n`);
    const projects = api.projects!;
    original = projects.list().map((e) => ({ dir: e.projectDir, name: e.name }));
    projects.setFolders([...original, { dir, name: 'team' }]);
    engine = projects.get(dir)!;
    assert.ok(engine);
    await engine.open();
    await until('the team backlog in the session', () => engine.tasks().length === 3);
  });

  after(async () => {
    api.projects?.setFolders(original);
    cluster?.destroy();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("given the folder's config names the store, then the Backlog view shows the tasks in PostgreSQL", async () => {
    assert.ok(engine.isInitialized());
    const where = engine.teamStore() ?? '';
    assert.match(where, /127\.0\.0\.1:\d+\/exthost_team$/);
    assert.ok(!where.includes(cluster!.password), where);
    assert.ok(!fs.existsSync(path.join(dir!, '.ralph', 'ralph.db')), 'no embedded store beside the team one');
    const backlog = api.views!.backlog;
    const roots = (await backlog.getChildren()) as Node[];
    const folder = roots.find((n) => n.engine === engine);
    assert.ok(folder, roots.map(label).join(', '));
    const waves = (await backlog.getChildren(folder as never)) as Node[];
    const tasks = (await Promise.all(waves.map((w) => backlog.getChildren(w as never)))).flat() as Node[];
    assert.deepEqual(tasks.map((t) => t.task?.task_id).sort(), ['TEAM-1', 'TEAM-2', 'TEAM-3']);
    const claimed = engine.tasks().find((t) => t.status === 'claimed');
    assert.equal(claimed?.claimed_by, 'worker-2@machine-b:7');
  });

  it('given agents of two machines in the log, then the Agents view groups them by machine with phase and cost', async () => {
    const agents = api.views!.agents;
    await until('the team folder in the Agents view', async () =>
      ((await agents.getChildren()) as Node[]).some((n) => n.engine === engine),
    );
    const folder = ((await agents.getChildren()) as Node[]).find((n) => n.engine === engine);
    const machines = (await agents.getChildren(folder as never)) as Node[];
    assert.deepEqual(
      machines.map((m) => [label(m), m.contextValue, m.description]),
      [
        ['machine-a', 'ralph.machine', '1 agent · 0 busy · $0.30 today'],
        ['machine-b', 'ralph.machine', '1 agent · 1 busy · $0.00 today'],
      ],
    );
    const under = async (m: Node): Promise<[string, unknown][]> =>
      ((await agents.getChildren(m as never)) as Node[]).map((a) => [label(a), a.description]);
    assert.deepEqual(await under(machines[0]!), [['worker-1', 'worker · TEAM-3 · $0.30']]);
    const [b] = await under(machines[1]!);
    assert.equal(b?.[0], 'worker-2');
    // At work: its phase, its leased task, the time since its agent started, its cost.
    assert.match(String(b?.[1]), /^worker · TEAM-\d · .+ · \$0\.00$/);
  });
});
