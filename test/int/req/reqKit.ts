// REQ mode's integration kit: a sample project (the loop's, plus a specification.yaml, a
// test-utilities module and a real coverage script), the ReqEngine on the real claude CLI
// against the scripted model server, and the status contract checked after every event the
// run appends (and through `ralph req status --json` at the end).
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { detectConfinement } from '../../../src/agents/sandbox';
import { runCli } from '../../../src/cli/run';
import { reqStatusProblems } from '../../../src/domain/reqStatus';
import type { ReqStatusReport } from '../../../src/domain/reqStatus';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { validateConfig } from '../../../src/project/config';
import { ReqEngine } from '../../../src/req/engine';
import { reqSettingsFromConfig } from '../../../src/req/settings';
import type { ReqSettings } from '../../../src/req/settings';
import { settingsFromConfig } from '../../../src/loop/settings';
import type { EventStore } from '../../../src/store/types';
import { claudeSandbox, ensureAgentClis } from '../../kit/agentEnv';
import type { Sandbox } from '../../kit/agentEnv';
import { startModelServer } from '../../kit/modelServer';
import type { ModelServer } from '../../kit/modelServer';
import { createSampleProject, openSampleStore } from '../loop/sampleProject';
import { git } from '../../kit/git';
import type { SampleProject } from '../loop/sampleProject';

/** Line coverage of src/*.js: exported functions whose name a test file mentions, over all exported functions. */
const COVERAGE = `const fs = require('fs'); const path = require('path');
require('./test.js');
const names = [];
for (const f of fs.readdirSync('src').filter((f) => f.endsWith('.js'))) {
  const text = fs.readFileSync(path.join('src', f), 'utf8');
  for (const m of text.matchAll(/exports\\.([A-Za-z_]\\w*)\\s*=/g)) names.push(m[1]);
}
const tests = fs.readdirSync('test').filter((f) => f.endsWith('.test.js')).map((f) => fs.readFileSync(path.join('test', f), 'utf8')).join('\\n');
const covered = names.filter((n) => new RegExp('\\\\b' + n + '\\\\b').test(tests)).length;
const pct = names.length === 0 ? 100 : Math.round((covered * 1000) / names.length) / 10;
console.log('Lines        : ' + pct + '% ( ' + covered + '/' + names.length + ' )');
`;

export const TEST_UTILS = `// Shared test helpers.
exports.approx = (a, b) => Math.abs(a - b) < 1e-9;
exports.fixture = (name) => ({ name });
`;

export function specYaml(reqs: readonly { id: string; title: string; deps?: string[]; priority?: number; acs?: string[] }[]): string {
  const lines = ['specification:', '  requirements:'];
  for (const r of reqs) {
    lines.push(`    - id: ${r.id}`, `      description: "${r.title}"`);
    lines.push('      acceptance_criteria:');
    (r.acs ?? [`${r.title} works`]).forEach((c, i) =>
      lines.push(`        - id: AC-${r.id.slice(4)}-${String(i + 1).padStart(2, '0')}`, `          criteria: "${c}"`),
    );
    lines.push(`      priority: ${r.priority ?? 1}`);
    if (r.deps && r.deps.length > 0) lines.push(`      depends_on: [${r.deps.join(', ')}]`);
    lines.push('      status: pending');
  }
  return `${lines.join('\n')}\n`;
}

/** Adds REQ mode's files to a sample project and commits them. */
export function addReqFiles(p: SampleProject, spec: string, options: { testUtils?: boolean; agentsMd?: string } = {}): void {
  writeFileSync(join(p.dir, 'specification.yaml'), spec);
  writeFileSync(join(p.dir, 'scripts', 'coverage.js'), COVERAGE);
  if (options.testUtils !== false) writeFileSync(join(p.dir, 'test', 'test-utils.js'), TEST_UTILS);
  writeFileSync(join(p.dir, 'AGENTS.md'), options.agentsMd ?? '# AGENTS.md\n\nUse CommonJS modules in src/.\n');
  git(p.dir, 'add', '-A');
  git(p.dir, 'commit', '-q', '-m', 'REQ mode files');
}

export function reqConfig(overrides: Record<string, unknown> = {}): { settings: ReturnType<typeof settingsFromConfig>; config: unknown } {
  const r = validateConfig({
    name: 'sample',
    lang: 'generic',
    build: 'node scripts/build.js',
    test: 'node scripts/test.js',
    lint: '',
    forbidden_patterns: ['eval('],
    forbidden_exclude: ['test/**'],
    model: 'claude-sonnet-4-5-20250929',
    ...overrides,
    req: { coverage_command: 'node scripts/coverage.js', round_timeout: 120, ...((overrides['req'] as object | undefined) ?? {}) },
  });
  if (!r.ok) throw r.error;
  return { settings: settingsFromConfig(r.value), config: r.value };
}

/** A write of a source file and its test, as the scripted model's tool calls. */
export function writes(files: Record<string, string>): { tool: 'write'; path: string; content: string }[] {
  return Object.entries(files).map(([path, content]) => ({ tool: 'write' as const, path, content }));
}

