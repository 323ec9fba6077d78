// The tree comparison of the loop bench: its parser of the bench's output (both the current
// titles and the older ones without a worker count) and its permutation test.
import { strict as assert } from 'node:assert';
import { parseLoopBench, parseTree, slowerP } from '../../../scripts/bench-compare';

const section = (title: string, wall: number, overhead: number, git: number): string[] => [
  title,
  `  tasks: 6 (promoted 6), invocations: 9, git processes: ${git}`,
  `  wall ${wall} ms; model 2873 ms + gates 3189 ms (summed over agents); busy wall 4433 ms`,
  `  harness overhead: ${overhead} ms = 25.6 % of wall time (target < 5 %); 254 ms per task`,
];

describe('scripts/bench-compare.ts: comparing trees on the loop bench', () => {
  it('given the output of a bench with worker counts and of one without, then both key their sections alike', () => {
    const now = parseLoopBench(
      [
        '[git @1 2 ms] status',
        ...section('1 worker(s), no model latency (upper bound: scripted invocations of ~0.5 s)', 5956, 1523, 200),
        ...section('1 worker(s), model latency 1500 ms per turn (real invocations take ~19 s)', 19465, 1410, 199),
        ...section('3 worker(s), no model latency (upper bound)', 4100, 900, 260),
      ].join('\n'),
    );
    const old = parseLoopBench(section('no model latency (upper bound: scripted invocations of ~0.5 s)', 8165, 2219, 198).join('\n'));
    assert.deepEqual(
      [...now.entries()],
      [
        ['1 worker(s), no model latency', { wall: 5956, 'harness overhead': 1523, 'git processes': 200 }],
        ['1 worker(s), model latency 1500 ms per turn', { wall: 19465, 'harness overhead': 1410, 'git processes': 199 }],
        ['3 worker(s), no model latency', { wall: 4100, 'harness overhead': 900, 'git processes': 260 }],
      ],
    );
    assert.deepEqual(
      [...old.entries()],
      [['1 worker(s), no model latency', { wall: 8165, 'harness overhead': 2219, 'git processes': 198 }]],
    );
  });

  it('given a section without its overhead line, then parsing fails and names the section and the figure', () => {
    const lines = section('1 worker(s), no model latency', 5956, 1523, 200).slice(0, 3);
    assert.throws(() => parseLoopBench(lines.join('\n')), /section "1 worker\(s\), no model latency": no harness overhead line/);
  });

  it('given runs clearly slower, then p is small; given the same spread, p is not; given faster, p is near 1', () => {
    const a = [7000, 7100, 7200, 6900, 7050, 7150, 6950, 7080];
    const slower = a.map((v) => v + 600);
    const same = [7010, 7090, 7190, 6910, 7060, 7140, 6960, 7070];
    const faster = a.map((v) => v - 600);
    assert.ok(slowerP(a, slower) < 0.01, `slower: ${slowerP(a, slower)}`);
    assert.ok(slowerP(a, same) > 0.2, `same: ${slowerP(a, same)}`);
    assert.ok(slowerP(a, faster) > 0.95, `faster: ${slowerP(a, faster)}`);
    assert.equal(slowerP(a, same, 2000, 7), slowerP(a, same, 2000, 7), 'seeded: the same p twice');
  });

  it('given counts that take few values, every one of b above every one of a, then p is small', () => {
    // The median of a shuffled half of such runs is 183, 191.5 or 200 whatever the labels: a
    // test on medians calls this gap noise (p about 0.2); ranks see that b is always larger.
    const a = [183, 183, 183, 168, 183, 198, 183, 183, 183, 183];
    const b = [200, 200, 218, 200, 200, 200, 200, 218, 200, 200];
    assert.ok(slowerP(a, b) < 0.001, `p ${slowerP(a, b)}`);
    assert.ok(slowerP(b, a) > 0.99, `reversed: p ${slowerP(b, a)}`);
  });

  it('given a tree argument, then its label, directory and environment are read; a malformed one is refused', () => {
    assert.deepEqual(parseTree('head=/tmp/x:RALPH_BENCH_WORKERS=1,RALPH_BENCH_EFFORT=S'), {
      label: 'head',
      dir: '/tmp/x',
      env: { RALPH_BENCH_WORKERS: '1', RALPH_BENCH_EFFORT: 'S' },
    });
    assert.throws(() => parseTree('/tmp/x'), /expected label=dir/);
    assert.throws(() => parseTree('head=/tmp/x:WORKERS'), /tree "head": expected NAME=value, got "WORKERS"/);
  });
});
