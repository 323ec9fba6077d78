// A failed evolve_goals never marks a spec read: the agent CLI missing, a CLI crashing
// mid-stream, an answer that is not valid. Each failure is an event with its reason
// (`spec.evolve_failed`, shown by the monitor's event list), a warning line (the CLI's
// output, VS Code's Output and the monitor's log), and a retry after a back-off; only a
// valid answer marks the specs read (`spec.evolved`, read_hash in .ralph/specs.json).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CALCULATOR_BASE_FILES, createCalculatorProject } from '../../../src/cli/demo';
import { openLoopHost } from '../../../src/loop/host';
import { detectConfinement } from '../../../src/agents/sandbox';
import { createScriptedBackend } from '../../../src/agents/scriptedBackend';
import type { AgentBackend } from '../../../src/agents/types';
import type { LoopEvent } from '../../../src/loop/events';
import { openStore } from '../../../src/store/sqlJsStore';
import type { StoredEvent } from '../../../src/store/types';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { count } from '../kit/tally';

const ROOT = resolve(__dirname, '../../..');
const SCRIPTED = join(ROOT, 'src/agents/scripted/scriptedClaude.mjs');
const SPEC = 'specs/calc.md';

const evolveAnswer = {
  specs_read: [SPEC],
  summary: 'One requirement, one task.',
  proposals: [
    {
      proposal_type: 'new_task',
      confidence: 0.9,
      task: { id: 'CALC-1', title: 'Addition', source: 'CALC-1', effort: 'S', wave: 0, deps: '-' },
      rationale: 'specs/calc.md CALC-1',
    },
  ],
};

function scenario(evolveTurns: Record<string, unknown>[]): string {
  return JSON.stringify({
    scripts: [
      { name: 'evolve', match: 'RALPH-KEY: evolve_goals/', turns: evolveTurns },
      { name: 'fallback', turns: [{ text: 'nothing to do' }] },
    ],
  });
}

async function project(config: Record<string, unknown>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-evolve-fail-'));
  return createCalculatorProject(dir, {
    files: { ...CALCULATOR_BASE_FILES, [SPEC]: '# Calc\n\n## CALC-1 Addition\n`add(a, b)` returns the sum.\n' },
    config: { workers: { count: 0 }, ...config },
    ralphFiles: { '.ralph/scenario.json': scenario([{ text: JSON.stringify(evolveAnswer) }]) },
  });
}

function readHash(dir: string): string | null | undefined {
  try {
    const state = JSON.parse(readFileSync(join(dir, '.ralph/specs.json'), 'utf8')) as {
      specs: Record<string, { read_hash: string | null }>;
    };
    return state.specs[SPEC]?.read_hash;
  } catch {
    return undefined; // never written: never read either
  }
}

