// The inbox: observers submit command files, the writer drains them (validated with zod).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { drainInbox, getTask, importBacklog, submitToInbox, type HostCommand } from '../../../src/control/index';
import { BACKLOG, harness, type Harness } from './harness';

describe('control inbox', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
    h.writeBacklog(BACKLOG);
    await importBacklog(h.ctx);
  });
  afterEach(async () => {
    await h.close();
  });

  it('drains commands in submission order; valid ones run, invalid ones fail with the reason and an event', async () => {
    const inbox = path.join(h.ralphDir, 'inbox');
    submitToInbox(
      h.ralphDir,
      { command: 'transition-task', task_id: 'W0-001', status: 'blocked', actor: 'human' },
      new Date('2026-11-29T12:00:00.001Z'),
    );
    submitToInbox(
      h.ralphDir,
      { command: 'add-task', actor: 'human', task: { id: 'W2-001', title: 'By hand', source: '-', effort: 'S', wave: 2, deps: '-' } },
      new Date('2026-11-29T12:00:00.002Z'),
    );
    submitToInbox(
      h.ralphDir,
      { command: 'transition-task', task_id: 'W0-002', status: 'done', actor: 'human' },
      new Date('2026-11-29T12:00:00.003Z'),
    );
    fs.writeFileSync(path.join(inbox, 'cmd_zz_bad.json'), JSON.stringify({ command: 'resolve-deferred', task_id: 'W0-001' }));
    const stops: HostCommand[] = [];
    submitToInbox(h.ralphDir, { command: 'stop', actor: 'human' }, new Date('2026-11-29T12:00:00.004Z'));
    const r = await drainInbox(h.ctx, { onHostCommand: (c) => void stops.push(c) });
    assert.deepEqual(
      r.map((x) => [x.command ?? '?', x.ok]),
      [
        ['transition-task', true],
        ['add-task', true],
        ['transition-task', false],
        ['stop', true],
        ['?', false],
      ],
    );
    assert.match(r[2]?.error ?? '', /no promoted patch/);
    assert.match(r[4]?.error ?? '', /inbox\/cmd_zz_bad\.json: .*decision/);
    assert.equal(getTask(h.store, 'W0-001')?.status, 'blocked');
    assert.equal(getTask(h.store, 'W2-001')?.title, 'By hand');
    assert.equal(stops.length, 1);
    assert.equal(fs.readdirSync(path.join(inbox, 'processed')).length, 3);
    assert.equal(fs.readdirSync(path.join(inbox, 'failed')).filter((f) => f.endsWith('.error.txt')).length, 2);
    assert.equal(h.store.events().filter((e) => e.event_type === 'inbox.failed').length, 2);
    assert.deepEqual(await drainInbox(h.ctx), []);
  });

  it('given a reprioritize-task command, then the task moves wave with one event; unchanged waves and closed tasks are not moved', async () => {
    submitToInbox(
      h.ralphDir,
      { command: 'reprioritize-task', task_id: 'W0-001', new_wave: 3, actor: 'human', rationale: 'later' },
      new Date('2026-11-29T12:00:00.001Z'),
    );
    submitToInbox(
      h.ralphDir,
      { command: 'reprioritize-task', task_id: 'W0-001', new_wave: 3, actor: 'human' },
      new Date('2026-11-29T12:00:00.002Z'),
    );
    submitToInbox(
      h.ralphDir,
      { command: 'reprioritize-task', task_id: 'NOPE', new_wave: 1, actor: 'human' },
      new Date('2026-11-29T12:00:00.003Z'),
    );
    const r = await drainInbox(h.ctx);
    assert.deepEqual(
      r.map((x) => x.ok),
      [true, true, false],
    );
    assert.match(r[2]?.error ?? '', /NOPE not found/);
    assert.equal(getTask(h.store, 'W0-001')?.wave, 3);
    const moved = h.store.events().filter((e) => e.event_type === 'task.reprioritized');
    assert.equal(moved.length, 1);
    assert.deepEqual(moved[0]?.payload, { old_wave: 0, new_wave: 3, rationale: 'later' });
    assert.throws(() => submitToInbox(h.ralphDir, { command: 'reprioritize-task', task_id: 'W0-001', new_wave: -1, actor: 'human' }));
  });

  it('given a writer that dies after a command is applied and before its file moves, then the next drain skips the replay and only moves it', async () => {
    const file = submitToInbox(h.ralphDir, {
      command: 'emit-event',
      entity_type: 'note',
      entity_id: 'n1',
      event_type: 'note.added',
      actor: 'human',
    });
    const killed = new Error('kill -9');
    await assert.rejects(
      drainInbox(h.ctx, {
        afterApply: () => {
          throw killed;
        },
      }),
      killed,
    );
    assert.ok(fs.existsSync(file), 'the file was not moved');
    const notes = (): number => h.store.events().filter((e) => e.event_type === 'note.added').length;
    assert.equal(notes(), 1);
    await h.reopen(); // a new writer, as after a restart
    const r = await drainInbox(h.ctx);
    assert.deepEqual(
      r.map((x) => [x.ok, x.replayed]),
      [[true, true]],
    );
    assert.equal(notes(), 1, 'applied exactly once');
    const marker = h.store.events().filter((e) => e.event_type === 'command.applied');
    assert.equal(marker.length, 1);
    assert.equal(marker[0]?.entity_id, path.basename(file, '.json'));
    assert.deepEqual((marker[0]?.payload['event_ids'] as string[]).length, 1);
    assert.ok(fs.existsSync(path.join(h.ralphDir, 'inbox', 'processed', path.basename(file))));
  });

  it('given a failing command replayed after a crash, then it fails once: one inbox.failed, moved to failed/', async () => {
    submitToInbox(h.ralphDir, { command: 'transition-task', task_id: 'W0-002', status: 'done', actor: 'human' });
    await assert.rejects(
      drainInbox(h.ctx, {
        afterApply: () => {
          throw new Error('kill -9');
        },
      }),
    );
    const r = await drainInbox(h.ctx);
    assert.deepEqual(
      r.map((x) => [x.ok, x.replayed]),
      [[false, true]],
    );
    assert.equal(h.store.events().filter((e) => e.event_type === 'inbox.failed').length, 1);
    assert.equal(fs.readdirSync(path.join(h.ralphDir, 'inbox', 'failed')).filter((f) => f.endsWith('.json')).length, 1);
  });

  it('given a stop replayed after a crash, then the host is not told twice', async () => {
    submitToInbox(h.ralphDir, { command: 'stop', actor: 'human' });
    const stops: HostCommand[] = [];
    await assert.rejects(
      drainInbox(h.ctx, {
        onHostCommand: (c) => void stops.push(c),
        afterApply: () => {
          throw new Error('kill -9');
        },
      }),
    );
    await drainInbox(h.ctx, { onHostCommand: (c) => void stops.push(c) });
    assert.equal(stops.length, 1);
  });

  it('given a claim-ready-task command, then the next ready task is claimed by the named owner', async () => {
    submitToInbox(h.ralphDir, { command: 'claim-ready-task', role: 'primary', owner: 'cli-1', actor: 'cli-1' });
    const [r] = await drainInbox(h.ctx);
    assert.equal(r?.ok, true, r?.error);
    const claimed = h.store.events({ afterId: '' }).filter((e) => e.event_type === 'task.claimed');
    assert.equal(claimed.length, 1);
    assert.equal(claimed[0]?.payload['claimed_by'], 'cli-1');
  });

  it('submit validates before writing', () => {
    assert.throws(() => submitToInbox(h.ralphDir, { command: 'transition-task' } as never));
    assert.equal(fs.existsSync(path.join(h.ralphDir, 'inbox')) ? fs.readdirSync(path.join(h.ralphDir, 'inbox')).length : 0, 0);
  });
});
