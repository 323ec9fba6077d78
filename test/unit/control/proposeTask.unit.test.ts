// propose-task: a chat's new task goes through the proposal policy, and the relaying client
// is stamped into every event the command appends (directly or through the inbox).
import assert from 'node:assert/strict';
import {
  drainInbox,
  getTask,
  importBacklog,
  resolveProposal,
  submitToInbox,
  withClient,
  type HostCommand,
} from '../../../src/control/index';
import { nextTaskId, proposeTask } from '../../../src/control/proposeTask';
import { decideAndAppend } from '../../../src/control/tasks';
import { domainEvent } from '../../../src/domain/events';
import { BACKLOG, harness, type Harness } from './harness';

describe('control propose-task', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
    h.writeBacklog(BACKLOG);
    await importBacklog(h.ctx);
  });
  afterEach(async () => {
    await h.close();
  });

  const propose = (id: string, task: Record<string, unknown>, confidence = 1): ReturnType<typeof proposeTask> =>
    proposeTask(h.ctx, {
      proposalId: id,
      task: { title: 'Validate emails', effort: 'S', wave: 1, ...task } as never,
      confidence,
      rationale: 'asked in chat',
      actor: 'mcp',
    });

  it('chooses the next free id of the wave when none is given', async () => {
    assert.equal(nextTaskId([{ task_id: 'W1-001' }, { task_id: 'W1-007' }, { task_id: 'W2-020' }, { task_id: 'W1-x' }], 1), 'W1-008');
    assert.equal(nextTaskId([], 3), 'W3-001');
    const r = await propose('p1', {});
    assert.deepEqual(r, { proposalId: 'p1', outcome: 'accepted', taskId: 'W1-003', detail: 'W1-003' });
    const t = getTask(h.store, 'W1-003');
    assert.equal(t?.title, 'Validate emails');
    assert.equal(t?.provenance, 'auto');
    const created = h.store.events({ entityId: 'W1-003' })[0];
    assert.equal(created?.actor, 'mcp');
  });

  it('applies the auto-accept table: an L task, or a low confidence, is deferred to the judge, not created', async () => {
    const big = await propose('p-big', { effort: 'L' });
    assert.equal(big.outcome, 'deferred');
    assert.match(big.detail, /L-effort .* needs the judge/);
    assert.equal(getTask(h.store, big.taskId), undefined);
    const unsure = await propose('p-unsure', { effort: 'M' }, 0.5);
    assert.equal(unsure.outcome, 'deferred');
    // The judge (or a human) may accept a deferred one by its proposal id, as for a file.
    const judged = await resolveProposal(h.ctx, { file: 'p-big', decision: 'approve', actor: 'human', rationale: 'fine' });
    assert.equal(judged.outcome, 'accepted');
    assert.equal(getTask(h.store, big.taskId)?.effort, 'L');
  });

  it('rejects an existing id or unknown deps with the reason, and creates nothing', async () => {
    const dup = await propose('p-dup', { id: 'W0-001' });
    assert.deepEqual([dup.outcome, dup.detail], ['rejected', 'task W0-001 already exists']);
    const deps = await propose('p-deps', { id: 'W1-100', deps: 'NOPE-1' });
    assert.equal(deps.outcome, 'rejected');
    assert.match(deps.detail, /unknown task\(s\) NOPE-1/);
    assert.equal(getTask(h.store, 'W1-100'), undefined);
    assert.deepEqual(
      h.store.events({ entityType: 'proposal' }).map((e) => [e.entity_id, e.event_type]),
      [
        ['p-dup', 'proposal.rejected'],
        ['p-deps', 'proposal.rejected'],
      ],
    );
  });

  it('over the wave limit the proposal is deferred (limits hold for chats too)', async () => {
    await decideAndAppend(h.ctx, () => ({
      events: Array.from({ length: 50 }, (_, i) =>
        domainEvent('task.created', `FILL-${i}`, 'test', {
          title: `t${i}`,
          source: '-',
          effort: 'S',
          deps: '-',
          wave: 4,
          provenance: 'spec',
        }),
      ),
      result: undefined,
    }));
    const r = await propose('p-full', { wave: 4 });
    assert.equal(r.outcome, 'deferred');
    assert.match(r.detail, /wave limit: wave 4/);
  });

  it('the same proposal id applied twice creates one task and answers the first outcome again', async () => {
    const a = await propose('p-twice', {});
    const b = await propose('p-twice', {});
    assert.deepEqual(b, a);
    assert.equal(h.store.events({ entityType: 'task' }).filter((e) => e.event_type === 'task.created').length, 1);
  });

  it('stamps the relaying client into every event of a command, and only of that command', async () => {
    const ctx = withClient(h.ctx, { name: 'claude-code', version: '2.1.332' });
    await proposeTask(ctx, { proposalId: 'p-c', task: { title: 'x', effort: 'S', wave: 2 }, confidence: 1, rationale: '', actor: 'mcp' });
    const stamped = h.store.events().filter((e) => e.actor === 'mcp');
    assert.deepEqual(
      stamped.map((e) => [e.event_type, e.payload['client'], e.payload['client_version']]),
      [
        ['task.created', 'claude-code', '2.1.332'],
        ['proposal.accepted', 'claude-code', '2.1.332'],
      ],
    );
    await propose('p-plain', {});
    assert.equal(h.store.events({ entityId: 'p-plain' })[0]?.payload['client'], undefined);
  });

  it('through the inbox: propose-task, a decision and a host command carry the client; the host request is an event', async () => {
    // A deferred task with a queued patch to decide on.
    await decideAndAppend(h.ctx, () => ({
      events: [
        domainEvent('patch.queued', 'patch_W0-001_1', 'primary', { task_id: 'W0-001', patch_path: 'x.patch', created_by: 'primary' }),
        domainEvent('task.proposed', 'W0-001', 'primary', { old_status: 'pending', new_status: 'proposed', patch_id: 'patch_W0-001_1' }),
        domainEvent('task.deferred', 'W0-001', 'primary', {
          old_status: 'proposed',
          new_status: 'deferred',
          patch_id: 'patch_W0-001_1',
          risk_tier: 2,
          reason: 'tier 2',
        }),
      ],
      result: undefined,
    }));
    const client = { name: 'codex-mcp-client', version: '0.171.0' };
    submitToInbox(
      h.ralphDir,
      {
        command: 'propose-task',
        proposal_id: 'mcp_1',
        task: { title: 'Through the inbox', source: '-', effort: 'S', wave: 2, deps: '-' },
        confidence: 1,
        rationale: 'chat',
        actor: 'mcp',
        client,
      },
      new Date('2026-11-29T12:00:00.001Z'),
    );
    submitToInbox(
      h.ralphDir,
      { command: 'resolve-deferred', task_id: 'W0-001', decision: 'reject', actor: 'mcp', rationale: 'not like this', client },
      new Date('2026-11-29T12:00:00.002Z'),
    );
    submitToInbox(h.ralphDir, { command: 'pause', actor: 'mcp', reason: 'lunch', client }, new Date('2026-11-29T12:00:00.003Z'));
    const host: HostCommand[] = [];
    const r = await drainInbox(h.ctx, { onHostCommand: (c) => void host.push(c) });
    assert.deepEqual(
      r.map((x) => x.ok),
      [true, true, true],
    );
    assert.equal(getTask(h.store, 'W2-001')?.title, 'Through the inbox');
    assert.equal(getTask(h.store, 'W0-001')?.status, 'pending');
    assert.equal(host[0]?.command, 'pause');
    // (each inbox command also leaves the store's command.applied marker: exactly-once bookkeeping)
    const byMcp = h.store.events().filter((e) => e.actor === 'mcp' && e.event_type !== 'command.applied');
    assert.deepEqual(
      byMcp.map((e) => e.event_type),
      ['task.created', 'proposal.accepted', 'task.deferral_resolved', 'patch.discarded', 'loop.pause_requested'],
    );
    for (const e of byMcp) assert.equal(e.payload['client'], 'codex-mcp-client', e.event_type);
    assert.equal(byMcp.at(-1)?.payload['reason'], 'lunch');
  });

  it('the inbox refuses a propose-task with a malformed id or proposal id before writing', () => {
    const base = { command: 'propose-task', confidence: 1, rationale: '', actor: 'mcp' } as const;
    assert.throws(() =>
      submitToInbox(h.ralphDir, { ...base, proposal_id: '../x', task: { title: 't', source: '-', effort: 'S', wave: 1, deps: '-' } }),
    );
    assert.throws(() =>
      submitToInbox(h.ralphDir, {
        ...base,
        proposal_id: 'ok',
        task: { id: 'a b', title: 't', source: '-', effort: 'S', wave: 1, deps: '-' },
      }),
    );
  });
});
