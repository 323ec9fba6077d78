// `npm run bench:compare -- [--runs N] [--save FILE] label=dir[:NAME=value,...] ...`: runs
// the loop bench (scripts/bench/loop.ts) in each tree N times, interleaved, and prints for
// each figure each tree's median and range and, against the first tree, the change of the
// median with a one-sided p-value that the tree is slower (a permutation test on ranks).
//
// Why: on a shared two-core machine one run of the loop bench varies by more than the
// changes it is meant to show (a second either way on a 7 s wall time). Runs of the trees are
// interleaved, and each round starts with the next tree, so a machine that slows down over
// the series slows every tree alike; the p-value says how often labels shuffled at random
// give a gap at least as large, so a difference inside the noise is not read as a result.
//
// A tree is a checked-out, built copy of the repository (`git worktree add`, `npm ci`,
// `npm run build`); its environment settings go to its bench, e.g.
//   npm run bench:compare -- --runs 12 base=/tmp/base head=.:RALPH_BENCH_WORKERS=1,RALPH_BENCH_EFFORT=S
// `--save FILE` keeps every run's figures as it goes; `--load FILE` prints the comparison again.
// Sections with no worker count in their title come from a bench that ran one worker.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { seededRandom } from '../test/kit/random';

/** Each section's figures by name. */
export type Figures = Record<string, number>;
/** One bench run: its sections by key. */
export type Sections = Map<string, Figures>;

export interface Tree {
  readonly label: string;
  readonly dir: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface TreeResults {
  readonly runs: Sections[];
  readonly failed: string[];
}

/** The figures read from each section of the loop bench's output. */
export const FIGURES: readonly { readonly name: string; readonly unit: string; readonly pattern: RegExp }[] = [
  { name: 'wall', unit: 'ms', pattern: /^\s+wall (\d+) ms/ },
  { name: 'harness overhead', unit: 'ms', pattern: /^\s+harness overhead: (\d+) ms/ },
  { name: 'git processes', unit: '', pattern: /git processes: (\d+)/ },
];

/**
 * The loop bench's sections, keyed "<workers> worker(s), <latency>", each with the figures it
 * printed. Throws on a section with a figure missing: a changed output format must not
 * silently compare nothing.
 */
export function parseLoopBench(text: string): Sections {
  const sections: Sections = new Map();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const head = /^(?:(\d+) worker\(s\), )?(no model latency|model latency \d+ ms per turn)/.exec(line);
    if (head !== null) {
      current = `${head[1] ?? '1'} worker(s), ${head[2]}`;
      sections.set(current, {});
      continue;
    }
    if (current === undefined) continue;
    for (const f of FIGURES) {
      const m = f.pattern.exec(line);
      const figures = sections.get(current);
      if (m !== null && figures !== undefined) figures[f.name] = Number(m[1]);
    }
  }
  for (const [key, figures] of sections) {
    const missing = FIGURES.filter((f) => figures[f.name] === undefined).map((f) => f.name);
    if (missing.length > 0) throw new Error(`loop bench section "${key}": no ${missing.join(', ')} line`);
  }
  return sections;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const at = (i: number): number => s[i] ?? Number.NaN;
  return s.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

/** Each value's rank in `values` (1-based), tied values sharing the mean of their ranks. */
function midranks(values: readonly number[]): number[] {
  const order = values.map((value, index) => ({ value, index })).sort((x, y) => x.value - y.value);
  const ranks = new Array<number>(values.length).fill(0);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]?.value === order[i]?.value) j++;
    for (let k = i; k <= j; k++) ranks[order[k]?.index ?? 0] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return ranks;
}

/**
 * One-sided permutation test of the rank sum (Mann-Whitney's statistic): the share of random
 * relabellings of the pooled runs whose `b` ranks sum to at least the observed sum. Small
 * means `b`'s runs are larger (slower) than `a`'s beyond what shuffling the labels gives.
 * Ranks, not medians: counts such as git processes take few distinct values, and the
 * median of a shuffled half then jumps between them whatever the labels.
 */
export function slowerP(a: readonly number[], b: readonly number[], rounds = 10000, seed = 1): number {
  const ranks = midranks([...a, ...b]);
  const sum = (xs: readonly number[]): number => xs.reduce((t, x) => t + x, 0);
  const observed = sum(ranks.slice(a.length));
  const next = seededRandom(seed);
  let atLeast = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = ranks.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      const swap = ranks[i] ?? 0;
      ranks[i] = ranks[j] ?? 0;
      ranks[j] = swap;
    }
    // A float sum of half-ranks: compare with a margin below any real difference (0.5).
    if (sum(ranks.slice(a.length)) >= observed - 1e-9) atLeast++;
  }
  return (atLeast + 1) / (rounds + 1);
}

