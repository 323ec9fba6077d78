// The human input flows of the trees, in a real VS Code 1.100.3 with the packaged .vsix and
// no loop running (a short-lived writer in the window applies each command): Modify… on a
// deferred patch asks for an instruction, Reject Deferred Patch for a note that lands in the
// store with the human rejection, Drop Task asks for a modal confirmation,
// Reprioritize Task… asks for a wave and refuses what is not a number. Each flow is driven
// through the context menu and the keyboard, checked in the trees first and then in the
// store (read as an observer, as another process would). Escape / Cancel change nothing.
// Last, the loop starts (scripted agents) and the rejected task's next attempt is sent the
// Reject note: its transcript shows the answer of the script that matches only that note.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS, decideAndAppend } from '../../src/control';
import { controlContext } from '../../src/control/context';
import { domainEvent } from '../../src/domain/events';
import { initProject } from '../../src/project/init';
import { openStore } from '../../src/store';
import type { StoredEvent } from '../../src/store';
import { EVENT_COLUMNS, rowToEvent } from '../../src/store/eventRows';
import type { EventRow } from '../../src/store/eventRows';
import { makeDeferredProject } from '../int/extension/fixture';
import type { DeferredProject } from '../int/extension/fixture';
import type { Locator } from 'playwright-core';
import { useScriptedAgents } from './calculatorProject';
import { git } from '../kit/git';
import type { Session } from './harness';
import { defaultVsix, pollUntil, quickInputMessage, quickInputTitle, runContextMenuCommand, startSession } from './harness';

