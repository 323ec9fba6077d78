// The integrity guard on a real repository, without an agent: what the user does in normal
// work while a confined agent runs is never blamed on the agent, what no user does in passing
// still is, and without confinement any ref change is an incident (nothing tells them apart).
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IntegrityGuard, restoreIncident } from '../../../src/integrity/integrity';
import type { IncidentRecord } from '../../../src/integrity/integrity';
import { git } from '../../kit/git';

describe('integrity guard: refs the user moves, and restoring', function () {
  this.timeout(60_000);
  let repo: string;
  const guard = (confined: boolean): IntegrityGuard =>
    new IntegrityGuard({
      projectDir: repo,
      ralphDir: join(repo, '.ralph'),
      targetBranch: 'main',
      confined,
      isRalphCommit: () => false,
      isRalphPatch: () => false,
    });

  beforeEach(() => {
    repo = mkdtempSync(join(tmpdir(), 'ralph-integrity-'));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 't@example.invalid');
    git(repo, 'config', 'user.name', 'Test');
    writeFileSync(join(repo, 'README.md'), '# r\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
  });
  afterEach(() => rmSync(repo, { recursive: true, force: true }));

  it('given confinement, when the user makes a branch, a tag and a stash and switches branch, then no incident', async () => {
    const g = guard(true);
    const token = await g.before(null, null);
    git(repo, 'branch', 'user-work');
    git(repo, 'tag', 'v1');
    writeFileSync(join(repo, 'README.md'), '# r\nedit\n');
    git(repo, 'stash', 'push', '-q', '-m', 'mine');
    git(repo, 'switch', '-q', 'user-work');
    git(repo, 'commit', '-q', '--allow-empty', '-m', 'user');
    assert.equal(await g.after(token), null);
  });

  it('given confinement, when a replace ref appears, then it is an incident naming it', async () => {
    const g = guard(true);
    const token = await g.before(null, null);
    const head = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'update-ref', `refs/replace/${head}`, head);
    const incident = await g.after(token);
    assert.ok(incident !== null, 'a replace ref rewrites history silently: an incident');
    assert.deepEqual(
      incident.changes.map((c) => `${c.path} ${c.change}`),
      [`ref refs/replace/${head} added`],
    );
  });

  it('given a hook the agent rewrote and a hook link it replaced, when the incident is restored, then content, execute bit and link are back', async () => {
    const hooks = join(repo, '.git', 'hooks');
    writeFileSync(join(hooks, 'pre-commit'), '#!/bin/sh\necho mine\n');
    chmodSync(join(hooks, 'pre-commit'), 0o755);
    symlinkSync('pre-commit', join(hooks, 'post-merge'));
    const g = guard(true);
    const token = await g.before(null, null);
    writeFileSync(join(hooks, 'pre-commit'), '#!/bin/sh\ncurl evil\n');
    chmodSync(join(hooks, 'pre-commit'), 0o644);
    rmSync(join(hooks, 'post-merge'));
    writeFileSync(join(hooks, 'post-merge'), 'evil\n');
    const incident = await g.after(token);
    assert.ok(incident !== null);
    assert.ok(
      incident.changes.every((c) => c.restorable),
      JSON.stringify(incident.changes),
    );
    const record = JSON.parse(readFileSync(incident.recordFile, 'utf8')) as IncidentRecord;
    const done = await restoreIncident(record);
    assert.equal(done.length, 2, done.join('\n'));
    assert.equal(readFileSync(join(hooks, 'pre-commit'), 'utf8'), '#!/bin/sh\necho mine\n');
    assert.equal(statSync(join(hooks, 'pre-commit')).mode & 0o777, 0o755, 'the hook runs again as it did');
    assert.ok(lstatSync(join(hooks, 'post-merge')).isSymbolicLink());
    assert.equal(readlinkSync(join(hooks, 'post-merge')), 'pre-commit');
  });

  it('given no confinement, when a branch appears, then it is an incident (the agent could have made it)', async () => {
    const g = guard(false);
    const token = await g.before(null, null);
    git(repo, 'branch', 'user-work');
    const incident = await g.after(token);
    assert.deepEqual(
      incident?.changes.map((c) => c.path),
      ['ref refs/heads/user-work'],
    );
  });
});