async function specEvents(dir: string): Promise<StoredEvent[]> {
  const store = await openStore({ ralphDir: join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.events({ entityType: 'spec' });
  } finally {
    await store.close();
  }
}

async function tasks(dir: string): Promise<string[]> {
  const store = await openStore({ ralphDir: join(dir, '.ralph'), mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.all<{ task_id: string }>('SELECT task_id FROM task_view ORDER BY task_id').map((r) => r.task_id);
  } finally {
    await store.close();
  }
}

describe('faults: a failed evolve_goals leaves its specs unread and is retried', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('given the agent CLI missing, then `ralph start --once` refuses before any agent starts and the spec stays unread; with the CLI back the next start reads it', async () => {
    count('faultsInjected');
    const missing = '/nonexistent/bin/claude';
    const dir = await project({
      backends: { primary: 'claude', worker: 'claude', judge: 'claude', claude: { binary: missing } },
    });
    dirs.push(dir);
    // The preflight finds it first: nothing runs, nothing is recorded.
    const cli = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), '--dir', dir, 'start', '--once'], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.equal(cli.status, 1, `${cli.stdout}${cli.stderr}`);
    assert.match(cli.stderr, /agents cannot start:[\s\S]*\/nonexistent\/bin\/claude` is not installed/);
    assert.equal(readHash(dir) ?? null, null, 'the spec is not marked read');
    assert.deepEqual(await specEvents(dir), []);

    // The CLI is back (the scripted executable): the next run reads the spec and makes its task.
    const host = await openLoopHost({
      projectDir: dir,
      backends: scriptedBackends(dir),
    });
    try {
      const accepted = host.loop.events.next((e) => e.type === 'log' && /^evolve_goals: 1 accepted/.test(e.message));
      await host.loop.start();
      await accepted;
      await host.loop.stop('test: evolve done');
    } finally {
      await host.close();
    }
    assert.match(readHash(dir) ?? '', /^[0-9a-f]{64}$/, 'marked read after the valid answer');
    assert.deepEqual(await tasks(dir), ['CALC-1']);
    const types = (await specEvents(dir)).map((e) => e.event_type);
    assert.deepEqual(types, ['spec.evolved']);
  });

  it('given a crash mid-stream, then an answer that is not valid, then a valid one, then one run retries after each back-off and only the last marks the spec read', async () => {
    count('faultsInjected', 2);
    const dir = await project({
      backends: { primary: 'scripted', worker: 'scripted', judge: 'scripted', scripted: { scenario: '.ralph/scenario.json' } },
    });
    dirs.push(dir);
    const scenarioFile = join(dir, '.ralph/scenario.json');
    writeFileSync(scenarioFile, scenario([{ text: '{"specs_read": ["specs/c', crash: { signal: 'SIGSEGV' } }]));
    const host = await openLoopHost({ projectDir: dir, settings: { evolveRetry: { baseMs: 300, maxMs: 1000 } } });
    const failures: { message: string; readHash: string | null | undefined; at: number }[] = [];
    const started: number[] = [];
    host.loop.events.on((e: LoopEvent) => {
      if (e.type === 'agent.started' && e.phase === 'evolve_goals') started.push(Date.now());
      if (e.type === 'log' && e.message.startsWith('evolve_goals failed')) {
        failures.push({ message: e.message, readHash: readHash(dir), at: Date.now() });
        // The next attempt gets the next misbehaviour: an answer that is not valid, then a valid one.
        writeFileSync(
          scenarioFile,
          failures.length === 1
            ? scenario([{ text: '{"specs_read": "all of them", "proposals": 3}' }])
            : scenario([{ text: JSON.stringify(evolveAnswer) }]),
        );
      }
    });
    try {
      const accepted = host.loop.events.next((e) => e.type === 'log' && /^evolve_goals: 1 accepted/.test(e.message));
      await host.loop.start();
      await accepted;
      await host.loop.stop('test: evolve done');
    } finally {
      await host.close();
    }
    assert.equal(failures.length, 2, JSON.stringify(failures));
    assert.match(
      failures[0]?.message ?? '',
      /^evolve_goals failed \(attempt 1\): the agent crashed.*; specs\/calc\.md stay unread; next attempt in 300 ms$/,
    );
    assert.match(failures[1]?.message ?? '', /^evolve_goals failed \(attempt 2\): its answer is not valid: .*specs_read/);
    assert.deepEqual(
      failures.map((f) => f.readHash ?? null),
      [null, null],
      'unread after each failure',
    );
    assert.equal(started.length, 3);
    // Each retry waited out its back-off (300 ms, then 600 ms), never sooner.
    assert.ok((started[1] ?? 0) - (failures[0]?.at ?? 0) >= 300, `${(started[1] ?? 0) - (failures[0]?.at ?? 0)} ms`);
    assert.ok((started[2] ?? 0) - (failures[1]?.at ?? 0) >= 600, `${(started[2] ?? 0) - (failures[1]?.at ?? 0)} ms`);
    assert.match(readHash(dir) ?? '', /^[0-9a-f]{64}$/);
    const events = await specEvents(dir);
    assert.deepEqual(
      events.map((e) => [e.event_type, e.payload['attempt'] ?? null]),
      [
        ['spec.evolve_failed', 1],
        ['spec.evolve_failed', 2],
        ['spec.evolved', null],
      ],
    );
    assert.deepEqual(await tasks(dir), ['CALC-1']);
  });
});

function scriptedBackends(dir: string): Record<'primary' | 'worker' | 'judge', AgentBackend> {
  const b = createScriptedBackend({
    scenario: join(dir, '.ralph/scenario.json'),
    scriptPath: SCRIPTED,
    confinement: detectConfinement('scripted'),
  });
  return { primary: b, worker: b, judge: b };
}
