// The agent CLI misbehaving under a real loop run: a crash mid-stream, exit 0 without a
// result, binary garbage and 20 MB of output (the scripted claude executable, where the
// output is the point), a 529 storm, a model that never answers and a budget overrun (the
// real claude CLI against the scripted model server, where the CLI's own retries, timeout
// handling and budget stop are the point). Each must end with the right status, leave no
// process behind, and the task must be retried by policy and finish; output junk must not
// break the run at all.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { importBacklog } from '../../../src/control/derived';
import { detectConfinement } from '../../../src/agents/sandbox';
import type { AgentStatus } from '../../../src/agents/types';
import { CALCULATOR_BASE_FILES, createCalculatorProject } from '../../../src/cli/demo';
import type { LoopEvent } from '../../../src/loop/events';
import { openLoopHost } from '../../../src/loop/host';
import { claudeSandbox, ensureAgentClis, processesIn } from '../../kit/agentEnv';
import { startModelServer } from '../../kit/modelServer';
import { count } from '../kit/tally';

interface Case {
  readonly id: string;
  /** The first plan turn: the misbehaviour. */
  readonly bad: Record<string, unknown>;
  /** The status the misbehaving invocation must end with. */
  readonly status: AgentStatus;
  /** Whether the junk run still answered (garbage around a valid answer). */
  readonly answers?: boolean;
}

const file = (id: string): string => `src/${id.toLowerCase().replace(/[^a-z0-9]/g, '')}.js`;
const plan = (id: string): string =>
  JSON.stringify({
    task_id: id,
    summary: `plan for ${id}`,
    steps: [{ id: 1, description: `write ${file(id)}`, files: [file(id)], acceptance: 'the build passes' }],
    files: [file(id)],
  });

/** The scenario: each task's plan misbehaves until it is healed, then the task is easy. */
function scenario(cases: readonly Case[], healed: ReadonlySet<string>): Record<string, unknown> {
  const scripts: Record<string, unknown>[] = [];
  for (const c of cases) {
    const good = [{ text: plan(c.id) }];
    scripts.push(
      { name: `plan ${c.id}`, match: `RALPH-KEY: plan/${c.id}/`, turns: healed.has(c.id) ? good : [c.bad] },
      {
        name: `implement ${c.id}`,
        match: `RALPH-KEY: implement/${c.id}/step-1/`,
        turns: [{ tools: [{ tool: 'write', path: file(c.id), content: `module.exports = '${c.id}';\n` }] }, { text: 'written' }],
      },
      {
        name: `reflect ${c.id}`,
        match: `RALPH-KEY: reflect/${c.id}/`,
        turns: [
          {
            text: JSON.stringify({
              class: 'transient',
              diagnosis: 'the agent run failed',
              lesson: 'retry it',
              decision: 'retry',
              guardrail: null,
            }),
          },
        ],
      },
    );
  }
  scripts.push({ name: 'anything else', turns: [{ text: 'Nothing to change.' }] });
  return { scripts };
}

async function project(cases: readonly Case[], config: Record<string, unknown>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-misbehave-'));
  await createCalculatorProject(dir, {
    files: { ...CALCULATOR_BASE_FILES },
    config: { workers: { count: 0 }, intervals: { primary: 0, worker: 0 }, ...config },
    ralphFiles: {
      '.ralph/BACKLOG.md': `# BACKLOG\n\n## Wave 0: Critical Fixes & Foundation\n\n| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n${cases.map((c) => `| ${c.id} | pending | ${c.id} | spec | M | - |`).join('\n')}\n`,
    },
  });
  return dir;
}

interface Outcome {
  readonly events: LoopEvent[];
  readonly status: Record<string, string>;
  readonly firstPlan: Map<string, AgentStatus>;
}

async function runLoop(
  dir: string,
  cases: readonly Case[],
  heal: (healed: Set<string>) => void,
  options: Parameters<typeof openLoopHost>[0],
): Promise<Outcome> {
  const host = await openLoopHost(options);
  const healed = new Set<string>();
  const events: LoopEvent[] = [];
  const firstPlan = new Map<string, AgentStatus>();
  host.loop.events.on((e) => {
    if (e.type === 'gate.progress') return;
    events.push(e);
    if (e.type === 'agent.finished' && e.phase === 'plan' && e.taskId !== null && !firstPlan.has(e.taskId)) {
      firstPlan.set(e.taskId, e.status);
      // The next attempt finds a well-behaved agent.
      if (cases.some((c) => c.id === e.taskId)) {
        healed.add(e.taskId);
        heal(healed);
      }
    }
  });
  try {
    // BACKLOG.md rows become tasks as `ralph init` would import them.
    await importBacklog(host.control.ctx);
    await host.loop.run();
    const status = Object.fromEntries(
      host.store.all<{ task_id: string; status: string }>('SELECT task_id, status FROM task_view').map((r) => [r.task_id, r.status]),
    );
    return { events, status, firstPlan };
  } finally {
    await host.close();
  }
}

