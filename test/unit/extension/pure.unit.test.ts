// The extension's pure pieces: agent rows folded from loop events, notification rules per
// level, and the patch header parser behind the diff editor.
import * as assert from 'node:assert/strict';
import { AgentsTracker } from '../../../src/session/agentsTracker';
import { noticeFor, notificationFor, verdictWord } from '../../../src/extension/notificationRules';
import { applyHunks, ELIDED, parsePatchEntries, PatchApplyError, sidesFromPatchText } from '../../../src/extension/patchFiles';
import type { StoredEvent } from '../../../src/store';

const ev = (event_type: string, entity_id: string, actor: string, payload: Record<string, unknown>): StoredEvent => ({
  event_id: '01',
  ts: new Date().toISOString(),
  run_id: 'r',
  entity_type: 'task',
  entity_id,
  event_type,
  actor,
  payload,
});

describe('extension: agents tracker', () => {
  it('given phase, start and finish events, then each agent has phase, task, busy state and summed cost; primary first', () => {
    const t = new AgentsTracker(() => new Date('2026-11-29T18:00:00Z'));
    t.apply({ type: 'agent.started', agent: 'worker-1', phase: 'worker', taskId: 'W1-002', promptBytes: 10, budgetUsd: 1 });
    t.apply({ type: 'phase.changed', agent: 'primary', from: 'plan', to: 'implement', reason: 'planned', taskId: 'W1-001', iteration: 1 });
    t.apply({
      type: 'agent.finished',
      agent: 'worker-1',
      phase: 'worker',
      taskId: 'W1-002',
      status: 'success',
      costUsd: 0.25,
      durationMs: 100,
      turns: 2,
    });
    t.apply({ type: 'agent.started', agent: 'worker-1', phase: 'worker', taskId: 'W1-003', promptBytes: 10, budgetUsd: 1 });
    const rows = t.list();
    assert.deepEqual(
      rows.map((r) => [r.name, r.phase, r.taskId, r.busy, r.costUsd]),
      [
        ['primary', 'implement', 'W1-001', false, 0],
        ['worker-1', 'worker', 'W1-003', true, 0.25],
      ],
    );
    assert.equal(rows[1]?.startedAt, '2026-11-29T18:00:00.000Z');
    t.apply({ type: 'loop.state', state: 'stopped' });
    assert.ok(t.list().every((r) => !r.busy && r.phase === 'stopped'));
  });
});

describe('extension: notification rules', () => {
  const judge = ev('task.deferral_resolved', 'W2-014', 'judge', { decision: 'approve', rationale: 'small and tested\nmore' });
  it('given a judge verdict, then "W2-014 approved by judge: …" with Show Diff and Override, except at errors/none', () => {
    assert.deepEqual(notificationFor(judge, 'verdicts'), {
      kind: 'info',
      text: 'W2-014 approved by judge: small and tested',
      actions: ['Show Diff', 'Override'],
    });
    assert.equal(notificationFor(judge, 'errors'), undefined);
    assert.equal(notificationFor(judge, 'none'), undefined);
  });
  it('given a human verdict, a promotion and a blocked task, then only what the level asks for', () => {
    assert.equal(notificationFor(ev('task.deferral_resolved', 'T', 'human', { decision: 'reject', rationale: 'x' }), 'all'), undefined);
    assert.equal(
      notificationFor(ev('patch.promoted', 'P1', 'control_plane', { task_id: 'T', commit_hash: 'abcdef1234' }), 'verdicts'),
      undefined,
    );
    assert.equal(
      notificationFor(ev('patch.promoted', 'P1', 'control_plane', { task_id: 'T', commit_hash: 'abcdef1234' }), 'all')?.text,
      'T promoted (abcdef12)',
    );
    assert.equal(notificationFor(ev('task.blocked', 'T', 'control_plane', { reason: 'gates' }), 'errors')?.kind, 'error');
    assert.equal(verdictWord('modify'), 'sent back for changes');
  });
  it('given the default level, then a promotion is a status-bar message and an Output line, not a toast', () => {
    const n = noticeFor(ev('patch.promoted', 'P1', 'control_plane', { task_id: 'T', commit_hash: 'abcdef1234' }), 'verdicts');
    assert.equal(n.toast, undefined);
    assert.equal(n.status, 'T promoted (abcdef12)');
    assert.equal(n.output, 'PROMOTED P1 → T done (commit abcdef12)');
  });
  it('given an incident and loop stops, then a toast for the incident and for a stop nobody asked for, none for a routine stop', () => {
    const incident = ev('incident.outside_worktree', 'worker-1', 'harness', { message: 'wrote /etc/passwd\nmore' });
    assert.deepEqual(noticeFor(incident, 'errors').toast, {
      kind: 'error',
      text: 'Ralph incident (worker-1): wrote /etc/passwd',
      actions: ['Show Output'],
    });
    const stop = (stopReason: string): StoredEvent => ev('loop.stopped', 'loop', 'harness', { stopReason });
    assert.equal(noticeFor(stop('backlog empty or blocked'), 'verdicts').toast, undefined);
    assert.equal(noticeFor(stop('stopped from VS Code'), 'verdicts').toast, undefined);
    assert.match(noticeFor(stop('daily budget reached: $50.00 of $50.00 spent'), 'verdicts').toast?.text ?? '', /daily budget reached/);
    assert.equal(noticeFor(stop('primary crashed: TypeError: x'), 'none').toast, undefined);
  });
  it("given a pause because every agent fails alike, then one warning with the reason and Resume, Open Config, Run Doctor, Show Output; a person's pause shows no toast", () => {
    const reason = 'every agent (primary, worker-1) fails the same way: the agent CLI is not logged in; log the CLI in, then resume';
    const failing = ev('loop.paused', 'loop', 'harness', {
      reason,
      cause: 'agents_failing',
      failure_class: 'not_logged_in',
      agents: ['primary', 'worker-1'],
    });
    assert.deepEqual(noticeFor(failing, 'errors'), {
      toast: {
        kind: 'warn',
        text: `Ralph paused the loop: ${reason}`,
        actions: ['Resume', 'Open Config', 'Run Doctor', 'Show Output'],
      },
      output: `PAUSED ${reason}`,
    });
    assert.equal(noticeFor(failing, 'none').toast, undefined);
    const human = noticeFor(ev('loop.paused', 'loop', 'human', { reason: 'paused from VS Code' }), 'all');
    assert.equal(human.toast, undefined);
    assert.equal(human.output, 'PAUSED paused from VS Code');
  });
});

