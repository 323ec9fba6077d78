// Harness overhead of the loop: a sample project (the integration tests' one) run to
// completion with the scripted claude executable; overhead = wall time minus the time spent
// inside agent invocations and gates, as a share of the total (target < 5 %). Prints; never
// asserts. With the scripted model an "invocation" is ~1 s of Node start-up, far shorter than a
// real model call, so the share printed here is an upper bound of what a real run sees.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createScriptedBackend } from '../../src/agents/scriptedBackend';
import { ControlAdapter } from '../../src/loop/controlAdapter';
import { Loop } from '../../src/loop/loop';
import { JsonlMetrics } from '../../src/loop/metricsFile';
import { addTasks, createSampleProject, openSampleStore, plan, sampleSettings, script, writeScenario } from '../../test/int/loop/sampleProject';

async function main(): Promise<void> {
  const p = createSampleProject();
  const store = await openSampleStore(p.ralphDir);
  const n = 6;
  const tasks = Array.from({ length: n }, (_, i) => ({ id: `B-${i + 1}`, title: `Feature ${i + 1}`, effort: (i % 2 === 0 ? 'M' : 'S') as 'M' | 'S', wave: 0 }));
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
  const settings = sampleSettings({ periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 } });
  const backend = createScriptedBackend({ scenario: p.scenarioFile });
  const loop = new Loop({
    projectDir: p.dir,
    settings,
    control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
    backends: { primary: backend, worker: backend, judge: backend },
    metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
    once: true,
  });
  // With parallel agents, model and gate time overlap; count the wall time during which
  // at least one agent or gate was busy, so overhead is what remains.
  let busy = 0;
  let busySince = 0;
  let active = 0;
  const enter = (): void => {
    if (active++ === 0) busySince = Date.now();
  };
  const leave = (): void => {
    if (--active === 0) busy += Date.now() - busySince;
  };
  loop.events.on((e) => {
    if (e.type === 'agent.started' || e.type === 'gate.started') enter();
    if (e.type === 'agent.finished' || (e.type === 'gate.finished' && e.gate !== 'forbidden_patterns')) leave();
  });
  const summary = await loop.run();
  await store.close();
  rmSync(p.dir, { recursive: true, force: true });
  const overhead = summary.wallMs - busy;
  console.log(`tasks: ${n} (promoted ${summary.promoted}), invocations: ${summary.invocations}, iterations: ${summary.iterations}`);
  console.log(`wall ${summary.wallMs} ms; model ${summary.modelMs} ms + gates ${summary.gateMs} ms (summed over agents); busy wall ${busy} ms`);
  console.log(`harness overhead: ${overhead} ms = ${((100 * overhead) / summary.wallMs).toFixed(1)} % of wall time (target < 5 %)`);
  console.log(`per task: ${(overhead / n).toFixed(0)} ms of harness work (claim, worktree reset, capture, classify, plumbing promotion, events)`);
  // The seed's metrics example shows ~19 s per real invocation; the scripted one takes ~1 s.
  const realMs = 19_000;
  const perInvocation = summary.invocations > 0 ? summary.modelMs / summary.invocations : 0;
  const projectedWall = summary.wallMs + summary.invocations * Math.max(0, realMs - perInvocation);
  console.log(
    `projection with ${realMs / 1000} s per invocation (same gates, same harness work): overhead ${((100 * overhead) / projectedWall).toFixed(1)} % (scripted invocation here: ${perInvocation.toFixed(0)} ms)`,
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
