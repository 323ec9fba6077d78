import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from '../../../src/git/exec';
import { legacyWorktreesRoot, worktreesRoot } from '../../../src/git/worktrees';
import { initProject } from '../../../src/project/init';
import { applyLocalFixes, formatFindings, hasProblems, runProjectChecks } from '../../../src/project/repair';
import type { Finding } from '../../../src/project/repair';

/** The pid of a process that has exited (waited for, not guessed). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid ?? assert.fail('no pid');
  await new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return pid;
}

const problems = (fs_: readonly Finding[]): string[] => fs_.filter((f) => f.status !== 'ok').map((f) => f.check);

describe('project/repair checks (real files, real git)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-repair-'));
    await fs.writeFile(path.join(dir, 'go.mod'), 'module x\n');
    await initProject({ dir, gitInit: true });
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('given a freshly initialized project, then every check passes', async () => {
    const findings = await runProjectChecks(dir);
    assert.deepEqual(problems(findings), [], formatFindings(findings));
    assert.equal(hasProblems(findings), false);
  });

  it('given a missing phase file and directory, then reported and fixed by init, and only that', async () => {
    await fs.rm(path.join(dir, '.ralph/phases/plan.md'));
    await fs.rm(path.join(dir, '.ralph/inbox'), { recursive: true });
    await fs.appendFile(path.join(dir, '.ralph/phases/verify.md'), 'my edit\n');
    const findings = await runProjectChecks(dir);
    assert.deepEqual(problems(findings), ['files.dir', 'files.phase']);
    assert.equal(hasProblems(findings), true);
    assert.match(formatFindings(findings), /^FAIL files\.dir: \.ralph\/inbox\/ is missing \(fix: ralph init fills in what is missing\)/);
    const changes = await applyLocalFixes(dir, findings);
    assert.deepEqual(changes.sort(), ['created .ralph/inbox/', 'created .ralph/phases/plan.md']);
    assert.deepEqual(problems(await runProjectChecks(dir)), []);
    assert.match(await fs.readFile(path.join(dir, '.ralph/phases/verify.md'), 'utf8'), /my edit/);
  });

  it('given a stale lock of a dead pid, then reported as stale; a live one is not', async () => {
    const pid = await deadPid();
    await fs.writeFile(
      path.join(dir, '.ralph/locks/writer.lock'),
      JSON.stringify({ pid, host: os.hostname(), started: 'x', heartbeat: 'x', runId: 'r' }),
    );
    await fs.writeFile(path.join(dir, '.ralph/locks/live.lock'), JSON.stringify({ pid: process.pid, host: os.hostname() }));
    const findings = await runProjectChecks(dir);
    const stale = findings.filter((f) => f.check === 'locks.stale');
    assert.equal(stale.length, 1);
    assert.match(stale[0]?.message ?? '', new RegExp(`writer\\.lock is held by pid ${pid}, which is not running`));
    assert.equal(stale[0]?.fix?.kind, 'control-plane');
  });

  it('given the process ledger directory, then a live run\'s records are fine and a killed run\'s are named, never "unreadable"', async () => {
    const ledger = path.join(dir, '.ralph/locks/processes');
    await fs.mkdir(ledger, { recursive: true });
    assert.deepEqual(problems(await runProjectChecks(dir)), [], 'an empty ledger (every finished run leaves one) is clean');
    await fs.writeFile(
      path.join(ledger, '4242.json'),
      JSON.stringify({ pid: 4242, owner: process.pid, startTicks: '1', what: 'claude', cwd: dir }),
    );
    assert.deepEqual(problems(await runProjectChecks(dir)), [], 'a record of a live run is its business');
    const dead = await deadPid();
    await fs.writeFile(path.join(ledger, '4343.json'), JSON.stringify({ pid: 4343, owner: dead, startTicks: '1', what: 'gate', cwd: dir }));
    const findings = await runProjectChecks(dir);
    assert.deepEqual(problems(findings), ['locks.processes']);
    const f = findings.find((x) => x.check === 'locks.processes');
    assert.equal(f?.status, 'warn');
    assert.match(
      f?.message ?? '',
      new RegExp(`1 process record\\(s\\) of a run that was killed: 4343\\.json \\(run pid ${dead} is gone\\)`),
    );
  });

  it('given an invalid STATE.json or missing keys, then reported', async () => {
    await fs.writeFile(path.join(dir, '.ralph/STATE.json'), '{"phase": "assess",');
    assert.deepEqual(problems(await runProjectChecks(dir)), ['state.json']);
    await fs.writeFile(path.join(dir, '.ralph/STATE.json'), JSON.stringify({ phase: 'assess', retry_count: 9, iteration: -1 }));
    const findings = await runProjectChecks(dir, { maxRetries: 3 });
    assert.deepEqual(problems(findings), ['state.keys', 'state.types', 'state.retry']);
  });

  it('given a broken config, then reported with its location', async () => {
    await fs.writeFile(path.join(dir, 'ralph.config.json'), '{"name": "x", "lnag": "go"}');
    const f = (await runProjectChecks(dir)).find((x) => x.check === 'config');
    assert.equal(f?.status, 'fail');
    assert.match(f?.message ?? '', /ralph\.config\.json:1:15: lnag: unknown key "lnag"; did you mean "lang"\?/);
  });

  it('given queued patches and proposals, one invalid, then counted and the invalid one named', async () => {
    await fs.writeFile(path.join(dir, '.ralph/commits/pending/patch_W1-001_1.patch'), 'diff');
    await fs.writeFile(
      path.join(dir, '.ralph/proposals/prop_1.json'),
      JSON.stringify({
        proposal_type: 'new_task',
        confidence: 0.9,
        task: { id: 'W1-002', title: 't', source: '-', effort: 'S', wave: 1, deps: '-' },
        rationale: 'r',
      }),
    );
    await fs.writeFile(path.join(dir, '.ralph/proposals/prop_2.json'), JSON.stringify({ proposal_type: 'new_task', confidence: 2 }));
    const findings = await runProjectChecks(dir);
    assert.deepEqual(problems(findings), ['patches.pending', 'proposals.invalid', 'proposals.unprocessed']);
    // A promoted patch's file stays in pending/ with its copy archived in applied/: not queued.
    await fs.copyFile(
      path.join(dir, '.ralph/commits/pending/patch_W1-001_1.patch'),
      path.join(dir, '.ralph/commits/applied/patch_W1-001_1.patch'),
    );
    assert.equal((await runProjectChecks(dir)).find((f) => f.check === 'patches.pending')?.status, 'ok');
    assert.match(findings.find((f) => f.check === 'proposals.invalid')?.message ?? '', /prop_2\.json: confidence/);
    assert.match(findings.find((f) => f.check === 'proposals.unprocessed')?.message ?? '', /2 unprocessed/);
  });

  it('given a vanished worktree, a stray directory and an unowned worktree, then each reported; prune and removal fix the first two', async () => {
    const root = await worktreesRoot(dir);
    await fs.mkdir(root, { recursive: true });
    await runGit(dir, ['worktree', 'add', '--detach', path.join(root, 'gone'), 'HEAD']);
    await runGit(dir, ['worktree', 'add', '--detach', path.join(root, 'worker-1'), 'HEAD']);
    await fs.rm(path.join(root, 'gone'), { recursive: true });
    await fs.mkdir(path.join(root, 'stray'));

    const findings = await runProjectChecks(dir, { activeWorktrees: [] });
    assert.deepEqual(problems(findings).sort(), ['git.orphaned_worktree', 'git.orphaned_worktree', 'git.worktree']);
    assert.ok(findings.some((f) => f.check === 'git.orphaned_worktree' && f.status === 'warn' && /worker-1/.test(f.message)));

    const changes = await applyLocalFixes(dir, findings);
    assert.deepEqual(changes, ['git worktree prune', `removed stray directory ${path.join(root, 'stray')}`]);
    assert.deepEqual(problems(await runProjectChecks(dir, { activeWorktrees: ['worker-1'] })), []);
  });

  it('given worktrees of an older version inside .git, then reported with both places, and --fix moves them out', async () => {
    const legacy = await legacyWorktreesRoot(dir);
    await runGit(dir, ['worktree', 'add', '--detach', path.join(legacy, 'primary'), 'HEAD']);
    const findings = await runProjectChecks(dir, { activeWorktrees: ['primary'] });
    assert.deepEqual(problems(findings), ['git.legacy_worktrees'], formatFindings(findings));
    const f = findings.find((x) => x.check === 'git.legacy_worktrees');
    assert.match(f?.message ?? '', /primary/);
    assert.ok(f?.message.includes(await worktreesRoot(dir)), 'names the new place');
    assert.deepEqual(await applyLocalFixes(dir, findings), ["moved 1 worktree(s) out of the repository's git dir"]);
    assert.deepEqual(problems(await runProjectChecks(dir, { activeWorktrees: ['primary'] })), []);
    await assert.rejects(fs.stat(legacy));
  });

  it('given a folder that is not a repository, then git.repo fails', async () => {
    const bare = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-norepo-'));
    try {
      const findings = await runProjectChecks(bare);
      assert.ok(findings.some((f) => f.check === 'git.repo' && f.status === 'fail'));
      assert.ok(findings.some((f) => f.check === 'files.ralph_dir'));
    } finally {
      await fs.rm(bare, { recursive: true, force: true });
    }
  });
});