/** The events about one task, oldest first, read from .ralph as an observer. */
async function taskEvents(ralphDir: string, taskId: string): Promise<StoredEvent[]> {
  const store = await openStore({ ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store
      .all<EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE entity_type = 'task' AND entity_id = ? ORDER BY event_id`, [taskId])
      .map(rowToEvent);
  } finally {
    await store.close();
  }
}

const byHuman = (events: readonly StoredEvent[]): StoredEvent[] => events.filter((e) => e.actor === 'human');

describe('e2e: human input flows (modify, drop, reprioritize)', function () {
  this.timeout(300_000);
  let session: Session | undefined;
  let project: DeferredProject;

  before(async () => {
    assert.ok(fs.existsSync(defaultVsix), `${defaultVsix} missing: run node scripts/run-e2e.mjs (it packages first)`);
    // W1-001 and W1-002 pending in wave 1, W2-001 deferred (tier 2) with a two-file patch.
    project = await makeDeferredProject();
    session = await startSession(project.dir, { vsix: [defaultVsix] });
  });

  after(async () => {
    await session?.dispose();
    if (project && process.env.RALPH_E2E_KEEP !== '1') fs.rmSync(project.dir, { recursive: true, force: true });
  });

  const wb = (): Session['workbench'] => session!.workbench;
  const backlog = (): ReturnType<Session['workbench']['viewPane']> => wb().viewPane('Backlog');
  const deferred = (): ReturnType<Session['workbench']['viewPane']> => wb().viewPane('Deferred');
  /** A Backlog row by the accessible label the extension gives it: "<id> <title>, <status>". */
  const taskRow = (id: string, title: string, status: string): Locator =>
    wb()
      .treeRows(backlog())
      .and(wb().page.locator(`[aria-label="${id} ${title}, ${status}"]`));

  it('given a deferred patch, when Modify… is picked from its context menu and the input box is dismissed with Escape, then nothing changes', async () => {
    await wb().openViewContainer('Ralph', 'ralph');
    await wb().treeRows(deferred()).filter({ hasText: 'W2-001' }).first().waitFor();
    await taskRow('W2-001', 'Token check', 'deferred').waitFor();
    await wb().screenshot('human-input-01-deferred');
    await runContextMenuCommand(wb(), 'W2-001', 'Modify Deferred Patch…', deferred());
    await quickInputTitle(wb()).filter({ hasText: 'Modify W2-001' }).waitFor();
    await wb().quickInput.press('Escape');
    await wb().quickInput.waitFor({ state: 'hidden' });
    // The command returns on Escape without writing; the tree and the store still say deferred.
    await wb().treeRows(deferred()).filter({ hasText: 'W2-001' }).first().waitFor();
    await taskRow('W2-001', 'Token check', 'deferred').waitFor();
    assert.deepEqual(byHuman(await taskEvents(project.ralphDir, 'W2-001')), []);
  });

  it('when Modify… is picked again and an instruction typed with Enter, then the task leaves Deferred, the Backlog shows it pending and the store holds the human decision with the instruction', async () => {
    const instruction = 'Accept tokens of 16 characters or more, not 8';
    await runContextMenuCommand(wb(), 'W2-001', 'Modify Deferred Patch…', deferred());
    await quickInputTitle(wb()).filter({ hasText: 'Modify W2-001' }).waitFor();
    await wb().quickInput.fill(instruction);
    await wb().screenshot('human-input-02-modify-instruction');
    await wb().quickInput.press('Enter');
    await wb().quickInput.waitFor({ state: 'hidden' });
    await wb().treeRows(deferred()).filter({ hasText: 'W2-001' }).first().waitFor({ state: 'detached' });
    await taskRow('W2-001', 'Token check', 'pending').waitFor();
    await wb().screenshot('human-input-03-modified-pending');
    const resolved = byHuman(await taskEvents(project.ralphDir, 'W2-001')).filter((e) => e.event_type === 'task.deferral_resolved');
    assert.equal(resolved.length, 1, 'one human task.deferral_resolved');
    assert.equal(resolved[0]!.payload.decision, 'modify');
    assert.equal(resolved[0]!.payload.rationale, instruction);
    assert.equal(resolved[0]!.payload.modification, instruction);
    assert.equal(resolved[0]!.payload.new_status, 'pending');
  });

  it('given a pending task, when Drop Task is picked from its context menu and the modal is cancelled, then nothing changes', async () => {
    await taskRow('W1-001', 'Parse config', 'pending').waitFor();
    await runContextMenuCommand(wb(), 'W1-001', 'Drop Task', backlog());
    await wb().waitForDialog(/Drop W1-001\?/);
    await wb().screenshot('human-input-04-drop-confirm');
    await wb().clickDialogButton(/Drop W1-001\?/, 'Cancel');
    await taskRow('W1-001', 'Parse config', 'pending').waitFor();
    assert.deepEqual(byHuman(await taskEvents(project.ralphDir, 'W1-001')), []);
  });

  it('when Drop Task is picked again and the modal answered with Drop, then the task shows as dropped and the store holds task.dropped by the human', async () => {
    await runContextMenuCommand(wb(), 'W1-001', 'Drop Task', backlog());
    await wb().clickDialogButton(/Drop W1-001\?/, 'Drop');
    await taskRow('W1-001', 'Parse config', 'dropped').waitFor();
    await wb().screenshot('human-input-05-dropped');
    const mine = byHuman(await taskEvents(project.ralphDir, 'W1-001'));
    assert.deepEqual(
      mine.map((e) => e.event_type),
      ['task.dropped'],
    );
  });

  it('given a pending task in wave 1, when Reprioritize Task… is given a non-number, then the validation message shows and Enter does not accept it; given 3, the task moves under Wave 3', async () => {
    await runContextMenuCommand(wb(), 'W1-002', 'Reprioritize Task…', backlog());
    await quickInputTitle(wb()).filter({ hasText: 'Move W1-002 to wave' }).waitFor();
    await wb().quickInput.fill('soon');
    await quickInputMessage(wb()).filter({ hasText: 'a whole number' }).waitFor();
    await wb().screenshot('human-input-06-reprioritize-invalid');
    await wb().quickInput.press('Enter');
    // Refused: the box stays open with the text and the message (the store check below shows no event came of it).
    assert.ok(await wb().quickInput.isVisible(), 'the input box stays open');
    assert.equal(await wb().quickInput.inputValue(), 'soon');
    await quickInputMessage(wb()).filter({ hasText: 'a whole number' }).waitFor();
    await wb().quickInput.fill('3');
    await quickInputMessage(wb()).filter({ hasText: 'a whole number' }).waitFor({ state: 'hidden' });
    await wb().quickInput.press('Enter');
    await wb().quickInput.waitFor({ state: 'hidden' });
    // Under Wave 3: the nearest wave row (level 1) above the task's row; tree rows are flat in the DOM, in order.
    const rows = wb().treeRows(backlog());
    let outline: Array<{ level: string; label: string }> = [];
    await pollUntil(
      'W1-002 under "Wave 3" in the Backlog',
      async () => {
        outline = await rows.evaluateAll((els) =>
          els.map((el) => ({ level: el.getAttribute('aria-level') ?? '', label: el.getAttribute('aria-label') ?? '' })),
        );
        const at = outline.findIndex((r) => r.label.startsWith('W1-002 '));
        const wave = outline
          .slice(0, Math.max(0, at))
          .reverse()
          .find((r) => r.level === '1');
        return at >= 0 && outline[at]!.level === '2' && wave !== undefined && /^Wave 3\b/.test(wave.label);
      },
      () => `backlog rows: ${outline.map((r) => `${r.level}:${r.label}`).join(' | ')}`,
    );
    await wb().screenshot('human-input-07-reprioritized');
    const moved = byHuman(await taskEvents(project.ralphDir, 'W1-002'));
    assert.deepEqual(
      moved.map((e) => [e.event_type, e.payload.old_wave, e.payload.new_wave]),
      [['task.reprioritized', 1, 3]],
    );
  });

  it('given W2-001 deferred again, when Reject Deferred Patch is picked and a note typed, then the task goes back to pending and the store holds the human rejection with the note', async () => {
    // Another attempt came back deferred (written as the loop would, by a short-lived writer).
    const store = await openStore({ ralphDir: project.ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      const ctx = controlContext(store, { ralphDir: project.ralphDir, projectDir: project.dir });
      const patch = 'patch_W2-001_2';
      await decideAndAppend(ctx, () => ({
        events: [
          domainEvent('task.claimed', 'W2-001', 'primary', { old_status: 'pending', new_status: 'claimed', claimed_by: 'primary' }),
          domainEvent('patch.queued', patch, 'primary', {
            task_id: 'W2-001',
            patch_path: '.ralph/commits/pending/W2-001.patch',
            created_by: 'primary',
          }),
          domainEvent('task.proposed', 'W2-001', 'primary', { old_status: 'claimed', new_status: 'proposed', patch_id: patch }),
          domainEvent('task.deferred', 'W2-001', 'primary', {
            old_status: 'proposed',
            new_status: 'deferred',
            patch_id: patch,
            risk_tier: 2,
            reason: 'tier 2 (sensitive): defer to the judge',
          }),
        ],
        result: undefined,
      }));
    } finally {
      await store.close();
    }
    await wb().treeRows(deferred()).filter({ hasText: 'W2-001' }).first().waitFor();
    const note = 'Tokens must expire after an hour';
    await runContextMenuCommand(wb(), 'W2-001', 'Reject Deferred Patch', deferred());
    await quickInputTitle(wb()).filter({ hasText: 'Reject W2-001?' }).waitFor();
    await wb().quickInput.fill(note);
    await wb().screenshot('human-input-06-reject-note');
    await wb().quickInput.press('Enter');
    await wb().quickInput.waitFor({ state: 'hidden' });
    await wb().treeRows(deferred()).filter({ hasText: 'W2-001' }).first().waitFor({ state: 'detached' });
    await taskRow('W2-001', 'Token check', 'pending').waitFor();
    const resolved = byHuman(await taskEvents(project.ralphDir, 'W2-001')).filter((e) => e.event_type === 'task.deferral_resolved');
    assert.equal(resolved.length, 2, 'the modify before and this rejection');
    assert.equal(resolved[1]!.payload.decision, 'reject');
    assert.equal(resolved[1]!.payload.rationale, `rejected in VS Code: ${note}`);
    assert.equal(resolved[1]!.payload.new_status, 'pending');
  });

  it("when the loop then starts, then W2-001's next attempt is sent the note: its transcript shows the answer only a prompt carrying the note gets", async () => {
    // The project becomes a loop's (ralph.config.json, prompts) with the scripted model: one
    // script matches only a prompt that carries the note; anything else waits forever.
    await initProject({
      dir: project.dir,
      createDatabase: async (ralphDir) => {
        const s = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
        await s.close();
      },
    });
    useScriptedAgents(project.dir);
    const seen = 'NOTE-SEEN: planning W2-001 so that tokens expire after an hour';
    fs.writeFileSync(
      path.join(project.ralphDir, 'e2e-scenario.json'),
      JSON.stringify({
        scripts: [
          {
            name: 'the note',
            match: 'Tokens must expire after an hour',
            turns: [{ text: seen, tools: [{ tool: 'read', path: 'README.md' }] }, { hang: true }],
          },
          { name: 'anything else', turns: [{ hang: true }] },
        ],
      }),
    );
    git(project.dir, 'add', '-A');
    git(project.dir, 'commit', '-q', '-m', 'ralph init');

    await wb().runCommand('Ralph: Start Loop');
    // W1-001 is dropped and W1-002 moved to wave 3: the primary's first pick is W2-001.
    const transcripts = path.join(project.ralphDir, 'logs', 'transcripts');
    let found = '';
    await pollUntil(
      "W2-001's plan transcript with the note's answer",
      async () => {
        const files = fs.existsSync(transcripts) ? fs.readdirSync(transcripts).filter((f) => f.includes('_primary_W2-001')) : [];
        found = files.map((f) => fs.readFileSync(path.join(transcripts, f), 'utf8')).join('\n');
        return found.includes(seen);
      },
      () => `${fs.existsSync(transcripts) ? fs.readdirSync(transcripts).join(', ') : 'no transcripts'}\n${found}`,
      180_000,
    );
    assert.match(found, /Read README\.md|README\.md/, 'the transcript shows the tool call after the answer');
    await wb().screenshot('human-input-07-next-attempt-with-note');
    await wb().runCommand('Ralph: Stop Loop');
    await wb()
      .statusBarItem(/Ralph: stopped/)
      .first()
      .waitFor({ timeout: 120_000 });
  });
});
