// A task id with `../` is refused at every entry, with a message naming the input, and no
// file is written outside the project: CLI arguments, inbox files, BACKLOG.md, proposals,
// specification.yaml, webview messages; and a forged id already in a store is never picked.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/run';
import { CONTROL_PROJECTIONS, controlContext, pickReadyTask } from '../../../src/control';
import { submitToInbox } from '../../../src/control/inbox';
import { parseSpecification } from '../../../src/project/specification';
import { quoteId } from '../../../src/domain/ids';
import { parseWebviewToHost } from '../../../src/protocol/monitor';
import { openStore } from '../../../src/store';

const HOSTILE = '../../../../elsewhere/x';

describe('ids: a task id with ../ is refused at every entry (real CLI code, real store)', function () {
  this.timeout(120_000);
  let root: string;
  let dir: string;

  async function ralph(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(['--dir', dir, ...args], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
    return { code, out, err };
  }
  /** Every file under `root` that is not inside the project (nothing may appear there). */
  function strayFiles(): string[] {
    const found: string[] = [];
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (p === dir) continue;
        if (e.isDirectory()) walk(p);
        else found.push(p);
      }
    };
    walk(root);
    return found;
  }

  before(async () => {
    // The project sits four levels down, so `../../../../elsewhere/x` from .ralph/commits/pending
    // would land in root/elsewhere.
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-ids-')));
    dir = path.join(root, 'a', 'b', 'project');
    fs.mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: dir });
    fs.writeFileSync(path.join(dir, 'README.md'), '# p\n');
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: dir });
    const r = await ralph('init');
    assert.equal(r.code, 0, r.err);
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  it('CLI arguments: exit 2 naming the argument and the input, nothing appended', async () => {
    const before = await ralph('status', '--json');
    for (const args of [
      ['transition-task', HOSTILE, 'claimed', 'primary'],
      ['queue-patch', HOSTILE, 'x.patch', 'worker'],
      ['emit-event', 'task', HOSTILE, 'note.added', 'me'],
      ['resolve-deferred', HOSTILE, 'approve', 'me', 'ok'],
      ['policy-check', HOSTILE],
      ['classify-risk', 'W0-001', '--patch', '../p'],
      ['discard-patch', 'patch_/x', 'why'],
      ['pick-ready-task', 'primary', '--exclude', 'a\nb'],
    ]) {
      const r = await ralph(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.code} ${r.err}`);
      assert.match(r.err, /invalid (task|patch) id/, args.join(' '));
      assert.ok(r.err.includes(quoteId(args.find((a) => /[/\n]/.test(a)) ?? '')), r.err);
    }
    assert.equal((await ralph('status', '--json')).out, before.out);
  });

  it('inbox files: the command fails with the reason in inbox/failed, no task is created', async () => {
    // An observer's submitToInbox validates before writing; a hand-written file is drained and refused.
    assert.throws(() =>
      submitToInbox(path.join(dir, '.ralph'), { command: 'transition-task', task_id: HOSTILE, status: 'claimed', actor: 'x' }),
    );
    const inbox = path.join(dir, '.ralph', 'inbox');
    fs.mkdirSync(inbox, { recursive: true });
    fs.writeFileSync(
      path.join(inbox, 'cmd_0001.json'),
      JSON.stringify({ command: 'add-task', actor: 'x', task: { id: HOSTILE, title: 't', effort: 'S', wave: 0 } }),
    );
    fs.writeFileSync(
      path.join(inbox, 'cmd_0002.json'),
      JSON.stringify({ command: 'transition-task', task_id: HOSTILE, status: 'claimed', actor: 'x' }),
    );
    const r = await ralph('drain-inbox');
    assert.equal(r.code, 1, 'a failed command is a failed drain');
    const failed = fs.readdirSync(path.join(inbox, 'failed')).filter((f) => f.endsWith('.error.txt'));
    assert.equal(failed.length, 2, failed.join(', '));
    for (const f of failed) {
      const why = fs.readFileSync(path.join(inbox, 'failed', f), 'utf8');
      assert.match(why, /task id '\.\.\/\.\.\/\.\.\/\.\.\/elsewhere\/x': it contains a path separator/, f);
    }
    assert.doesNotMatch((await ralph('status')).out, /elsewhere/);
  });

  it('BACKLOG.md: the row is reported with the file and line, not imported', async () => {
    const backlog = path.join(dir, '.ralph', 'BACKLOG.md');
    fs.appendFileSync(
      backlog,
      `\n## Wave 0: Critical Fixes & Foundation\n\n| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n| ${HOSTILE} | pending | Hostile | - | S | - |\n`,
    );
    const r = await ralph('sync-backlog');
    assert.match(`${r.out}${r.err}`, /BACKLOG\.md:\d+: invalid task id '\.\.\/\.\.\/\.\.\/\.\.\/elsewhere\/x'/);
    assert.doesNotMatch((await ralph('status')).out, /elsewhere/);
  });

  it('proposals: the file is rejected with the reason', async () => {
    const proposals = path.join(dir, '.ralph', 'proposals');
    fs.mkdirSync(proposals, { recursive: true });
    fs.writeFileSync(
      path.join(proposals, 'prop_hostile.json'),
      JSON.stringify({
        proposal_type: 'new_task',
        confidence: 0.95,
        task: { id: HOSTILE, title: 'x', source: '-', effort: 'S', wave: 0, deps: '-' },
        rationale: 'r',
      }),
    );
    const r = await ralph('process-proposals');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /"rejected": 1/);
    const rejected = fs.readdirSync(path.join(proposals, 'rejected')).filter((f) => f.endsWith('.error.txt'));
    assert.match(
      fs.readFileSync(path.join(proposals, 'rejected', rejected[0] as string), 'utf8'),
      /task id '\.\.\/\.\.\/\.\.\/\.\.\/elsewhere\/x'/,
    );
  });

  it('specification.yaml and webview messages: refused, naming the place', () => {
    const spec = parseSpecification(`specification:\n  requirements:\n    - id: "${HOSTILE}"\n      description: d\n`);
    assert.equal(spec.ok, false);
    if (!spec.ok) assert.match(spec.error.message, /requirements\[0\]\.id.*requirement id '\.\.\/\.\.\/\.\.\/\.\.\/elsewhere\/x'/s);
    const msg = parseWebviewToHost({ method: 'showDiff', id: 1, params: { taskId: HOSTILE, patchId: null } });
    assert.equal(msg.ok, false);
  });

  it('a forged id already in a store (written around the control plane) is never picked, and nothing is written outside', async () => {
    const store = await openStore({ ralphDir: path.join(dir, '.ralph'), mode: 'writer', projections: CONTROL_PROJECTIONS });
    try {
      // What an old store, or an agent writing ralph.db, could hold: no domain check ran.
      await store.append([
        {
          entity_type: 'task',
          entity_id: HOSTILE,
          event_type: 'task.created',
          actor: 'forger',
          payload: { title: 'forged', source: '-', effort: 'S', deps: '-', wave: 0, provenance: 'spec' },
        },
      ]);
      const ctx = controlContext(store, { ralphDir: path.join(dir, '.ralph'), projectDir: dir });
      assert.notEqual(pickReadyTask(ctx, 'primary')?.task_id, HOSTILE);
      assert.notEqual(pickReadyTask(ctx, 'worker')?.task_id, HOSTILE);
    } finally {
      await store.close();
    }
    assert.deepEqual(strayFiles(), []);
  });
});
