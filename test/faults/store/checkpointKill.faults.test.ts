// kill -9 inside a checkpoint, in the windows where ralph.db, ralph.db.prev and the journal's
// header disagree: ralph.db replaced and the journal not yet trimmed; ralph.db.prev already
// replaced by the ralph.db being rotated out and the new image not yet written; and both in
// a row (an interrupted checkpoint, then the next run's checkpoint killed while its temp file
// is written: once seen as "ralph.db does not match the checksum its last checkpoint
// recorded"). After each, a writer must open the store with every acknowledged event.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { openStore } from '../../../src/store/sqlJsStore';
import { inspectStoreFiles } from '../../../src/store/salvage';
import { count } from '../kit/tally';

const CHILD = path.join(__dirname, 'checkpointChild.ts');

interface Run {
  readonly acks: string[];
  readonly killedAt: string | null;
  readonly code: number | null;
  readonly stderr: string;
}

function runChild(ralphDir: string, events: number, where: 'temp' | 'renamed' | 'none', touch: boolean | 'change' = false): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', CHILD, ralphDir, String(events), where, ...(touch === 'change' ? ['change'] : touch ? ['touch'] : [])],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (c: string) => void (out += c));
    proc.stderr.on('data', (c: Buffer) => void (err += c.toString('utf8')));
    proc.on('error', reject);
    proc.on('close', (code) => {
      const lines = out.split('\n');
      const kill = lines.find((l) => l.startsWith('kill '));
      resolve({
        acks: lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4)),
        killedAt: kill ? kill.slice(5) : null,
        code,
        stderr: err,
      });
    });
  });
}

/** Opens a writer (it must accept the store), returns every event id in it, and closes. */
async function eventIds(ralphDir: string): Promise<Set<string>> {
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
  try {
    return new Set(store.all<{ event_id: string }>('SELECT event_id FROM events').map((r) => r.event_id));
  } finally {
    await store.close();
  }
}

describe('faults: kill -9 inside a checkpoint, then the open', function () {
  this.timeout(300_000);
  let dir: string;
  let ralphDir: string;
  const acked: string[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-ckpt-kill-'));
    ralphDir = path.join(dir, '.ralph');
    acked.length = 0;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function step(events: number, where: 'temp' | 'renamed' | 'none', touch: boolean | 'change' = false): Promise<void> {
    const r = await runChild(ralphDir, events, where, touch);
    acked.push(...r.acks);
    assert.equal(r.acks.length, events, r.stderr);
    if (where === 'none') assert.equal(r.code, 0, r.stderr);
    else {
      assert.equal(r.killedAt, where, r.stderr);
      count('faultsInjected');
    }
  }

  async function assertOpens(label: string): Promise<void> {
    let have: Set<string>;
    try {
      have = await eventIds(ralphDir);
    } catch (e) {
      count('eventsLost', acked.length);
      throw new Error(`${label}: the writer refused the store: ${(e as Error).message}`);
    }
    const lost = acked.filter((id) => !have.has(id));
    count('eventsLost', lost.length);
    assert.deepEqual(lost, [], `${label}: acknowledged events lost`);
  }

  for (const where of ['temp', 'renamed'] as const) {
    it(`killed at ${where} of a checkpoint: the open accepts the store, nothing lost`, async () => {
      await step(5, 'none');
      await step(4, where);
      await assertOpens(`after the kill at ${where}`);
    });
  }

  it('an interrupted checkpoint (killed after the rename), then the next run killed while writing its temp file: accepted, nothing lost', async () => {
    await step(5, 'none');
    await step(4, 'renamed');
    await step(3, 'temp');
    await assertOpens('after renamed, then temp');
    // ... and the store keeps working across more of the same.
    await step(2, 'renamed');
    await step(2, 'renamed');
    await step(2, 'temp');
    await step(2, 'none');
    await assertOpens('after renamed, renamed, temp, a clean run');
  });

  it('ralph.db replaced without being kept as ralph.db.prev (it was touched, so not known as ours), killed before the trim: accepted, nothing lost', async () => {
    await step(5, 'none');
    await step(4, 'none');
    await step(3, 'renamed', true);
    await assertOpens('after the unkept replacement');
    await step(2, 'temp');
    await assertOpens('after the next run killed in its temp file');
  });

  it('ralph.db changed outside Ralph (other bytes), replaced by a checkpoint killed before the trim: accepted, nothing lost, the changed file kept', async () => {
    await step(5, 'none');
    await step(4, 'none');
    const before = fs.readFileSync(path.join(ralphDir, 'ralph.db'));
    await step(3, 'renamed', 'change');
    const backup = path.join(ralphDir, 'backup');
    const kept = fs.readdirSync(backup).filter((f) => f.startsWith('ralph.db.changed-'));
    assert.equal(kept.length, 1, `the changed ralph.db is kept: ${kept.join(', ')}`);
    const changed = fs.readFileSync(path.join(backup, kept[0] as string));
    assert.notDeepEqual(changed, before, 'the kept file holds the changed bytes');
    assert.equal(changed.readUInt32BE(60), 7, "the kept file is the outside tool's (its user_version)");
    await assertOpens('after the replacement of the changed ralph.db');
    assert.ok(!fs.existsSync(path.join(ralphDir, 'ralph.db.next')), 'the note of the next image is gone once the header names it');
    await step(2, 'temp');
    await assertOpens('after the next run killed in its temp file');
    const repair = await inspectStoreFiles(ralphDir);
    assert.deepEqual(
      repair.problems.map((p) => p.kind),
      [],
      'repair agrees with the writer',
    );
  });
});
