// Team mode with the real processes: a backlog of TASKS (50) tasks on a real PostgreSQL store
// (a throwaway cluster) and a bare git remote, worked by 1, 3 and 6 `ralph worker` processes
// (the built CLI, each in its own clone) and promoted by one `ralph start --once` (the
// elected promoter, in a clone of its own). The agents are the real claude CLI, confined by
// the product's sandbox, against the scripted model server (MODEL_MS held back on each
// answer's first turn); the gates are the sample project's real build and test commands.
// Prints tasks per minute and where a task's time went, from the events: the model (the
// agent's invocation), the gates and hand-over (agent finished → patch queued: gates, the
// commit, the push of its ref) and the promotion queue (patch.queued → patch.promoted: the
// promoter's fetch, re-verification on a moved tip, push), with the machine's load, which
// these numbers depend on. Each run stops after CAP_S seconds (the rate is of what was done
// by then), so the three runs stay within about six minutes on a small machine.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startModelServer, type ModelServer } from '../../src/agents/scripted/modelServer';
import { claudeSandbox } from '../../src/agents/scripted/sandbox';
import { domainEvent, toNewEvent } from '../../src/domain/events';
import { openPgStore } from '../../src/store/postgres/pgStore';
import { TEAM_PROJECTIONS } from '../../src/team/teamHost';
import { ensureAgentClis } from '../../test/kit/agentEnv';
import { startPgCluster } from '../../test/kit/pgCluster';
import { createSampleProject, script } from '../../test/int/loop/sampleProject';
import { git } from '../../test/kit/git';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const TASKS = Number(process.env['BENCH_TEAM_TASKS'] ?? 50);
const MODEL_MS = Number(process.env['BENCH_MODEL_MS'] ?? 500);
const WORKERS = (process.env['BENCH_TEAM_WORKERS'] ?? '1,3,6').split(',').map(Number);
const CAP_S = Number(process.env['BENCH_TEAM_CAP_S'] ?? 100);
const ids = Array.from({ length: TASKS }, (_, i) => `T-${String(i + 1).padStart(2, '0')}`);

const load = (): string =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ')} on ${os.cpus().length} cores`;

function ralph(
  cwd: string,
  env: NodeJS.ProcessEnv,
  args: string[],
): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, '--dir', cwd, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

