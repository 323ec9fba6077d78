// A small sample project for the loop's integration tests: a git repo with a Node "build"
// (syntax check of src/) and "test" (runs test/*.test.js) gate, a backlog of tasks in the
// event store, and a scenario for the scripted claude executable keyed by RALPH-KEY.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { decideAndAppend } from '../../../src/control/tasks';
import { controlContext } from '../../../src/control/context';
import { domainEvent } from '../../../src/domain/events';
import { validateConfig } from '../../../src/project/config';
import { settingsFromConfig } from '../../../src/loop/settings';
import type { LoopSettings } from '../../../src/loop/settings';
import { detectConfinement } from '../../../src/agents/sandbox';
import type { Confinement } from '../../../src/agents/sandbox';
import { createScriptedBackend } from '../../../src/agents/scriptedBackend';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { Loop } from '../../../src/loop/loop';
import type { LoopOptions } from '../../../src/loop/loop';
import type { LoopEvent } from '../../../src/loop/events';
import { JsonlMetrics } from '../../../src/loop/metricsFile';
import { git } from '../../kit/git';

export interface SampleProject {
  readonly dir: string;
  readonly ralphDir: string;
  readonly scenarioFile: string;
}

const BUILD = `const fs = require('fs'); const path = require('path');
function walk(d) { if (!fs.existsSync(d)) return []; return fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]); }
for (const f of walk('src').filter((f) => f.endsWith('.js'))) require(path.resolve(f));
console.log('build ok');
`;

const TEST = `const fs = require('fs'); const path = require('path');
let n = 0;
for (const f of fs.readdirSync('test').filter((f) => f.endsWith('.test.js')).sort()) { require(path.resolve('test', f)); n++; }
console.log(n + ' test files passed');
`;

export function createSampleProject(): SampleProject {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-loop-sample-'));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Sample User');
  git(dir, 'config', 'user.email', 'user@example.com');
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'test'));
  mkdirSync(join(dir, 'scripts'));
  writeFileSync(join(dir, 'scripts', 'build.js'), BUILD);
  writeFileSync(join(dir, 'scripts', 'test.js'), TEST);
  writeFileSync(join(dir, 'src', 'index.js'), "module.exports = { name: 'sample' };\n");
  writeFileSync(join(dir, 'test', 'index.test.js'), "require('assert').equal(require('../src/index.js').name, 'sample');\n");
  writeFileSync(join(dir, 'README.md'), '# Sample\n');
  writeFileSync(join(dir, '.gitignore'), '.ralph/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  const ralphDir = join(dir, '.ralph');
  mkdirSync(join(ralphDir, 'logs'), { recursive: true });
  writeFileSync(join(ralphDir, 'core.md'), '# Core\nSmall modules, tests beside them.\n');
  writeFileSync(join(ralphDir, 'GUARDRAILS.md'), '# Guardrails\n');
  writeFileSync(join(ralphDir, 'REFLECTIONS.md'), '# Reflections\n');
  return { dir, ralphDir, scenarioFile: join(ralphDir, 'scenario.json') };
}

export function sampleSettings(overrides: Record<string, unknown> = {}): LoopSettings {
  const r = validateConfig({
    name: 'sample',
    lang: 'generic',
    build: 'node scripts/build.js',
    test: 'node scripts/test.js',
    lint: '',
    forbidden_patterns: ['eval(', 'console.debug('],
    forbidden_exclude: ['test/**'],
    model: 'claude-sonnet-4-5-20250929',
    workers: { count: 1 },
    intervals: { primary: 1, worker: 1 },
    ...overrides,
  });
  if (!r.ok) throw r.error;
  return settingsFromConfig(r.value);
}

export async function openSampleStore(ralphDir: string): Promise<EventStore> {
  return openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, checkpointDebounceMs: 50 });
}

export interface SampleTask {
  readonly id: string;
  readonly title: string;
  readonly effort: 'S' | 'M' | 'L' | 'XL';
  readonly wave: number;
  readonly deps?: string;
  readonly source?: string;
}

export async function addTasks(store: EventStore, ralphDir: string, tasks: readonly SampleTask[]): Promise<void> {
  const ctx = controlContext(store, { ralphDir });
  await decideAndAppend(ctx, () => ({
    events: tasks.map((t) =>
      domainEvent('task.created', t.id, 'test', {
        title: t.title,
        source: t.source ?? 'ES:1',
        effort: t.effort,
        deps: t.deps ?? '-',
        wave: t.wave,
        provenance: 'spec',
      }),
    ),
    result: undefined,
  }));
}

type Tool = { tool: 'write'; path: string; content: string } | { tool: 'bash'; command: string };

/** A script: on prompts containing `RALPH-KEY: <key>`, run the tools, then answer `answer`. */
export function script(key: string, tools: Tool[], answer: unknown = 'done'): Record<string, unknown> {
  return {
    name: key,
    match: `RALPH-KEY: ${key}`,
    turns: [...(tools.length > 0 ? [{ tools }] : []), typeof answer === 'string' ? { text: answer } : { text: JSON.stringify(answer) }],
  };
}

