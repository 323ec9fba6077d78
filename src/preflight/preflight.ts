// Over 400 lines because each backend's checks (binary, version, auth, confinement) sit together so `ralph doctor` shows one ordered list.
// The preflight run before any agent starts (`ralph start`, "Ralph: Start Loop") and shown
// in full by `ralph doctor`: per role and backend, the binary exists and runs, its version
// is one we support, it is authenticated where that can be told from outside, and which
// confinement its processes get. The result is data: a list of checks {id, ok, severity,
// message, fix, actions}, so each host renders it its own way (the CLI as lines and an exit
// code, VS Code as a notification whose buttons are the actions).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { defaultScriptedClaudePath } from '../agents/scriptedBackend';
import {
  allowListedEnv,
  chooseConfinement,
  confineSpawn,
  findOnPath,
  HIDDEN_ROOTS,
  nodeModulesAbove,
  probeBwrap,
  userCliConfigDir,
} from '../agents/sandbox';
import type { AgentCli, BwrapProbe, Confinement, ConfinementKind } from '../agents/sandbox';
import type { BackendKind, RalphConfig } from '../project/config';

export type Role = 'primary' | 'worker' | 'judge';
export const ROLES: readonly Role[] = ['primary', 'worker', 'judge'];

export type PreflightSeverity = 'error' | 'warning' | 'info';

/** What a host may offer to fix a check (VS Code: notification buttons). */
export type PreflightActionId = 'install-cli' | 'install-bubblewrap' | 'choose-backend' | 'open-config' | 'allow-unconfined';

export interface PreflightAction {
  readonly id: PreflightActionId;
  readonly label: string;
  /** A command line to run or a config snippet, when there is one. */
  readonly detail?: string;
}

export interface PreflightCheck {
  /** Stable id: `backend.<kind>.binary|version|auth|scenario`, `confinement.<role>`, `claude.permission_mode`. */
  readonly id: string;
  readonly ok: boolean;
  /** How much a failed (or noteworthy) check matters; `error` keeps the loop from starting. */
  readonly severity: PreflightSeverity;
  readonly message: string;
  readonly fix?: string;
  readonly actions?: readonly PreflightAction[];
  readonly role?: Role;
  readonly backend?: BackendKind;
}

export interface RoleConfinement {
  readonly role: Role;
  readonly backend: BackendKind;
  readonly kind: ConfinementKind | 'in-process';
  readonly summary: string;
}

export interface PreflightReport {
  /** No check failed with severity `error`: agents may start. */
  readonly ok: boolean;
  readonly checks: readonly PreflightCheck[];
  readonly confinement: readonly RoleConfinement[];
  /** Some role runs with no confinement (allowed only with `agents.unconfined`). */
  readonly unconfined: boolean;
  /** `agents.unconfined: true` in ralph.config.json. */
  readonly optedIn: boolean;
}

/** Versions we run against (the pinned ones are tested; older ones lack flags we pass). */
export const SUPPORTED_VERSIONS: Readonly<Record<'claude' | 'codex', { readonly min: string; readonly tested: string }>> = {
  claude: { min: '2.1.197', tested: '2.1.332' },
  codex: { min: '0.171.0', tested: '0.171.0' },
};

const INSTALL: Readonly<Record<'claude' | 'codex', string>> = {
  claude: 'npm install -g @anthropic-ai/claude-code',
  codex: 'npm install -g @openai/codex',
};

export interface PreflightDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: NodeJS.Platform;
  readonly home: string;
  readonly probeBwrap: (path: string | undefined) => BwrapProbe;
  /** Runs `<binary> --version`; stdout on success, the failure otherwise. */
  readonly version: (binary: string) => { ok: true; stdout: string } | { ok: false; error: string };
  readonly exists: (path: string) => boolean;
  /**
   * Starts `file args` (`--version`) inside the sandbox its agents get, from an empty folder:
   * null when it ran, else what went wrong with the sandbox's stderr. A CLI that runs outside
   * but not inside (it lives in a folder the sandbox hides) fails here, not at its first task.
   */
  readonly startConfined: (
    cli: AgentCli,
    confinement: Confinement,
    file: string,
    args: readonly string[],
    readable: readonly string[],
  ) => string | null;
  /** Where the scripted backend's executable is (throws when it is not found). */
  readonly scriptedPath: () => string;
  /** 'vscode' when the extension host runs the preflight (the vscode-lm backend exists there). */
  readonly host: 'cli' | 'vscode';
}

