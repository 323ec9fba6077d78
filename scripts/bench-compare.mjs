#!/usr/bin/env node
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
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The figures read from each section of the loop bench's output. */
export const FIGURES = [
  { name: 'wall', unit: 'ms', pattern: /^\s+wall (\d+) ms/ },
  { name: 'harness overhead', unit: 'ms', pattern: /^\s+harness overhead: (\d+) ms/ },
  { name: 'git processes', unit: '', pattern: /git processes: (\d+)/ },
];

/**
 * The loop bench's sections, keyed "<workers> worker(s), <latency>", each with the figures it
 * printed. Throws on a section with a figure missing: a changed output format must not
 * silently compare nothing.
 */
export function parseLoopBench(text) {
  const sections = new Map();
  let current;
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
      if (m !== null) sections.get(current)[f.name] = Number(m[1]);
    }
  }
  for (const [key, figures] of sections) {
    const missing = FIGURES.filter((f) => figures[f.name] === undefined).map((f) => f.name);
    if (missing.length > 0) throw new Error(`loop bench section "${key}": no ${missing.join(', ')} line`);
  }
  return sections;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** A small seeded generator (mulberry32), so a comparison's p-values can be reproduced. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Each value's rank in `values` (1-based), tied values sharing the mean of their ranks. */
function midranks(values) {
  const order = values.map((v, i) => [v, i]).sort((x, y) => x[0] - y[0]);
  const ranks = new Array(values.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (j + 1 < order.length && order[j + 1][0] === order[i][0]) j++;
    for (let k = i; k <= j; k++) ranks[order[k][1]] = (i + j) / 2 + 1;
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
export function slowerP(a, b, rounds = 10000, seed = 1) {
  const ranks = midranks([...a, ...b]);
  const sum = (xs) => xs.reduce((t, x) => t + x, 0);
  const observed = sum(ranks.slice(a.length));
  const next = random(seed);
  let atLeast = 0;
  for (let r = 0; r < rounds; r++) {
    for (let i = ranks.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [ranks[i], ranks[j]] = [ranks[j], ranks[i]];
    }
    // A float sum of half-ranks: compare with a margin below any real difference (0.5).
    if (sum(ranks.slice(a.length)) >= observed - 1e-9) atLeast++;
  }
  return (atLeast + 1) / (rounds + 1);
}

/** `label=dir[:NAME=value,...]` */
export function parseTree(arg) {
  const m = /^([\w.-]+)=([^:]+)(?::(.*))?$/.exec(arg);
  if (m === null) throw new Error(`expected label=dir[:NAME=value,...], got "${arg}"`);
  const env = {};
  for (const pair of (m[3] ?? '').split(',').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`tree "${m[1]}": expected NAME=value, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { label: m[1], dir: path.resolve(m[2]), env };
}

function runBench(tree) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench/loop.ts'], {
    cwd: tree.dir,
    env: { ...process.env, ...tree.env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) return { error: `exit ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}` };
  return { sections: parseLoopBench(r.stdout) };
}

function format(value, unit) {
  return `${Number.isInteger(value) ? value : value.toFixed(1)}${unit === '' ? '' : ` ${unit}`}`;
}

/** Below the test's resolution (1 / (rounds + 1)) a p is a bound, not a value. */
function formatP(p) {
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

/** The comparison as lines: per section and figure, each tree's median and range. */
export function report(trees, results) {
  const lines = [];
  const keys = [...new Set(results.flatMap((r) => r.runs.flatMap((s) => [...s.keys()])))];
  for (const key of keys) {
    lines.push(key);
    for (const f of FIGURES) {
      lines.push(`  ${f.name}`);
      const values = results.map((r) => r.runs.map((s) => s.get(key)?.[f.name]).filter((v) => v !== undefined));
      const first = values[0];
      trees.forEach((t, i) => {
        const v = values[i];
        if (v.length === 0) return lines.push(`    ${t.label}: no runs`);
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
function saved(trees, results) {
  return JSON.stringify({ trees, results: results.map((r) => ({ runs: r.runs.map((s) => [...s.entries()]), failed: r.failed })) });
}

function load(file) {
  const where = `--load ${file}`;
  let data;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`${where}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!Array.isArray(data?.trees) || !Array.isArray(data?.results) || data.trees.length !== data.results.length)
    throw new Error(`${where}: expected {trees, results} as --save writes them`);
  return { trees: data.trees, results: data.results.map((r) => ({ runs: r.runs.map((s) => new Map(s)), failed: r.failed })) };
}

function print(trees, results, rounds) {
  console.log(`loop bench: ${rounds} interleaved rounds; median (range, runs); change of the median against ${trees[0].label}`);
  for (const line of report(trees, results)) console.log(line);
  results.forEach((r, i) => {
    for (const e of r.failed) console.log(`${trees[i].label}: a run failed and is left out (${e})`);
  });
  if (results.some((r) => r.failed.length > 0)) process.exitCode = 1;
}

function main(argv) {
  let runs = 10;
  let saveTo;
  const trees = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--runs') {
      runs = Number(argv[++i]);
      if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: expected a positive whole number, got "${argv[i]}"`);
    } else if (argv[i] === '--save') saveTo = argv[++i];
    else if (argv[i] === '--load') {
      const { trees: t, results } = load(argv[++i]);
      return print(t, results, Math.max(...results.map((r) => r.runs.length + r.failed.length)));
    } else trees.push(parseTree(argv[i]));
  }
  if (trees.length < 2) throw new Error('name at least two trees: label=dir[:NAME=value,...]');
  const results = trees.map(() => ({ runs: [], failed: [] }));
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < trees.length; k++) {
      const i = (round + k) % trees.length;
      const r = runBench(trees[i]);
      if (r.error !== undefined) results[i].failed.push(r.error);
      else results[i].runs.push(r.sections);
      if (saveTo !== undefined) writeFileSync(saveTo, saved(trees, results));
      const walls = r.sections ? [...r.sections.values()].map((s) => s.wall).join(' / ') : r.error;
      process.stderr.write(`round ${round + 1}/${runs} ${trees[i].label}: wall ${walls}\n`);
    }
  }
  print(trees, results, runs);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(`bench-compare: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 2;
  }
}
