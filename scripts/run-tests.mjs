#!/usr/bin/env node
// `npm test`: every suite in order, stopping at the first that fails (as `a && b && …` did),
// with each suite's output passed through as it comes and, at the end, one table of what ran:
// the mocha counts each suite printed and its time, then the totals. A run that passes but
// counts no test at all fails, so a suite that silently finds no files cannot pass for green.
// Usage: node scripts/run-tests.mjs [--only unit,int,…]
import { spawn } from 'node:child_process';

/** The suites, in the order CI runs them; `counts: false` for checks that run no mocha. */
const STEPS = [
  { name: 'typecheck', script: 'typecheck', counts: false },
  { name: 'lint', script: 'lint', counts: false },
  { name: 'unit', script: 'test:unit', counts: true },
  { name: 'int', script: 'test:int', counts: true },
  { name: 'faults', script: 'test:faults', counts: true },
  { name: 'browser', script: 'test:browser', counts: true },
  { name: 'exthost', script: 'test:exthost', counts: true },
  { name: 'e2e', script: 'test:e2e', counts: true },
];

const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set((process.argv[onlyArg + 1] ?? '').split(',')) : undefined;
if (only) {
  const unknown = [...only].filter((n) => !STEPS.some((s) => s.name === n));
  if (unknown.length > 0) {
    console.error(`run-tests: unknown suite(s) ${unknown.join(', ')}; known: ${STEPS.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
}

/** Mocha's spec reporter ends with "  N passing (…)", "  N pending", "  N failing"; the last of each wins. */
function tally(text) {
  const last = (word) => {
    const all = [...text.matchAll(new RegExp(`^\\s*(\\d+) ${word}\\b`, 'gm'))];
    return all.length > 0 ? Number(all[all.length - 1][1]) : 0;
  };
  return { passing: last('passing'), failing: last('failing'), pending: last('pending') };
}

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    current?.kill(signal);
    process.exit(130);
  });
}

function runStep(step) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn('npm', ['run', step.script], { stdio: ['inherit', 'pipe', 'pipe'] });
    current = child;
    let out = '';
    // Only the tail is kept for counting: the summary lines are at the end, and a suite's
    // whole output can be tens of megabytes.
    const keep = (chunk) => {
      out = (out + chunk.toString('utf8')).slice(-64 * 1024);
    };
    child.stdout.on('data', (c) => {
      process.stdout.write(c);
      keep(c);
    });
    child.stderr.on('data', (c) => {
      process.stderr.write(c);
      keep(c);
    });
    child.on('close', (code, signal) => {
      current = undefined;
      resolve({ step, code: code ?? (signal ? 128 : 1), seconds: (Date.now() - started) / 1000, ...tally(out) });
    });
  });
}

const results = [];
const started = Date.now();
let exitCode = 0;
for (const step of STEPS) {
  if (only && !only.has(step.name)) continue;
  const r = await runStep(step);
  results.push(r);
  if (r.code !== 0) {
    exitCode = r.code;
    break;
  }
  if (step.counts && r.passing === 0) {
    console.error(`\n[test] ${step.name}: exit 0 but no "N passing" line: no test ran`);
    exitCode = 1;
    break;
  }
}

const pad = (s, n) => String(s).padStart(n);
const lines = ['', '[test] suite       passing  failing  pending     time  exit'];
for (const r of results) {
  const c = r.step.counts;
  lines.push(
    `[test] ${r.step.name.padEnd(10)} ${pad(c ? r.passing : '-', 8)} ${pad(c ? r.failing : '-', 8)} ${pad(c ? r.pending : '-', 8)} ${pad(r.seconds.toFixed(1), 7)} s  ${pad(r.code, 4)}`,
  );
}
const sum = (k) => results.reduce((n, r) => n + (r.step.counts ? r[k] : 0), 0);
const minutes = ((Date.now() - started) / 60000).toFixed(1);
const skipped = STEPS.filter((s) => (!only || only.has(s.name)) && !results.some((r) => r.step === s)).map((s) => s.name);
lines.push(
  `[test] all: ${sum('passing')} passing, ${sum('failing')} failing, ${sum('pending')} pending in ${minutes} min` +
    (skipped.length > 0 ? `; not run after the failure: ${skipped.join(', ')}` : ''),
);
lines.push(
  `[test] ${exitCode === 0 ? 'PASS' : `FAIL (exit ${exitCode})`}: ${sum('passing')} tests passed, ${sum('failing')} failed, ${sum('pending')} pending`,
);
// The last line is the plain closing line any CI log reader understands, "N passed, N failed,
// N skipped", alone: our table and mocha's "N passing" are not shapes such readers know, and a
// run judged only by its exit code can read as one that executed no test.
lines.push('', `${sum('passing')} passed, ${sum('failing')} failed, ${sum('pending')} skipped`);
console.log(lines.join('\n'));
process.exit(exitCode);