/** `label=dir[:NAME=value,...]` */
export function parseTree(arg: string): Tree {
  const m = /^([\w.-]+)=([^:]+)(?::(.*))?$/.exec(arg);
  if (m === null) throw new Error(`expected label=dir[:NAME=value,...], got "${arg}"`);
  const env: Record<string, string> = {};
  for (const pair of (m[3] ?? '').split(',').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`tree "${m[1]}": expected NAME=value, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { label: m[1] ?? '', dir: path.resolve(m[2] ?? '.'), env };
}

function runBench(tree: Tree): { sections: Sections; error?: undefined } | { error: string; sections?: undefined } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/loop.ts'], {
    cwd: tree.dir,
    env: { ...process.env, ...tree.env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) return { error: `exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}` };
  return { sections: parseLoopBench(r.stdout) };
}

function format(value: number, unit: string): string {
  return `${Number.isInteger(value) ? value : value.toFixed(1)}${unit === '' ? '' : ` ${unit}`}`;
}

/** Below the test's resolution (1 / (rounds + 1)) a p is a bound, not a value. */
function formatP(p: number): string {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

/** The comparison as lines: per section and figure, each tree's median and range. */
export function report(trees: readonly Tree[], results: readonly TreeResults[]): string[] {
  const lines: string[] = [];
  const keys = [...new Set(results.flatMap((r) => r.runs.flatMap((s) => [...s.keys()])))];
  for (const key of keys) {
    lines.push(key);
    for (const f of FIGURES) {
      lines.push(`  ${f.name}`);
      const values = results.map((r) => r.runs.flatMap((s) => s.get(key)?.[f.name] ?? []));
      const first = values[0] ?? [];
      trees.forEach((t, i) => {
        const v = values[i] ?? [];
        if (v.length === 0) {
          lines.push(`    ${t.label}: no runs`);
          return;
        }
        const m = median(v);
        let line = `    ${t.label.padEnd(12)} ${format(m, f.unit).padStart(10)}  (${Math.min(...v)}-${Math.max(...v)}, ${v.length} runs)`;
        if (i > 0 && first.length > 0) {
          const base = median(first);
          const change = base === 0 ? 0 : (100 * (m - base)) / base;
          line += `  ${change >= 0 ? '+' : ''}${change.toFixed(1)} %, p(slower) ${formatP(slowerP(first, v))}`;
        }
        lines.push(line);
      });
    }
  }
  return lines;
}

/** The runs so far as JSON: `--load` reports from it again without running anything. */
function saved(trees: readonly Tree[], results: readonly TreeResults[]): string {
  return JSON.stringify({ trees, results: results.map((r) => ({ runs: r.runs.map((s) => [...s.entries()]), failed: r.failed })) });
}

const SAVED = z.object({
  trees: z.array(z.object({ label: z.string(), dir: z.string(), env: z.record(z.string(), z.string()) })),
  results: z.array(
    z.object({ runs: z.array(z.array(z.tuple([z.string(), z.record(z.string(), z.number())]))), failed: z.array(z.string()) }),
  ),
});

function load(file: string): { trees: Tree[]; results: TreeResults[] } {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`--load ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const parsed = SAVED.safeParse(data);
  if (!parsed.success || parsed.data.trees.length !== parsed.data.results.length)
    throw new Error(
      `--load ${file}: expected {trees, results} as --save writes them${parsed.success ? '' : `: ${z.prettifyError(parsed.error)}`}`,
    );
  const { trees, results } = parsed.data;
  return { trees, results: results.map((r) => ({ runs: r.runs.map((s) => new Map(s)), failed: r.failed })) };
}

function print(trees: readonly Tree[], results: readonly TreeResults[], rounds: number): void {
  console.log(`loop bench: ${rounds} interleaved rounds; median (range, runs); change of the median against ${trees[0]?.label ?? '?'}`);
  for (const line of report(trees, results)) console.log(line);
  results.forEach((r, i) => {
    for (const e of r.failed) console.log(`${trees[i]?.label ?? '?'}: a run failed and is left out (${e})`);
  });
  if (results.some((r) => r.failed.length > 0)) process.exitCode = 1;
}

/** The value after option `name` at `argv[i]`. */
function valueOf(argv: readonly string[], i: number, name: string): string {
  const v = argv[i + 1];
  if (v === undefined) throw new Error(`${name}: a value must follow`);
  return v;
}

function main(argv: readonly string[]): void {
  let runs = 10;
  let saveTo: string | undefined;
  const trees: Tree[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--runs') {
      const v = valueOf(argv, i++, arg);
      runs = Number(v);
      if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: expected a positive whole number, got "${v}"`);
    } else if (arg === '--save') saveTo = valueOf(argv, i++, arg);
    else if (arg === '--load') {
      const { trees: t, results } = load(valueOf(argv, i++, arg));
      return print(t, results, Math.max(...results.map((r) => r.runs.length + r.failed.length)));
    } else trees.push(parseTree(arg));
  }
  if (trees.length < 2) throw new Error('name at least two trees: label=dir[:NAME=value,...]');
  const results = trees.map((tree): TreeResults & { readonly tree: Tree } => ({ tree, runs: [], failed: [] }));
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < results.length; k++) {
      const slot = results[(round + k) % results.length];
      if (slot === undefined) continue;
      const r = runBench(slot.tree);
      if (r.error !== undefined) slot.failed.push(r.error);
      else slot.runs.push(r.sections);
      if (saveTo !== undefined) writeFileSync(saveTo, saved(trees, results));
      const walls = r.sections ? [...r.sections.values()].map((s) => s['wall']).join(' / ') : r.error;
      process.stderr.write(`round ${round + 1}/${runs} ${slot.tree.label}: wall ${walls}\n`);
    }
  }
  print(trees, results, runs);
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(`bench-compare: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 2;
  }
}
