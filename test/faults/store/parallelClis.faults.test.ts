// Four `ralph` processes side by side, 50 state-changing commands each, without a loop (they
// take turns on the writer lock) and with a running `ralph start` (they go through its
// inbox): every command applied exactly once, every printed id in the store, no command
// lost, no exit 3 for mere contention, no process left behind.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { controlContext } from '../../../src/control/context';
import { transitionTask } from '../../../src/control/tasks';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { openStore } from '../../../src/store/sqlJsStore';
import type { StoredEvent } from '../../../src/store/types';
import { count } from '../kit/tally';
import {
  ensureBuilt,
  initialisedProject,
  processesMentioning,
  ralph,
  seeded,
  spawnRalph,
  storeEvents,
  type Run,
  type Seeded,
} from './storeKit';

const CLIS = 4;
const EACH = 50;

type Kind = 'emit' | 'transition' | 'claim';

interface Done {
  readonly cli: number;
  readonly key: string;
  readonly kind: Kind;
  readonly run: Run;
  /** Wall time of the command, waiting for the lock included. */
  readonly ms: number;
}

async function seedTasks(projectDir: string, pending: number, blocked: number): Promise<void> {
  const ralphDir = path.join(projectDir, '.ralph');
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
  const ctx = controlContext(store, { ralphDir, projectDir });
  try {
    for (let i = 0; i < pending; i++)
      await transitionTask(ctx, {
        taskId: `P-${i}`,
        status: 'pending',
        actor: 'faults',
        payload: { title: `task ${i}`, effort: 'S', wave: 0 },
      });
    for (let i = 0; i < blocked; i++)
      await transitionTask(ctx, { taskId: `B-${i}`, status: 'blocked', actor: 'faults', payload: { title: `parked ${i}` } });
  } finally {
    await store.close();
  }
}