describe('extension: patch entries', () => {
  it('given added, modified, deleted, renamed and binary files, then paths, status and blob ids', () => {
    const z = '0'.repeat(40);
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const text = [
      `diff --git a/src/x.js b/src/x.js`,
      `index ${a}..${b} 100644`,
      '--- a/src/x.js',
      '+++ b/src/x.js',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      `diff --git a/new.txt b/new.txt`,
      'new file mode 100644',
      `index ${z}..${b}`,
      '--- /dev/null',
      '+++ b/new.txt',
      '@@ -0,0 +1 @@',
      '+n',
      `diff --git a/gone.txt b/gone.txt`,
      'deleted file mode 100755',
      `index ${a}..${z}`,
      '--- a/gone.txt',
      '+++ /dev/null',
      `diff --git a/old name.md b/docs/new.md`,
      'similarity index 90%',
      'rename from old name.md',
      'rename to docs/new.md',
      `index ${a}..${b} 100644`,
      `diff --git a/img.png b/img.png`,
      `index ${a}..${b} 100644`,
      'GIT binary patch',
      'literal 1',
      'z',
      '',
    ].join('\n');
    assert.deepEqual(
      parsePatchEntries(text).map((e) => [e.path, e.oldPath, e.status, e.oldBlob?.[0] ?? null, e.newBlob?.[0] ?? null, e.binary]),
      [
        ['src/x.js', 'src/x.js', 'modified', 'a', 'b', false],
        ['new.txt', 'new.txt', 'added', null, 'b', false],
        ['gone.txt', 'gone.txt', 'deleted', 'a', null, false],
        ['docs/new.md', 'old name.md', 'renamed', 'a', 'b', false],
        ['img.png', 'img.png', 'modified', 'a', 'b', true],
      ],
    );
  });
});

describe('extension: patch sides in memory (no process, no object)', () => {
  const patch = [
    'diff --git a/src/x.js b/src/x.js',
    'index aaaaaaa..bbbbbbb 100644',
    '--- a/src/x.js',
    '+++ b/src/x.js',
    '@@ -2,2 +2,3 @@',
    ' two',
    '-three',
    '+THREE',
    '+three and a half',
    '@@ -9 +10 @@',
    '-nine',
    '\\ No newline at end of file',
    '+NINE',
    '\\ No newline at end of file',
    'diff --git a/new.txt b/new.txt',
    'new file mode 100644',
    'index 0000000..ccccccc',
    '--- /dev/null',
    '+++ b/new.txt',
    '@@ -0,0 +1,2 @@',
    '+n1',
    '+n2',
    '',
  ].join('\n');
  const base = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine';

  it('given the base blob, then applyHunks gives exactly what git apply would (newline at end included)', () => {
    const [x] = parsePatchEntries(patch);
    assert.equal(applyHunks('src/x.js', base, x!.hunks), 'one\ntwo\nTHREE\nthree and a half\nfour\nfive\nsix\nseven\neight\nNINE');
    assert.throws(() => applyHunks('src/x.js', base.replace('three', 'tree'), x!.hunks), PatchApplyError);
  });

  it('given only the patch text (Restricted Mode), then both sides show the hunks with markers for what is left out', () => {
    const [x, n] = sidesFromPatchText(patch);
    assert.equal(x?.before, `${ELIDED}\ntwo\nthree\n${ELIDED}\nnine\n${ELIDED}\n`);
    assert.equal(x?.after, `${ELIDED}\ntwo\nTHREE\nthree and a half\n${ELIDED}\nNINE\n${ELIDED}\n`);
    assert.equal(n?.before, '');
    assert.equal(n?.after, 'n1\nn2\n');
  });
});
