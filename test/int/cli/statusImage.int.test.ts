// `ralph status` from the status image, on the built CLI run as a user runs it (through its
// shebang): the image's answer is byte for byte the store's, on a project with tasks, a
// promoted patch and events; an image the store has moved past, a broken one, or a project
// on a team store is not used.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git } from '../../kit/git';

const CLI = path.resolve(__dirname, '../../../dist/cli.js');

describe('ralph status from the status image (built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;
  let image: string;
  let printer: string;

  interface Run {
    readonly code: number;
    readonly out: string;
    readonly err: string;
    /** Whether status answered from the image (its quick path loaded the store's entry chunk or not). */
    readonly quick: boolean;
  }

  function ralph(args: readonly string[], env: NodeJS.ProcessEnv = {}): Run {
    const list = path.join(dir, `loaded-${process.hrtime.bigint()}.json`);
    const r = spawnSync(CLI, args, {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: `--require ${printer}`, RALPH_LOADED_LIST: list, ...env },
    });
    const loaded = fs.existsSync(list) ? (JSON.parse(fs.readFileSync(list, 'utf8')) as string[]) : [];
    return {
      code: r.status ?? -1,
      out: r.stdout,
      err: r.stderr,
      quick: !loaded.some((f) => /[\\/]statusPath-[A-Z0-9]+\.js$/.test(f)),
    };
  }

  /** status and status --json with the image, then again with it removed: both answers, and which path each took. */
  function bothWays(): { quick: Run[]; opened: Run[] } {
    const quick = [ralph(['status']), ralph(['status', '--json'])];
    const kept = fs.readFileSync(image);
    fs.rmSync(image);
    try {
      return { quick, opened: [ralph(['status']), ralph(['status', '--json'])] };
    } finally {
      fs.writeFileSync(image, kept);
    }
  }

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} missing: npm run build`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-status-image-'));
    printer = path.join(dir, 'printer.js');
    fs.writeFileSync(
      printer,
      "process.on('exit', () => process.env.RALPH_LOADED_LIST && require('fs').writeFileSync(process.env.RALPH_LOADED_LIST, JSON.stringify(Object.keys(require.cache))));\n",
    );
    repo = path.join(dir, 'repo');
    image = path.join(repo, '.ralph', 'ralph.db.status.json');
    fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-q', '--allow-empty', '-m', 'init');
    const rows = [
      'W0-001 | pending | One | ES:1 | S | -',
      'W0-002 | pending | Two | ES:2 | M | W0-001',
      'W1-001 | pending | Three | ES:3 | L | -',
    ];
    fs.writeFileSync(
      path.join(repo, '.ralph', 'BACKLOG.md'),
      `# BACKLOG\n\n## Wave 0\n\n| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n${rows.map((r) => `| ${r} |`).join('\n')}\n`,
    );
    for (const args of [
      ['init'],
      ['claim-ready-task', 'worker'],
      ['transition-task', 'W1-001', 'deferred', 'primary', '{"reason":"later"}'],
    ]) {
      const r = ralph(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    }
    fs.writeFileSync(path.join(repo, 'one.txt'), 'one\n');
    git(repo, 'add', 'one.txt');
    git(repo, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-q', '-m', 'W0-001');
    fs.writeFileSync(path.join(repo, '.ralph', 'W0-001.patch'), git(repo, 'format-patch', '-1', '--stdout'));
    const queued = ralph(['queue-patch', 'W0-001', '.ralph/W0-001.patch', 'worker']);
    assert.equal(queued.code, 0, queued.err);
    const promoted = ralph(['promote-patch', queued.out.trim(), git(repo, 'rev-parse', 'HEAD')]);
    assert.equal(promoted.code, 0, promoted.err);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given the image the last writer kept, then status answers from it exactly as from the store', () => {
    assert.ok(fs.existsSync(image), 'the last writer kept an image');
    const { quick, opened } = bothWays();
    for (const r of [...quick, ...opened]) assert.equal(r.code, 0, r.err);
    assert.deepEqual(
      quick.map((r) => r.quick),
      [true, true],
    );
    assert.deepEqual(
      opened.map((r) => r.quick),
      [false, false],
    );
    assert.equal(quick[0]?.out, opened[0]?.out);
    assert.equal(quick[1]?.out, opened[1]?.out);
    assert.match(quick[0]?.out ?? '', /Commits: 1$/m);
    assert.match(quick[0]?.out ?? '', /^Tasks \(3\): deferred=1,done=1,pending=1$/m);
    assert.match(quick[0]?.out ?? '', /^Patches: promoted=1$/m);
  });

  it('given an image the store has moved past, or a broken one, then status opens the store', () => {
    const old = fs.readFileSync(image);
    const emitted = ralph(['emit-event', 'run', 'run_x', 'run.note', 'tester']);
    assert.equal(emitted.code, 0, emitted.err);
    const fresh = ralph(['status']);
    assert.equal(fresh.quick, true, 'the writer kept a new image');
    try {
      fs.writeFileSync(image, old);
      const stale = ralph(['status']);
      assert.equal(stale.quick, false);
      assert.equal(stale.out, fresh.out, 'the store, not the older image, answers');
      for (const broken of ['{"version":1}', old.toString('utf8').slice(0, 100), 'not json']) {
        fs.writeFileSync(image, broken);
        const r = ralph(['status']);
        assert.equal(r.quick, false);
        assert.equal(r.out, fresh.out);
      }
    } finally {
      // A writer leaves a current image again.
      fs.rmSync(image, { force: true });
      assert.equal(ralph(['emit-event', 'run', 'run_x', 'run.note', 'tester']).code, 0);
    }
  });

  it('given the project on a team store, then an embedded image left behind is not its status', () => {
    const r = ralph(['status'], { RALPH_STORE_URL: 'postgres://ralph@127.0.0.1:1/none?connect_timeout=2' });
    assert.notEqual(r.code, 0);
    assert.equal(r.quick, false);
    assert.doesNotMatch(r.out, /Ralph Loop v3 Status/);
  });
});
