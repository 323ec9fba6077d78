// A healthy, finished project repairs clean: the demo run to its end (spec -> tasks, a
// worker, a retry, a judged tier-2 patch, a discarded patch superseded by a retry), then
// `ralph repair` reports no warning and no problem, and `--fix` has nothing to change.
// Before, every finished run warned about the process ledger's directory in .ralph/locks/
// and the checks without the store counted promoted patch files as queued.
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runDemo } from '../../../src/cli/demo';
import { runRepairCommand } from '../../../src/cli/projectCommands';
import { checkProject, runProjectChecks } from '../../../src/project/repair';
import type { Finding } from '../../../src/project/repair';

async function repair(dir: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await runRepairCommand(args, { stdout: (t) => out.push(t), stderr: (t) => out.push(t) }, { cwd: dir });
  return { code, out: out.join('') };
}

const notOk = (fs_: readonly Finding[]): string[] => fs_.filter((f) => f.status !== 'ok').map((f) => `${f.check}: ${f.message}`);

describe('repair on a healthy, finished project', function () {
  this.timeout(180_000);
  let dir: string | undefined;
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('given the demo run to its end, then ralph repair finds nothing and --fix changes nothing', async () => {
    const r = await runDemo(() => undefined, { scripted: true });
    dir = r.dir;
    assert.equal(r.summary.promoted, 4);

    const check = await repair(r.dir);
    assert.equal(check.code, 0, check.out);
    assert.doesNotMatch(check.out, /^(WARN|FAIL) /m, check.out);
    assert.match(check.out, /^No problems\n$/m);

    // The file-only checks (no store) see the same: closed patches' files left
    // commits/pending/ (the four promoted ones for commits/applied/, the one the retry
    // superseded for commits/discarded/).
    const fileOnly = notOk(await runProjectChecks(r.dir, { activeWorktrees: ['primary', 'verify', 'worker-1'] }));
    assert.deepEqual(fileOnly, []);
    assert.equal(readdirSync(join(r.dir, '.ralph', 'commits', 'applied')).length, 4);
    assert.equal(readdirSync(join(r.dir, '.ralph', 'commits', 'discarded')).length, 1);
    assert.deepEqual(notOk((await checkProject({ projectDir: r.dir })).findings), []);

    const fixed = await repair(r.dir, '--fix');
    assert.equal(fixed.code, 0, fixed.out);
    assert.match(fixed.out, /^Fixes: nothing to change$/m, fixed.out);
    assert.match(fixed.out, /^After fixing: every check passes$/m, fixed.out);
  });
});
