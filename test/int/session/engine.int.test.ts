// The extension's engine session in plain Node over a real store, real git and real files:
// observer reads, commands through the inbox (applied at once when no loop holds the lock,
// left for the writer when one does), following another writer, and patch before/after.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS } from '../../../src/control';
import { openStore } from '../../../src/store';
import type { EventStore } from '../../../src/store';
import { Engine } from '../../../src/session/engine';
import { domainEvent, toNewEvent } from '../../../src/domain/events';
import { materializePatch, parsePatchEntries, sidesFromPatchText } from '../../../src/extension/patchFiles';
import { plantRepoTraps } from '../../kit/repoTraps';
import { makeDeferredProject } from '../extension/fixture';
import { git } from '../../kit/git';
import type { DeferredProject } from '../extension/fixture';

const quiet = { info: (): void => undefined, warn: (): void => undefined, error: (): void => undefined };

describe('engine session (host-neutral: plain Node, real store)', () => {
  let p: DeferredProject;
  let engine: Engine | undefined;
  let other: EventStore | undefined;

  beforeEach(async () => {
    p = await makeDeferredProject();
  });

  afterEach(async () => {
    await engine?.shutdown();
    engine = undefined;
    await other?.close();
    other = undefined;
    fs.rmSync(p.dir, { recursive: true, force: true });
  });

  it('given an initialized project, when the session opens, then it reads tasks, the deferred queue and the patch as an observer', async () => {
    engine = new Engine({ projectDir: p.dir, log: quiet, observerPollMs: 0 });
    assert.equal(engine.isInitialized(), true);
    const store = await engine.open();
    assert.equal(store?.mode, 'observer');
    assert.deepEqual(
      engine.tasks().map((t) => t.task_id),
      ['W1-001', 'W1-002', 'W2-001'],
    );
    assert.deepEqual(
      engine.deferred().map((t) => [t.task_id, t.risk_tier, t.deferred_reason]),
      [['W2-001', 2, 'touches src/auth/']],
    );
    assert.equal(engine.patchOfTask('W2-001')?.patch_id, p.patchId);
    assert.equal(engine.role(), 'idle');
    assert.equal(engine.loopState(), 'stopped');
    assert.ok(engine.recentEvents(10).length >= 5);
    assert.equal(engine.recentEvents(10, 'deferred')[0]?.event_type, 'task.deferred');
  });

  it('given no writer, when a human approves, then a short-lived writer applies it at once with actor human and the observer sees it', async () => {
    engine = new Engine({ projectDir: p.dir, log: quiet, observerPollMs: 0 });
    await engine.open();
    const seen: string[] = [];
    engine.onDidChangeData((evs) => seen.push(...evs.map((e) => e.event_type)));
    const o = await engine.resolveDeferred('W2-001', 'approve', 'looks right');
    assert.equal(o.via, 'applied');
    assert.equal(engine.task('W2-001')?.status, 'proposed');
    const verdict = engine.lastVerdict('W2-001');
    assert.deepEqual([verdict?.decision, verdict?.rationale, verdict?.actor], ['approve', 'looks right', 'human']);
    assert.deepEqual(
      [engine.lastTaskEvent('W2-001')?.event_type, engine.lastTaskEvent('W2-001')?.actor],
      ['task.deferral_resolved', 'human'],
    );
    assert.ok(seen.includes('task.deferral_resolved'));
    assert.equal(engine.role(), 'idle', 'the lock is released after the command');
  });

  it('given another process runs the loop (it drains the inbox), when a human rejects, then the command waits in the inbox and the session follows that writer', async () => {
    other = await openStore({ ralphDir: p.ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, runId: 'other', drainsInbox: true });
    engine = new Engine({ projectDir: p.dir, log: quiet, observerPollMs: 0 });
    await engine.open();
    // Same pid here: the engine counts a lock as its own only while it runs a loop itself.
    assert.equal(engine.role(), 'observer');
    assert.equal(engine.loopState(), 'running');
    const o = await engine.submit({ command: 'resolve-deferred', task_id: 'W2-001', decision: 'reject', actor: 'human', rationale: 'no' });
    assert.equal(o.via, 'inbox');
    assert.ok(fs.existsSync(o.file));
    // The other writer appends; the observer follows after a refresh (the watcher's job in VS Code).
    await other.append([{ entity_type: 'note', entity_id: 'n1', event_type: 'note.added', actor: 'cli', payload: {} }]);
    const got = new Promise<void>((resolve) =>
      engine!.onDidChangeData((evs) => evs.some((e) => e.event_type === 'note.added') && resolve()),
    );
    engine.scheduleRefresh();
    await got;
  });

  it("given another process's loop running agents, then the observer lists them from the store: busy with phase and task, catching up at open, then idle with their cost, and none once it stops", async () => {
    other = await openStore({ ralphDir: p.ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, runId: 'other' });
    const append = (e: ReturnType<typeof domainEvent>): Promise<unknown> => other!.append([toNewEvent(e)]);
    const backends = { primary: 'claude', worker: 'claude', judge: 'claude' };
    await append(domainEvent('loop.started', 'loop', 'harness', { branch: 'main', workers: 1, once: false, pid: 1, host: 'h', backends }));
    const run = { role: 'worker' as const, phase: 'worker', task_id: 'W1-002', backend: 'claude' };
    await append(domainEvent('agent.started', 'worker-1', 'worker-1', { ...run, prompt_bytes: 10, budget_usd: 1 }));
    engine = new Engine({ projectDir: p.dir, log: quiet, observerPollMs: 0 });
    await engine.open();
    const rows = (): string[] =>
      engine!.agents().map((a) => `${a.name} ${a.phase} ${a.taskId ?? '-'} ${a.busy ? 'busy' : 'idle'} ${a.costUsd}`);
    assert.deepEqual(rows(), ['worker-1 worker W1-002 busy 0'], 'caught up with the run at open');
    const primary = { role: 'primary' as const, phase: 'plan', task_id: 'W1-001', backend: 'claude' };
    await append(domainEvent('agent.started', 'primary', 'primary', { ...primary, prompt_bytes: 10, budget_usd: 1 }));
    await append(
      domainEvent('agent.finished', 'worker-1', 'worker-1', { ...run, status: 'success', turns: 2, cost_usd: 0.25, duration_ms: 900 }),
    );
    engine.scheduleRefresh();
    await engine.settled();
    assert.deepEqual(rows(), ['primary plan W1-001 busy 0', 'worker-1 worker W1-002 idle 0.25']);
    const summary = { stopReason: 'stopped', iterations: 1, invocations: 1, promoted: 0, deferred: 0, blocked: 0, released: 0 };
    await append(domainEvent('loop.stopped', 'loop', 'harness', { ...summary, costUsd: 0.25, wallMs: 1, modelMs: 1, gateMs: 0 }));
    engine.scheduleRefresh();
    await engine.settled();
    assert.ok(
      engine.agents().every((a) => !a.busy && a.phase === 'stopped'),
      rows().join('; '),
    );
    await other.close();
    other = undefined;
    assert.deepEqual(engine.agents(), [], 'no writer, no agents');
  });

  it('given a short-lived writer (a CLI command, not a loop) beside the window, then a human decision waits for it and is applied, not left in an inbox nobody drains', async () => {
    const cli = await openStore({ ralphDir: p.ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, runId: 'cli' });
    engine = new Engine({ projectDir: p.dir, log: quiet, observerPollMs: 0 });
    await engine.open();
    const submitted = engine.submit({
      command: 'resolve-deferred',
      task_id: 'W2-001',
      decision: 'reject',
      actor: 'human',
      rationale: 'no',
    });
    await cli.close();
    const o = await submitted;
    assert.equal(o.via, 'applied');
    assert.equal(engine.task('W2-001')?.status, 'pending');
  });

  it('given a two-file patch, when it is materialized, then before/after come from its own blobs without touching the checkout', async () => {
    const text = fs.readFileSync(`${p.dir}/.ralph/commits/pending/W2-001.patch`, 'utf8');
    const entries = parsePatchEntries(text);
    assert.deepEqual(
      entries.map((e) => [e.path, e.status]),
      [
        ['src/auth/token.js', 'modified'],
        ['src/auth/token.test.js', 'added'],
      ],
    );
    const traps = plantRepoTraps(p.dir, fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-traps-')));
    const objects = (): string => git(p.dir, 'count-objects', '-v');
    const before = objects();
    const sides = await materializePatch(p.dir, text);
    assert.equal(sides[0]?.before, 'module.exports = (t) => !!t;\n');
    assert.equal(sides[0]?.after, 'module.exports = (t) => typeof t === "string" && t.length > 8;\n');
    assert.equal(sides[1]?.before, '');
    assert.match(sides[1]?.after ?? '', /token/);
    assert.equal(fs.readFileSync(`${p.dir}/src/auth/token.js`, 'utf8'), 'module.exports = (t) => !!t;\n');
    // Nothing was written to the object store (the after side is built in memory), and no
    // hook or fsmonitor of the repository ran.
    assert.equal(objects(), before);
    assert.deepEqual(traps.fired(), []);
    // Restricted Mode's sides come from the text alone and tell the same change.
    const restricted = sidesFromPatchText(text);
    assert.match(restricted[0]?.after ?? '', /t\.length > 8/);
    assert.equal(restricted[1]?.after, sides[1]?.after);
  });
});
