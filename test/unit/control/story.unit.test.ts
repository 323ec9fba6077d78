// A task's story folded from events: attempts, patches with gates and tier, the judge's and a
// chat client's decisions, the landing commit, time spent; the same from any superset of events.
import assert from 'node:assert/strict';
import { buildTaskStory, readTaskStory, renderTaskStory, withCommitFiles } from '../../../src/control/story';
import type { StoredEvent } from '../../../src/store/types';
import { harness } from './harness';

let seq = 0;
function ev(
  sec: number,
  entity_type: string,
  entity_id: string,
  event_type: string,
  actor: string,
  payload: Record<string, unknown>,
): StoredEvent {
  seq++;
  const ts = new Date(Date.UTC(2026, 11, 1, 9, 0, sec)).toISOString();
  return {
    event_id: `evt_${String(sec).padStart(6, '0')}_${String(seq).padStart(6, '0')}`,
    ts,
    run_id: 'r',
    entity_type,
    entity_id,
    event_type,
    actor,
    payload,
  };
}
const t = (sec: number, id: string, type: string, actor: string, payload: Record<string, unknown>): StoredEvent =>
  ev(sec, 'task', id, type, actor, payload);
const tr = (sec: number, id: string, from: string, to: string, actor: string, extra: Record<string, unknown> = {}): StoredEvent =>
  t(sec, id, `task.${to}`, actor, { old_status: from, new_status: to, ...extra });
const gates = [
  { gate: 'build', status: 'passed' },
  { gate: 'test', status: 'passed' },
];

/** CALC-4: failed once, its first patch rejected by the judge, the second approved over MCP and promoted. */
function story(): StoredEvent[] {
  const p1 = 'patch_CALC-4_1';
  const p2 = 'patch_CALC-4_2';
  return [
    t(0, 'CALC-4', 'task.created', 'control_plane', {
      title: 'API token check',
      source: 'specs/calc.md:12',
      effort: 'M',
      deps: '-',
      wave: 0,
      provenance: 'auto',
      confidence: 0.9,
      rationale: 'Required by CALC-4',
    }),
    ev(0, 'proposal', 'prop_1.json', 'proposal.accepted', 'control_plane', {
      file: 'prop_1.json',
      proposal_type: 'new_task',
      tasks: ['CALC-4'],
    }),
    t(1, 'OTHER-1', 'task.created', 'control_plane', { title: 'x', source: '-', effort: 'S', deps: '-', wave: 0, provenance: 'spec' }),
    tr(2, 'CALC-4', 'pending', 'claimed', 'primary', { claimed_by: 'primary' }),
    t(5, 'CALC-4', 'task.reflected', 'primary', {
      attempt: 1,
      gate: 'test',
      origin: 'implement',
      class: 'recoverable',
      decision: 'retry',
      lesson: 'off by one',
    }),
    ev(8, 'patch', p1, 'patch.queued', 'primary', { task_id: 'CALC-4', patch_path: 'a.patch', created_by: 'primary' }),
    tr(8, 'CALC-4', 'claimed', 'proposed', 'primary', { patch_id: p1 }),
    t(8, 'CALC-4', 'task.risk_classified', 'control_plane', { old_tier: 1, risk_tier: 2, files: ['src/auth/token.js'], patch_id: p1 }),
    ev(8, 'patch', p1, 'patch.gates', 'primary', { task_id: 'CALC-4', gates, base_commit: 'a'.repeat(40) }),
    tr(9, 'CALC-4', 'proposed', 'deferred', 'primary', { patch_id: p1, risk_tier: 2, reason: 'tier 2 (sensitive): defer to the judge' }),
    t(10, 'CALC-4', 'task.deferral_resolved', 'judge', {
      decision: 'reject',
      rationale: 'accepts empty tokens',
      old_status: 'deferred',
      new_status: 'pending',
      patch_id: p1,
    }),
    ev(10, 'patch', p1, 'patch.discarded', 'judge', { task_id: 'CALC-4', reason: 'judge rejected: accepts empty tokens' }),
    ev(11, 'patch', 'patch_OTHER-1_1', 'patch.queued', 'worker-1', { task_id: 'OTHER-1', patch_path: 'o.patch', created_by: 'worker-1' }),
    tr(12, 'CALC-4', 'pending', 'claimed', 'worker-1', { claimed_by: 'worker-1' }),
    ev(14, 'patch', p2, 'patch.queued', 'worker-1', { task_id: 'CALC-4', patch_path: 'b.patch', created_by: 'worker-1' }),
    tr(14, 'CALC-4', 'claimed', 'proposed', 'worker-1', { patch_id: p2 }),
    ev(14, 'patch', p2, 'patch.gates', 'worker-1', { task_id: 'CALC-4', gates, base_commit: 'b'.repeat(40) }),
    tr(15, 'CALC-4', 'proposed', 'deferred', 'worker-1', { patch_id: p2, risk_tier: 2, reason: 'tier 2 (sensitive)' }),
    t(20, 'CALC-4', 'task.deferral_resolved', 'mcp', {
      decision: 'approve',
      rationale: 'looks right',
      old_status: 'deferred',
      new_status: 'proposed',
      patch_id: p2,
      client: 'claude-code',
      client_version: '2.1.332',
    }),
    ev(21, 'patch', p2, 'patch.promoted', 'mcp', { task_id: 'CALC-4', commit_hash: 'abcdef0123456789' }),
    tr(21, 'CALC-4', 'proposed', 'done', 'mcp', { patch_id: p2 }),
    t(21, 'CALC-4', 'task.completed', 'mcp', { patch_id: p2, commit_hash: 'abcdef0123456789' }),
    ev(21, 'agent', 'worker-1', 'agent.started', 'worker-1', {
      role: 'worker',
      phase: 'worker',
      backend: 'claude',
      task_id: 'CALC-4',
      prompt_bytes: 100,
      budget_usd: 1,
      transcript: 'logs/transcripts/20261201090021000_worker-1_CALC-4.log',
    }),
    ev(21, 'agent', 'worker-2', 'agent.started', 'worker-2', {
      role: 'worker',
      phase: 'worker',
      backend: 'claude',
      task_id: 'OTHER-1',
      prompt_bytes: 100,
      budget_usd: 1,
      transcript: 'logs/transcripts/20261201090021000_worker-2_OTHER-1.log',
    }),
    ev(22, 'agent', 'worker-1', 'agent.finished', 'worker-1', {
      role: 'worker',
      phase: 'worker',
      backend: 'claude',
      status: 'success',
      turns: 2,
      duration_ms: 1000,
      task_id: 'CALC-4',
      cost_usd: 0.25,
    }),
    ev(23, 'agent', 'primary', 'agent.finished', 'primary', {
      role: 'primary',
      phase: 'implement',
      backend: 'claude',
      status: 'success',
      turns: 2,
      duration_ms: 1000,
      task_id: 'CALC-4',
      cost_usd: 0.5,
    }),
  ];
}

