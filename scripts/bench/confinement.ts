// What confinement and the integrity check add per agent invocation (goal <= 100 ms), and
// the loop's harness overhead with and without them. Prints; never asserts.
//   1. bubblewrap: the scripted claude executable run in a Ralph worktree, unconfined and
//      inside bwrap (medians of N runs; the difference is bwrap's start-up and mounts).
//   2. the integrity check: one before + after snapshot pair around an invocation, with
//      confinement (git config, hooks, info, refs, ralph.config.json, .ralph/) and without
//      (plus every file of the checkout), on the sample project.
//   3. the sample loop (6 tasks, no model latency) unconfined vs in bubblewrap: wall time,
//      and the harness overhead (wall time with no agent and no gate running).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createScriptedBackend } from '../../src/agents/scriptedBackend';
import { detectConfinement, NO_CONFINEMENT, probeBwrap } from '../../src/agents/sandbox';
import type { Confinement } from '../../src/agents/sandbox';
import { agentScratchDir } from '../../src/git/repoCache';
import { ensureWorktree } from '../../src/git/worktrees';
import { IntegrityGuard } from '../../src/integrity/integrity';
import { ControlAdapter } from '../../src/loop/controlAdapter';
import { Loop } from '../../src/loop/loop';
import { JsonlMetrics } from '../../src/loop/metricsFile';
import {
  addTasks,
  createSampleProject,
  openSampleStore,
  plan,
  sampleSettings,
  script,
  writeScenario,
} from '../../test/int/loop/sampleProject';

const N = Number(process.env['RALPH_BENCH_N'] ?? 10);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function backendRuns(confinement: Confinement): Promise<number> {
  const p = createSampleProject();
  try {
    writeScenario(p, [{ name: 'x', turns: [{ tools: [{ tool: 'write', path: 'a.txt', content: 'a\n' }] }, { text: 'done' }] }]);
    const wt = await ensureWorktree(p.dir, { name: 'bench', branch: 'main' });
    const scratch = await agentScratchDir(p.dir, 'bench');
    const backend = createScriptedBackend({ scenario: p.scenarioFile, confinement });
    const times: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      const r = await backend.run({ prompt: 'x', cwd: wt.path, model: 'm', maxTurns: 5, timeoutMs: 60_000, scratchDir: scratch });
      if (r.status !== 'success') throw new Error(`run failed: ${JSON.stringify(r)}`);
      times.push(performance.now() - t0);
    }
    return median(times);
  } finally {
    rmSync(p.dir, { recursive: true, force: true });
  }
}

async function integrityPair(confined: boolean): Promise<{ ms: number; entries: number }> {
  const p = createSampleProject();
  try {
    const wt = await ensureWorktree(p.dir, { name: 'bench', branch: 'main' });
    const guard = new IntegrityGuard({
      projectDir: p.dir,
      ralphDir: p.ralphDir,
      targetBranch: 'main',
      confined,
      isRalphCommit: () => false,
      isRalphPatch: () => false,
    });
    const times: number[] = [];
    let entries = 0;
    for (let i = 0; i < N * 2; i++) {
      const t0 = performance.now();
      const token = await guard.before(wt.path, 'ralph/bench');
      const incident = await guard.after(token);
      times.push(performance.now() - t0);
      entries = token.before.size;
      if (incident !== null) throw new Error(`unexpected incident: ${incident.summary}`);
    }
    return { ms: median(times), entries };
  } finally {
    rmSync(p.dir, { recursive: true, force: true });
  }
}

async function loopRun(confinement: Confinement): Promise<{ wallMs: number; overheadMs: number; invocations: number; promoted: number }> {
  const p = createSampleProject();
  const store = await openSampleStore(p.ralphDir);
  try {
    const tasks = Array.from({ length: 6 }, (_, i) => ({
      id: `B-${i + 1}`,
      title: `F${i + 1}`,
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
    writeScenario(p, scripts);
    const settings = {
      ...sampleSettings({ periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 } }),
      agentsUnconfined: confinement.kind === 'none',
    };
    const backend = createScriptedBackend({ scenario: p.scenarioFile, graceMs: 1000, confinement });
    const loop = new Loop({
      projectDir: p.dir,
      settings,
      control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
      backends: { primary: backend, worker: backend, judge: backend },
      metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
      once: true,
    });
    let busy = 0;
    let active = 0;
    let since = Date.now();
    loop.events.on((e) => {
      if (e.type === 'agent.started' || e.type === 'gate.started') {
        if (active++ === 0) since = Date.now();
      }
      if (e.type === 'agent.finished' || (e.type === 'gate.finished' && e.gate !== 'forbidden_patterns')) {
        if (--active === 0) busy += Date.now() - since;
      }
    });
    const s = await loop.run();
    return { wallMs: s.wallMs, overheadMs: s.wallMs - busy, invocations: s.invocations, promoted: s.promoted };
  } finally {
    await store.close();
    rmSync(p.dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const probe = probeBwrap();
  console.log(
    `bubblewrap: ${probe.ok ? `${probe.path} ${probe.version ?? ''}, empty sandbox started in ${probe.startMs?.toFixed(1)} ms` : probe.error}`,
  );
  const bwrap = detectConfinement('scripted');
  if (bwrap.kind === 'bwrap') {
    // Alternated, so the machine's load drifts over both alike.
    const plainRuns: number[] = [];
    const confinedRuns: number[] = [];
    for (let i = 0; i < 3; i++) {
      plainRuns.push(await backendRuns(NO_CONFINEMENT));
      confinedRuns.push(await backendRuns(bwrap));
    }
    const plain = median(plainRuns);
    const confined = median(confinedRuns);
    console.log(
      `one scripted invocation (median of ${N}): unconfined ${plain.toFixed(0)} ms, in bwrap ${confined.toFixed(0)} ms -> bwrap adds ${(confined - plain).toFixed(0)} ms`,
    );
  }
  const ic = await integrityPair(true);
  const iu = await integrityPair(false);
  console.log(
    `integrity check per invocation (before + after, median of ${N * 2}): confined ${ic.ms.toFixed(1)} ms (${ic.entries} entries), unconfined ${iu.ms.toFixed(1)} ms (${iu.entries} entries, the checkout too)`,
  );
  const before = await loopRun(NO_CONFINEMENT);
  console.log(
    `loop, 6 tasks, unconfined:  wall ${before.wallMs} ms, harness overhead ${before.overheadMs} ms, ${before.invocations} invocations, ${before.promoted} promoted`,
  );
  if (bwrap.kind === 'bwrap') {
    const after = await loopRun(bwrap);
    console.log(
      `loop, 6 tasks, bubblewrap:  wall ${after.wallMs} ms, harness overhead ${after.overheadMs} ms, ${after.invocations} invocations, ${after.promoted} promoted`,
    );
    console.log(
      `  -> ${((after.wallMs - before.wallMs) / Math.max(1, after.invocations)).toFixed(0)} ms more wall time per invocation (goal <= 100 ms)`,
    );
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
