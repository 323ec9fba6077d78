// Harness overhead of the loop: a sample project (the integration tests' one) run to
// completion with the scripted claude executable; overhead = wall time during which no agent
// and no gate was running (harness work: claims, worktree resets, captures, promotions,
// events, store writes), as a share of the total (target < 5 %). Prints; never asserts.
//
// Runs with 0, 1 and 3 workers beside the primary: with no model latency at all (each
// "invocation" is ~0.5 s of Node start-up, so the share is an upper bound no real run
// reaches), and with a stated latency per model turn (`RALPH_BENCH_TURN_MS`, default 1500 ms;
// the seed's metrics show ~19 s per real invocation, so this is still a conservative figure).
// Each prints the bench's own count beside the loop summary's (src/loop/busyClock.ts), which
// must agree: with workers, agent time summed over agents exceeds the wall time.
// `RALPH_BENCH_WORKERS=1` (a comma list) runs only those worker counts, for side-by-side
// runs against an older tree; `RALPH_BENCH_EFFORT=S` lets workers take only S tasks (the
// configuration's default; S and M here by default, so that three workers have work). A
// run that does not promote every task fails the bench: its figures would time a loop that
// stopped early (no bubblewrap, a broken scenario). `RALPH_BENCH_CONFINE=0` runs agents and
// gates unconfined, to set the loop beside a tree that confined nothing: bubblewrap's own
// cost per start is what scripts/bench/confinement.ts measures.
// `RALPH_BENCH_TIMELINE=1` prints each agent, gate and patch event to stderr with the time
// it was emitted (`[ev @<monotonicMs>]`); with RALPH_GIT_TRACE=1 beside it (`[git @<start>
// <duration> ms]`), sorting stderr by that number gives the run's timeline.
import { rmSync } from 'node:fs';
import { gitCallCount } from '../../src/git/exec';
import { monotonicMs } from '../../src/shared/clock';
import {
  addTasks,
  createSampleProject,
  openSampleStore,
  plan,
  script,
  scriptedLoop,
  writeScenario,
} from '../../test/int/loop/sampleProject';
import { detectConfinement, NO_CONFINEMENT } from '../../src/agents/sandbox';
import type { Confinement } from '../../src/agents/sandbox';

const timeline = process.env['RALPH_BENCH_TIMELINE'] === '1';

interface RunNumbers {
  readonly tasks: number;
  readonly promoted: number;
  readonly invocations: number;
  readonly wallMs: number;
  readonly busyMs: number;
  readonly modelMs: number;
  readonly gateMs: number;
  readonly gitCalls: number;
  /** Gate runs by gate, and how agents' processes were confined. */
  readonly gateRuns: Readonly<Record<string, number>>;
  readonly confinement: string;
  /** The loop summary's own figures: the union of busy stretches, and per agent. */
  readonly summaryBusyMs: number;
  readonly agentBusyMs: Readonly<Record<string, number>>;
  /** The longest stretches with nothing but the harness running. */
  readonly longestGaps: readonly string[];
}

async function runOnce(turnMs: number, workers: number, effort: readonly ('S' | 'M')[], confinement: Confinement): Promise<RunNumbers> {
  const p = createSampleProject();
  const store = await openSampleStore(p.ralphDir);
  const n = 6;
  const tasks = Array.from({ length: n }, (_, i) => ({
    id: `B-${i + 1}`,
    title: `Feature ${i + 1}`,
    effort: (i % 2 === 0 ? 'M' : 'S') as 'M' | 'S',
    wave: 0,
  }));
  await addTasks(store, p.ralphDir, tasks);
  const scripts: Record<string, unknown>[] = [];
  for (const t of tasks) {
    const file = `src/f${t.id.slice(2)}.js`;
    const content = `module.exports = ${t.id.slice(2)};\n`;
    scripts.push(
      script(`plan/${t.id}/`, [], plan(t.id, [{ description: 'write', files: [file] }])),
      script(`implement/${t.id}/step-1/`, [{ tool: 'write', path: file, content }]),
      script(`worker/${t.id}/attempt-1/`, [{ tool: 'write', path: file, content }]),
    );
  }
  // The model's thinking time: every scripted turn waits `turnMs` before answering.
  const withLatency = scripts.map((sc) => ({
    ...sc,
    turns: (sc['turns'] as Record<string, unknown>[]).map((t) => ({ ...t, delayMs: turnMs })),
  }));
  writeScenario(p, withLatency);
  const { loop } = scriptedLoop(
    p,
    store,
    {
      periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 },
      workers: { count: workers, effort },
      // Unconfined on purpose (RALPH_BENCH_CONFINE=0): the loop refuses that unless told.
      ...(confinement.kind === 'none' ? { agents: { unconfined: true } } : {}),
    },
    true,
    { confinement },
  );
  // With parallel agents, model and gate time overlap; count the wall time during which
  // at least one agent or gate was busy, so overhead is what remains.
  let busy = 0;
  let active = 0;
  let since = Date.now();
  const gaps: { ms: number; label: string }[] = [];
  const enter = (label: string): void => {
    if (active++ === 0) {
      gaps.push({ ms: Date.now() - since, label: `before ${label}` });
      since = Date.now();
    }
  };
  const leave = (): void => {
    if (--active === 0) {
      busy += Date.now() - since;
      since = Date.now();
    }
  };
  const gateRuns: Record<string, number> = {};
  loop.events.on((e) => {
    if (timeline && /^(agent|gate|patch)\.(started|finished|queued|promoted)$/.test(e.type)) {
      const { type, ...rest } = e;
      process.stderr.write(`[ev @${monotonicMs().toFixed(0)}] ${type} ${JSON.stringify(rest).slice(0, 160)}\n`);
    }
    if (e.type === 'agent.started') enter(`${e.agent} ${e.phase} ${e.taskId ?? ''}`.trim());
    if (e.type === 'gate.started') {
      gateRuns[e.gate] = (gateRuns[e.gate] ?? 0) + 1;
      enter(`gate ${e.gate} ${e.taskId ?? ''}`.trim());
    }
    if (e.type === 'agent.finished' || (e.type === 'gate.finished' && e.gate !== 'forbidden_patterns')) leave();
  });
  const git0 = gitCallCount();
  const summary = await loop.run();
  gaps.push({ ms: Date.now() - since, label: 'at the end' });
  const gitCalls = gitCallCount() - git0;
  await store.close();
  rmSync(p.dir, { recursive: true, force: true });
  return {
    tasks: n,
    promoted: summary.promoted,
    invocations: summary.invocations,
    wallMs: summary.wallMs,
    busyMs: busy,
    modelMs: summary.modelMs,
    gateMs: summary.gateMs,
    gitCalls,
    gateRuns,
    confinement: confinement.kind,
    summaryBusyMs: summary.busyMs,
    agentBusyMs: summary.agentBusyMs,
    longestGaps: gaps
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 4)
      .map((g) => `${g.ms} ms ${g.label}`),
  };
}