describe('control story', () => {
  it('folds attempts, patches, decisions, the commit and the time and cost spent', () => {
    const s = buildTaskStory('CALC-4', story());
    assert.ok(s);
    assert.equal(s.status, 'done');
    assert.equal(s.title, 'API token check');
    assert.equal(s.proposal, 'prop_1.json');
    assert.equal(s.tier, 2);
    assert.equal(s.commit, 'abcdef0123456789');
    assert.equal(s.elapsedMs, 19_000);
    assert.equal(s.costUsd, 0.75);
    assert.deepEqual(
      s.attempts.map((a) => [a.owner, a.outcome, a.patches, a.reflections.map((r) => r.lesson)]),
      [
        ['primary', 'rejected by judge', ['patch_CALC-4_1'], ['off by one']],
        ['worker-1', 'promoted', ['patch_CALC-4_2'], []],
      ],
    );
    assert.deepEqual(
      s.patches.map((p) => [p.patchId, p.status, p.tier, p.commit, p.gates.length]),
      [
        ['patch_CALC-4_1', 'discarded', 2, undefined, 2],
        ['patch_CALC-4_2', 'promoted', undefined, 'abcdef0123456789', 2],
      ],
    );
    assert.deepEqual(
      s.decisions.map((d) => [d.by, d.actor, d.decision, d.client]),
      [
        ['judge', 'judge', 'reject', undefined],
        ['human', 'mcp', 'approve', 'claude-code'],
      ],
    );
    // Other tasks' events never enter the story.
    assert.ok(s.events.every((e) => !e.detail.includes('OTHER')));
    assert.equal(s.events.filter((e) => e.type === 'patch.queued').length, 2);
  });

  it('gives the same story from the task events alone in another order and from a superset', () => {
    const all = story();
    const own = all.filter((e) => e.entity_id !== 'OTHER-1' && e.entity_id !== 'patch_OTHER-1_1');
    assert.deepEqual(buildTaskStory('CALC-4', [...own].reverse()), buildTaskStory('CALC-4', all));
    assert.equal(buildTaskStory('NOPE', all), undefined);
  });

  it('renders markdown with the landing commit, attempts, decisions (with the client) and every event, linking where asked', () => {
    const s = buildTaskStory('CALC-4', story());
    assert.ok(s);
    const md = renderTaskStory(s, { patch: (id) => `command:ralph.openPatchDiff?${encodeURIComponent(JSON.stringify([id]))}` });
    assert.match(md, /^# CALC-4: API token check$/m);
    assert.match(md, /\*\*done\*\* · wave 0 · effort M · tier 2 · source specs\/calc\.md:12/);
    assert.match(md, /Landed as commit abcdef01 \(patch \[patch_CALC-4_2\]\(command:ralph\.openPatchDiff\?/);
    assert.match(md, /19\.0 s from the first claim, \$0\.7500 spent/);
    assert.match(md, /^1\. \*\*primary\*\*, claimed 2026-12-01 09:00:02Z → rejected by judge 2026-12-01 09:00:09Z: tier 2/m);
    assert.match(md, /^2\. \*\*worker-1\*\*, claimed 2026-12-01 09:00:12Z → promoted 2026-12-01 09:00:21Z/m);
    assert.match(md, /test failed \(recoverable, retry\): off by one/);
    assert.match(md, /tier 2 \(src\/auth\/token\.js\); gates build ✓ test ✓/);
    assert.match(md, /\*\*mcp\*\* \(via claude-code\) approve: looks right/);
    assert.match(md, /\| mcp \(claude-code\) \| task\.deferral_resolved \| approve: looks right \|/);
    assert.equal(md.split('\n').filter((l) => /^\| 2026/.test(l)).length, s.events.length);
    // The invocations for the task link their transcripts (another task's never).
    assert.deepEqual(
      s.transcripts.map((x) => [x.agent, x.phase, x.path]),
      [['worker-1', 'worker', 'logs/transcripts/20261201090021000_worker-1_CALC-4.log']],
    );
    const linked = renderTaskStory(s, { transcript: (f) => `command:ralph.openTranscript?${encodeURIComponent(JSON.stringify([f]))}` });
    assert.match(linked, /^## Transcripts$/m);
    assert.match(
      linked,
      /^- 2026-12-01 09:00:21Z worker-1 worker: \[logs\/transcripts\/20261201090021000_worker-1_CALC-4\.log\]\(command:ralph\.openTranscript\?/m,
    );
  });

  it('given the files of the landing commit, then they are listed under the full sha, linked to the commit and to each file at it (a deleted one unlinked)', async () => {
    const read = buildTaskStory('CALC-4', story());
    assert.ok(read?.commit);
    const asked: string[] = [];
    const s = await withCommitFiles(read, (hash) => {
      asked.push(hash);
      return Promise.resolve([
        { path: 'src/auth/token.js', status: 'modified' },
        { path: 'src/auth/new.js', oldPath: 'src/auth/old.js', status: 'renamed' },
        { path: 'src/auth/gone.js', status: 'deleted' },
      ]);
    });
    assert.deepEqual(asked, [read.commit]);
    const md = renderTaskStory(s, { commit: (h) => `commit:${h}`, file: (f, h) => `file:${h}:${f}` });
    const at = md.indexOf(`Files changed in commit [${read.commit}](commit:${read.commit}):`);
    assert.ok(at > 0, md);
    assert.deepEqual(
      md
        .slice(at)
        .split('\n')
        .filter((l) => l.startsWith('- '))
        .slice(0, 3),
      [
        `- modified [src/auth/token.js](file:${read.commit}:src/auth/token.js)`,
        `- renamed src/auth/old.js → [src/auth/new.js](file:${read.commit}:src/auth/new.js)`,
        '- deleted src/auth/gone.js',
      ],
    );
    // Plain text without links; a commit git does not know leaves the story as it was.
    assert.match(renderTaskStory(s), new RegExp(`^Files changed in commit ${read.commit}:$`, 'm'));
    assert.equal(await withCommitFiles(read, () => Promise.resolve(null)), read);
    assert.doesNotMatch(renderTaskStory(read), /Files changed/);
  });

  it('reads the story from a real store: the same as folding every event', async () => {
    const h = await harness();
    try {
      for (const e of story()) await h.store.append([e]);
      const fromStore = readTaskStory(h.store, 'CALC-4');
      const folded = buildTaskStory('CALC-4', h.store.events());
      assert.deepEqual(fromStore, folded);
      assert.equal(fromStore?.attempts.length, 2);
    } finally {
      await h.close();
    }
  });
});
