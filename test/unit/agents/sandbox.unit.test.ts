// The confinement choices, bubblewrap's arguments and the agent environment allow-list.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  agentProcessEnv,
  allowListedEnv,
  bwrapArgs,
  chooseConfinement,
  confineSpawn,
  installRoot,
  nodeModulesAbove,
  NO_CONFINEMENT,
  prepareScratch,
  ralphInstallRoot,
  sandboxStartFailure,
  scratchLayout,
  symlinkHops,
} from '../../../src/agents/sandbox';
import type { BwrapProbe } from '../../../src/agents/sandbox';
import { codexArgs } from '../../../src/agents/codexBackend';

const bwrapOk: BwrapProbe = { ok: true, path: '/usr/bin/bwrap', version: '0.8.0', error: null, startMs: 12 };
const bwrapMissing: BwrapProbe = { ok: false, path: null, version: null, error: 'bubblewrap (bwrap) is not installed', startMs: null };

describe('agents/sandbox', () => {
  it('Linux with bubblewrap: every CLI in bwrap; without: codex keeps its own sandbox, claude and scripted are unconfined with what to install', () => {
    for (const cli of ['claude', 'codex', 'scripted'] as const) assert.equal(chooseConfinement(cli, 'linux', bwrapOk).kind, 'bwrap');
    assert.equal(chooseConfinement('codex', 'linux', bwrapMissing).kind, 'cli-sandbox');
    const claude = chooseConfinement('claude', 'linux', bwrapMissing);
    assert.equal(claude.kind, 'none');
    assert.match(claude.summary, /not installed/);
    assert.match(claude.remedy ?? '', /apt-get install bubblewrap/);
    assert.equal(chooseConfinement('scripted', 'linux', bwrapMissing).kind, 'none');
    assert.equal(chooseConfinement('claude', 'darwin', bwrapMissing).kind, 'cli-sandbox');
    assert.equal(chooseConfinement('claude', 'win32', bwrapMissing).kind, 'none');
  });

  it('bwrap: read-only root, private /tmp and /run, no capabilities, own user and pid namespaces, the network kept, writable folders bound after the tmpfs', () => {
    const args = bwrapArgs({ writable: ['/tmp/w'], protect: [], readable: [], cwd: '/tmp/w' });
    const pairs = args.join(' ');
    assert.match(pairs, /^--ro-bind \/ \/ --dev \/dev --proc \/proc --tmpfs \/tmp --tmpfs \/run/);
    assert.ok(pairs.indexOf('--bind /tmp/w /tmp/w') > pairs.indexOf('--tmpfs /tmp'), 'the worktree is visible over the private /tmp');
    assert.match(pairs, /--cap-drop ALL/);
    assert.match(pairs, /--unshare-user --unshare-pid/);
    assert.match(pairs, /--die-with-parent/);
    assert.ok(!args.includes('--unshare-net') && !args.includes('--unshare-all'), 'the model API stays reachable');
    assert.ok(!args.includes('--new-session'), 'the agent stays in our process group, so a stop ends all of it');
  });

  it('bwrap: a worktree .git entry is bound read-only over the writable worktree, the common git dir stays readable', () => {
    const root = mkdtempSync(join(tmpdir(), 'ralph-sbx-'));
    try {
      const wt = join(root, 'wt');
      const common = join(root, 'repo', '.git');
      mkdirSync(join(common, 'worktrees', 'wt'), { recursive: true });
      mkdirSync(wt);
      writeFileSync(join(wt, '.git'), `gitdir: ${join(common, 'worktrees', 'wt')}\n`);
      const s = confineSpawn({ kind: 'bwrap', bwrap: '/usr/bin/bwrap', summary: '' }, '/usr/bin/node', ['x.js'], {
        cwd: wt,
        scratch: undefined,
      });
      assert.equal(s.file, '/usr/bin/bwrap');
      const a = s.args.join(' ');
      assert.ok(a.includes(`--ro-bind ${common} ${common}`), a);
      assert.ok(a.indexOf(`--ro-bind ${wt}/.git ${wt}/.git`) > a.indexOf(`--bind ${wt} ${wt}`), a);
      assert.deepEqual(s.args.slice(s.args.indexOf('--')), ['--', '/usr/bin/node', 'x.js']);
      assert.deepEqual(confineSpawn(NO_CONFINEMENT, 'claude', ['-p'], { cwd: wt, scratch: undefined }), { file: 'claude', args: ['-p'] });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("bwrap: a CLI named through links in /tmp keeps every link and its real install folder; Ralph's own root stays readable", () => {
    const root = mkdtempSync(join(tmpdir(), 'ralph-sbx-'));
    try {
      const pkg = join(root, 'prefix', 'lib', 'node_modules', 'fake');
      mkdirSync(pkg, { recursive: true });
      writeFileSync(join(pkg, 'cli.mjs'), '');
      mkdirSync(join(root, 'prefix', 'bin'));
      symlinkSync('../lib/node_modules/fake/cli.mjs', join(root, 'prefix', 'bin', 'fake'));
      symlinkSync(join(root, 'prefix', 'bin'), join(root, 'linkbin'));
      const named = join(root, 'linkbin', 'fake');
      assert.deepEqual(symlinkHops(named), [
        { link: join(root, 'linkbin'), target: join(root, 'prefix', 'bin') },
        { link: join(root, 'prefix', 'bin', 'fake'), target: '../lib/node_modules/fake/cli.mjs' },
      ]);
      assert.equal(installRoot(named), join(root, 'prefix', 'lib'));
      const wt = join(root, 'wt');
      mkdirSync(wt);
      const s = confineSpawn({ kind: 'bwrap', bwrap: '/usr/bin/bwrap', summary: '' }, 'fake', ['-p'], {
        cwd: wt,
        scratch: undefined,
        path: `/usr/bin:${join(root, 'linkbin')}`,
      });
      const a = s.args.join(' ');
      assert.ok(a.includes(`--ro-bind ${join(root, 'prefix', 'lib')} ${join(root, 'prefix', 'lib')}`), a);
      // The PATH folder the command was found in is bound: the link in it is there already
      // (recreating it over a read-only bind would fail); the link to that folder is not.
      assert.ok(a.includes(`--ro-bind ${join(root, 'prefix', 'bin')} ${join(root, 'prefix', 'bin')}`), a);
      assert.ok(!a.includes(`--symlink ../lib/node_modules/fake/cli.mjs`), a);
      assert.ok(a.includes(`--symlink ${join(root, 'prefix', 'bin')} ${join(root, 'linkbin')}`), a);
      assert.deepEqual(s.args.slice(s.args.indexOf('--')), ['--', 'fake', '-p']);
      // Named by its absolute path with no PATH: the link in bin/ is recreated.
      const abs = confineSpawn({ kind: 'bwrap', bwrap: '/usr/bin/bwrap', summary: '' }, named, [], {
        cwd: wt,
        scratch: undefined,
        path: '/usr/bin',
      });
      const b = abs.args.join(' ');
      assert.ok(b.includes(`--symlink ../lib/node_modules/fake/cli.mjs ${join(root, 'prefix', 'bin', 'fake')}`), b);
      assert.ok(b.includes(`--symlink ${join(root, 'prefix', 'bin')} ${join(root, 'linkbin')}`), b);
      assert.ok(!b.includes(`--ro-bind ${join(root, 'prefix', 'bin')} `), b);
      // A script's bare imports resolve from each ancestor's node_modules (zod for the scripted claude).
      assert.ok(nodeModulesAbove(join(__dirname, 'x.mjs')).includes(resolve(__dirname, '..', '..', '..', 'node_modules')));
      const ralph = ralphInstallRoot();
      assert.equal(ralph, resolve(__dirname, '..', '..', '..'));
      if (ralph !== null && ralph.startsWith('/tmp/')) assert.ok(a.includes(`--ro-bind ${ralph} ${ralph}`), a);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('an agent that ends before any output inside bubblewrap did not start: the message carries what the sandbox said', () => {
    const bwrap = { kind: 'bwrap' as const, bwrap: '/usr/bin/bwrap', summary: '' };
    assert.equal(
      sandboxStartFailure(bwrap, { sawOutput: false, exitCode: 1, stderrTail: 'bwrap: execvp claude: No such file or directory\n' }),
      'bubblewrap could not start the agent (exit 1 before any output): bwrap: execvp claude: No such file or directory',
    );
    assert.match(
      sandboxStartFailure(bwrap, {
        sawOutput: false,
        exitCode: 1,
        stderrTail: "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/tmp/x/a.cjs'",
      }) ?? '',
      /^the agent did not start inside its sandbox \(exit 1 before any output\): Error \[ERR_MODULE_NOT_FOUND\]: Cannot find module '\/tmp\/x\/a\.cjs'$/,
    );
    assert.equal(sandboxStartFailure(bwrap, { sawOutput: true, exitCode: 1, stderrTail: 'x' }), null, 'it spoke: an agent failure');
    assert.equal(sandboxStartFailure(bwrap, { sawOutput: false, exitCode: 0, stderrTail: '' }), null);
    assert.equal(
      sandboxStartFailure(bwrap, { sawOutput: false, exitCode: null, stopReason: 'timeout', stderrTail: '' }),
      null,
      'we stopped it',
    );
    assert.equal(sandboxStartFailure(NO_CONFINEMENT, { sawOutput: false, exitCode: 1, stderrTail: 'x' }), null);
  });

  it('codex inside bubblewrap runs danger-full-access (its own sandbox cannot nest there); elsewhere workspace-write', () => {
    const req = { prompt: 'p', cwd: '/w', model: 'm', maxTurns: 1, timeoutMs: 1 };
    const inBwrap = codexArgs(req, { confinement: { kind: 'bwrap', bwrap: '/usr/bin/bwrap', summary: '' } });
    assert.equal(inBwrap[inBwrap.indexOf('--sandbox') + 1], 'danger-full-access');
    const own = codexArgs(req, { confinement: { kind: 'cli-sandbox', summary: '' } });
    assert.equal(own[own.indexOf('--sandbox') + 1], 'workspace-write');
  });

  it('the allow-list passes what the CLI needs and nothing else of the shell', () => {
    const shell = {
      PATH: '/bin',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      HTTPS_PROXY: 'http://proxy',
      ANTHROPIC_API_KEY: 'sk-ant-x',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:1',
      CLAUDE_CODE_OAUTH_TOKEN: 't',
      OPENAI_API_KEY: 'sk-o',
      GITHUB_TOKEN: 'ghp_secret',
      AWS_SECRET_ACCESS_KEY: 'aws',
      SSH_AUTH_SOCK: '/tmp/ssh/agent',
      VSCODE_IPC_HOOK_CLI: '/run/user/0/vscode.sock',
      HOME: '/home/u',
      CLAUDE_CONFIG_DIR: '/home/u/.claude',
      NPM_TOKEN: 'npm',
    };
    assert.deepEqual(Object.keys(allowListedEnv('claude', shell)).sort(), [
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_BASE_URL',
      'AWS_SECRET_ACCESS_KEY',
      'CLAUDE_CODE_OAUTH_TOKEN',
      'HTTPS_PROXY',
      'LANG',
      'LC_ALL',
      'PATH',
    ]);
    assert.deepEqual(Object.keys(allowListedEnv('codex', shell)).sort(), ['HTTPS_PROXY', 'LANG', 'LC_ALL', 'OPENAI_API_KEY', 'PATH']);
  });

  it('with a scratch folder, HOME, TMPDIR and the CLI config are its own, whatever the request says; CODEX_HOME is never inside TMPDIR', () => {
    const root = mkdtempSync(join(tmpdir(), 'ralph-sbx-'));
    try {
      const env = agentProcessEnv(
        'codex',
        { PATH: '/bin' },
        { env: { HOME: '/elsewhere', RALPH_PHASE: 'plan' }, scratchDir: join(root, 's') },
        {},
      );
      assert.equal(env.HOME, join(root, 's', 'home'));
      assert.equal(env.TMPDIR, join(root, 's', 'tmp'));
      assert.equal(env.CODEX_HOME, join(root, 's', 'codex'));
      assert.ok(!(env.CODEX_HOME ?? '').startsWith(`${env.TMPDIR ?? ''}/`));
      assert.equal(env.RALPH_PHASE, 'plan');
      assert.equal(env.PATH, '/bin');
      assert.ok(statSync(join(root, 's', 'tmp')).isDirectory());
      // Without a scratch folder the caller is in charge (tests with their own homes).
      assert.equal(agentProcessEnv('codex', {}, { env: { HOME: '/elsewhere' } }, {}).HOME, '/elsewhere');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('an agent never starts the warm ralph process, whatever its base, request or user environment say', () => {
    const on = { RALPH_CLI_SERVER: '1' };
    assert.equal(agentProcessEnv('claude', undefined, {}, on).RALPH_CLI_SERVER, '0');
    assert.equal(agentProcessEnv('claude', on, { env: on }, on).RALPH_CLI_SERVER, '0');
  });

  it('a CLI login is copied into the scratch when newer, never linked back', () => {
    const root = mkdtempSync(join(tmpdir(), 'ralph-sbx-'));
    try {
      const user = join(root, 'user-claude');
      mkdirSync(user);
      writeFileSync(join(user, '.credentials.json'), '{"v":1}');
      const layout = scratchLayout(join(root, 's'), 'claude');
      assert.deepEqual(prepareScratch(layout, 'claude', user), [join(layout.cliConfig, '.credentials.json')]);
      assert.deepEqual(prepareScratch(layout, 'claude', user), [], 'not copied again while unchanged');
      writeFileSync(join(layout.cliConfig, '.credentials.json'), '{"agent":"refreshed"}');
      const later = new Date(Date.now() + 60_000);
      writeFileSync(join(user, '.credentials.json'), '{"v":2}');
      utimesSync(join(user, '.credentials.json'), later, later);
      assert.equal(prepareScratch(layout, 'claude', user).length, 1, "the user's new login reaches the agent");
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