function report(title: string, r: RunNumbers): void {
  if (r.promoted !== r.tasks) {
    console.error(`${title}: promoted ${r.promoted} of ${r.tasks} tasks (confinement: ${r.confinement}); its figures are not comparable`);
    process.exitCode = 1;
  }
  const overhead = r.wallMs - r.busyMs;
  console.log(`${title}`);
  console.log(`  tasks: ${r.tasks} (promoted ${r.promoted}), invocations: ${r.invocations}, git processes: ${r.gitCalls}`);
  console.log(`  wall ${r.wallMs} ms; model ${r.modelMs} ms + gates ${r.gateMs} ms (summed over agents); busy wall ${r.busyMs} ms`);
  const runs = Object.entries(r.gateRuns)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([g, n]) => `${g} ${n}`);
  console.log(`  gate runs: ${runs.join(', ') || 'none'}; agents and gates confined: ${r.confinement}`);
  console.log(
    `  harness overhead: ${overhead} ms = ${((100 * overhead) / r.wallMs).toFixed(1)} % of wall time (target < 5 %); ${(overhead / r.tasks).toFixed(0)} ms per task`,
  );
  const agents = Object.entries(r.agentBusyMs)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([a, ms]) => `${a} ${ms} ms (${((100 * ms) / r.wallMs).toFixed(0)} %)`);
  console.log(`  loop summary: some agent busy ${r.summaryBusyMs} ms; per agent: ${agents.join(', ')}`);
  console.log(`  longest harness-only stretches: ${r.longestGaps.join('; ')}`);
}

async function main(): Promise<void> {
  const turnMs = Number(process.env['RALPH_BENCH_TURN_MS'] ?? 1500);
  const only = process.env['RALPH_BENCH_WORKERS'];
  const counts = only === undefined ? [0, 1, 3] : only.split(',').map((w) => Number(w.trim()));
  if (counts.some((w) => !Number.isInteger(w) || w < 0))
    throw new Error(`RALPH_BENCH_WORKERS: expected worker counts such as "1" or "0,3", got "${only}"`);
  const effortList = (process.env['RALPH_BENCH_EFFORT'] ?? 'S,M').split(',').map((e) => e.trim());
  if (effortList.some((e) => e !== 'S' && e !== 'M'))
    throw new Error(`RALPH_BENCH_EFFORT: expected efforts such as "S" or "S,M", got "${effortList.join(',')}"`);
  const effort = effortList as ('S' | 'M')[];
  const confine = process.env['RALPH_BENCH_CONFINE'] ?? '1';
  if (confine !== '0' && confine !== '1') throw new Error(`RALPH_BENCH_CONFINE: expected 0 or 1, got "${confine}"`);
  const confinement = confine === '0' ? NO_CONFINEMENT : detectConfinement('scripted');
  for (const workers of counts) {
    report(
      `${workers} worker(s), no model latency (upper bound: scripted invocations of ~0.5 s)`,
      await runOnce(0, workers, effort, confinement),
    );
    report(
      `${workers} worker(s), model latency ${turnMs} ms per turn (real invocations take ~19 s in the seed's metrics)`,
      await runOnce(turnMs, workers, effort, confinement),
    );
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
