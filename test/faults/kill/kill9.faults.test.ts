// kill -9 of the loop process at many instants of a scripted multi-task run (the primary, a
// worker, a tier-2 patch the judge approves, commands arriving through the inbox): event
// appends, journal writes and fsyncs, checkpoints, derived files, patch capture, the git
// plumbing commit and ref update, the update of the user's checkout, agents and gates
// running, the judge, the inbox drain. After every kill the state on disk is checked
// (no acknowledged event lost, views equal a rebuild, done tasks have their commit on the
// branch, no promoted commit lost or duplicated, no inbox command applied twice); the run
// is restarted, possibly killed again at the next instant of the chain, and finally runs to
// its end: every task done exactly once, the checkout consistent, `ralph repair` clean,
// no worktree, lock or process left over.
//
// Instants are hooks (test/faults/kit/faultChild.ts), not sleeps: "the k-th time the run
// reaches point P". Each chain's instants come from its seed, printed in the test title;
// replay one with RALPH_FAULT_SEED=<seed> (RALPH_FAULT_CHAINS=<n> runs n chains).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { submitToInbox } from '../../../src/control/inbox';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { testsPassOnTip } from '../../../src/cli/demo';
import { checkProject } from '../../../src/project/repair';
import { diffViewsAgainstRebuild } from '../../../src/project/repair/storeChecks';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { pidAlive } from '../../../src/shared/process';
import { bundleFaultChild, type Ack, type ChildRun, type FaultChildBundle } from '../kit/faultRunner';
import { createKillProject, INBOX_NOTES, KILL_TASKS } from '../kit/killProject';
import { count } from '../kit/tally';
import { git } from '../../kit/git';
import { seededRandom } from '../../kit/random';

/** Where a run can be killed, and how many times a point is passed in a segment (k is drawn from 1..max). */
const POINTS: readonly { point: string; max: number }[] = [
  { point: 'append.before', max: 25 },
  { point: 'append.after', max: 25 },
  { point: 'journal.write', max: 15 },
  { point: 'journal.sync', max: 15 },
  { point: 'checkpoint.temp', max: 3 },
  { point: 'checkpoint.rename', max: 3 },
  { point: 'checkpoint.renamed', max: 3 },
  { point: 'journal.trim', max: 2 },
  { point: 'derived.rename', max: 8 },
  { point: 'patch.capture', max: 3 },
  { point: 'patch.captured', max: 3 },
  { point: 'git.apply.done', max: 3 },
  { point: 'git.commit-tree.done', max: 2 },
  { point: 'git.update-ref.start', max: 2 },
  { point: 'git.update-ref.done', max: 2 },
  { point: 'checkout.update', max: 2 },
  { point: 'git.worktree.start', max: 2 },
  { point: 'agent.running', max: 4 },
  { point: 'gate.running', max: 8 },
  { point: 'judge.started', max: 1 },
  { point: 'judge.finished', max: 1 },
  { point: 'inbox.take', max: 2 },
  { point: 'inbox.taken', max: 2 },
  { point: 'event.patch.queued', max: 3 },
  { point: 'event.patch.promoted', max: 2 },
  { point: 'event.patch.deferred', max: 1 },
  { point: 'event.verdict', max: 1 },
];

const KILLS_PER_CHAIN = 9;
const MAX_PROJECTS_PER_CHAIN = 4;
const DEFAULT_SEEDS = [11, 23, 37, 41, 59, 67];

/** Chains in a plain `npm run test:faults`: 27 kills keep the suite within CI's few minutes; `RALPH_FAULT_CHAINS=6` kills 54 times. */
const DEFAULT_CHAINS = 3;

function seeds(): number[] {
  const one = process.env['RALPH_FAULT_SEED'];
  if (one !== undefined && one !== '') return [Number(one)];
  const n = Number(process.env['RALPH_FAULT_CHAINS'] ?? DEFAULT_CHAINS);
  return Array.from({ length: n }, (_, i) => DEFAULT_SEEDS[i] ?? 1000 + i * 7);
}

