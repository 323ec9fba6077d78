// The preflight as data: each check with its severity, fix and actions, from a fake machine.
import { strict as assert } from 'node:assert';
import { parseConfigText } from '../../../src/project/config';
import { compareVersions, defaultPreflightDeps, formatPreflight, runPreflight } from '../../../src/preflight/preflight';
import type { PreflightDeps } from '../../../src/preflight/preflight';
import type { BwrapProbe } from '../../../src/agents/sandbox';

const bwrapOk: BwrapProbe = { ok: true, path: '/usr/bin/bwrap', version: '0.8.0', error: null, startMs: 12 };
const bwrapMissing: BwrapProbe = { ok: false, path: null, version: null, error: 'bubblewrap (bwrap) is not installed', startMs: null };

function machine(
  o: {
    files?: string[];
    versions?: Record<string, string>;
    bwrap?: BwrapProbe;
    env?: Record<string, string>;
    /** What starting a program inside bubblewrap says, by program (script for the scripted backend). */
    unstartable?: Record<string, string>;
  } = {},
): PreflightDeps {
  const files = new Set(o.files ?? []);
  return defaultPreflightDeps({
    env: { PATH: '/bin', ...(o.env ?? {}) },
    platform: 'linux',
    home: '/home/u',
    probeBwrap: () => o.bwrap ?? bwrapOk,
    exists: (p) => files.has(p),
    version: (b) => (o.versions?.[b] !== undefined ? { ok: true, stdout: o.versions[b] } : { ok: false, error: 'spawn ENOENT' }),
    scriptedPath: () => '/kit/scriptedClaude.mjs',
    startConfined: (_cli, _c, file, args) => o.unstartable?.[file === process.execPath ? (args[0] ?? file) : file] ?? null,
  });
}

const config = (extra: Record<string, unknown> = {}) => {
  const r = parseConfigText(JSON.stringify({ name: 'p', ...extra }), 'ralph.config.json');
  if (!r.ok) throw r.error;
  return r.value;
};

const byId = (r: ReturnType<typeof runPreflight>, id: string) => r.checks.find((c) => c.id === id);

