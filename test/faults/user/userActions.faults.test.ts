// The user works in the checkout while the loop promotes into it (a scripted run with the
// primary, a worker and a judged tier-2 patch): an uncommitted edit and an untracked file
// from the start, a commit of their own between a patch's verification and its promotion,
// an edit made between the branch update and the checkout update of a promotion, a stash
// pushed before a promotion and popped after it, a switch to a branch of their own while
// promotions continue onto main. The user's actions run at exact instants: inside the
// loop's (synchronous) event emission, or as the promotion's git process exits, before
// Ralph continues. Afterwards no edit is lost, every promoted commit is on main once, and
// after each promotion HEAD, index and working tree agree (no phantom reverse diff).
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLoopHost } from '../../../src/loop/host';
import type { LoopEvent } from '../../../src/loop/events';
import { createKillProject, KILL_TASKS } from '../kit/killProject';
import { hookSpawns } from '../kit/spawnHook';
import { count } from '../kit/tally';
import { git as kitGit, TestGitError } from '../../kit/git';

/**
 * A git command of the user's that failed; `locked` when the checkout's index.lock was held
 * as it failed (git stash says nothing then: exit 1 and an empty stderr).
 */
class UserGitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly locked: boolean,
  ) {
    super(`git ${args.join(' ')}${locked ? ' (index.lock held)' : ''}: ${stderr.trim()}`);
  }
}