function isAncestor(dir: string, commit: string, branch = 'main'): boolean {
  try {
    execFileSync('git', ['merge-base', '--is-ancestor', commit, branch], { cwd: dir, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function withObserver<T>(dir: string, fn: (s: EventStore) => Promise<T> | T): Promise<T> {
  const store = await openStore({ ralphDir: join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** Process groups the killed run had running (its ledger records). */
function ledgerPids(dir: string): number[] {
  try {
    return readdirSync(join(dir, '.ralph/locks/processes'))
      .filter((n) => /^\d+\.json$/.test(n))
      .map((n) => (JSON.parse(readFileSync(join(dir, '.ralph/locks/processes', n), 'utf8')) as { pid: number }).pid);
  } catch {
    return [];
  }
}

/** Live processes whose working directory is inside `root` (agents, gates, git left behind). */
function processesIn(root: string): string[] {
  const found: string[] = [];
  for (const p of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    if (Number(p) === process.pid) continue;
    try {
      const cwd = readlinkSync(`/proc/${p}/cwd`);
      if (cwd === root || cwd.startsWith(`${root}/`))
        found.push(`${p} ${readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').slice(0, 120)}`);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

const subjectsOn = (dir: string): string[] => git(dir, 'log', '--format=%s', 'main').split('\n');
const commitsFor = (subjects: readonly string[], id: string): number => subjects.filter((s) => s.startsWith(`ralph(${id})`)).length;

interface ChainState {
  readonly dir: string;
  readonly acks: Ack[];
  readonly notes: string[];
  readonly orphans: number[];
  log: string[];
}

/** What must hold on disk after any kill, before the next run touches it. */
async function checkAfterKill(c: ChainState, label: string): Promise<void> {
  const where = `${label}\n${c.log.join('\n')}`;
  await withObserver(c.dir, async (store) => {
    const have = new Set(store.all<{ event_id: string }>('SELECT event_id FROM events').map((r) => r.event_id));
    const lost = c.acks.filter((a) => !have.has(a.eventId));
    count('eventsLost', lost.length);
    assert.deepEqual(lost, [], `acknowledged events lost: ${where}`);
    const diffs = await diffViewsAgainstRebuild(store, CONTROL_PROJECTIONS);
    assert.deepEqual(diffs, [], `views differ from a rebuild: ${where}`);
    const done = store.all<{ task_id: string; commit_hash: string | null }>(
      "SELECT t.task_id, p.commit_hash FROM task_view t LEFT JOIN patch_view p ON p.task_id = t.task_id AND p.status = 'promoted' WHERE t.status = 'done'",
    );
    for (const d of done)
      assert.ok(d.commit_hash !== null && isAncestor(c.dir, d.commit_hash), `${d.task_id} done without its commit on main: ${where}`);
    const promoted = store.all<{ task_id: string; n: number }>(
      "SELECT task_id, COUNT(*) AS n FROM patch_view WHERE status = 'promoted' GROUP BY task_id HAVING n > 1",
    );
    count('appliedTwice', promoted.length);
    assert.deepEqual(promoted, [], `a task promoted twice: ${where}`);
    const notes = store.all<{ entity_id: string; n: number }>(
      "SELECT entity_id, COUNT(*) AS n FROM events WHERE event_type = 'human.note' GROUP BY entity_id HAVING n > 1",
    );
    count('appliedTwice', notes.length);
    assert.deepEqual(notes, [], `an inbox command applied twice: ${where}`);
  });
  for (const a of c.acks.filter((x) => x.type === 'patch.promoted' && x.commit !== null)) {
    const ok = isAncestor(c.dir, a.commit as string);
    if (!ok) count('eventsLost');
    assert.ok(ok, `promoted commit ${a.commit} of ${a.entityId} is not on main: ${where}`);
  }
  const subjects = subjectsOn(c.dir);
  for (const t of KILL_TASKS) {
    const n = commitsFor(subjects, t.id);
    if (n > 1) count('appliedTwice');
    assert.ok(n <= 1, `${n} commits for ${t.id}: ${where}`);
  }
}

/** What must hold once a project's last run ended on its own. */
async function checkAtEnd(c: ChainState, last: ChildRun): Promise<void> {
  const where = c.log.join('\n');
  assert.equal(last.stopReason, 'backlog empty or blocked', `${where}\n${last.stderr}`);
  await checkAfterKill(c, 'at the end');
  await withObserver(c.dir, (store) => {
    const status = Object.fromEntries(
      store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view').map((r) => [r.task_id, r.status]),
    );
    assert.deepEqual(status, Object.fromEntries(KILL_TASKS.map((t) => [t.id, 'done'])), where);
    const created = store.all<{ n: number }>("SELECT COUNT(*) AS n FROM events WHERE entity_id = 'T-9' AND event_type = 'task.created'")[0]
      ?.n;
    if (created !== 1) count('appliedTwice');
    assert.equal(created, 1, `the inbox's add-task applied ${String(created)} times: ${where}`);
    const notes = store
      .all<{ entity_id: string }>("SELECT entity_id FROM events WHERE event_type = 'human.note' ORDER BY entity_id")
      .map((r) => r.entity_id);
    assert.deepEqual(notes, [...c.notes].sort(), `every inbox note applied once: ${where}`);
    // Once by design, not by luck: each note went through the inbox's exactly-once path,
    // its command.applied marker naming it (a replay after a kill finds the marker).
    const marked = new Set(
      store
        .all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'command.applied'")
        .flatMap((r) => (JSON.parse(r.payload) as { event_ids?: string[] }).event_ids ?? []),
    );
    const unmarked = store
      .all<{ event_id: string; entity_id: string }>("SELECT event_id, entity_id FROM events WHERE event_type = 'human.note'")
      .filter((r) => !marked.has(r.event_id))
      .map((r) => r.entity_id);
    assert.deepEqual(unmarked, [], `inbox notes without their command.applied marker: ${where}`);
  });
  const subjects = subjectsOn(c.dir);
  for (const t of KILL_TASKS) assert.equal(commitsFor(subjects, t.id), 1, `one commit for ${t.id}: ${subjects.join(' | ')}\n${where}`);
  // The user's checkout: HEAD, index and working tree agree, with every task's file in place.
  assert.equal(git(c.dir, 'status', '--porcelain', '--untracked-files=all', '--', '.', ':(exclude).ralph'), '', where);
  for (const t of KILL_TASKS) assert.equal(readFileSync(join(c.dir, t.file), 'utf8'), t.content, `${t.file}: ${where}`);
  assert.ok(testsPassOnTip(c.dir), `the tests pass on main: ${where}`);
  const leaked = [...c.orphans.filter((p) => pidAlive(p)).map((p) => `${p} (a killed run's process group)`), ...processesIn(c.dir)];
  const cache = process.env['RALPH_CACHE_DIR'];
  if (cache) leaked.push(...processesIn(cache));
  count('processesLeaked', leaked.length);
  assert.deepEqual(leaked, [], `processes left behind: ${where}`);
  // Nothing waits, so no patch file is left in commits/pending/ (closed ones are archived).
  const pending = readdirSync(join(c.dir, '.ralph/commits/pending')).filter((f) => f.endsWith('.patch'));
  assert.deepEqual(pending, [], `patch files left in commits/pending/: ${where}`);
  const repair = await checkProject({ projectDir: c.dir });
  const findings = repair.findings.filter((f) => f.status !== 'ok').map((f) => `${f.status} ${f.check}: ${f.message}`);
  assert.deepEqual(findings, [], `ralph repair on the finished project: ${where}`);
}

describe('faults: kill -9 of the loop at instants over a multi-task run', function () {
  this.timeout(900_000);
  let child: FaultChildBundle;
  const dirs: string[] = [];
  let kills = 0;
  before(async () => {
    child = await bundleFaultChild();
  });
  after(() => {
    child?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const seed of seeds()) {
    it(`seed ${seed}: ${KILLS_PER_CHAIN} kills, each followed by a restart, then a run to the end; nothing lost, nothing twice, nothing left`, async () => {
      const next = seededRandom(seed);
      let chainKills = 0;
      for (let project = 0; project < MAX_PROJECTS_PER_CHAIN && chainKills < KILLS_PER_CHAIN; project++) {
        const dir = await createKillProject();
        dirs.push(dir);
        const c: ChainState = { dir, acks: [], notes: [...INBOX_NOTES], orphans: [], log: [`seed ${seed}, project ${project} (${dir})`] };
        for (let segment = 0; ; segment++) {
          const wantKill = chainKills < KILLS_PER_CHAIN;
          const pick = POINTS[Math.floor(next() * POINTS.length)] as (typeof POINTS)[number];
          const k = 1 + Math.floor(next() * pick.max);
          if (segment > 0) {
            // New human commands arrive between runs: the restart drains them during recovery.
            const marker = `note-${seed}-${project}-${segment}`;
            submitToInbox(join(dir, '.ralph'), {
              command: 'emit-event',
              entity_type: 'note',
              entity_id: marker,
              event_type: 'human.note',
              actor: 'human',
              payload: { marker },
            });
            c.notes.push(marker);
          }
          const run = await child.run(dir, wantKill ? pick.point : 'none', k);
          c.acks.push(...run.acks);
          if (run.killedAt !== null) {
            chainKills++;
            kills++;
            count('faultsInjected');
            c.orphans.push(...ledgerPids(dir));
            c.log.push(`  killed at ${run.killedAt.point} #${run.killedAt.n} after ${run.ms} ms (${run.acks.length} acks)`);
            await checkAfterKill(c, `after the kill at ${run.killedAt.point} #${run.killedAt.n}`);
            continue;
          }
          assert.equal(
            run.exitCode,
            0,
            `segment ${segment} (${wantKill ? `${pick.point} #${k} not reached` : 'to the end'}) failed:\n${run.stderr}\n${c.log.join('\n')}`,
          );
          c.log.push(`  ${wantKill ? `${pick.point} #${k} not reached; ` : ''}ran to the end in ${run.ms} ms`);
          await checkAtEnd(c, run);
          // The chain, for the record (and to replay one: RALPH_FAULT_SEED).
          process.stdout.write(`      ${c.log.join('\n      ')}\n`);
          break;
        }
      }
      assert.ok(chainKills >= KILLS_PER_CHAIN, `only ${chainKills} kills in ${MAX_PROJECTS_PER_CHAIN} projects`);
    });
  }

  it(`killed the loop at ${KILLS_PER_CHAIN} instants per chain (50 or more with RALPH_FAULT_CHAINS=6)`, function () {
    if (process.env['RALPH_FAULT_SEED']) this.skip();
    const chains = seeds().length;
    process.stdout.write(`      ${kills} kills over ${chains} chains\n`);
    assert.ok(kills >= KILLS_PER_CHAIN * chains, `${kills} kills over ${chains} chains`);
    if (chains >= 6) assert.ok(kills >= 50, `${kills} kills`);
  });
});
