// The preflight through the built CLI (dist/cli.js): `ralph start --once` refuses with the
// reason and a non-zero exit when the agent CLI is missing or nothing can confine the
// agents, runs (and says so) with `agents.unconfined`, and `ralph doctor` reports the same
// checks as lines or JSON. A start also moves worktrees of older versions out of .git.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { worktreesRoot } from '../../../src/git/repoCache';
import { pathWithout } from '../../kit/agentEnv';
import { git } from '../../kit/git';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

interface Run {
  code: number;
  out: string;
  err: string;
}

describe('ralph start / ralph doctor: the preflight (built CLI)', function () {
  this.timeout(180_000);
  let repo: string;
  let noBwrap: { path: string; cleanup(): void };

  function ralph(args: string[], env: Record<string, string> = {}): Promise<Run> {
    const r = spawnSync('node', [CLI, ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error) throw r.error;
    return Promise.resolve({ code: r.status ?? -1, out: r.stdout, err: r.stderr });
  }
  function configure(patch: (c: Record<string, unknown>) => void): void {
    const file = path.join(repo, 'ralph.config.json');
    const c = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    patch(c);
    fs.writeFileSync(file, `${JSON.stringify(c, null, 2)}\n`);
  }
  const scripted = (c: Record<string, unknown>): void => {
    c.backends = { primary: 'scripted', worker: 'scripted', judge: 'scripted', scripted: { scenario: '.ralph/scenario.json' } };
  };

  before(() => {
    if (!fs.existsSync(CLI)) spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
    noBwrap = pathWithout(['bwrap']);
  });
  after(() => noBwrap.cleanup());
  beforeEach(async () => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-preflight-'));
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 't@example.invalid');
    git(repo, 'config', 'user.name', 'Test');
    fs.writeFileSync(path.join(repo, 'README.md'), '# demo\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    const init = await ralph(['init']);
    assert.equal(init.code, 0, init.err);
    fs.writeFileSync(path.join(repo, '.ralph', 'scenario.json'), JSON.stringify({ turns: [{ text: 'nothing to do' }] }));
  });
  afterEach(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('given a claude binary that is not installed, then start --once exits 1 naming it and how to install it; doctor says the same', async () => {
    configure((c) => {
      c.backends = { claude: { binary: 'ralph-test-no-such-claude' } };
    });
    const start = await ralph(['start', '--once']);
    assert.equal(start.code, 1, start.out + start.err);
    assert.match(start.err, /FAIL backend\.claude\.binary: the Claude Code CLI `ralph-test-no-such-claude` is not installed/);
    assert.match(start.err, /npm install -g @anthropic-ai\/claude-code/);
    assert.doesNotMatch(start.out, /loop running/, 'no agent was started');
    const doctor = await ralph(['doctor']);
    assert.equal(doctor.code, 1);
    assert.match(doctor.out, /FAIL backend\.claude\.binary/);
    assert.match(doctor.out, /Confinement:\n {2}primary claude/);
    const json = JSON.parse((await ralph(['doctor', '--json'])).out) as {
      ok: boolean;
      checks: { id: string; ok: boolean; actions?: { id: string }[] }[];
    };
    assert.equal(json.ok, false);
    const c = json.checks.find((x) => x.id === 'backend.claude.binary');
    assert.equal(c?.ok, false);
    assert.deepEqual(
      c?.actions?.map((a) => a.id),
      ['install-cli', 'choose-backend', 'open-config'],
    );
  });

  it('given no bubblewrap on PATH, then start refuses with what to install or how to opt in; with agents.unconfined it runs and says it is unconfined, and status warns', async () => {
    configure(scripted);
    const refused = await ralph(['start', '--once'], { PATH: noBwrap.path });
    assert.equal(refused.code, 1, refused.out + refused.err);
    assert.match(
      refused.err,
      /FAIL confinement\.primary: primary \(scripted\) would run with no confinement: bubblewrap \(bwrap\) is not installed/,
    );
    assert.match(refused.err, /apt-get install bubblewrap socat/);
    assert.match(refused.err, /"agents": \{"unconfined": true\}/);

    configure((c) => {
      c.agents = { unconfined: true };
    });
    const run = await ralph(['start', '--once'], { PATH: noBwrap.path });
    assert.equal(run.code, 0, run.out + run.err);
    assert.match(run.err, /WARNING: agents run UNCONFINED/);
    assert.match(run.out, /agents: primary \(scripted\) none: unconfined/);
    const status = await ralph(['status']);
    assert.match(
      status.out,
      /WARNING: the last run's agents ran UNCONFINED: primary \(scripted\), worker \(scripted\), judge \(scripted\)/,
    );
  });

  it('given bubblewrap, then start runs confined, records it, and moves worktrees of an older version out of .git', async () => {
    configure(scripted);
    const legacy = path.join(repo, '.git', 'ralph', 'worktrees', 'primary');
    git(repo, 'worktree', 'add', '-q', '-B', 'ralph/primary', legacy, 'main');
    const run = await ralph(['start', '--once']);
    assert.equal(run.code, 0, run.out + run.err);
    assert.match(run.out, /agents: primary \(scripted\) bwrap: bubblewrap/);
    assert.doesNotMatch(run.err, /UNCONFINED/);
    assert.equal(fs.existsSync(legacy), false, 'moved out of .git');
    assert.equal(fs.existsSync(path.join(repo, '.git', 'ralph', 'worktrees')), false);
    assert.ok(!git(repo, 'worktree', 'list').includes('.git/ralph'), git(repo, 'worktree', 'list'));
    assert.ok((await worktreesRoot(repo)).startsWith(process.env.RALPH_CACHE_DIR ?? '/nowhere'));
    const status = await ralph(['status', '--json']);
    const safety = (JSON.parse(status.out) as { safety: { confinement: { unconfined: boolean; roles: { kind: string }[] } } }).safety;
    assert.equal(safety.confinement.unconfined, false);
    assert.deepEqual(
      safety.confinement.roles.map((r) => r.kind),
      ['bwrap', 'bwrap', 'bwrap'],
    );
    assert.doesNotMatch((await ralph(['status'])).out, /UNCONFINED/);
  });

  it('given a claude CLI that runs outside but needs a file the sandbox hides, then start refuses before any agent, saying what the CLI printed inside', async () => {
    // The CLI and what it imports both under /tmp, the import outside the CLI's install folder.
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-preflight-lib-'));
    const cliDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-preflight-cli-'));
    try {
      fs.writeFileSync(path.join(other, 'version.mjs'), "export const V = '2.1.332 (Claude Code)';\n");
      const cli = path.join(cliDir, 'claude.mjs');
      fs.writeFileSync(cli, `#!/usr/bin/env node\nimport { V } from '${path.join(other, 'version.mjs')}';\nconsole.log(V);\n`);
      fs.chmodSync(cli, 0o755);
      configure((c) => {
        c.backends = {
          primary: 'claude',
          worker: 'scripted',
          judge: 'scripted',
          claude: { binary: cli },
          scripted: { scenario: '.ralph/scenario.json' },
        };
      });
      const start = await ralph(['start', '--once'], { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key' });
      assert.equal(start.code, 1, start.out + start.err);
      assert.match(start.err, /FAIL confinement\.primary: primary \(claude\) does not start inside its sandbox \(bubblewrap\): exit 1: /);
      assert.ok(start.err.includes(`Cannot find module '${path.join(other, 'version.mjs')}'`), start.err);
      assert.doesNotMatch(start.out, /loop running/, 'no agent was started');
      const doctor = await ralph(['doctor'], { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-key' });
      assert.equal(doctor.code, 1);
      assert.match(doctor.out, /ok {3}backend\.claude\.version: Claude Code 2\.1\.332/, 'outside the sandbox it runs');
      assert.match(doctor.out, /ok {3}confinement\.worker: worker \(scripted\): bubblewrap/, 'the scripted claude starts inside');
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
      fs.rmSync(cliDir, { recursive: true, force: true });
    }
  });
});