async function run(url: string, dir: string, workers: number, server: ModelServer, claude: string): Promise<void> {
  const sandbox = claudeSandbox(server.url);
  try {
    const seed = createSampleProject();
    const config = {
      name: 'team-bench',
      lang: 'generic',
      build: 'node scripts/build.js',
      test: 'node scripts/test.js',
      lint: '',
      model: 'claude-sonnet-4-5-20250929',
      workers: { count: 1 },
      backends: { primary: 'claude', worker: 'claude', judge: 'claude', claude: { binary: claude, env: sandbox.env } },
    };
    fs.writeFileSync(path.join(seed.dir, 'ralph.config.json'), `${JSON.stringify(config, null, 2)}\n`);
    git(seed.dir, 'add', 'ralph.config.json');
    git(seed.dir, 'commit', '-q', '-m', 'ralph config');
    const remote = path.join(dir, 'remote.git');
    git(dir, 'clone', '-q', '--bare', seed.dir, remote);
    fs.rmSync(seed.dir, { recursive: true, force: true });
    const store = await openPgStore({ url, mode: 'writer', projections: TEAM_PROJECTIONS });
    await store.append(
      ids.map((id, i) =>
        toNewEvent(
          domainEvent('task.created', id, 'bench', {
            title: `Add f${i + 1}`,
            source: 'ES:1',
            effort: 'S',
            deps: '-',
            wave: 0,
            provenance: 'spec',
          }),
        ),
      ),
    );
    await store.close();
    const clone = (name: string): string => {
      const c = path.join(dir, name);
      git(dir, 'clone', '-q', remote, c);
      git(c, 'config', 'user.name', `User ${name}`);
      git(c, 'config', 'user.email', `${name}@example.com`);
      fs.mkdirSync(path.join(c, '.ralph', 'logs'), { recursive: true });
      fs.writeFileSync(path.join(c, '.ralph', 'core.md'), '# Core\n');
      return c;
    };
    const env = { ...process.env, RALPH_STORE_URL: url };
    const before = load();
    const t0 = Date.now();
    const procs = [ralph(clone('promoter'), env, ['start', '--once'])];
    for (let w = 1; w <= workers; w++) procs.push(ralph(clone(`worker-${w}`), env, ['worker', '--exit-when-idle']));
    let capped = false;
    const cap = setTimeout(() => {
      capped = true;
      for (const p of procs) p.child.kill('SIGTERM');
    }, CAP_S * 1000);
    const codes = await Promise.all(procs.map((p) => p.exited));
    clearTimeout(cap);
    const wallS = (Date.now() - t0) / 1000;
    if (!capped && codes.some((c) => c !== 0)) {
      console.log(procs.map((p, i) => `--- process ${i} exit ${String(codes[i])}\n${p.out()}`).join('\n'));
      throw new Error(`a process failed: exits ${codes.join(', ')}`);
    }
    const after = await openPgStore({ url, mode: 'observer', projections: TEAM_PROJECTIONS, subscribe: false });
    try {
      const at = (type: string): Map<string, number> =>
        new Map(
          after
            .all<{ entity_id: string; ts: string }>('SELECT entity_id, ts FROM events WHERE event_type = ? ORDER BY event_id', [type])
            .map((r) => [r.entity_id, Date.parse(r.ts)]),
        );
      const queued = at('patch.queued');
      const promoted = at('patch.promoted');
      const latency = [...promoted].flatMap(([id, t]) => (queued.has(id) ? [(t - (queued.get(id) as number)) / 1000] : []));
      const done = after.get<{ n: number }>("SELECT COUNT(*) AS n FROM task_view WHERE status = 'done'")?.n ?? 0;
      // Per task: the worker's model time (its invocations, from their durations), and its
      // hand-over (the last invocation's end → the task's first patch.queued: gates, commit,
      // push); a re-based patch the promoter queues later is the promotion's, not the worker's.
      const firstAt = (type: string): Map<string, number> => {
        const out = new Map<string, number>();
        for (const r of after.all<{ task_id: string; ts: string }>(
          `SELECT json_extract(payload, '$.task_id') AS task_id, ts FROM events WHERE event_type = ? ORDER BY event_id`,
          [type],
        ))
          if (!out.has(r.task_id)) out.set(r.task_id, Date.parse(r.ts));
        return out;
      };
      const queuedAt = firstAt('patch.queued');
      const startedAt = firstAt('agent.started');
      const model = new Map<string, number>();
      const lastRun = new Map<string, number>();
      for (const r of after.all<{ task_id: string; ms: number; ts: string }>(
        "SELECT json_extract(payload, '$.task_id') AS task_id, json_extract(payload, '$.duration_ms') AS ms, ts FROM events WHERE event_type = 'agent.finished' AND json_extract(payload, '$.role') = 'worker' ORDER BY event_id",
      )) {
        if (queuedAt.has(r.task_id) && Date.parse(r.ts) > (queuedAt.get(r.task_id) as number)) continue;
        model.set(r.task_id, (model.get(r.task_id) ?? 0) + Number(r.ms) / 1000);
        lastRun.set(r.task_id, Date.parse(r.ts));
      }
      const handOver = [...queuedAt].flatMap(([id, t]) => (lastRun.has(id) ? [(t - (lastRun.get(id) as number)) / 1000] : []));
      const worked = [...queuedAt].flatMap(([id, t]) => (startedAt.has(id) ? [(t - (startedAt.get(id) as number)) / 1000] : []));
      const med = (xs: number[]): string => (xs.length > 0 ? pct(xs, 50).toFixed(1) : '-');
      const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
      const busy = sum(worked);
      const end = Date.now();
      const stillQueued = new Set(
        after.all<{ patch_id: string }>("SELECT patch_id FROM patch_view WHERE status = 'queued'").map((r) => r.patch_id),
      );
      const waiting = [...queued].flatMap(([id, t]) => (stillQueued.has(id) ? [(end - t) / 1000] : []));
      console.log(
        `  ${workers} worker(s): ${done}/${TASKS} done in ${wallS.toFixed(1)} s${capped ? ` (stopped at the ${CAP_S} s cap)` : ''} = ` +
          `${((Number(done) / wallS) * 60).toFixed(1)} tasks/min\n` +
          `    per task (median s): model ${med([...model.values()])} | gates+commit+push ${med(handOver)} | ` +
          `promotion queue ${med(latency)} (p90 ${latency.length > 0 ? pct(latency, 90).toFixed(1) : '-'}, max ${latency.length > 0 ? Math.max(...latency).toFixed(1) : '-'})\n` +
          `    workers busy ${((busy / (workers * wallS)) * 100).toFixed(0)}% of the run (first agent start → patch queued, summed); ` +
          `${waiting.length} patch(es) still queued at the end${waiting.length > 0 ? ` (waiting ${med(waiting)} s median, ${Math.max(...waiting).toFixed(1)} s longest)` : ''}, ` +
          `promoted ${((promoted.size / wallS) * 60).toFixed(1)}/min\n    ${before} before, ${load()} after`,
      );
    } finally {
      await after.close();
    }
  } finally {
    sandbox.cleanup();
  }
}

async function main(): Promise<void> {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const cluster = await startPgCluster();
  if ('skip' in cluster) {
    console.log(`skipped: ${cluster.skip}`);
    return;
  }
  const claude = ensureAgentClis().claude;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-team-procs-'));
  const scripts = ids.map((id, i) => {
    const s = script(`worker/${id}/`, [{ tool: 'write', path: `src/f${i + 1}.js`, content: `module.exports = () => ${i + 1};\n` }]);
    return { ...s, turns: (s['turns'] as object[]).map((t, k) => (k === 0 && MODEL_MS > 0 ? { ...t, delayMs: MODEL_MS } : t)) };
  });
  const server = await startModelServer({ scripts: [...scripts, { name: 'fallback', turns: [{ text: 'nothing to do' }] }] });
  try {
    console.log(
      `team (processes): ${TASKS} tasks, real claude (${path.relative(ROOT, claude)}) confined, scripted model ${MODEL_MS} ms per answer, ` +
        `one \`ralph start --once\` promoter; workers ${WORKERS.join(', ')}; each run capped at ${CAP_S} s`,
    );
    for (const workers of WORKERS) {
      const dir = path.join(root, `w${workers}`);
      fs.mkdirSync(dir);
      await run(cluster.createDatabase(`bench_procs_${workers}`), dir, workers, server, claude);
    }
  } finally {
    await server.close();
    cluster.destroy();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
