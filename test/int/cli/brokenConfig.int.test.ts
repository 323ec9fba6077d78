// A broken ralph.config.json is reported the same way by every command that reads the
// project: `ralph start` refuses with `file:line:col: …`, and `ralph status` and
// `ralph repair` warn with that same message instead of ignoring it.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const CLI = resolve(__dirname, '..', '..', '..', 'dist', 'cli.js');
const ralph = (cwd: string, ...args: string[]): { code: number | null; out: string; err: string } => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

describe('a broken ralph.config.json (built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'ralph-badcfg-')));
    const init = ralph(dir, 'init', '--git-init');
    assert.equal(init.code, 0, init.err);
    writeFileSync(join(dir, 'ralph.config.json'), '{\n  "name": "x",\n  "lang": "go",\n}\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('then start, status and repair all name the same file:line:col problem', () => {
    const where = `${join(dir, 'ralph.config.json')}:4:1: not valid JSON: trailing comma`;
    const start = ralph(dir, 'start', '--once');
    assert.notEqual(start.code, 0);
    assert.ok(start.err.includes(where), start.err);
    const status = ralph(dir, 'status');
    assert.equal(status.code, 0, 'status still shows the store');
    assert.ok(status.err.includes(`ralph: warning: ${where}`), status.err);
    assert.match(status.out, /=== Ralph Loop v3 Status ===/);
    const json = JSON.parse(ralph(dir, 'status', '--json').out) as { configError: string | null };
    assert.ok(json.configError?.includes(where));
    const repair = ralph(dir, 'repair');
    assert.notEqual(repair.code, 0);
    assert.ok(repair.out.includes(where), repair.out);
  });
});
