// REQ mode inside the real extension host of VS Code 1.100.3: the Requirements view shows
// specification.yaml's REQs by topological level with their acceptance criteria and status
// icons (blocked(auto) distinct from blocked); "Decide…" skips a blocked REQ and its
// dependents through the event log; "Ralph: Run REQ Loop" runs the shipped CLI's `ralph req
// run` in a terminal, which finishes the run (nothing left to build) and the view follows.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { CONTROL_PROJECTIONS } from '../../../src/control';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import type { RalphApi } from '../../../src/extension/extension';
import { Commands } from '../../../src/extension/ids';
import type { AcItem, ReqItem, ReqLevelItem } from '../../../src/extension/trees/reqTree';
import { openStore } from '../../../src/store';
import { until } from './until';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

const SPEC = `specification:
  requirements:
    - id: REQ-001
      description: "Create User Model"
      acceptance_criteria:
        - id: AC-001-01
          criteria: "email (unique), password_hash, created_at"
      priority: 1
      status: pending
    - id: REQ-002
      description: "Password encryption"
      acceptance_criteria:
        - id: AC-002-01
          criteria: "bcrypt with cost 12"
      depends_on: [REQ-001]
      priority: 2
      status: pending
    - id: REQ-003
      description: "Health endpoint"
      acceptance_criteria:
        - id: AC-003-01
          criteria: "GET /health answers 200"
      priority: 3
      status: done
`;

describe('extension host: REQ mode', function () {
  this.timeout(180_000);
  let api: RalphApi;
  let folder: string;

  before(async () => {
    const ext = vscode.extensions.getExtension<RalphApi>(EXTENSION_ID);
    assert.ok(ext);
    api = await ext.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    if (!fs.existsSync(path.join(folder, 'ralph.config.json'))) await vscode.commands.executeCommand(Commands.initialize);
    fs.writeFileSync(path.join(folder, 'specification.yaml'), SPEC);
  });

  after(() => fs.rmSync(path.join(folder, 'specification.yaml'), { force: true }));

  function tree() {
    const t = api.views?.requirements;
    assert.ok(t, 'the Requirements view');
    return t;
  }
  const reqs = async (): Promise<ReqItem[]> => {
    const levels = (await tree().getChildren()) as ReqLevelItem[];
    const out: ReqItem[] = [];
    for (const l of levels) out.push(...((await tree().getChildren(l)) as ReqItem[]));
    return out;
  };

  it('given a specification, then the view shows its REQs by level with their ACs; a blocked REQ and its blocked(auto) dependent look different', async () => {
    await until('two levels', async () => ((await tree().getChildren()) as ReqLevelItem[]).length === 2);
    const levels = (await tree().getChildren()) as ReqLevelItem[];
    assert.deepEqual(
      levels.map((l) => [l.label, l.description]),
      [
        ['Level 0', '1/2 done'],
        ['Level 1', '0/1 done'],
      ],
    );
    const items = await reqs();
    assert.deepEqual(
      items.map((r) => r.label),
      ['REQ-001  Create User Model', 'REQ-003  Health endpoint', 'REQ-002  Password encryption'],
    );
    const acs = (await tree().getChildren(items[0])) as AcItem[];
    assert.deepEqual(
      acs.map((a) => [a.label, a.description]),
      [['AC-001-01', 'email (unique), password_hash, created_at']],
    );

    // REQ-001 blocked after three rounds, as the engine records it.
    const store = await openStore({ ralphDir: path.join(folder, '.ralph'), mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      await store.append(
        [
          domainEvent('req.started', 'REQ-001', 'req', { iteration: 1, round: 3, title: 'Create User Model', worktree: '/wt' }),
          domainEvent('req.blocked', 'REQ-001', 'req', {
            kind: 'retries',
            reason: '3 rounds failed; last at L2',
            options: ['skip', 'manual', 'stop', 'rollback'],
            rounds: 3,
          }),
        ].map(toNewEvent),
      );
    } finally {
      await store.close();
    }
    api.engine!.scheduleRefresh();
    await until('REQ-001 blocked', async () => (await reqs()).some((r) => r.contextValue === 'ralph.req.blocked'));
    const byId = new Map((await reqs()).map((r) => [r.req.id, r]));
    const blocked = byId.get('REQ-001')!;
    const auto = byId.get('REQ-002')!;
    assert.equal((blocked.iconPath as vscode.ThemeIcon).id, 'error');
    assert.equal(auto.contextValue, 'ralph.req.blocked_auto');
    assert.equal((auto.iconPath as vscode.ThemeIcon).id, 'debug-pause', 'blocked(auto) is not the failure icon');
    assert.match(String(auto.description), /^blocked\(auto\) by REQ-001/);
    assert.match((blocked.tooltip as vscode.MarkdownString).value, /Decide: skip \/ manual \/ stop \/ rollback/);
    assert.equal(byId.get('REQ-003')?.contextValue, 'ralph.req.done');

    // Decide: skip (no run holds the store, so it is applied to the log at once).
    const r = await vscode.commands.executeCommand<string>(Commands.decideReq, 'REQ-001', folder, 'skip');
    assert.equal(r, 'applied');
    await until('both skipped', async () => (await reqs()).filter((x) => x.req.status === 'skipped').length === 2);
  });

  it('given nothing left to build, when "Ralph: Run REQ Loop" runs, then `ralph req run` runs in a terminal, exits 0 and the run is PARTIAL', async () => {
    const terminal = await vscode.commands.executeCommand<vscode.Terminal | undefined>(Commands.runReqLoop);
    assert.ok(terminal, 'a terminal was opened');
    try {
      await until('the CLI to exit', () => terminal.exitStatus !== undefined, 90_000);
      assert.equal(terminal.exitStatus?.code, 0);
      const store = await api.engine!.open();
      await until('req.run_finished', async () => {
        await store?.refresh();
        return (store?.events({ entityType: 'req' }) ?? []).some((e) => e.event_type === 'req.run_finished');
      });
      const finished = store!.events({ entityType: 'req' }).filter((e) => e.event_type === 'req.run_finished');
      assert.match(JSON.stringify(finished.at(-1)), /PARTIAL/);
    } finally {
      terminal.dispose();
    }
  });
});