describe('preflight', () => {
  it('given no claude CLI, then an error with the install command and the actions a host offers; not ok', () => {
    const r = runPreflight(config(), '/p', machine());
    assert.equal(r.ok, false);
    const c = byId(r, 'backend.claude.binary');
    assert.equal(c?.severity, 'error');
    assert.match(c?.message ?? '', /not installed/);
    assert.match(c?.fix ?? '', /npm install -g @anthropic-ai\/claude-code/);
    assert.deepEqual(
      c?.actions?.map((a) => a.id),
      ['install-cli', 'choose-backend', 'open-config'],
    );
    assert.match(formatPreflight(r), /^FAIL backend\.claude\.binary/);
  });

  it('given a supported claude with an API key and bubblewrap, then ok, each role confined by bwrap', () => {
    const r = runPreflight(
      config({ backends: { claude: { binary: '/opt/claude' } } }),
      '/p',
      machine({ files: ['/opt/claude'], versions: { '/opt/claude': '2.1.332 (Claude Code)\n' }, env: { ANTHROPIC_API_KEY: 'k' } }),
    );
    assert.equal(r.ok, true, formatPreflight(r));
    assert.deepEqual(
      r.confinement.map((c) => [c.role, c.kind]),
      [
        ['primary', 'bwrap'],
        ['worker', 'bwrap'],
        ['judge', 'bwrap'],
      ],
    );
    assert.equal(r.unconfined, false);
    assert.equal(byId(r, 'backend.claude.auth')?.ok, true);
  });

  it('given a CLI that runs outside but not inside bubblewrap, then each role using it fails with what the sandbox said, started once', () => {
    let starts = 0;
    const deps = machine({
      files: ['/tmp/x/claude', '/kit/scriptedClaude.mjs'],
      versions: { '/tmp/x/claude': '2.1.332 (Claude Code)\n' },
      env: { ANTHROPIC_API_KEY: 'k' },
      unstartable: { '/tmp/x/claude': 'exit 1: bwrap: execvp /tmp/x/claude: No such file or directory' },
    });
    const counted: typeof deps = { ...deps, startConfined: (...a) => (starts++, deps.startConfined(...a)) };
    const r = runPreflight(
      config({ backends: { claude: { binary: '/tmp/x/claude' }, judge: 'scripted', scripted: { scenario: 's.json' } } }),
      '/p',
      counted,
    );
    assert.equal(r.ok, false);
    assert.equal(
      byId(r, 'confinement.primary')?.message,
      'primary (claude) does not start inside its sandbox (bubblewrap): exit 1: bwrap: execvp /tmp/x/claude: No such file or directory',
    );
    assert.equal(byId(r, 'confinement.worker')?.ok, false);
    assert.equal(byId(r, 'confinement.judge')?.ok, true, 'the scripted judge starts');
    assert.equal(starts, 2, 'once per backend');
    assert.match(formatPreflight(r), /FAIL confinement\.primary: primary \(claude\) does not start inside its sandbox/);
  });

  it('given an old version, then an error; a newer one than tested, a warning; no login, a warning', () => {
    const old = runPreflight(
      config({ backends: { claude: { binary: '/c' } } }),
      '/p',
      machine({ files: ['/c'], versions: { '/c': '2.0.1' } }),
    );
    assert.equal(byId(old, 'backend.claude.version')?.severity, 'error');
    const newer = runPreflight(
      config({ backends: { claude: { binary: '/c' } } }),
      '/p',
      machine({ files: ['/c'], versions: { '/c': '2.2.0' } }),
    );
    assert.equal(newer.ok, true);
    assert.equal(byId(newer, 'backend.claude.version')?.severity, 'warning');
    assert.equal(byId(newer, 'backend.claude.auth')?.ok, false);
    assert.equal(byId(newer, 'backend.claude.auth')?.severity, 'warning');
  });

  it('given no bubblewrap, then claude is refused with what to install or how to opt in; with agents.unconfined it passes with a warning', () => {
    const m = { files: ['/c', '/home/u/.claude/.credentials.json'], versions: { '/c': '2.1.332' }, bwrap: bwrapMissing };
    const refused = runPreflight(config({ backends: { claude: { binary: '/c' } } }), '/p', machine(m));
    assert.equal(refused.ok, false);
    const c = byId(refused, 'confinement.primary');
    assert.equal(c?.severity, 'error');
    assert.match(c?.fix ?? '', /apt-get install bubblewrap/);
    assert.match(c?.fix ?? '', /"agents": \{"unconfined": true\}/);
    assert.ok(c?.actions?.some((a) => a.id === 'allow-unconfined'));
    const allowed = runPreflight(config({ backends: { claude: { binary: '/c' } }, agents: { unconfined: true } }), '/p', machine(m));
    assert.equal(allowed.ok, true);
    assert.equal(allowed.unconfined, true);
    assert.equal(allowed.optedIn, true);
    assert.equal(byId(allowed, 'confinement.primary')?.severity, 'warning');
    assert.match(byId(allowed, 'confinement.primary')?.message ?? '', /UNCONFINED/);
  });

  it('given codex without bubblewrap, then its own sandbox confines it; given bypassPermissions, a warning', () => {
    const r = runPreflight(
      config({ backends: { primary: 'codex', worker: 'codex', judge: 'codex', codex: { binary: '/x' } } }),
      '/p',
      machine({ files: ['/x'], versions: { '/x': 'codex-cli 0.171.0' }, bwrap: bwrapMissing, env: { OPENAI_API_KEY: 'k' } }),
    );
    assert.equal(r.ok, true, formatPreflight(r));
    assert.equal(r.confinement[0]?.kind, 'cli-sandbox');
    const bypass = runPreflight(config({ backends: { claude: { permission_mode: 'bypassPermissions' } } }), '/p', machine());
    assert.equal(byId(bypass, 'claude.permission_mode')?.severity, 'warning');
  });

  it('vscode-lm is an error on the command line and fine inside VS Code', () => {
    const c = config({ backends: { primary: 'vscode-lm', worker: 'vscode-lm', judge: 'vscode-lm' } });
    assert.equal(runPreflight(c, '/p', machine()).ok, false);
    assert.equal(runPreflight(c, '/p', { ...machine(), host: 'vscode' }).ok, true);
  });

  it('compares dotted versions numerically', () => {
    assert.equal(compareVersions('2.1.332', '2.1.197'), 1);
    assert.equal(compareVersions('0.99.0', '0.171.0'), -1);
    assert.equal(compareVersions('1.0', '1.0.0'), 0);
  });
});