function checkOutcome(dir: string, cases: readonly Case[], o: Outcome): void {
  const log = o.events.filter((e) => e.type !== 'gate.started' && e.type !== 'gate.finished').slice(-40);
  for (const c of cases) {
    assert.equal(o.firstPlan.get(c.id), c.status, `${c.id}: first plan run's status\n${JSON.stringify(log, null, 1)}`);
    assert.equal(o.status[c.id], 'done', `${c.id} finished after the retry policy\n${JSON.stringify(log, null, 1)}`);
    const plans = o.events.filter((e) => e.type === 'agent.finished' && e.phase === 'plan' && e.taskId === c.id).length;
    assert.equal(plans, c.answers === true ? 1 : 2, `${c.id}: ${c.answers === true ? 'no retry needed' : 'one retry'}`);
  }
  const cache = process.env['RALPH_CACHE_DIR'];
  const left = [...processesIn(dir), ...(cache ? processesIn(cache) : [])];
  count('processesLeaked', left.length);
  assert.deepEqual(left, [], 'no agent or gate process left behind');
}

describe('faults: agent CLI misbehaviour in a loop run', function () {
  this.timeout(600_000);
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('given the scripted claude crashing mid-stream, exiting 0 without a result, and printing binary garbage and 20 MB around an answer, then crashed, crashed, success, success; retried by policy; nothing left running', async () => {
    const cases: Case[] = [
      { id: 'T-CRASH', bad: { text: '{"task_id": "T-CR', crash: { signal: 'SIGSEGV' } }, status: 'crashed' },
      { id: 'T-NORESULT', bad: { text: 'thinking…', noResult: true }, status: 'crashed' },
      {
        id: 'T-BINARY',
        bad: { text: plan('T-BINARY'), garbage: { lines: 2000, bytesPerLine: 512, binary: true } },
        status: 'success',
        answers: true,
      },
      {
        id: 'T-HUGE',
        bad: { text: plan('T-HUGE'), garbage: { lines: 320, bytesPerLine: 65_536, binary: false } },
        status: 'success',
        answers: true,
      },
    ];
    count('faultsInjected', cases.length);
    const dir = await project(cases, {
      backends: { primary: 'scripted', worker: 'scripted', judge: 'scripted', scripted: { scenario: '.ralph/misbehave.json' } },
    });
    dirs.push(dir);
    const scenarioFile = join(dir, '.ralph/misbehave.json');
    writeFileSync(scenarioFile, JSON.stringify(scenario(cases, new Set())));
    const o = await runLoop(dir, cases, (healed) => writeFileSync(scenarioFile, JSON.stringify(scenario(cases, healed))), {
      projectDir: dir,
      once: true,
    });
    checkOutcome(dir, cases, o);
  });

  it('given the real claude CLI meeting a 529 storm, a model that never answers, and a turn over the invocation budget, then error, cancelled (timeout), budget; retried by policy; nothing left running', async function () {
    this.timeout(900_000);
    const claude = ensureAgentClis().claude;
    const cases: Case[] = [
      { id: 'T-529', bad: { error: { status: 529, message: 'Overloaded' } }, status: 'error' },
      { id: 'T-HANG', bad: { hang: true }, status: 'cancelled' },
      { id: 'T-BUDGET', bad: { text: plan('T-BUDGET'), usage: { input_tokens: 2_000_000, output_tokens: 10 } }, status: 'budget' },
    ];
    count('faultsInjected', cases.length);
    const server = await startModelServer(scenario(cases, new Set()));
    const sandbox = claudeSandbox(server.url);
    try {
      const dir = await project(cases, { budgets: { primary: 0.5 }, limits: { invocation_timeout: 15 } });
      dirs.push(dir);
      // Confined as the loop confines it (bubblewrap here): the loop refuses an unconfined agent.
      const agent = createClaudeBackend({ command: claude, permissionMode: 'acceptEdits', confinement: detectConfinement('claude') });
      const o = await runLoop(dir, cases, (healed) => server.setScenario(scenario(cases, healed)), {
        projectDir: dir,
        once: true,
        backends: { primary: agent, worker: agent, judge: agent },
        agentEnv: sandbox.env,
      });
      checkOutcome(dir, cases, o);
      const hang = o.events.find((e) => e.type === 'agent.finished' && e.taskId === 'T-HANG');
      assert.ok(hang && hang.type === 'agent.finished' && hang.durationMs >= 15_000, 'the hang ended by the invocation timeout');
    } finally {
      await server.close();
      sandbox.cleanup();
    }
  });
});
