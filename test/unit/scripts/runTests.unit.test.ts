// `npm test`'s runner on a throwaway package whose scripts stand in for the suites: it stops
// at the first failing suite with that suite's exit code, fails a suite that exits 0 having
// run no test, and ends with the table and the totals of what the suites printed.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '..', '..', '..', 'scripts', 'run-tests.mjs');

function runIn(scripts: Record<string, string>, only: string): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-run-tests-'));
  try {
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'probe', version: '0.0.0', scripts }));
    const r = spawnSync(process.execPath, [SCRIPT, '--only', only], { cwd: dir, encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const passing = (n: number, pending = 0): string =>
  `node -e "console.log('  ✔ a test\\n\\n  ${n} passing (1s)${pending ? `\\n  ${pending} pending` : ''}')"`;

describe('scripts/run-tests.mjs (npm test)', function () {
  this.timeout(60_000);

  it('given suites that pass, then it sums their counts and says PASS', () => {
    const r = runIn({ typecheck: 'true', 'test:unit': passing(3), 'test:int': passing(4, 1) }, 'typecheck,unit,int');
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /\[test\] unit +3 +0 +0 /);
    assert.match(r.out, /\[test\] int +4 +0 +1 /);
    assert.match(r.out, /\[test\] all: 7 passing, 0 failing, 1 pending in /);
    assert.match(r.out, /^\[test\] PASS: 7 tests passed, 0 failed, 1 pending$/m);
    assert.match(r.out, /\n7 passed, 0 failed, 1 skipped\n$/, 'the plain closing line ends the output, alone');
  });

  it('given a suite that fails, then it stops there with its exit code and names what did not run', () => {
    const r = runIn({ 'test:unit': 'exit 3', 'test:int': passing(4) }, 'unit,int');
    assert.equal(r.status, 3, r.out);
    assert.doesNotMatch(r.out, /4 passing/, 'the suite after the failure ran');
    assert.match(r.out, /not run after the failure: int/);
    assert.match(r.out, /\[test\] FAIL \(exit 3\): 0 tests passed/);
    assert.match(r.out, /\n0 passed, 0 failed, 0 skipped\n$/);
  });

  it('given a suite that exits 0 without a "N passing" line, then the run fails: no test ran', () => {
    const r = runIn({ 'test:unit': 'echo no files found' }, 'unit');
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /unit: exit 0 but no "N passing" line: no test ran/);
  });
});
