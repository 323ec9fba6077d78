// `ralph show <task>`: a task's story from the event log (real CLI code, real store, real git),
// as markdown or JSON; an unknown task or a hostile id is refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/run';
import type { TaskStory } from '../../../src/control/story';

describe('ralph show <task>', function () {
  this.timeout(120_000);
  let dir: string;

  async function ralph(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(['--dir', dir, ...args], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
    return { code, out, err };
  }

  before(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-show-')));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    fs.writeFileSync(path.join(dir, 'README.md'), '# p\n');
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: dir });
    assert.equal((await ralph('init')).code, 0);
    const add = await ralph(
      'transition-task',
      'W1-001',
      'pending',
      'human',
      JSON.stringify({ title: 'Parse the config', effort: 'M', wave: 1, source: 'specs/a.md:3' }),
    );
    assert.equal(add.code, 0, add.err);
    assert.equal((await ralph('transition-task', 'W1-001', 'claimed', 'primary', '{"claimed_by":"primary"}')).code, 0);
    assert.equal((await ralph('transition-task', 'W1-001', 'blocked', 'primary', '{"reason":"tests fail: off by one"}')).code, 0);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given a task that was claimed and blocked, then the story says so, with every event in order', async () => {
    const r = await ralph('show', 'W1-001');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^# W1-001: Parse the config$/m);
    assert.match(r.out, /\*\*blocked\*\* · wave 1 · effort M/);
    const rows = r.out.split('\n').filter((l) => /^\| 20\d\d-/.test(l));
    assert.deepEqual(
      rows.map((l) => l.split('|')[3]?.trim()),
      ['task.pending', 'task.claimed', 'task.blocked'],
    );
    assert.match(r.out, /tests fail: off by one/);
  });

  it('given --json, then the story as one JSON object', async () => {
    const r = await ralph('show', 'W1-001', '--json');
    assert.equal(r.code, 0, r.err);
    const s = JSON.parse(r.out) as TaskStory;
    assert.equal(s.taskId, 'W1-001');
    assert.equal(s.status, 'blocked');
    assert.equal(s.events.length, 3);
  });

  it('given an unknown task or an id that is a path, then refused with the reason', async () => {
    const unknown = await ralph('show', 'W9-999');
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /no task 'W9-999' in the event log/);
    const hostile = await ralph('show', '../x');
    assert.equal(hostile.code, 2);
    assert.match(hostile.err, /invalid task id '\.\.\/x'/);
  });
});
