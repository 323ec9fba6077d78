// Benchmark of the built `ralph` CLI: wall time per command kind over a sequence of ~200
// commands on a 300-task backlog in a temp git repository (median and p95, plus CPU time
// when /usr/bin/time is present), and bare start-up (node alone, `help`, `status`, with
// and without V8's --liftoff-only). Prints numbers; never asserts timings.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

interface Sample {
  wall: number;
  cpu?: number;
}

const samples = new Map<string, Sample[]>();

function run(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): { out: string; sample: Sample } {
  const cmd = TIME ? TIME : process.execPath;
  const argv = TIME ? ['-f', '@@cpu %U %S', process.execPath, ...args] : args;
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { cwd, encoding: 'utf8', env });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  const m = /@@cpu ([\d.]+) ([\d.]+)/.exec(r.stderr);
  return { out: r.stdout, sample: { wall, ...(m ? { cpu: (Number(m[1]) + Number(m[2])) * 1000 } : {}) } };
}

function ralph(cwd: string, ...args: string[]): string {
  const { out, sample } = run(cwd, [CLI, ...args]);
  const kind = args[0] ?? '?';
  samples.set(kind, [...(samples.get(kind) ?? []), sample]);
  return out.trim();
}

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}

function backlog300(): string {
  const efforts = ['S', 'S', 'M', 'S', 'L', 'S'];
  const out = ['# BACKLOG', ''];
  for (let w = 0; w < 6; w++) {
    out.push(`## Wave ${w}`, '', '| ID | Status | Title | Source | Effort | Deps |', '|----|--------|-------|--------|--------|------|');
    for (let i = 1; i <= 50; i++) {
      const id = `W${w}-${String(i).padStart(3, '0')}`;
      const deps = i % 7 === 0 ? `W${w}-${String(i - 1).padStart(3, '0')}` : '-';
      out.push(`| ${id} | pending | Task ${id} | ES:${w}.${i} | ${efforts[i % efforts.length]} | ${deps} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

function main(): void {
  if (!fs.existsSync(CLI)) throw new Error('build first: npm run build');
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-cli-'));
  try {
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 'bench@example.invalid');
    git(repo, 'config', 'user.name', 'Bench');
    fs.writeFileSync(path.join(repo, 'README.md'), '# bench\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'init');
    fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
    fs.writeFileSync(path.join(repo, '.ralph', 'BACKLOG.md'), backlog300());
    console.log(ralph(repo, 'init'));

    let commands = 1;
    for (let i = 0; commands < 200; i++) {
      const task = ralph(repo, 'claim-ready-task', 'worker', '--owner', 'worker-b');
      if (task === 'NONE') break;
      const file = i % 5 === 4 ? `db/migrations/${i}.sql` : `src/mod${i}.ts`;
      fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
      fs.writeFileSync(path.join(repo, file), `// ${task}\n`);
      git(repo, 'add', file);
      git(repo, 'commit', '-q', '-m', task);
      const patchRel = path.join('.ralph', 'commits', 'pending', `${task}.patch`);
      fs.mkdirSync(path.dirname(path.join(repo, patchRel)), { recursive: true });
      fs.writeFileSync(path.join(repo, patchRel), git(repo, 'format-patch', '-1', '--stdout'));
      const patchId = ralph(repo, 'queue-patch', task, patchRel, 'worker-b');
      ralph(repo, 'classify-risk', task);
      const verdict = JSON.parse(ralph(repo, 'policy-check', task, patchId, '--apply')) as { decision: string };
      if (verdict.decision === 'promote') ralph(repo, 'promote-patch', patchId, git(repo, 'rev-parse', 'HEAD'));
      ralph(repo, 'status');
      ralph(repo, 'pick-ready-task', 'primary');
      ralph(repo, 'emit-event', 'run', 'bench', 'run.tick', 'bench', `{"i":${i}}`);
      commands += verdict.decision === 'promote' ? 8 : 7;
      if (i % 5 === 0) {
        ralph(repo, 'should-review-deferred');
        ralph(repo, 'get-deferred-queue', '--format', 'json');
        ralph(repo, 'expire-stale-deferrals');
        ralph(repo, 'render-state');
        commands += 4;
      }
    }
    ralph(repo, 'render-backlog');
    ralph(repo, 'sync-backlog');
    ralph(repo, 'rebuild');

    const load = os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ');
    const total = [...samples.values()].reduce((a, s) => a + s.length, 0);
    console.log(`\nCLI wall time per command (${total} commands, 300-task backlog; load average ${load} on ${os.cpus().length} cores)`);
    console.log('command                  n   median ms   p95 ms   median CPU ms');
    for (const [kind, ss] of [...samples].sort()) {
      const wall = ss.map((s) => s.wall);
      const cpu = ss.flatMap((s) => (s.cpu === undefined ? [] : [s.cpu]));
      console.log(
        `${kind.padEnd(24)} ${String(ss.length).padStart(3)}  ${pct(wall, 50).toFixed(0).padStart(9)}  ${pct(wall, 95).toFixed(0).padStart(7)}  ${cpu.length ? pct(cpu, 50).toFixed(0).padStart(14) : '-'.padStart(14)}`,
      );
    }
    const all = [...samples.values()].flat().map((s) => s.wall);
    console.log(
      `${'all'.padEnd(24)} ${String(all.length).padStart(3)}  ${pct(all, 50).toFixed(0).padStart(9)}  ${pct(all, 95).toFixed(0).padStart(7)}`,
    );

    console.log('\nBare start-up (15 runs each): median / min wall ms, median CPU ms');
    const startups: [string, string[], NodeJS.ProcessEnv][] = [
      ['node -e 0', ['-e', '0'], process.env],
      ['ralph help (no store)', [CLI, 'help'], process.env],
      ['ralph status', [CLI, 'status'], process.env],
      ['ralph status, no --liftoff-only', [CLI, 'status'], { ...process.env, RALPH_NO_LIFTOFF: '1' }],
    ];
    for (const [label, args, env] of startups) {
      const ss = Array.from({ length: 15 }, () => run(repo, args, env).sample);
      const wall = ss.map((s) => s.wall);
      const cpu = ss.flatMap((s) => (s.cpu === undefined ? [] : [s.cpu]));
      console.log(
        `${label.padEnd(34)} ${pct(wall, 50).toFixed(0).padStart(5)} / ${Math.min(...wall)
          .toFixed(0)
          .padStart(4)}   ${cpu.length ? pct(cpu, 50).toFixed(0) : '-'}`,
      );
    }
    const db = fs.statSync(path.join(repo, '.ralph', 'ralph.db')).size;
    console.log(`\nralph.db after the sequence: ${(db / 1024).toFixed(0)} KiB`);
  } finally {
    fs.rmSync(repo, { recursive: true, force: true });
  }
}

main();
