// The status image (domain/statusImage.ts, control/statusImage.ts): facts computed from the
// image a writer kept equal the facts computed from the live database for every later moment
// the image says it can answer, across hours and days; it refuses the moments it cannot
// answer exactly; a file that is not exactly an image, or an image of files since changed, is
// no image.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { statusFactsOf } from '../../../src/control/derived';
import { keepStatusImage, statusImageOf } from '../../../src/control/statusImage';
import { currentStatusImage, STATUS_IMAGE_FILE, storeFilesIdentity } from '../../../src/control/statusImageFile';
import { statusFactsFrom } from '../../../src/domain/statusFacts';
import { imageSource, parseStatusImage, type StatusImage } from '../../../src/domain/statusImage';
import type { NewEvent } from '../../../src/store/types';
import { harness, type Harness } from './harness';

const POS = { phase: 'implement', iteration: 4, current_item: 'W0-002' } as const;
const HOUR = 3600_000;

const ev = (entity_type: string, entity_id: string, event_type: string, payload: Record<string, unknown>): NewEvent => ({
  entity_type,
  entity_id,
  event_type,
  actor: 'primary',
  payload,
});
const created = (id: string, effort: string, wave: number): NewEvent =>
  ev('task', id, 'task.created', { title: id, source: '-', effort, deps: '-', wave, provenance: 'spec' });
const moved = (id: string, from: string, to: string): NewEvent =>
  ev('task', id, `task.${to}`, { old_status: from, new_status: to, ...(to === 'claimed' ? { claimed_by: 'primary' } : {}) });
/** A patch queued for the task and promoted: a commit, and a promoted row in patch_view. */
const promoted = (taskId: string): NewEvent[] => [
  ev('patch', `patch_${taskId}_1`, 'patch.queued', {
    task_id: taskId,
    patch_path: `.ralph/commits/pending/${taskId}.patch`,
    created_by: 'primary',
  }),
  ev('patch', `patch_${taskId}_1`, 'patch.promoted', { task_id: taskId, commit_hash: 'abc1234' }),
];
const finished = (taskId: string, costUsd: number): NewEvent =>
  ev('agent', 'primary', 'agent.finished', {
    role: 'primary',
    phase: 'implement',
    task_id: taskId,
    backend: 'claude',
    status: 'success',
    turns: 3,
    cost_usd: costUsd,
    duration_ms: 1000,
  });

/** A log with something in every line status prints, spread over three hours. */
async function busyLog(h: Harness): Promise<void> {
  const ids = ['W0-001', 'W0-002', 'W0-003', 'W0-004', 'W1-001', 'W1-002', 'W1-003'];
  await h.store.append(ids.map((id, i) => created(id, ['S', 'M', 'L'][i % 3] as string, id.startsWith('W1') ? 1 : 0)));
  for (const [i, id] of ['W0-001', 'W0-002', 'W0-003'].entries()) {
    await h.store.append([moved(id, 'pending', 'claimed'), finished(id, 0.05 * (i + 1))]);
    h.advance(40 * 60_000);
    await h.store.append([moved(id, 'claimed', 'done')]);
  }
  await h.store.append([moved('W0-004', 'pending', 'claimed'), finished('W0-004', 0.2), moved('W0-004', 'claimed', 'blocked')]);
  await h.store.append([moved('W1-001', 'pending', 'deferred'), moved('W1-002', 'pending', 'deferred')]);
  await h.store.append(promoted('W0-001'));
  await h.store.append([promoted('W0-002')[0] as NewEvent]);
  await h.store.append([
    ev('run', 'run_1', 'agents.confinement', {
      roles: [{ role: 'primary', backend: 'claude', kind: 'none', summary: 'none' }],
      unconfined: true,
    }),
    ev('incident', 'inc_1', 'incident', { summary: 'ralph.config.json changed', restore: 'ralph restore-incident inc_1' }),
    ev('loop', 'run_1', 'loop.paused', { reason: 'agents failing', failure_class: 'rate_limit', agents: ['primary'] }),
  ]);
  h.advance(10 * 60_000);
  await h.store.append([finished('W1-003', 0.01)]);
}