export function writeScenario(p: SampleProject, scripts: Record<string, unknown>[]): void {
  writeFileSync(
    p.scenarioFile,
    JSON.stringify({ scripts: [...scripts, { name: 'fallback', turns: [{ text: 'nothing to do' }] }] }, null, 2),
  );
}

export function plan(taskId: string, steps: { description: string; files: string[] }[]): Record<string, unknown> {
  return {
    task_id: taskId,
    summary: `plan for ${taskId}`,
    steps: steps.map((s, i) => ({ id: i + 1, description: s.description, files: s.files, acceptance: 'tests pass' })),
    files: [...new Set(steps.flatMap((s) => s.files))],
  };
}

/**
 * A Loop over the sample project with the scripted claude executable for every role, and
 * the list of its events (RALPH_LOOP_DEBUG=1 prints them). `once` ends it when the backlog
 * is empty or blocked.
 */
export function scriptedLoop(
  p: SampleProject,
  store: EventStore,
  overrides: Record<string, unknown> = {},
  once = false,
  options: Pick<LoopOptions, 'inboxPollMs' | 'specs'> & { readonly confinement?: Confinement } = {},
): { loop: Loop; events: LoopEvent[] } {
  const settings = sampleSettings(overrides);
  const { confinement = detectConfinement('scripted'), ...loopOptions } = options;
  const backend = createScriptedBackend({ scenario: p.scenarioFile, graceMs: 1000, confinement });
  const loop = new Loop({
    projectDir: p.dir,
    settings,
    control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
    backends: { primary: backend, worker: backend, judge: backend },
    metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
    once,
    ...loopOptions,
  });
  const events: LoopEvent[] = [];
  const t0 = Date.now();
  loop.events.on((e) => {
    events.push(e);
    if (process.env['RALPH_LOOP_DEBUG'] && e.type !== 'gate.progress') console.log(Date.now() - t0, JSON.stringify(e).slice(0, 240));
  });
  startedThisTest.push({ loop, events });
  return { loop, events };
}

/** The loops scriptedLoop made for the running test: a failed test prints their trail. */
const startedThisTest: { loop: Loop; events: LoopEvent[] }[] = [];

/**
 * After each test: a failed one (a wait that timed out says nothing by itself) prints what
 * its loops did, and a loop it left running is stopped before the project goes.
 */
async function settleLoops(failed: boolean): Promise<void> {
  for (const { loop, events } of startedThisTest.splice(0)) {
    if (failed) {
      const trail = events.filter((e) => e.type !== 'gate.progress').slice(-60);
      console.error(`the loop's last ${trail.length} events:\n${trail.map((e) => `  ${JSON.stringify(e).slice(0, 400)}`).join('\n')}`);
    }
    if (loop.state !== 'idle' && loop.state !== 'stopped') await loop.stop('the test ended').catch(() => undefined);
  }
}

/**
 * Gives each test of the enclosing `describe` a fresh sample project and a writer store on
 * it (handed to `set`), closed and removed after the test.
 */
export function freshSampleProjectEachTest(set: (s: { p: SampleProject; store: EventStore }) => void): void {
  let current: { p: SampleProject; store: EventStore } | undefined;
  beforeEach(async () => {
    startedThisTest.length = 0;
    const p = createSampleProject();
    current = { p, store: await openSampleStore(p.ralphDir) };
    set(current);
  });
  afterEach(async function () {
    await settleLoops(this.currentTest?.state === 'failed');
    if (current === undefined) return;
    await current.store.close().catch(() => undefined);
    rmSync(current.p.dir, { recursive: true, force: true });
    current = undefined;
  });
}

/**
 * Runs `ralph start --once` in miniature in a child process (loopChild.ts: openLoopHost,
 * backends from the project's config) and SIGKILLs it once `killAt` says so for an event;
 * resolves with the events it printed and its pid. Rejects if it ends on its own first.
 */
export function runLoopChildUntil(
  dir: string,
  killAt: (e: LoopEvent) => boolean | Promise<boolean>,
  onEvent?: (e: LoopEvent) => void,
): Promise<{ seen: LoopEvent[]; pid: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(__dirname, 'loopChild.ts'), dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const seen: LoopEvent[] = [];
  let killing = false;
  const kill = (): void => {
    killing = true;
    child.kill('SIGKILL');
  };
  return new Promise((res, rej) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      let e: LoopEvent;
      try {
        e = JSON.parse(l) as LoopEvent;
      } catch {
        return;
      }
      seen.push(e);
      onEvent?.(e);
      if (killing) return;
      Promise.resolve(killAt(e)).then(
        (yes) => {
          if (yes && !killing) kill();
        },
        (err: unknown) => {
          kill();
          rej(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL'
        ? res({ seen, pid: child.pid ?? -1 })
        : rej(new Error(`the child ended on its own (${code}) before the kill point: ${JSON.stringify(seen.slice(-20))}`)),
    );
  });
}
