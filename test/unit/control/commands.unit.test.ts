// Every control-plane command over a real sql.js store, with the cases where a naive
// implementation goes wrong: unique ids, done only through promotion, atomic claims,
// instants compared as instants, risk from the patch's files, rejected proposals said.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { currentWave } from '../../../src/domain/task';
import { DEFAULT_RISK_PATTERNS } from '../../../src/domain/risk';
import {
  allTasks,
  applyPolicy,
  claimReadyTask,
  classifyTaskRisk,
  discardPatch,
  emitEvent,
  expireStaleDeferrals,
  getDeferredQueue,
  getTask,
  importBacklog,
  patchesOf,
  pickReadyTask,
  policyCheck,
  processProposals,
  deferredProposals,
  resolveProposal,
  releaseClaims,
  controlContext,
  statusFacts,
  promotePatch,
  queuePatch,
  rebuildViews,
  renderBacklogFile,
  renderState,
  resolveDeferred,
  shouldReviewDeferred,
  statusText,
  syncBacklog,
  transitionTask,
} from '../../../src/control/index';
import { projectRiskPatterns } from '../../../src/project/config';
import { BACKLOG, harness, writePatch, type Harness } from './harness';

describe('control commands', function () {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => {
    await h.close();
  });

  async function imported(): Promise<void> {
    h.writeBacklog(BACKLOG);
    await importBacklog(h.ctx);
  }

  /** Queues a patch touching files and returns its id. */
  async function queued(taskId: string, files: string[]): Promise<string> {
    return queuePatch(h.ctx, { taskId, patchPath: writePatch(h, `${taskId}-${h.nowMs()}`, files), createdBy: 'worker-b' });
  }

  async function promoted(
    taskId: string,
    files = ['src/a.ts'],
    commit = `c0ffee${Math.floor(Math.random() * 1e8).toString(16)}`,
  ): Promise<string> {
    const p = await queued(taskId, files);
    h.commits.add(commit);
    await promotePatch(h.ctx, { patchId: p, commitHash: commit });
    return p;
  }

  describe('init / importBacklog', () => {
    it('writes a skeleton with waves 0-2 when there is no BACKLOG.md and migrates 0', async () => {
      const r = await importBacklog(h.ctx);
      assert.equal(r.migrated, 0);
      assert.equal(r.createdBacklog, true);
      const text = fs.readFileSync(path.join(h.ralphDir, 'BACKLOG.md'), 'utf8');
      assert.match(text, /## Wave 0\n[\s\S]*## Wave 1\n[\s\S]*## Wave 2\n/);
      assert.doesNotMatch(text, /Critical Fixes/, 'no fixed title that may not fit the tasks');
      assert.ok(fs.existsSync(path.join(h.ralphDir, 'STATE.json')));
    });

    it('keeps the wave titles someone wrote into BACKLOG.md when it renders it again, and plain headings elsewhere', async () => {
      h.writeBacklog(BACKLOG.replace(/## Wave 1[^\n]*/, '## Wave 1: Search and export'));
      await importBacklog(h.ctx);
      const text = fs.readFileSync(path.join(h.ralphDir, 'BACKLOG.md'), 'utf8');
      assert.match(text, /^## Wave 1: Search and export$/m);
      assert.match(text, /^## Wave 0: Critical Fixes & Foundation$/m, "the fixture's own title for wave 0");
    });

    it('imports each row once as task.migrated, mapping statuses; done without a patch stays pending with a note', async () => {
      h.writeBacklog(BACKLOG);
      const r = await importBacklog(h.ctx);
      assert.equal(r.migrated, 4);
      assert.equal(getTask(h.store, 'W0-002')?.status, 'pending');
      assert.equal(getTask(h.store, 'W1-002')?.status, 'pending');
      assert.ok(r.notes.some((n) => n.startsWith('W1-002')));
      assert.equal(getTask(h.store, 'W0-002')?.deps, 'W0-001');
      assert.equal((await importBacklog(h.ctx)).migrated, 0);
      assert.equal(h.store.events({ entityType: 'task' }).filter((e) => e.event_type === 'task.migrated').length, 4);
    });

    it('a malformed row fails the import with file and line, importing nothing', async () => {
      h.writeBacklog(`${BACKLOG}| W1-003 | pending | broken | S |\n`);
      await assert.rejects(
        importBacklog(h.ctx),
        (e: Error) => e.name === 'BacklogParseError' && /BACKLOG\.md:16: table row has 4 cells/.test(e.message),
      );
      assert.equal(h.store.events().length, 0);
    });
  });

  describe('emit-event / transition-task', () => {
    it('emit-event returns distinct ids for identical events in the same instant', async () => {
      const a = await emitEvent(h.ctx, { entityType: 'run', entityId: 'r1', eventType: 'run.note', actor: 'primary', payload: { x: 1 } });
      const b = await emitEvent(h.ctx, { entityType: 'run', entityId: 'r1', eventType: 'run.note', actor: 'primary', payload: { x: 1 } });
      assert.notEqual(a, b);
    });

    it('emit-event refuses lifecycle event types', async () => {
      await assert.rejects(emitEvent(h.ctx, { entityType: 'task', entityId: 'W0-001', eventType: 'task.done', actor: 'x' }), {
        name: 'ReservedEventTypeError',
      });
    });

    it('transition-task updates columns, bumps version, and refuses done without a promoted patch', async () => {
      await imported();
      const r = await transitionTask(h.ctx, {
        taskId: 'W0-001',
        status: 'claimed',
        actor: 'primary',
        payload: { claimed_by: 'primary', risk_tier: 0 },
      });
      assert.deepEqual([r.oldStatus, r.newStatus], ['pending', 'claimed']);
      const t = getTask(h.store, 'W0-001');
      assert.deepEqual([t?.claimed_by, t?.risk_tier, t?.version], ['primary', 0, 2]);
      await assert.rejects(transitionTask(h.ctx, { taskId: 'W0-001', status: 'done', actor: 'primary' }), {
        name: 'DoneWithoutPromotedPatchError',
      });
      assert.equal(getTask(h.store, 'W0-001')?.status, 'claimed');
    });
  });

  describe('pick-ready-task / claim-ready-task', () => {
    it('pick does not claim; claim is atomic: concurrent claims never share a task', async () => {
      await imported();
      assert.equal(pickReadyTask(h.ctx, 'worker')?.task_id, 'W0-001');
      assert.equal(pickReadyTask(h.ctx, 'worker')?.task_id, 'W0-001');
      // Three S tasks are ready (W1-002's done mark had no patch); four workers race.
      const claims = await Promise.all(['a', 'b', 'c', 'd'].map((w) => claimReadyTask(h.ctx, 'worker', `worker-${w}`)));
      const ids = claims.map((t) => t?.task_id ?? 'NONE');
      assert.deepEqual([...ids].sort(), ['NONE', 'W0-001', 'W1-001', 'W1-002']);
      const owners = ['W0-001', 'W1-001', 'W1-002'].map((id) => getTask(h.store, id)?.claimed_by);
      assert.equal(new Set(owners).size, 3);
      assert.equal(h.store.events().filter((e) => e.event_type === 'task.claimed').length, 3);
    });

    it('primary picks any effort in the current wave; --exclude skips', async () => {
      await imported();
      assert.equal(pickReadyTask(h.ctx, 'primary')?.task_id, 'W0-001');
      assert.equal(pickReadyTask(h.ctx, 'primary', ['W0-001'])?.task_id, 'W1-001');
    });
  });

  describe('release-claims (claims reset with events, not by direct SQL)', () => {
    it('returns the claims of one owner to pending with a task.pending event each', async () => {
      await imported();
      await claimReadyTask(h.ctx, 'worker', 'worker-a');
      await claimReadyTask(h.ctx, 'worker', 'worker-b');
      await claimReadyTask(h.ctx, 'primary', 'primary');
      const released = await releaseClaims(h.ctx, { owner: 'worker-a', actor: 'repair', reason: 'worker died' });
      assert.deepEqual(released, ['W0-001']);
      const t = getTask(h.store, 'W0-001');
      assert.deepEqual([t?.status, t?.claimed_by], ['pending', null]);
      const ev = h.store.events({ entityId: 'W0-001' }).at(-1);
      assert.deepEqual([ev?.event_type, ev?.actor, ev?.payload['released_owner']], ['task.pending', 'repair', 'worker-a']);
      assert.equal((await releaseClaims(h.ctx, { actor: 'repair', reason: 'all', except: ['W1-001'] })).length, 1);
      assert.equal(getTask(h.store, 'W1-001')?.status, 'claimed');
    });
  });

  describe('patches', () => {
    it('queue -> proposed; promote -> promoted + done + task.completed; the commit must exist', async () => {
      await imported();
      const p = await queued('W0-001', ['src/helpers.ts']);
      assert.match(p, /^patch_W0-001_\d{17}$/);
      assert.equal(getTask(h.store, 'W0-001')?.status, 'proposed');
      await assert.rejects(promotePatch(h.ctx, { patchId: p, commitHash: 'abcdef12' }), { name: 'CommitNotFoundError' });
      h.commits.add('abcdef1234567890');
      const r = await promotePatch(h.ctx, { patchId: p, commitHash: 'abcdef1234567890' });
      assert.equal(r.taskId, 'W0-001');
      assert.equal(getTask(h.store, 'W0-001')?.status, 'done');
      assert.equal(patchesOf(h.store, 'W0-001')[0]?.commit_hash, 'abcdef1234567890');
      assert.equal(h.store.events({ entityId: 'W0-001' }).filter((e) => e.event_type === 'task.completed').length, 1);
    });

    it('discard -> discarded and the task back to pending', async () => {
      await imported();
      const p = await queued('W0-001', ['src/a.ts']);
      const r = await discardPatch(h.ctx, { patchId: p, reason: 'tests failed' });
      assert.equal(r.taskId, 'W0-001');
      assert.equal(getTask(h.store, 'W0-001')?.status, 'pending');
      assert.equal(patchesOf(h.store, 'W0-001')[0]?.status, 'discarded');
    });
  });

  describe('classify-risk and policy-check read the files the patch touches', () => {
    it('a docs-only S patch is tier 0, a migration tier 2, a secret tier 3; the tier is recorded', async () => {
      await imported();
      const p0 = await queued('W0-001', ['docs/guide.md', 'README.md']);
      assert.equal((await classifyTaskRisk(h.ctx, 'W0-001')).tier, 0);
      assert.equal(getTask(h.store, 'W0-001')?.risk_tier, 0);
      await discardPatch(h.ctx, { patchId: p0, reason: 'x' });
      await queued('W0-001', ['db/migrations/002_users.sql', 'docs/a.md']);
      const a = await classifyTaskRisk(h.ctx, 'W0-001');
      assert.deepEqual([a.tier, a.files], [2, ['db/migrations/002_users.sql', 'docs/a.md']]);
      assert.equal((await policyCheck(h.ctx, 'W0-001')).decision, 'defer');
      const p3 = await queued('W0-002', ['config/.env.production']);
      assert.deepEqual(await policyCheck(h.ctx, 'W0-002', p3).then((v) => [v.decision, v.risk_tier]), ['decompose', 3]);
    });

    it('with no patch, the source decides: ES:30 is tier 2', async () => {
      await imported();
      assert.equal((await classifyTaskRisk(h.ctx, 'W1-001')).tier, 2);
      assert.equal((await classifyTaskRisk(h.ctx, 'W0-001')).tier, 1);
    });

    it('applyPolicy defers a tier-2 patch with the reason, and the task cannot be promoted around the judge', async () => {
      await imported();
      const p = await queued('W0-001', ['src/auth/login.ts']);
      const v = await applyPolicy(h.ctx, 'W0-001');
      assert.equal(v.decision, 'defer');
      const t = getTask(h.store, 'W0-001');
      assert.deepEqual([t?.status, t?.risk_tier, t?.patch_id], ['deferred', 2, p]);
      assert.match(t?.deferred_reason ?? '', /judge/);
      h.commits.add('aaaa1111');
      await assert.rejects(promotePatch(h.ctx, { patchId: p, commitHash: 'aaaa1111' }), { name: 'InvalidStateError' });
    });

    it('risk patterns come from ralph.config.json risk_patterns (globs, each tier optional)', async () => {
      await imported();
      fs.writeFileSync(path.join(h.dir, 'ralph.config.json'), JSON.stringify({ name: 'x', risk_patterns: { tier2: ['**/billing/**'] } }));
      const patterns = projectRiskPatterns(h.dir);
      assert.deepEqual(patterns.tier2, ['**/billing/**']);
      assert.deepEqual(patterns.tier3, DEFAULT_RISK_PATTERNS.tier3);
      const ctx = controlContext(h.store, { ralphDir: h.ralphDir, projectDir: h.dir, riskPatterns: patterns });
      await queued('W0-001', ['src/billing/invoice.ts']);
      assert.equal((await classifyTaskRisk(ctx, 'W0-001', { record: false })).tier, 2);
      assert.equal((await classifyTaskRisk(h.ctx, 'W0-001', { record: false })).tier, 1);
      fs.writeFileSync(path.join(h.dir, 'ralph.config.json'), JSON.stringify({ risk_patterns: { tier3: 'not-a-list' } }));
      // The config module's error: the file, the line and column, and the key.
      assert.throws(
        () => projectRiskPatterns(h.dir),
        (e: Error) => e.name === 'ConfigError' && /ralph\.config\.json:1:\d+: risk_patterns\.tier3: /.test(e.message),
      );
      fs.rmSync(path.join(h.dir, 'ralph.config.json'));
      assert.deepEqual(projectRiskPatterns(h.dir), DEFAULT_RISK_PATTERNS);
    });

    it('a hunk for config/.env hidden before the first diff header is refused with the line and the path, not read as tier 1', async () => {
      await imported();
      const rel = writePatch(h, 'hidden', ['src/a.ts']);
      const file = path.join(h.dir, rel);
      fs.writeFileSync(file, `--- a/config/.env\n+++ b/config/.env\n@@ -0,0 +1 @@\n+KEY=v\n${fs.readFileSync(file, 'utf8')}`);
      await queuePatch(h.ctx, { taskId: 'W0-001', patchPath: rel, createdBy: 'w' });
      for (const check of [classifyTaskRisk(h.ctx, 'W0-001'), policyCheck(h.ctx, 'W0-001')]) {
        await assert.rejects(check, (e: Error) => e.name === 'PatchFileError' && /patch line 1: .*config\/\.env/.test(e.message));
      }
    });

    it('a symlink to /etc/passwd is tier 3 with the reason; a change to ralph.config.json is blocked', async () => {
      await imported();
      const rel = path.join('.ralph', 'commits', 'pending', 'link.patch');
      fs.mkdirSync(path.dirname(path.join(h.dir, rel)), { recursive: true });
      fs.writeFileSync(
        path.join(h.dir, rel),
        'diff --git a/docs/lnk b/docs/lnk\nnew file mode 120000\n--- /dev/null\n+++ b/docs/lnk\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n',
      );
      await queuePatch(h.ctx, { taskId: 'W0-001', patchPath: rel, createdBy: 'w' });
      const a = await classifyTaskRisk(h.ctx, 'W0-001');
      assert.equal(a.tier, 3);
      assert.match(a.reasons.join('\n'), /symlink docs\/lnk points outside the repository \("\/etc\/passwd"\)/);
      const cfg = await queued('W0-002', ['src/a.ts', 'ralph.config.json']);
      const v = await applyPolicy(h.ctx, 'W0-002', cfg);
      assert.equal(v.decision, 'block');
      const t = getTask(h.store, 'W0-002');
      assert.equal(t?.status, 'blocked');
      const blocked = h.store.events({ entityId: 'W0-002' }).filter((e) => e.event_type === 'task.blocked');
      assert.match(
        String(blocked[0]?.payload['reason']),
        /agents may not change Ralph's configuration or state; change it yourself \(ralph\.config\.json\)/,
      );
    });

    it('a missing patch file is a clear error naming it', async () => {
      await imported();
      await queuePatch(h.ctx, { taskId: 'W0-001', patchPath: 'nowhere.patch', createdBy: 'w' });
      await assert.rejects(
        classifyTaskRisk(h.ctx, 'W0-001'),
        (e: Error) => e.name === 'PatchFileError' && /nowhere\.patch/.test(e.message),
      );
    });
  });

  describe('deferred queue', () => {
    async function deferTier2(taskId: string): Promise<string> {
      const p = await queued(taskId, ['src/auth/x.ts']);
      await applyPolicy(h.ctx, taskId);
      return p;
    }

    it('get-deferred-queue in prompt and json; should-review at >= 3', async () => {
      await imported();
      assert.equal(getDeferredQueue(h.ctx, 'prompt'), 'No deferred items.\n');
      await deferTier2('W0-001');
      h.advance(1000);
      await deferTier2('W1-001');
      assert.equal(shouldReviewDeferred(h.ctx).review, false);
      const json = JSON.parse(getDeferredQueue(h.ctx, 'json')) as { task_id: string }[];
      assert.deepEqual(
        json.map((t) => t.task_id),
        ['W0-001', 'W1-001'],
      );
      assert.match(getDeferredQueue(h.ctx, 'prompt'), /^## Deferred Items for Review\n\n### W0-001: Set up helpers\n- Risk Tier: 2\n/);
      await deferTier2('W0-002');
      assert.equal(shouldReviewDeferred(h.ctx).review, true);
    });

    it('should-review when one item has waited 10 promoted commits', async () => {
      h.writeBacklog(
        `## Wave 0\n| ID | Status | Title | Source | Effort | Deps |\n|--|--|--|--|--|--|\n${Array.from({ length: 12 }, (_, i) => `| T${String(i).padStart(2, '0')} | pending | t | - | S | - |`).join('\n')}\n`,
      );
      await importBacklog(h.ctx);
      await deferTier2('T00');
      for (let i = 1; i <= 9; i++) await promoted(`T${String(i).padStart(2, '0')}`);
      assert.equal(shouldReviewDeferred(h.ctx).review, false);
      await promoted('T10');
      assert.deepEqual(shouldReviewDeferred(h.ctx), { review: true, deferred: 1, longestWaitCommits: 10 });
    });

    it('approve needs a patch and leads to done only through promotion', async () => {
      await imported();
      const p = await deferTier2('W0-001');
      const r = await resolveDeferred(h.ctx, { taskId: 'W0-001', decision: 'approve', actor: 'judge', rationale: 'looks right' });
      assert.deepEqual([r.newStatus, r.patchId, r.promoted], ['proposed', p, false]);
      assert.equal((await policyCheck(h.ctx, 'W0-001')).decision, 'promote');
      h.commits.add('bbbb2222');
      await promotePatch(h.ctx, { patchId: p, commitHash: 'bbbb2222' });
      assert.equal(getTask(h.store, 'W0-001')?.status, 'done');
    });

    it('approve with the commit promotes in the same transaction', async () => {
      await imported();
      await deferTier2('W0-001');
      h.commits.add('cccc3333');
      const r = await resolveDeferred(h.ctx, {
        taskId: 'W0-001',
        decision: 'approve',
        actor: 'judge',
        rationale: 'ok',
        commitHash: 'cccc3333',
      });
      assert.deepEqual([r.newStatus, r.promoted], ['done', true]);
      assert.equal(patchesOf(h.store, 'W0-001')[0]?.status, 'promoted');
    });

    it('approve of a deferred task with no patch is refused, never done', async () => {
      await imported();
      await transitionTask(h.ctx, { taskId: 'W0-001', status: 'deferred', actor: 'cp', payload: { reason: 'manual' } });
      await assert.rejects(resolveDeferred(h.ctx, { taskId: 'W0-001', decision: 'approve', actor: 'judge', rationale: 'ok' }), {
        name: 'DoneWithoutPromotedPatchError',
      });
      assert.equal(getTask(h.store, 'W0-001')?.status, 'deferred');
    });

    it('reject and modify: pending, patch discarded, event kept', async () => {
      await imported();
      await deferTier2('W0-001');
      const r = await resolveDeferred(h.ctx, { taskId: 'W0-001', decision: 'modify', actor: 'judge', rationale: 'split it' });
      assert.equal(r.newStatus, 'pending');
      assert.equal(getTask(h.store, 'W0-001')?.status, 'pending');
      const ev = h.store.events({ entityId: 'W0-001' }).find((e) => e.event_type === 'task.deferral_resolved');
      assert.equal(ev?.payload['modification'], 'split it');
    });

    it('expire-stale-deferrals: after 20 promoted commits, not 60 events; tier lowered by one', async () => {
      h.writeBacklog(
        `## Wave 0\n| ID | Status | Title | Source | Effort | Deps |\n|--|--|--|--|--|--|\n${Array.from({ length: 21 }, (_, i) => `| T${String(i).padStart(2, '0')} | pending | t | - | S | - |`).join('\n')}\n`,
      );
      await importBacklog(h.ctx);
      await deferTier2('T00');
      for (let i = 0; i < 80; i++) await emitEvent(h.ctx, { entityType: 'run', entityId: 'r', eventType: 'run.tick', actor: 'x' });
      assert.deepEqual(await expireStaleDeferrals(h.ctx), []);
      for (let i = 1; i <= 19; i++) await promoted(`T${String(i).padStart(2, '0')}`);
      assert.deepEqual(await expireStaleDeferrals(h.ctx), []);
      await promoted('T20');
      assert.deepEqual(await expireStaleDeferrals(h.ctx), ['T00']);
      const t = getTask(h.store, 'T00');
      assert.deepEqual([t?.status, t?.risk_tier, t?.deferred_at], ['pending', 1, null]);
      assert.equal(patchesOf(h.store, 'T00')[0]?.status, 'discarded');
    });
  });

  describe('process-proposals', () => {
    function propose(name: string, body: unknown): void {
      const dir = path.join(h.ralphDir, 'proposals');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, name), typeof body === 'string' ? body : JSON.stringify(body));
    }
    const CLAIMED = /^(prop_[^.]+)\.\d{17}-[0-9a-f]{6}\.(json|error\.txt)$/;
    /** The files of proposals/<sub>/ by the name they were written under (claimed names are unique). */
    function archived(sub: string): string[] {
      return fs
        .readdirSync(path.join(h.ralphDir, 'proposals', sub))
        .map((f) => {
          const m = CLAIMED.exec(f);
          assert.ok(m, `${f} carries a unique claim suffix`);
          return `${m[1]}.${m[2]}`;
        })
        .sort();
    }
    const newTask = (id: string, title: string): unknown => ({
      proposal_type: 'new_task',
      confidence: 0.9,
      task: { id, title, effort: 'S', wave: 2 },
    });

    it('counts accepted, rejected and deferred; moves files; invalid ones rejected with the error', async () => {
      await imported();
      propose('prop_001.json', {
        proposal_type: 'new_task',
        confidence: 0.9,
        task: { id: 'W2-001', title: 'Export', source: 'ES:9', effort: 'S', wave: 2, deps: '-' },
        rationale: 'spec 9',
      });
      propose('prop_002.json', '{ not json');
      propose('prop_003.json', { proposal_type: 'drop_task', confidence: 1, task_id: 'W0-002', rationale: 'obsolete' });
      propose('prop_004.json', { proposal_type: 'new_task', confidence: 0.9, task: { id: 'W0-001', title: 'dup', effort: 'S', wave: 0 } });
      const r = await processProposals(h.ctx);
      assert.deepEqual(r.counts, { accepted: 1, rejected: 2, deferred: 1 });
      assert.deepEqual(
        r.reports.map((x) => x.file),
        ['prop_001.json', 'prop_002.json', 'prop_003.json', 'prop_004.json'],
      );
      const t = getTask(h.store, 'W2-001');
      assert.deepEqual([t?.status, t?.provenance], ['pending', 'auto']);
      assert.deepEqual(archived('processed'), ['prop_001.json', 'prop_003.json']);
      assert.deepEqual(archived('rejected'), ['prop_002.error.txt', 'prop_002.json', 'prop_004.error.txt', 'prop_004.json']);
      const rejected = path.join(h.ralphDir, 'proposals', 'rejected');
      const error4 = fs.readdirSync(rejected).find((f) => f.startsWith('prop_004.') && f.endsWith('.error.txt')) ?? '';
      assert.match(fs.readFileSync(path.join(rejected, error4), 'utf8'), /W0-001 already exists/);
      assert.deepEqual(fs.readdirSync(path.join(h.ralphDir, 'proposals', 'processing')), []);
      const types = h.store.events({ entityType: 'proposal' }).map((e) => `${e.event_type} ${String(e.payload['original'])}`);
      assert.deepEqual(types, [
        'proposal.accepted prop_001.json',
        'proposal.rejected prop_002.json',
        'proposal.deferred prop_003.json',
        'proposal.rejected prop_004.json',
      ]);
      // Each outcome's entity is the proposal's unique name, which is also its archived name.
      assert.deepEqual(
        h.store.events({ entityType: 'proposal' }).map((e) => e.entity_id),
        r.reports.map((x) => x.id),
      );
      assert.deepEqual((await processProposals(h.ctx)).counts, { accepted: 0, rejected: 0, deferred: 0 });
    });

    it('deferred proposals wait for the judge: approve applies them (drop_task), reject records why', async () => {
      await imported();
      propose('prop_drop.json', { proposal_type: 'drop_task', confidence: 1, task_id: 'W0-002', rationale: 'covered by W0-001' });
      propose('prop_big.json', {
        proposal_type: 'new_task',
        confidence: 0.6,
        task: { id: 'W2-005', title: 'Big', effort: 'L', wave: 2 },
        rationale: 'r',
      });
      await processProposals(h.ctx);
      assert.deepEqual(
        deferredProposals(h.ctx).map((p) => p.original),
        ['prop_big.json', 'prop_drop.json'],
      );
      // The name it was written under works while it is the only waiting one of that name.
      const a = await resolveProposal(h.ctx, { file: 'prop_drop.json', decision: 'approve', actor: 'judge', rationale: 'agreed' });
      assert.deepEqual([a.outcome, a.tasks], ['accepted', ['W0-002']]);
      assert.equal(getTask(h.store, 'W0-002')?.status, 'dropped');
      const big = deferredProposals(h.ctx)[0]?.file ?? assert.fail('prop_big waits');
      const r = await resolveProposal(h.ctx, { file: big, decision: 'reject', actor: 'judge', rationale: 'too vague' });
      assert.deepEqual([r.outcome, r.detail, r.id], ['rejected', 'judge rejected: too vague', big]);
      assert.deepEqual(deferredProposals(h.ctx), []);
      await assert.rejects(resolveProposal(h.ctx, { file: big, decision: 'approve', actor: 'judge', rationale: 'again' }), {
        name: 'InvalidStateError',
      });
    });

    it('given two waiting proposals written under the same name, then the judge must name one by its unique name', async () => {
      await imported();
      const big = (id: string): unknown => ({ proposal_type: 'new_task', confidence: 0.5, task: { id, title: id, effort: 'L', wave: 2 } });
      propose('prop_x.json', big('W2-101'));
      await processProposals(h.ctx);
      propose('prop_x.json', big('W2-102'));
      await processProposals(h.ctx);
      const waiting = deferredProposals(h.ctx);
      assert.deepEqual(
        waiting.map((p) => p.original),
        ['prop_x.json', 'prop_x.json'],
      );
      await assert.rejects(resolveProposal(h.ctx, { file: 'prop_x.json', decision: 'approve', actor: 'judge', rationale: 'ok' }), {
        name: 'InvalidArgumentError',
        message: new RegExp(
          `2 proposals written as prop_x\\.json wait for the judge; name one: ${waiting.map((p) => p.file.replace(/\./g, '\\.')).join(', ')}`,
        ),
      });
      const second = waiting.find((p) => (p.proposal as { task: { id: string } }).task.id === 'W2-102')?.file ?? '';
      assert.equal(
        (await resolveProposal(h.ctx, { file: second, decision: 'approve', actor: 'judge', rationale: 'ok' })).outcome,
        'accepted',
      );
      assert.equal(getTask(h.store, 'W2-102')?.status, 'pending');
      assert.equal(getTask(h.store, 'W2-101'), undefined);
    });

    it('given a file name used again after it was processed, then the new proposal is applied and both are archived', async () => {
      await imported();
      propose('prop_001.json', newTask('W2-009', 'first'));
      assert.deepEqual((await processProposals(h.ctx)).counts, { accepted: 1, rejected: 0, deferred: 0 });
      propose('prop_001.json', newTask('W2-010', 'second, same file name'));
      const r = await processProposals(h.ctx);
      assert.deepEqual(r.counts, { accepted: 1, rejected: 0, deferred: 0 });
      assert.equal(getTask(h.store, 'W2-010')?.title, 'second, same file name');
      // The same content a third time is a proposal too: decided again (a duplicate task), not skipped.
      propose('prop_001.json', newTask('W2-010', 'second, same file name'));
      const again = await processProposals(h.ctx);
      assert.deepEqual(again.counts, { accepted: 0, rejected: 1, deferred: 0 });
      assert.match(again.reports[0]?.detail ?? '', /task W2-010 already exists/);
      assert.deepEqual(archived('processed'), ['prop_001.json', 'prop_001.json']);
      assert.deepEqual(archived('rejected'), ['prop_001.error.txt', 'prop_001.json']);
      assert.equal(new Set(h.store.events({ entityType: 'proposal' }).map((e) => e.entity_id)).size, 3);
    });

    it('given a crash after the outcome was appended (the file still claimed), then it is only moved, never decided twice', async () => {
      await imported();
      propose('prop_a.json', newTask('W2-009', 'x'));
      const first = await processProposals(h.ctx);
      const id = first.reports[0]?.id ?? assert.fail('processed');
      // Put the archived file back where a kill between append and move leaves it.
      fs.renameSync(path.join(h.ralphDir, 'proposals', 'processed', id), path.join(h.ralphDir, 'proposals', 'processing', id));
      const r = await processProposals(h.ctx);
      assert.deepEqual(r.counts, { accepted: 1, rejected: 0, deferred: 0 });
      assert.equal(r.reports[0]?.detail, 'already processed');
      assert.equal(h.store.events({ entityType: 'proposal' }).length, 1);
      assert.deepEqual(fs.readdirSync(path.join(h.ralphDir, 'proposals', 'processed')), [id]);
    });

    it('given a crash after the claim (claimed, not decided), then the next run decides it', async () => {
      await imported();
      const dir = path.join(h.ralphDir, 'proposals', 'processing');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'prop_b.20261129120000000-abcdef.json'), JSON.stringify(newTask('W2-011', 'claimed before a kill')));
      const r = await processProposals(h.ctx);
      assert.deepEqual(
        r.reports.map((x) => [x.file, x.id, x.outcome]),
        [['prop_b.json', 'prop_b.20261129120000000-abcdef.json', 'accepted']],
      );
      assert.equal(getTask(h.store, 'W2-011')?.status, 'pending');
    });
  });

  describe('derived files', () => {
    it('render-backlog writes the reference table from task_view', async () => {
      await imported();
      await transitionTask(h.ctx, { taskId: 'W0-002', status: 'blocked', actor: 'x' });
      const text = renderBacklogFile(h.ctx);
      assert.match(text, /\| W0-002 \| blocked \| Config loader \| ES:2 \| M \| W0-001 \|/);
      assert.equal(fs.readFileSync(path.join(h.ralphDir, 'BACKLOG.md'), 'utf8'), text);
    });

    it('sync-backlog imports new rows and refuses done marks without a promoted patch', async () => {
      await imported();
      const p = await promoted('W0-001');
      assert.ok(p);
      await transitionTask(h.ctx, { taskId: 'W0-001', status: 'pending', actor: 'human' });
      const text = fs
        .readFileSync(path.join(h.ralphDir, 'BACKLOG.md'), 'utf8')
        .replace('| W0-001 | done |', '| W0-001 | done |')
        .replace('| W0-001 | pending |', '| W0-001 | done |')
        .replace('| W1-001 | pending |', '| W1-001 | done |')
        .concat('| W1-009 | pending | New by hand | - | S | - |\n');
      h.writeBacklog(text);
      const r = await syncBacklog(h.ctx);
      assert.deepEqual(r.completed, ['W0-001']);
      assert.deepEqual(r.imported, ['W1-009']);
      assert.deepEqual(r.refused, [{ taskId: 'W1-001', status: 'pending' }]);
      assert.equal(getTask(h.store, 'W1-001')?.status, 'pending');
      assert.equal(getTask(h.store, 'W0-001')?.status, 'done');
    });

    it('render-state writes the reference keys, counts from the log, keeps the loop position', async () => {
      await imported();
      await promoted('W0-001');
      fs.writeFileSync(
        path.join(h.ralphDir, 'STATE.json'),
        JSON.stringify({ phase: 'verify', iteration: 4, current_item: 'W0-002', items_done_count: 42 }),
      );
      const s = JSON.parse(renderState(h.ctx)) as Record<string, unknown>;
      assert.deepEqual(
        [
          s['phase'],
          s['iteration'],
          s['current_item'],
          s['items_done_count'],
          s['items_total_count'],
          s['commits_total'],
          s['current_wave'],
        ],
        ['verify', 4, 'W0-002', 1, 4, 1, 0],
      );
    });

    it('status: reference shape; last-hour counts compare instants correctly', async () => {
      await imported();
      h.advance(2 * 3600_000);
      await emitEvent(h.ctx, { entityType: 'run', entityId: 'r', eventType: 'run.tick', actor: 'x' });
      h.advance(30 * 60_000);
      await emitEvent(h.ctx, { entityType: 'run', entityId: 'r', eventType: 'run.tick', actor: 'x' });
      await promoted('W0-001');
      const text = statusText(h.ctx);
      const lines = text.split('\n');
      assert.equal(lines[0], '=== Ralph Loop v3 Status ===');
      assert.equal(lines[1], 'Phase: assess | Iteration: 0 | Commits: 1');
      assert.equal(lines[2], 'Current: None | Wave: 0');
      assert.equal(lines[3], 'Tasks (4): done=1,pending=3');
      assert.equal(lines[4], 'Patches: promoted=1');
      // 4 migrated (2.5 h ago) + tick (2.5 h... no: 30 min ago) + tick (now) + queue/promote events.
      const total = h.store.events().length;
      const recent = h.store.events().filter((e) => Date.parse(e.ts) > h.nowMs() - 3600_000).length;
      assert.equal(lines[5], `Events: ${total} total, ${recent} last hour`);
      assert.ok(recent < total);
      assert.equal(lines[6], 'Deferred: 0 | Review needed: no');
      assert.equal(statusFacts(h.ctx).eventsLastHour, recent);
    });

    it('status: the wave and the deferred count asked of SQLite are what the tasks themselves say', async () => {
      const asked = (): [number, number] => {
        const f = statusFacts(h.ctx);
        return [f.wave, f.deferred];
      };
      const fromTasks = (): [number, number] => {
        const tasks = allTasks(h.store);
        return [currentWave(tasks), tasks.filter((t) => t.status === 'deferred').length];
      };
      assert.deepEqual(asked(), [0, 0], 'no task at all');
      await imported();
      assert.deepEqual(asked(), fromTasks());
      await transitionTask(h.ctx, { taskId: 'W1-001', status: 'deferred', actor: 'cp', payload: { reason: 'manual' } });
      assert.deepEqual(asked(), fromTasks());
      assert.equal(asked()[1], 1);
      await promoted('W0-001');
      await promoted('W0-002');
      // Wave 0 finished: the current wave moves to wave 1, where work is open.
      assert.deepEqual(asked(), fromTasks());
      assert.equal(asked()[0], 1);
      await transitionTask(h.ctx, { taskId: 'W1-001', status: 'dropped', actor: 'cp' });
      // Nothing open anywhere: the highest wave.
      assert.deepEqual(asked(), fromTasks());
    });

    it('rebuild replays every event into identical views', async () => {
      await imported();
      await promoted('W0-001');
      const p = await queued('W1-001', ['src/auth/a.ts']);
      await applyPolicy(h.ctx, 'W1-001', p);
      await claimReadyTask(h.ctx, 'primary');
      const snap = (): unknown => [
        h.store.all('SELECT * FROM task_view ORDER BY task_id'),
        h.store.all('SELECT * FROM patch_view ORDER BY patch_id'),
      ];
      const before = snap();
      const n = await rebuildViews(h.ctx);
      assert.equal(n, h.store.events().length);
      assert.deepEqual(snap(), before);
      await h.reopen();
      assert.deepEqual(snap(), before);
    });
  });
});