function git(dir: string, ...args: string[]): string {
  try {
    return kitGit(dir, ...args);
  } catch (err) {
    if (!(err instanceof TestGitError)) throw err;
    throw new UserGitError(args, err.stderr, existsSync(join(dir, '.git', 'index.lock')) || /index\.lock': File exists/.test(err.stderr));
  }
}

/** Calls `fn` as the n-th `git update-ref` of the loop exits: the branch moved, the checkout not yet updated. */
function onUpdateRefExit(dir: string, n: number, fn: () => void): () => void {
  let seen = 0;
  return hookSpawns({
    exited: (s) => {
      if (s.command === 'git' && s.args.includes('update-ref') && s.cwd === dir && ++seen === n) fn();
    },
  });
}

/** After a promotion into the checked-out branch: tracked files equal HEAD except the user's own edits, and the index equals HEAD. */
function checkConsistent(dir: string, userEdited: ReadonlySet<string>, when: string): void {
  const staged = git(dir, 'diff', '--cached', '--name-only', '--', '.', ':(exclude).ralph');
  assert.equal(staged, '', `index differs from HEAD ${when}`);
  const changed = git(dir, 'diff', '--name-only', '--', '.', ':(exclude).ralph')
    .split('\n')
    .filter((f) => f !== '');
  const phantom = changed.filter((f) => !userEdited.has(f));
  assert.deepEqual(phantom, [], `working tree differs from HEAD in files the user never touched ${when} (a phantom reverse diff)`);
}

describe('faults: the user edits, commits, stashes and switches branch while the loop promotes', function () {
  this.timeout(600_000);
  let dir: string | undefined;
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('given a run with a worker and the judge, and the user acting at instants of its promotions, then no edit is lost and the checkout stays consistent', async () => {
    dir = await createKillProject();
    const d = dir;
    // The tracked files the user has changed right now (a stash takes them away, a pop brings them back).
    let userEdited = new Set<string>(['README.md']);
    let inStash = new Set<string>();
    // The emitter isolates a listener's exception from the loop: collect them, fail after the run.
    const failures: unknown[] = [];
    // From the start: an uncommitted edit to a tracked file, and an untracked file.
    appendFileSync(join(d, 'README.md'), 'user edit 0\n');
    writeFileSync(join(d, 'notes.txt'), 'my notes\n');
    const actions: string[] = [];
    let promotions = 0;
    let onMain = true;
    let stashed = false;
    let userCommit = '';
    let branchPoint = '';
    // The actions happen in this order whatever the run's interleaving (the primary and the
    // worker race): each waits for the one before it, so a stash never meets an edit made
    // while it was pushed (git itself refuses that pop).
    let stage: 'commit' | 'edit' | 'stash' | 'pop' | 'switch' | 'over' = 'commit';
    // A promotion holds the checkout's index.lock from its check to its index rename, and git
    // refuses the user's command meanwhile ("Another git process seems to be running"). The
    // user tries again a moment later: here, at the next event the loop emits. Only that
    // refusal is retried; any other failure of the user's git fails the test.
    let retry: (() => void) | undefined;
    let refused = 0;
    const act = (action: () => void): void => {
      try {
        action();
        retry = undefined;
      } catch (err) {
        if (!(err instanceof UserGitError) || !err.locked) throw err;
        refused++;
        retry = action;
      }
    };
    const stash = (): void => {
      git(d, 'stash', 'push', '-q', '-m', 'user work');
      inStash = userEdited;
      userEdited = new Set();
      stashed = true;
      actions.push('stash before a promotion');
      stage = 'pop';
    };
    const restore = onUpdateRefExit(d, 1, () => {
      // Between the branch update and the checkout update of the first promotion.
      appendFileSync(join(d, 'README.md'), 'user edit 1\n');
      userEdited.add('README.md');
      actions.push('edit during a promotion');
      if (stage !== 'edit') return;
      stage = 'stash';
      // At this instant the promotion holds index.lock: git refuses the stash, and it is
      // retried at the next event, whichever promotion it then comes before.
      act(stash);
    });
    const host = await openLoopHost({ projectDir: d, once: true });
    const seen: LoopEvent[] = [];
    host.loop.events.on((e) => {
      try {
        react(e);
      } catch (err) {
        failures.push(err);
      }
    });
    const react = (e: LoopEvent): void => {
      if (e.type === 'gate.progress') return;
      seen.push(e);
      if (retry) act(retry);
      if (e.type === 'patch.queued' && !retry) {
        if (stage === 'commit') {
          // A commit of the user's own lands while a patch waits to be promoted: main moves.
          act(() => {
            writeFileSync(join(d, 'docs-user.md'), 'written by the user\n');
            git(d, 'add', 'docs-user.md');
            git(d, 'commit', '-q', '-m', 'user: docs');
            userCommit = git(d, 'rev-parse', 'HEAD');
            actions.push('commit before a promotion');
            stage = 'edit';
          });
        } else if (stage === 'stash') {
          act(stash);
        } else if (stage === 'switch') {
          act(() => {
            git(d, 'switch', '-q', '-c', 'user-work');
            branchPoint = git(d, 'rev-parse', 'HEAD');
            onMain = false;
            actions.push('switch to a branch of their own');
            stage = 'over';
          });
        }
      }
      if (e.type === 'patch.promoted') {
        promotions++;
        // On the user's own branch too: a promotion onto main never touches their checkout.
        checkConsistent(d, userEdited, `after promotion ${promotions} (${e.taskId})`);
        if (!onMain) assert.equal(git(d, 'symbolic-ref', 'HEAD'), 'refs/heads/user-work', 'the user is still on their branch');
        if (stage === 'pop' && !retry) {
          act(() => {
            git(d, 'stash', 'pop', '-q');
            userEdited = new Set([...userEdited, ...inStash]);
            stashed = false;
            actions.push('stash pop after the promotion');
            stage = 'switch';
          });
        }
      }
    };
    try {
      await host.loop.run();
    } finally {
      restore();
      await host.close();
    }
    if (failures.length > 0) throw failures[0];
    count('faultsInjected', actions.length);
    process.stdout.write(`      the user: ${actions.join(', ')}; refused by a held index.lock and retried: ${refused}\n`);
    const story = `${actions.join(', ')}\n${JSON.stringify(seen.filter((e) => e.type === 'patch.promoted' || e.type === 'patch.waiting' || e.type === 'log').slice(-30), null, 1)}`;
    assert.ok(actions.length >= 4, `the user acted ${actions.length} times: ${story}`);
    assert.ok(refused >= 1, `the stash during a promotion was not refused by its index.lock: ${story}`);
    if (stashed) git(d, 'stash', 'pop', '-q');
    if (!onMain) {
      // The user's branch got nothing of Ralph's; switching back carries their edits over.
      assert.equal(git(d, 'rev-parse', 'user-work'), branchPoint, story);
      git(d, 'switch', '-q', 'main');
    }

    // Every promoted commit on main once, the user's commit too, nothing reverted.
    const subjects = git(d, 'log', '--format=%s', 'main').split('\n');
    for (const t of KILL_TASKS) {
      const n = subjects.filter((s) => s.startsWith(`ralph(${t.id})`)).length;
      if (n !== 1) count('appliedTwice');
      assert.equal(n, 1, `${t.id}: ${subjects.join(' | ')}\n${story}`);
      assert.equal(readFileSync(join(d, t.file), 'utf8'), t.content, `${t.file} on main: ${story}`);
    }
    assert.equal(subjects.filter((s) => s === 'user: docs').length, 1);
    git(d, 'merge-base', '--is-ancestor', userCommit, 'main');

    // No user edit lost: both README edits, the untracked notes, the committed docs.
    const lost: string[] = [];
    const readme = readFileSync(join(d, 'README.md'), 'utf8');
    for (const edit of ['user edit 0', 'user edit 1']) if (!readme.includes(edit)) lost.push(edit);
    if (!existsSync(join(d, 'notes.txt')) || readFileSync(join(d, 'notes.txt'), 'utf8') !== 'my notes\n') lost.push('notes.txt');
    if (readFileSync(join(d, 'docs-user.md'), 'utf8') !== 'written by the user\n') lost.push('docs-user.md');
    count('editsLost', lost.length);
    assert.deepEqual(lost, [], story);
    assert.equal(git(d, 'stash', 'list'), '', 'the stash was popped, not left behind');
    checkConsistent(d, userEdited, 'at the end');
    assert.deepEqual(git(d, 'status', '--porcelain', '--', '.', ':(exclude).ralph').split('\n').sort(), [' M README.md', '?? notes.txt']);
  });
});