export function reqScript(key: string, tools: unknown[], answer: unknown = { summary: 'done', learnings: [] }): Record<string, unknown> {
  return {
    name: key,
    match: `RALPH-KEY: ${key}`,
    turns: [...(tools.length > 0 ? [{ tools }] : []), { text: `Done.\n\n\`\`\`json\n${JSON.stringify(answer)}\n\`\`\`` }],
  };
}

export interface ReqRun {
  readonly engine: ReqEngine;
  readonly server: ModelServer;
  readonly sandbox: Sandbox;
  /** Status objects after every req.* append, each checked against the invariants. */
  readonly statuses: ReqStatusReport[];
  readonly lines: string[];
  dispose(): Promise<void>;
}

export async function startReqRun(
  p: SampleProject,
  store: EventStore,
  claudeBin: string,
  scripts: Record<string, unknown>[],
  options: { overrides?: Record<string, unknown>; req?: Partial<ReqSettings>; signal?: AbortSignal } = {},
): Promise<ReqRun> {
  const server = await startModelServer({ scripts: [...scripts, { name: 'fallback', turns: [{ text: 'nothing to do' }] }] });
  const sandbox = claudeSandbox(server.url);
  const { settings, config } = reqConfig(options.overrides);
  const req = { ...reqSettingsFromConfig(p.dir, config as Parameters<typeof reqSettingsFromConfig>[1]), ...options.req };
  const backend = createClaudeBackend({
    command: claudeBin,
    baseEnv: {},
    permissionMode: 'bypassPermissions',
    // Confined as the loop confines it (bubblewrap here): the loop refuses an unconfined agent.
    confinement: detectConfinement('claude'),
  });
  const lines: string[] = [];
  const engine = new ReqEngine({
    projectDir: p.dir,
    store,
    control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
    backend,
    settings,
    req,
    agentEnv: sandbox.env,
    ...(options.signal ? { signal: options.signal } : {}),
    onLine: (l) => {
      lines.push(l);
      if (process.env['RALPH_REQ_DEBUG']) console.log(l);
    },
  });
  const statuses: ReqStatusReport[] = [];
  let disposed = false;
  const sub = store.onDidAppend((events) => {
    if (!events.some((e) => e.event_type.startsWith('req.') && e.event_type !== 'req.run_started')) return;
    try {
      const s = engine.status();
      statuses.push(s);
    } catch {
      // before run() loaded the specification
    }
  });
  return {
    engine,
    server,
    sandbox,
    statuses,
    lines,
    dispose: async () => {
      if (disposed) return;
      disposed = true;
      sub.dispose();
      await server.close();
      sandbox.cleanup();
    },
  };
}

/** What each REQ test gets: its own sample project, the store open as the writer, and runs on the real claude CLI. */
export interface ReqTest {
  readonly p: SampleProject;
  readonly store: EventStore;
  /** Starts a run (model server, sandbox, engine) that the kit disposes after the test. */
  start(scripts: Record<string, unknown>[], options?: Parameters<typeof startReqRun>[4]): Promise<ReqRun>;
}

/**
 * Registers the set-up every REQ integration test shares in the calling describe(): the
 * pinned claude CLI once; per test a fresh sample project with its store; afterwards every
 * run disposed, the store closed and the project removed.
 */
export function useReqTest(): ReqTest {
  let claudeBin = '';
  let project: SampleProject | undefined;
  let opened: EventStore | undefined;
  const runs: ReqRun[] = [];
  before(() => {
    claudeBin = ensureAgentClis().claude;
  });
  beforeEach(async () => {
    project = createSampleProject();
    opened = await openSampleStore(project.ralphDir);
  });
  afterEach(async () => {
    for (const r of runs.splice(0)) await r.dispose();
    await opened?.close().catch(() => undefined);
    if (project) rmSync(project.dir, { recursive: true, force: true });
    project = undefined;
    opened = undefined;
  });
  const need = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`useReqTest: ${what} is only there inside a test`);
    return v;
  };
  return {
    get p() {
      return need(project, 'the project');
    },
    get store() {
      return need(opened, 'the store');
    },
    async start(scripts, options) {
      const run = await startReqRun(need(project, 'the project'), need(opened, 'the store'), claudeBin, scripts, options);
      runs.push(run);
      return run;
    },
  };
}

/** The contract held after every step, and `ralph req status --json` (an observer beside the writer) agrees with the engine. */
export async function assertContract(run: ReqRun, dir: string): Promise<ReqStatusReport> {
  assert.ok(run.statuses.length > 0, 'statuses were observed');
  for (const s of run.statuses) assert.deepEqual(reqStatusProblems(s), [], JSON.stringify(s.requirements));
  let out = '';
  let err = '';
  const code = await runCli(['--dir', dir, 'req', 'status', '--json'], {
    io: { out: (t) => void (out += t), err: (t) => void (err += t) },
  });
  assert.equal(code, 0, err);
  const cli = JSON.parse(out) as ReqStatusReport;
  assert.deepEqual(reqStatusProblems(cli), []);
  const mine = run.engine.status();
  assert.deepEqual(cli.requirements, mine.requirements);
  assert.equal(cli.status, mine.status);
  assert.deepEqual(cli.order, mine.order);
  return cli;
}

export function subjects(dir: string): string[] {
  return git(dir, 'log', '--format=%s', 'main').split('\n');
}
