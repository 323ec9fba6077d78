// `ralph show <task>`: a task's story from the event log; `ralph status --at`: the status as it
// was at a moment (real CLI code, real store, real git). Unknown tasks and hostile ids are refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/run';
import type { TaskStory } from '../../../src/control/story';
import { openStore } from '../../../src/store';
import { CONTROL_PROJECTIONS } from '../../../src/control';
import { git } from '../../kit/git';

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

  it('given a task promoted as a real commit, then the story names the full sha and the files it changed (added, modified, renamed, deleted), in text and JSON', async () => {
    fs.writeFileSync(path.join(dir, 'old.txt'), 'old\n');
    fs.writeFileSync(path.join(dir, 'gone.txt'), 'gone\n');
    git(dir, 'add', 'old.txt', 'gone.txt', 'README.md');
    git(dir, 'commit', '-q', '-m', 'before');
    fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'src', 'config.js'), 'module.exports = {};\n');
    fs.appendFileSync(path.join(dir, 'README.md'), 'parses the config\n');
    git(dir, 'mv', 'old.txt', 'renamed.txt');
    git(dir, 'rm', '-q', 'gone.txt');
    git(dir, 'add', 'src/config.js', 'README.md');
    git(dir, 'commit', '-q', '-m', 'ralph(W1-002): parse the config');
    const sha = git(dir, 'rev-parse', 'HEAD');
    assert.equal((await ralph('transition-task', 'W1-002', 'pending', 'human', '{"title":"Config","effort":"S","wave":1}')).code, 0);
    assert.equal((await ralph('transition-task', 'W1-002', 'claimed', 'primary', '{"claimed_by":"primary"}')).code, 0);
    const queued = await ralph('queue-patch', 'W1-002', '.ralph/commits/pending/W1-002.patch', 'primary');
    assert.equal(queued.code, 0, queued.err);
    const promoted = await ralph('promote-patch', queued.out.trim(), sha);
    assert.equal(promoted.code, 0, promoted.err);

    const r = await ralph('show', 'W1-002');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`Landed as commit ${sha.slice(0, 8)}`));
    const files = r.out.slice(r.out.indexOf(`Files changed in commit ${sha}:`));
    assert.notEqual(files, r.out.slice(-1), r.out);
    assert.deepEqual(
      files.split('\n').filter((l) => l.startsWith('- ')),
      ['- modified README.md', '- deleted gone.txt', '- renamed old.txt → renamed.txt', '- added src/config.js'],
    );
    const s = JSON.parse((await ralph('show', 'W1-002', '--json')).out) as TaskStory;
    assert.equal(s.commit, sha);
    assert.deepEqual(s.commitFiles, [
      { path: 'README.md', status: 'modified' },
      { path: 'gone.txt', status: 'deleted' },
      { path: 'renamed.txt', oldPath: 'old.txt', status: 'renamed' },
      { path: 'src/config.js', status: 'added' },
    ]);
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

describe('ralph status --at <time|event>', function () {
  this.timeout(120_000);
  let dir: string;

  async function ralph(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(['--dir', dir, ...args], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
    return { code, out, err };
  }
  async function ok(...args: string[]): Promise<string> {
    const r = await ralph(...args);
    assert.equal(r.code, 0, `ralph ${args.join(' ')}: ${r.err}`);
    return r.out;
  }
  async function lastEventId(): Promise<string> {
    const store = await openStore({ ralphDir: path.join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
    try {
      return store.get<{ id: string }>('SELECT MAX(event_id) AS id FROM events')?.id ?? '';
    } finally {
      await store.close();
    }
  }

  before(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-at-')));
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: dir });
    await ok('init');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given the status printed live after each step, then --at each moment prints the same, as text and as JSON', async () => {
    const steps: string[][] = [
      ['transition-task', 'W0-001', 'pending', 'human', '{"title":"a","effort":"S","wave":0}'],
      ['transition-task', 'W0-002', 'pending', 'human', '{"title":"b","effort":"M","wave":1}'],
      ['transition-task', 'W0-001', 'claimed', 'primary', '{"claimed_by":"primary"}'],
      ['transition-task', 'W0-002', 'deferred', 'judge', '{"reason":"tier 2"}'],
      ['transition-task', 'W0-001', 'blocked', 'primary', '{"reason":"gates"}'],
    ];
    const moments: { id: string; time: string; text: string; json: string }[] = [];
    for (const step of steps) {
      await ok(...step);
      const text = await ok('status');
      const json = await ok('status', '--json');
      const time = new Date().toISOString();
      // The next step's events must be later than this moment: wait for the clock, not a timer.
      while (new Date().toISOString() <= time) {
        /* the next millisecond */
      }
      moments.push({ id: await lastEventId(), time, text, json });
    }
    assert.equal(new Set(moments.map((m) => m.text)).size, moments.length, 'every step changed the status');
    for (const m of moments) {
      const byEvent = await ralph('status', '--at', m.id);
      assert.equal(byEvent.code, 0, byEvent.err);
      assert.equal(byEvent.out, m.text, `at ${m.id}`);
      assert.match(byEvent.err, new RegExp(`up to ${m.id}`));
      const byTime = await ok('status', '--at', m.time);
      assert.equal(byTime, m.text, `at ${m.time}`);
      const past = JSON.parse(await ok('status', '--at', m.id, '--json')) as Record<string, unknown>;
      const live = JSON.parse(m.json) as Record<string, unknown>;
      assert.deepEqual({ ...past, at: undefined, lastEventId: undefined }, { ...live, at: undefined, lastEventId: undefined });
      assert.equal(past['lastEventId'], m.id);
    }
  });

  it('given a moment before the first event or a bad one, then an empty project, or the reason', async () => {
    const before = await ralph('status', '--at', '2000-01-01T00:00:00Z');
    assert.equal(before.code, 0, before.err);
    assert.match(before.out, /^Tasks \(0\): $/m);
    assert.match(before.err, /no event yet/);
    const bad = await ralph('status', '--at', 'yesterday');
    assert.equal(bad.code, 1);
    assert.match(bad.err, /--at "yesterday": not an event id \(evt_…\) or an ISO 8601 time/);
  });
});
