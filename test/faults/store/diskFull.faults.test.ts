// A full disk (a small tmpfs where this machine lets us mount one, as root), a read-only
// .ralph/ (a read-only bind mount) and other file errors, through the built `ralph`: every
// error names the file and the operation, the exit code tells a script whether to retry
// (5: nothing recorded, retry; 6: recorded, do not), and a retry applies the command once.
// Where mounting is not allowed, the same faults are injected into the process
// (injectFsFault.cjs); the injected variants of the journal's own failures always run.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { count } from '../kit/tally';
import { ensureBuilt, initialisedProject, ralph, storeEvents, tmpDir, type Run } from './storeKit';

const INJECT = path.join(__dirname, 'injectFsFault.cjs');

function mount(args: string[]): boolean {
  try {
    execFileSync('mount', args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function umount(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'ignore' });
  } catch {
    // already gone
  }
}

const mounted: string[] = [];

/** A tmpfs of `mb` MiB, or undefined when this machine does not let us mount one. */
function smallDisk(mb: number): string | undefined {
  const dir = tmpDir('disk');
  if (!mount(['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir])) return undefined;
  mounted.push(dir);
  return dir;
}

/** Fills `disk` until only `leave` bytes are free. */
function fill(disk: string, leave: number): string {
  const filler = path.join(disk, 'filler');
  const s = fs.statfsSync(disk);
  fs.appendFileSync(filler, Buffer.alloc(Math.max(0, s.bavail * s.bsize - leave)));
  return filler;
}

function injected(fault: string): NodeJS.ProcessEnv {
  return { NODE_OPTIONS: `--require ${INJECT}`, RALPH_TEST_FS_FAULT: fault };
}

async function notes(dir: string, key: string): Promise<number> {
  return (await storeEvents(dir)).filter((e) => e.event_type === 'note.added' && e.entity_id === key).length;
}

const emit = (dir: string, key: string, env: NodeJS.ProcessEnv = {}): Promise<Run> =>
  ralph(dir, ['emit-event', 'note', key, 'note.added', 'faults'], env);

/** Exit 5: the file and the operation named, "nothing was recorded", and no event. */
async function assertNothingRecorded(dir: string, key: string, r: Run, file: RegExp, code: string): Promise<void> {
  assert.equal(r.code, 5, `exit 5 (retry after fixing): ${r.err}`);
  assert.equal(r.out, '', 'no event id printed');
  assert.match(r.err, new RegExp(`could not \\w+ [^ ]*${file.source}[^ ]*: .*\\(${code}\\)`));
  assert.match(r.err, /nothing was recorded; fix the cause and run the command again/);
  assert.equal(await notes(dir, key), 0);
}

/** Exit 6: the event id printed, "recorded … do not run the command again", the event there exactly once. */
async function assertRecordedThenFailed(dir: string, key: string, r: Run, code: string): Promise<void> {
  assert.equal(r.code, 6, `exit 6 (recorded, do not retry): ${r.err}`);
  assert.match(r.out, /^evt_\d{17}_\d{6}\n$/, 'the id of the durable event is printed');
  assert.match(r.err, /the command was recorded \(1 event\(s\) durable in \.ralph\/ralph\.events\.journal/);
  assert.match(r.err, new RegExp(`could not \\w+ [^ ]*ralph\\.db[^ ]*: .*\\(${code}\\)`));
  assert.match(r.err, /do not run the command again/);
  const events = await storeEvents(dir);
  assert.equal(events.filter((e) => e.event_type === 'note.added' && e.entity_id === key).length, 1);
  assert.ok(events.some((e) => e.event_id === r.out.trim()));
}

describe('faults: disk full, read-only .ralph/ and other file errors', function () {
  this.timeout(600_000);
  let canMount = false;
  before(() => {
    ensureBuilt();
    // RALPH_FAULTS_NO_MOUNT=1 runs the injected variants on a machine that could mount.
    const probe = process.env['RALPH_FAULTS_NO_MOUNT'] ? undefined : smallDisk(1);
    canMount = probe !== undefined;
    if (probe) umount(probe);
    process.stdout.write(
      `      ${canMount ? 'mounting tmpfs and read-only binds (root)' : 'cannot mount here: injecting the file errors instead'}\n`,
    );
  });
  after(() => {
    for (const d of mounted.reverse()) umount(d);
  });

  it('disk full before anything is recorded: exit 5 naming the file; the retry, once there is space, is applied once', async () => {
    count('faultsInjected');
    if (!canMount) {
      const dir = await initialisedProject();
      await assertNothingRecorded(
        dir,
        'full',
        await emit(dir, 'full', injected('write:ralph.events.journal:ENOSPC')),
        /ralph\.events\.journal/,
        'ENOSPC',
      );
      const retry = await emit(dir, 'full');
      assert.equal(retry.code, 0, retry.err);
      assert.equal(await notes(dir, 'full'), 1);
      return;
    }
    const disk = smallDisk(8) as string;
    const dir = await initialisedProject(path.join(disk, 'p'));
    const filler = fill(disk, 0);
    await assertNothingRecorded(dir, 'full', await emit(dir, 'full'), /\.ralph\//, 'ENOSPC');
    fs.rmSync(filler);
    const retry = await emit(dir, 'full');
    assert.equal(retry.code, 0, retry.err);
    assert.equal(await notes(dir, 'full'), 1, 'applied once');
  });

  it('disk full after the event is durable (the checkpoint cannot write ralph.db): the id is printed, exit 6, nothing applied twice', async () => {
    count('faultsInjected');
    if (!canMount) {
      const dir = await initialisedProject();
      await assertRecordedThenFailed(dir, 'late', await emit(dir, 'late', injected('write:ralph.db.tmp-:ENOSPC')), 'ENOSPC');
      return;
    }
    const disk = smallDisk(8) as string;
    const dir = await initialisedProject(path.join(disk, 'p'));
    assert.equal((await emit(dir, 'warm')).code, 0); // a second checkpoint: now there is a ralph.db.prev
    // Keep ralph.db.prev's pages allocated, so the checkpoint's rotation frees nothing.
    fs.linkSync(path.join(dir, '.ralph', 'ralph.db.prev'), path.join(disk, 'keep'));
    const filler = fill(disk, 4096); // one page: the lock file; the journal's last page has room for the record
    const r = await emit(dir, 'late');
    fs.rmSync(filler);
    await assertRecordedThenFailed(dir, 'late', r, 'ENOSPC');
    const next = await emit(dir, 'next');
    assert.equal(next.code, 0, next.err);
    assert.equal(await notes(dir, 'late'), 1, 'the durable event survived the failed checkpoint, once');
    assert.deepEqual(
      fs.readdirSync(path.join(dir, '.ralph')).filter((f) => f.includes('.tmp-')),
      [],
      'no temp file left',
    );
  });

  it('read-only .ralph/: state-changing commands exit 5 naming the file (EROFS); reads still work', async () => {
    count('faultsInjected');
    const dir = await initialisedProject();
    const ralphDir = path.join(dir, '.ralph');
    let env: NodeJS.ProcessEnv = {};
    if (canMount && mount(['--bind', ralphDir, ralphDir])) {
      mounted.push(ralphDir);
      assert.ok(mount(['-o', 'remount,ro,bind', ralphDir]), 'remount read-only');
    } else env = injected('create:writer.lock:EROFS');
    await assertNothingRecorded(dir, 'ro', await emit(dir, 'ro', env), /locks\/writer\.lock/, 'EROFS');
    const claim = await ralph(dir, ['transition-task', 'T-1', 'blocked', 'faults'], env);
    assert.equal(claim.code, 5, claim.err);
    const status = await ralph(dir, ['status'], env);
    assert.equal(status.code, 0, status.err);
    assert.match(status.out, /^=== Ralph Loop v3 Status ===/);
    if (!env['RALPH_TEST_FS_FAULT']) {
      umount(ralphDir);
      mounted.splice(mounted.indexOf(ralphDir), 1);
    }
    const after = await emit(dir, 'ro');
    assert.equal(after.code, 0, after.err);
    assert.equal(await notes(dir, 'ro'), 1);
  });

  it('ralph.db is a directory: exit 5, could not read … (EISDIR), and the lock is let go', async () => {
    count('faultsInjected');
    const dir = await initialisedProject();
    const db = path.join(dir, '.ralph', 'ralph.db');
    fs.rmSync(db);
    fs.mkdirSync(db);
    fs.writeFileSync(path.join(db, 'x'), 'x');
    const r = await emit(dir, 'dir');
    assert.equal(r.code, 5, r.err);
    assert.match(r.err, /could not read [^ ]*\.ralph\/ralph\.db: illegal operation on a directory \(EISDIR\)/);
    assert.ok(!fs.existsSync(path.join(dir, '.ralph', 'locks', 'writer.lock')));
  });

  for (const [what, fault, file, code] of [
    ['a journal write fails (ENOSPC)', 'write:ralph.events.journal:ENOSPC', /ralph\.events\.journal/, 'ENOSPC'],
    ['the journal fsync fails (EIO)', 'fsync:ralph.events.journal:EIO', /ralph\.events\.journal/, 'EIO'],
    ['creating the lock is refused (EACCES)', 'create:writer.lock:EACCES', /locks\/writer\.lock/, 'EACCES'],
  ] as const) {
    it(`injected: ${what}: exit 5 naming the file, nothing recorded; the retry is applied once`, async () => {
      count('faultsInjected');
      const dir = await initialisedProject();
      await assertNothingRecorded(dir, 'inj', await emit(dir, 'inj', injected(fault)), file, code);
      const retry = await emit(dir, 'inj');
      assert.equal(retry.code, 0, retry.err);
      assert.equal(await notes(dir, 'inj'), 1);
    });
  }

  it('injected: the checkpoint cannot write ralph.db (ENOSPC) after the event is durable: exit 6, then exactly one event', async () => {
    count('faultsInjected');
    const dir = await initialisedProject();
    await assertRecordedThenFailed(dir, 'late', await emit(dir, 'late', injected('write:ralph.db.tmp-:ENOSPC')), 'ENOSPC');
    const next = await emit(dir, 'next');
    assert.equal(next.code, 0, next.err);
    assert.equal(await notes(dir, 'late'), 1);
  });
});