/** Every role on the scripted backend, so the preflight passes without an installed CLI. */
function scriptedBackends(projectDir: string): void {
  const file = path.join(projectDir, 'ralph.config.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  config.backends = { primary: 'scripted', worker: 'scripted', judge: 'scripted', scripted: { scenario: '.ralph/scenario.json' } };
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  fs.writeFileSync(path.join(projectDir, '.ralph', 'scenario.json'), JSON.stringify({ turns: [{ text: 'nothing to do' }] }));
}

/** One CLI's 50 commands, one after another, as a script would run them. */
async function cliScript(projectDir: string, cli: number, kinds: readonly Kind[], r: Seeded): Promise<Done[]> {
  const done: Done[] = [];
  for (const [i, kind] of kinds.entries()) {
    const key = `c${cli}-${i}`;
    const argv =
      kind === 'emit'
        ? ['emit-event', 'note', key, 'note.added', `cli${cli}`]
        : kind === 'transition'
          ? ['transition-task', `B-${r.int(6)}`, r.pick(['blocked', 'dropped']), `cli${cli}`, JSON.stringify({ op: key })]
          : ['claim-ready-task', 'primary', '--owner', `cli${cli}`];
    const t0 = Date.now();
    const run = await ralph(projectDir, argv);
    done.push({ cli, key, kind, run, ms: Date.now() - t0 });
  }
  return done;
}

function check(events: readonly StoredEvent[], done: readonly Done[]): void {
  for (const d of done) assert.equal(d.run.code, 0, `cli${d.cli} ${d.kind} ${d.key}: exit ${d.run.code}: ${d.run.err}`);
  const byId = new Map(events.map((e) => [e.event_id, e]));
  let twice = 0;
  // emit-event: the printed id is in the store, it is this command's note, and there is one
  for (const d of done.filter((x) => x.kind === 'emit')) {
    const id = d.run.out.trim();
    assert.match(id, /^evt_\d{17}_\d{6}$/, `cli${d.cli} printed an event id for ${d.key}: ${JSON.stringify(d.run.out)}`);
    assert.equal(byId.get(id)?.entity_id, d.key, `the printed id ${id} is ${d.key}'s event`);
    const n = events.filter((e) => e.event_type === 'note.added' && e.entity_id === d.key).length;
    if (n > 1) twice++;
    assert.equal(n, 1, `${d.key} applied once`);
  }
  // transition-task: one transition carrying this command's op
  for (const d of done.filter((x) => x.kind === 'transition')) {
    const n = events.filter((e) => e.entity_type === 'task' && e.payload['op'] === d.key).length;
    if (n > 1) twice++;
    assert.equal(n, 1, `${d.key} applied once`);
    assert.match(d.run.out, /^B-\d: \w+ -> (blocked|dropped)\n$/);
  }
  // claim-ready-task: every printed task claimed exactly once, by the CLI that printed it
  const claimed = done
    .filter((x) => x.kind === 'claim' && x.run.out.trim() !== 'NONE')
    .map((x) => [x.run.out.trim(), `cli${x.cli}`] as const);
  const ids = claimed.map(([t]) => t);
  assert.equal(new Set(ids).size, ids.length, 'no task claimed twice');
  for (const [task, owner] of claimed) {
    const claims = events.filter((e) => e.event_type === 'task.claimed' && e.entity_id === task);
    if (claims.length > 1) twice++;
    assert.deepEqual(
      claims.map((e) => e.payload['claimed_by']),
      [owner],
    );
  }
  count('appliedTwice', twice);
}

describe('faults: four CLIs side by side, 50 state-changing commands each', function () {
  this.timeout(900_000);
  before(() => ensureBuilt());

  it('without a loop: they take turns on the lock; every command applied once, every printed id stored, no exit 3', async () => {
    const r = seeded('parallel CLIs without a loop');
    const dir = await initialisedProject();
    await seedTasks(dir, 60, 6);
    const plans = Array.from({ length: CLIS }, () =>
      Array.from({ length: EACH }, (): Kind => r.pick(['emit', 'emit', 'transition', 'claim'])),
    );
    const t0 = Date.now();
    const done = (await Promise.all(plans.map((kinds, cli) => cliScript(dir, cli, kinds, r)))).flat();
    const ms = Date.now() - t0;
    count('faultsInjected', done.length); // each command contends with three others for the lock
    check(await storeEvents(dir), done);
    assert.deepEqual(
      fs.existsSync(path.join(dir, '.ralph', 'inbox'))
        ? fs.readdirSync(path.join(dir, '.ralph', 'inbox')).filter((f) => f.endsWith('.json'))
        : [],
      [],
      'nothing was queued',
    );
    const leaked = processesMentioning(dir);
    count('processesLeaked', leaked.length);
    assert.deepEqual(leaked, []);
    process.stdout.write(
      `      ${done.length} commands in ${(ms / 1000).toFixed(1)} s (${(ms / done.length).toFixed(0)} ms each, ${CLIS} at a time; ` +
        `the slowest, waiting in line included, ${Math.max(...done.map((d) => d.ms))} ms)\n`,
    );
  });

  it('beside a running `ralph start`: they go through its inbox and print what it applied; every command applied once', async () => {
    const r = seeded('parallel CLIs beside a loop');
    const dir = await initialisedProject();
    await seedTasks(dir, 0, 6); // only parked tasks: the loop has nothing to run an agent for
    scriptedBackends(dir); // `ralph start` runs its preflight even so
    const loop = spawnRalph(dir, ['start']);
    let loopErr = '';
    loop.stderr?.on('data', (c: Buffer) => void (loopErr += c.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => loop.on('close', (code) => resolve(code)));
    try {
      // the loop holds the lock as an inbox drainer
      const lock = path.join(dir, '.ralph', 'locks', 'writer.lock');
      for (;;) {
        if (fs.existsSync(lock) && fs.readFileSync(lock, 'utf8').includes('"drainsInbox":true')) break;
        if (loop.exitCode !== null) throw new Error(`ralph start exited: ${loopErr}`);
        await new Promise((res) => setTimeout(res, 50));
      }
      const plans = Array.from({ length: CLIS }, () => Array.from({ length: EACH }, (): Kind => r.pick(['emit', 'emit', 'transition'])));
      const t0 = Date.now();
      const done = (await Promise.all(plans.map((kinds, cli) => cliScript(dir, cli, kinds, r)))).flat();
      const ms = Date.now() - t0;
      count('faultsInjected', done.length);
      for (const d of done) assert.match(d.run.err, /sent to its inbox/, `cli${d.cli} ${d.key} went through the inbox`);
      const stop = await ralph(dir, ['stop']);
      assert.equal(stop.code, 0, stop.err);
      assert.equal(await exited, 0, loopErr);
      check(await storeEvents(dir), done);
      process.stdout.write(`      ${done.length} commands through the loop's inbox in ${(ms / 1000).toFixed(1)} s\n`);
    } finally {
      if (loop.exitCode === null) loop.kill('SIGKILL');
      await exited;
    }
    const leaked = processesMentioning(dir);
    count('processesLeaked', leaked.length);
    assert.deepEqual(leaked, []);
  });
});