/** Both ways to the facts at `now`: from the image (undefined when it declines) and from SQL. */
function both(h: Harness, image: StatusImage, now: Date): { fromImage: unknown; fromDb: unknown } {
  const src = imageSource(image, now);
  const budget = (): number => 1;
  return {
    fromImage: src && statusFactsFrom(src, POS, now, budget),
    fromDb: statusFactsOf(h.store, POS, now, budget),
  };
}

describe('control/statusImage: status without the store', () => {
  it('given a busy log, then the image answers exactly as the database at every later moment of the day and after it', async () => {
    const h = await harness('2026-12-01T20:00:00.000Z');
    try {
      await busyLog(h);
      const t0 = h.nowMs();
      const image = statusImageOf(h.store, new Date(t0), storeFilesIdentity(h.ralphDir));
      assert.ok(image);
      assert.ok(image.recent.length > 0 && image.recent.length < image.eventsTotal, 'some events are older than the hour');
      for (const dt of [0, 1, 5 * 60_000, 50 * 60_000, HOUR, HOUR + 1, 2 * HOUR, 3.5 * HOUR, 30 * HOUR]) {
        const { fromImage, fromDb } = both(h, image, new Date(t0 + dt));
        assert.ok(fromImage, `the image answers at +${dt} ms`);
        assert.deepEqual(fromImage, fromDb, `at +${dt} ms`);
      }
      // The day changed at +3.5 h (00:00 UTC): nothing spent today yet.
      const late = both(h, image, new Date(t0 + 30 * HOUR)).fromImage as { spendToday?: unknown; eventsLastHour: number };
      assert.equal(late.eventsLastHour, 0);
      assert.deepEqual(late.spendToday, { spentUsd: 0, perDayUsd: 1 });
      const now = both(h, image, new Date(t0)).fromImage as { spendToday?: unknown; paused?: unknown };
      assert.deepEqual(now.spendToday, { spentUsd: 0.51, perDayUsd: 1 });
      assert.ok(now.paused);
    } finally {
      await h.close();
    }
  });

  it('given a clock set back, or a log with a timestamp in a later day, then the image declines those moments', async () => {
    const h = await harness('2026-12-01T22:00:00.000Z');
    try {
      await h.store.append([created('W0-001', 'S', 0)]);
      const t0 = h.nowMs();
      const image = statusImageOf(h.store, new Date(t0), storeFilesIdentity(h.ralphDir));
      assert.ok(image);
      assert.equal(imageSource(image, new Date(t0 - 1)), undefined, 'before the image was taken');
      // An event stamped tomorrow (a clock that ran ahead, then was set back).
      h.advance(5 * HOUR);
      await h.store.append([finished('W0-001', 1)]);
      h.advance(-5 * HOUR);
      const skewed = statusImageOf(h.store, new Date(t0), storeFilesIdentity(h.ralphDir));
      assert.ok(skewed);
      const tomorrow = new Date(t0 + 4 * HOUR);
      assert.equal(imageSource(skewed, tomorrow), undefined);
      assert.ok(imageSource(skewed, new Date(t0 + HOUR)), 'the same day still answers');
      assert.deepEqual(both(h, skewed, new Date(t0 + HOUR)).fromImage, both(h, skewed, new Date(t0 + HOUR)).fromDb);
    } finally {
      await h.close();
    }
  });

  it('given random logs and moments, then the image and the database agree whenever the image answers', async () => {
    const step = fc.record({
      kind: fc.constantFrom('create', 'claim', 'finish', 'done', 'block', 'defer', 'promote'),
      task: fc.integer({ min: 1, max: 6 }),
      cost: fc.integer({ min: 0, max: 300 }).map((c) => c / 100),
      gapMin: fc.integer({ min: 0, max: 400 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { maxLength: 25 }),
        fc.array(fc.integer({ min: -10, max: 3000 }), { maxLength: 5 }),
        async (steps, laterMin) => {
          const h = await harness('2026-12-01T18:30:00.000Z');
          try {
            for (const s of steps) {
              const id = `W0-00${s.task}`;
              h.advance(s.gapMin * 60_000);
              const e =
                s.kind === 'create'
                  ? [created(id, 'S', 0)]
                  : s.kind === 'finish'
                    ? [finished(id, s.cost)]
                    : s.kind === 'promote'
                      ? promoted(id)
                      : [moved(id, 'pending', { claim: 'claimed', done: 'done', block: 'blocked', defer: 'deferred' }[s.kind] as string)];
              await h.store.append(e);
            }
            const t0 = h.nowMs();
            const image = statusImageOf(h.store, new Date(t0), storeFilesIdentity(h.ralphDir));
            assert.ok(image);
            for (const m of [0, ...laterMin]) {
              const { fromImage, fromDb } = both(h, image, new Date(t0 + m * 60_000));
              if (fromImage !== undefined) assert.deepEqual(fromImage, fromDb);
              else assert.ok(m < 0 || image.maxTs !== null, 'declines only a moment before it or a day its log reaches into');
            }
          } finally {
            await h.close();
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('given the kept image, then it is current until the store changes, and a file that is not exactly an image is none', async () => {
    const h = await harness();
    try {
      await h.store.append([created('W0-001', 'S', 0)]);
      await h.reopen(); // a checkpointed ralph.db, as a writer leaves it
      keepStatusImage(h.ralphDir, h.store, new Date(h.nowMs()));
      const file = path.join(h.ralphDir, STATUS_IMAGE_FILE);
      const kept = fs.readFileSync(file, 'utf8');
      assert.equal(currentStatusImage(h.ralphDir)?.eventsTotal, 1);
      // Another event reaches the journal: the image no longer describes the store.
      await h.store.append([created('W0-002', 'S', 0)]);
      assert.equal(currentStatusImage(h.ralphDir), undefined);
      keepStatusImage(h.ralphDir, h.store, new Date(h.nowMs()));
      assert.equal(currentStatusImage(h.ralphDir)?.eventsTotal, 2);
      // Kept by another build (whose projections and facts may differ): not used.
      const current = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(file, JSON.stringify({ ...(JSON.parse(current) as object), build: '0.0.9+other' }));
      assert.equal(currentStatusImage(h.ralphDir), undefined);
      fs.writeFileSync(file, current);
      assert.equal(currentStatusImage(h.ralphDir)?.eventsTotal, 2);
      // The older image put back is refused by its files' identities.
      fs.writeFileSync(file, kept);
      assert.equal(currentStatusImage(h.ralphDir), undefined);
      // Hostile or broken files: none of them is an image.
      const good = JSON.parse(kept) as Record<string, unknown>;
      const broken: unknown[] = [
        '',
        'null',
        '[]',
        kept.slice(0, kept.length / 2),
        { ...good, version: 2 },
        { ...good, build: 7 },
        { ...good, eventsTotal: -1 },
        { ...good, eventsTotal: 1.5 },
        { ...good, recent: [1] },
        { ...good, taskCounts: [['pending', '1']] },
        { ...good, forecast: { finished: [{ effort: 'XXL', costUsd: 1, startedAt: 'a', finishedAt: 'b' }], failed: 0, remaining: [] } },
        { ...good, safety: { confinement: { roles: 'x', unconfined: true }, incidents: [] } },
        { ...good, files: { db: { ino: '1;rm', size: '1', mtimeNs: '1' }, journal: null } },
        { ...good, paused: { reason: 3, since: 'x' } },
      ];
      for (const b of broken)
        assert.equal(parseStatusImage(typeof b === 'string' ? b : JSON.stringify(b)), undefined, JSON.stringify(b).slice(0, 80));
      assert.ok(parseStatusImage(kept), 'the kept one parses');
    } finally {
      await h.close();
    }
  });
});