export function defaultPreflightDeps(overrides: Partial<PreflightDeps> = {}): PreflightDeps {
  return {
    env: process.env,
    platform: process.platform,
    home: homedir(),
    probeBwrap,
    version: (binary) => {
      const r = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
      if (r.error !== undefined) return { ok: false, error: r.error.message };
      if (r.status !== 0) return { ok: false, error: `exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().slice(-300)}` };
      return { ok: true, stdout: r.stdout };
    },
    exists: existsSync,
    startConfined: (cli, confinement, file, args, readable) =>
      startConfined(cli, confinement, file, args, readable, overrides.env ?? process.env),
    scriptedPath: defaultScriptedClaudePath,
    host: 'cli',
    ...overrides,
  };
}

function startConfined(
  cli: AgentCli,
  confinement: Confinement,
  file: string,
  args: readonly string[],
  readable: readonly string[],
  userEnv: Readonly<Record<string, string | undefined>>,
): string | null {
  const cwd = mkdtempSync(join(tmpdir(), 'ralph-preflight-'));
  try {
    const env = allowListedEnv(cli, userEnv);
    const spawn = confineSpawn(confinement, file, args, { cwd, scratch: undefined, path: env.PATH, readable });
    const r = spawnSync(spawn.file, [...spawn.args], { cwd, env, encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.error !== undefined) return r.error.message;
    if (r.status === 0) return null;
    const said = (r.stderr || r.stdout).trim();
    return `exit ${r.status ?? r.signal}: ${said.length > 1500 ? `…${said.slice(-1500)}` : said || '(nothing on stderr)'}`;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/** -1, 0, 1 for dotted numeric versions. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

const cliOf = (kind: BackendKind): AgentCli | null =>
  kind === 'claude' ? 'claude' : kind === 'codex' ? 'codex' : kind === 'scripted' ? 'scripted' : null;

/** The binary a config names for a CLI backend, resolved on PATH; null when not found. */
function resolveBinary(binary: string, projectDir: string, deps: PreflightDeps): string | null {
  if (isAbsolute(binary) || binary.includes('/')) {
    const p = resolve(projectDir, binary);
    return deps.exists(p) ? p : null;
  }
  return findOnPath(binary, deps.env.PATH);
}

function binaryChecks(kind: 'claude' | 'codex', config: RalphConfig, projectDir: string, deps: PreflightDeps): PreflightCheck[] {
  const binary = kind === 'claude' ? config.backends.claude.binary : config.backends.codex.binary;
  const label = kind === 'claude' ? 'Claude Code' : 'Codex';
  const installActions: PreflightAction[] = [
    { id: 'install-cli', label: `Install ${label}…`, detail: INSTALL[kind] },
    { id: 'choose-backend', label: 'Choose Backend' },
    { id: 'open-config', label: 'Open ralph.config.json' },
  ];
  const path = resolveBinary(binary, projectDir, deps);
  if (path === null) {
    return [
      {
        id: `backend.${kind}.binary`,
        ok: false,
        severity: 'error',
        backend: kind,
        message: `the ${label} CLI \`${binary}\` is not installed (not found on PATH)`,
        fix: `install it (${INSTALL[kind]}), set backends.${kind}.binary in ralph.config.json to its path, or choose another backend`,
        actions: installActions,
      },
    ];
  }
  const out: PreflightCheck[] = [];
  const v = deps.version(path);
  if (!v.ok) {
    out.push({
      id: `backend.${kind}.binary`,
      ok: false,
      severity: 'error',
      backend: kind,
      message: `\`${path} --version\` failed: ${v.error}`,
      fix: `reinstall it (${INSTALL[kind]}) or point backends.${kind}.binary at a working one`,
      actions: installActions,
    });
    return out;
  }
  out.push({ id: `backend.${kind}.binary`, ok: true, severity: 'info', backend: kind, message: `${label} CLI: ${path}` });
  const version = /(\d+\.\d+\.\d+)/.exec(v.stdout)?.[1];
  const { min, tested } = SUPPORTED_VERSIONS[kind];
  if (version === undefined) {
    out.push({
      id: `backend.${kind}.version`,
      ok: false,
      severity: 'warning',
      backend: kind,
      message: `cannot read a version from \`${binary} --version\`: ${JSON.stringify(v.stdout.trim().slice(0, 80))}`,
      fix: `Ralph is tested with ${label} ${tested}`,
    });
  } else if (compareVersions(version, min) < 0) {
    out.push({
      id: `backend.${kind}.version`,
      ok: false,
      severity: 'error',
      backend: kind,
      message: `${label} ${version} is older than the oldest supported version ${min}`,
      fix: `update it (${INSTALL[kind]}@${tested})`,
      actions: installActions,
    });
  } else {
    out.push({
      id: `backend.${kind}.version`,
      ok: true,
      severity: compareVersions(version, tested) > 0 ? 'warning' : 'info',
      backend: kind,
      message:
        compareVersions(version, tested) > 0
          ? `${label} ${version} is newer than the version Ralph is tested with (${tested})`
          : `${label} ${version} (supported: ${min} and later, tested ${tested})`,
    });
  }
  out.push(authCheck(kind, config, deps));
  return out;
}

/** Whether the CLI has credentials, as far as can be told without asking the network. */
function authCheck(kind: 'claude' | 'codex', config: RalphConfig, deps: PreflightDeps): PreflightCheck {
  const env = { ...deps.env, ...(kind === 'claude' ? config.backends.claude.env : config.backends.codex.env) };
  const set = (names: readonly string[]): string | undefined => names.find((n) => (env[n] ?? '').length > 0);
  const id = `backend.${kind}.auth`;
  if (kind === 'claude') {
    const byEnv = set([
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'CLAUDE_CODE_OAUTH_TOKEN',
      'CLAUDE_CODE_USE_BEDROCK',
      'CLAUDE_CODE_USE_VERTEX',
    ]);
    if (byEnv !== undefined) return { id, ok: true, severity: 'info', backend: kind, message: `Claude Code authenticates with ${byEnv}` };
    const dir = userCliConfigDir('claude', deps.env, deps.home);
    if (dir !== null && deps.exists(join(dir, '.credentials.json'))) {
      return { id, ok: true, severity: 'info', backend: kind, message: `Claude Code is logged in (${join(dir, '.credentials.json')})` };
    }
    if (deps.platform === 'darwin') {
      return { id, ok: true, severity: 'info', backend: kind, message: 'Claude Code keeps its login in the macOS keychain: not checked' };
    }
    return {
      id,
      ok: false,
      severity: 'warning',
      backend: kind,
      message: 'Claude Code has no credentials Ralph can see (no ANTHROPIC_API_KEY, CLAUDE_CODE_OAUTH_TOKEN or `claude login`)',
      fix: 'run `claude login` (or `claude setup-token` and set CLAUDE_CODE_OAUTH_TOKEN), or set ANTHROPIC_API_KEY',
      actions: [{ id: 'open-config', label: 'Open ralph.config.json' }],
    };
  }
  const byEnv = set(['CODEX_API_KEY', 'OPENAI_API_KEY', 'AZURE_OPENAI_API_KEY']);
  if (byEnv !== undefined) return { id, ok: true, severity: 'info', backend: kind, message: `Codex authenticates with ${byEnv}` };
  const dir = userCliConfigDir('codex', deps.env, deps.home);
  if (dir !== null && deps.exists(join(dir, 'auth.json'))) {
    return { id, ok: true, severity: 'info', backend: kind, message: `Codex is logged in (${join(dir, 'auth.json')})` };
  }
  if (config.backends.codex.extra_args.some((a) => a.includes('model_provider'))) {
    return {
      id,
      ok: true,
      severity: 'info',
      backend: kind,
      message: 'Codex uses a custom model provider: its credentials are not checked',
    };
  }
  return {
    id,
    ok: false,
    severity: 'warning',
    backend: kind,
    message: 'Codex has no credentials Ralph can see (no OPENAI_API_KEY or CODEX_API_KEY, no `codex login`)',
    fix: 'run `codex login`, or set OPENAI_API_KEY',
  };
}

function scriptedChecks(config: RalphConfig, projectDir: string, deps: PreflightDeps): PreflightCheck[] {
  const out: PreflightCheck[] = [];
  const b = config.backends.scripted;
  let script: string | null;
  try {
    script = b.binary !== undefined ? resolve(projectDir, b.binary) : deps.scriptedPath();
  } catch (e) {
    script = null;
    out.push({ id: 'backend.scripted.binary', ok: false, severity: 'error', backend: 'scripted', message: (e as Error).message });
  }
  if (script !== null) {
    out.push(
      deps.exists(script)
        ? { id: 'backend.scripted.binary', ok: true, severity: 'info', backend: 'scripted', message: `scripted model: ${script}` }
        : { id: 'backend.scripted.binary', ok: false, severity: 'error', backend: 'scripted', message: `${script} does not exist` },
    );
  }
  const scenario = b.scenario !== undefined ? join(projectDir, b.scenario) : undefined;
  if (scenario === undefined || !deps.exists(scenario)) {
    out.push({
      id: 'backend.scripted.scenario',
      ok: false,
      severity: 'error',
      backend: 'scripted',
      message:
        scenario === undefined
          ? 'ralph.config.json backends.scripted.scenario: the scripted backend needs a scenario file'
          : `the scenario file ${scenario} does not exist`,
      actions: [{ id: 'open-config', label: 'Open ralph.config.json' }],
    });
  }
  return out;
}

const INSTALL_BWRAP_ACTION: PreflightAction = {
  id: 'install-bubblewrap',
  label: 'Install bubblewrap…',
  detail: 'sudo apt-get install bubblewrap socat',
};
const ALLOW_UNCONFINED_ACTION: PreflightAction = {
  id: 'allow-unconfined',
  label: 'Run Unconfined…',
  detail: '"agents": { "unconfined": true }',
};

/** What the preflight starts inside the sandbox for a backend (its `--version`), or null. */
function startCommand(
  kind: BackendKind,
  config: RalphConfig,
  projectDir: string,
  deps: PreflightDeps,
): { file: string; args: string[]; readable: string[] } | null {
  if (kind === 'claude' || kind === 'codex') {
    const file = resolveBinary(kind === 'claude' ? config.backends.claude.binary : config.backends.codex.binary, projectDir, deps);
    return file === null ? null : { file, args: ['--version'], readable: [] };
  }
  if (kind !== 'scripted') return null;
  try {
    const b = config.backends.scripted;
    const script = b.binary !== undefined ? resolve(projectDir, b.binary) : deps.scriptedPath();
    return deps.exists(script)
      ? { file: process.execPath, args: [script, '--version'], readable: [dirname(script), ...nodeModulesAbove(script)] }
      : null;
  } catch {
    return null;
  }
}

/** The confinement each role's agents get, and the checks that say so. */
export function confinementChecks(
  config: RalphConfig,
  deps: PreflightDeps,
  projectDir = '.',
): { roles: RoleConfinement[]; checks: PreflightCheck[] } {
  const roles: RoleConfinement[] = [];
  const checks: PreflightCheck[] = [];
  const optedIn = config.agents.unconfined;
  // Per backend, not per role: the roles sharing one start the same program.
  const started = new Map<BackendKind, string | null>();
  for (const role of ROLES) {
    const kind = config.backends[role];
    const cli = cliOf(kind);
    if (cli === null) {
      roles.push({
        role,
        backend: kind,
        kind: 'in-process',
        summary: "VS Code's language model; its tools refuse paths outside the worktree",
      });
      continue;
    }
    const c: Confinement = chooseConfinement(cli, deps.platform, deps.probeBwrap(deps.env.PATH));
    roles.push({ role, backend: kind, kind: c.kind, summary: c.summary });
    const id = `confinement.${role}`;
    if (c.kind === 'bwrap' && !started.has(kind)) {
      const command = startCommand(kind, config, projectDir, deps);
      started.set(kind, command === null ? null : deps.startConfined(cli, c, command.file, command.args, command.readable));
    }
    const failed = c.kind === 'bwrap' ? (started.get(kind) ?? null) : null;
    if (failed !== null) {
      checks.push({
        id,
        ok: false,
        severity: 'error',
        role,
        backend: kind,
        message: `${role} (${kind}) does not start inside its sandbox (bubblewrap): ${failed}`,
        fix: `it needs something in a folder the sandbox hides (${HIDDEN_ROOTS.join(', ')}) or cannot run without privileges: install it elsewhere or point backends.${kind}.binary at one that runs, then \`ralph doctor\``,
        actions: [{ id: 'open-config', label: 'Open ralph.config.json' }],
      });
    } else if (c.kind !== 'none') {
      checks.push({ id, ok: true, severity: 'info', role, backend: kind, message: `${role} (${kind}): ${c.summary}` });
    } else if (optedIn) {
      checks.push({
        id,
        ok: true,
        severity: 'warning',
        role,
        backend: kind,
        message: `${role} (${kind}) runs UNCONFINED (agents.unconfined: true): ${c.summary}; the integrity check covers your checkout too`,
        ...(c.remedy !== undefined ? { fix: c.remedy } : {}),
        actions: [INSTALL_BWRAP_ACTION],
      });
    } else {
      checks.push({
        id,
        ok: false,
        severity: 'error',
        role,
        backend: kind,
        message: `${role} (${kind}) would run with no confinement: ${c.summary.replace(/^unconfined: /, '')}`,
        fix: `${c.remedy ?? 'confine it'}, or set "agents": {"unconfined": true} in ralph.config.json to run agents that can write anything your user can`,
        actions: [INSTALL_BWRAP_ACTION, ALLOW_UNCONFINED_ACTION, { id: 'open-config', label: 'Open ralph.config.json' }],
      });
    }
  }
  return { roles, checks };
}

/** The whole preflight for a project's configuration. */
export function runPreflight(config: RalphConfig, projectDir: string, deps: PreflightDeps = defaultPreflightDeps()): PreflightReport {
  const checks: PreflightCheck[] = [];
  const kinds = [...new Set(ROLES.map((r) => config.backends[r]))];
  for (const kind of kinds) {
    if (kind === 'claude' || kind === 'codex') checks.push(...binaryChecks(kind, config, projectDir, deps));
    else if (kind === 'scripted') checks.push(...scriptedChecks(config, projectDir, deps));
    else if (deps.host !== 'vscode') {
      checks.push({
        id: `backend.${kind}.binary`,
        ok: false,
        severity: 'error',
        backend: kind,
        message: `backend '${kind}' runs only inside VS Code`,
        fix: `choose claude, codex or scripted for ${ROLES.filter((r) => config.backends[r] === kind).join(', ')} in ralph.config.json`,
        actions: [
          { id: 'choose-backend', label: 'Choose Backend' },
          { id: 'open-config', label: 'Open ralph.config.json' },
        ],
      });
    }
  }
  if (kinds.includes('claude') && config.backends.claude.permission_mode === 'bypassPermissions') {
    checks.push({
      id: 'claude.permission_mode',
      ok: false,
      severity: 'warning',
      backend: 'claude',
      message: "backends.claude.permission_mode is bypassPermissions: Claude Code's own checks of edits and commands are off",
      fix: 'use acceptEdits (the default)',
      actions: [{ id: 'open-config', label: 'Open ralph.config.json' }],
    });
  }
  const conf = confinementChecks(config, deps, projectDir);
  checks.push(...conf.checks);
  return {
    ok: !checks.some((c) => !c.ok && c.severity === 'error'),
    checks,
    confinement: conf.roles,
    unconfined: conf.roles.some((r) => r.kind === 'none'),
    optedIn: config.agents.unconfined,
  };
}

/** Thrown by a loop start whose preflight failed; carries the report for the host to show. */
export class PreflightFailedError extends Error {
  override readonly name = 'PreflightFailedError';
  constructor(readonly report: PreflightReport) {
    const failed = report.checks.filter((c) => !c.ok && c.severity === 'error');
    super(`cannot start agents: ${failed.map((c) => c.message).join('; ')}`);
  }
}

const MARK: Record<PreflightSeverity, string> = { error: 'FAIL', warning: 'WARN', info: 'ok  ' };

/** One line per check, failures first, with what to do: for `ralph doctor` and `ralph start`. */
export function formatPreflight(report: PreflightReport, options: { readonly all?: boolean } = {}): string {
  const rank = (c: PreflightCheck): number => (!c.ok && c.severity === 'error' ? 0 : c.severity === 'warning' ? 1 : 2);
  const shown = options.all === true ? report.checks : report.checks.filter((c) => rank(c) < 2);
  return [...shown]
    .sort((a, b) => rank(a) - rank(b))
    .map(
      (c) =>
        `${!c.ok && c.severity === 'error' ? MARK.error : c.severity === 'warning' ? MARK.warning : MARK.info} ${c.id}: ${c.message}${c.fix ? `\n       fix: ${c.fix}` : ''}`,
    )
    .join('\n');
}
