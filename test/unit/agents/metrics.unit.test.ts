// Metrics lines (seed field names), the reader and cost sums, and secret redaction.
import { strict as assert } from 'node:assert';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendMetrics, costToday, metricsFileName, metricsLineFor, readMetrics, summarizeCost } from '../../../src/agents/metrics';
import type { MetricsLine } from '../../../src/agents/metrics';
import { REDACTED, secretValuesOf } from '../../../src/shared/redaction';
import type { AgentResult } from '../../../src/agents/types';
import { JsonlMetrics, MetricsUnreadableError } from '../../../src/loop/metricsFile';
import { readMetrics as readMonitorMetrics } from '../../../src/monitor/metrics';

const result = (over: Partial<AgentResult> = {}): AgentResult => ({
  status: 'success',
  text: 'ok',
  structured: undefined,
  turns: 3,
  durationMs: 19_040,
  tokens: { input: 4, output: 679, cacheRead: 53944, cacheCreate: 14902 },
  costUsd: 0.137,
  model: 'claude-opus-4-6',
  sessionId: 's',
  exitCode: 0,
  stderrTail: '',
  subtype: 'success',
  errors: [],
  ...over,
});

const SEED_FIELDS = [
  'ts',
  'agent',
  'iter',
  'phase_from',
  'phase_to',
  'duration',
  'cost',
  'prompt_bytes',
  'turns',
  'input_tokens',
  'cache_read',
  'cache_create',
  'output_tokens',
  'model',
  'subtype',
];

describe('agents/metrics', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ralph-metrics-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('given a result, then the line has the seed fields with the seed example values, plus backend and task_id', () => {
    const line = metricsLineFor(result(), {
      agent: 'A',
      iter: 4,
      phaseFrom: 'assess',
      phaseTo: 'plan',
      promptBytes: 6823,
      backend: 'claude',
      taskId: 'W3-014',
      ts: new Date('2026-03-25T02:43:07.123Z'),
    });
    for (const f of SEED_FIELDS) assert.ok(f in line, `field ${f}`);
    assert.deepEqual(
      { ...line },
      {
        ts: '2026-03-25T02:43:07Z',
        agent: 'A',
        iter: 4,
        phase_from: 'assess',
        phase_to: 'plan',
        duration: 19,
        cost: 0.137,
        prompt_bytes: 6823,
        turns: 3,
        input_tokens: 4,
        cache_read: 53944,
        cache_create: 14902,
        output_tokens: 679,
        model: 'claude-opus-4-6',
        subtype: 'success',
        backend: 'claude',
        task_id: 'W3-014',
        status: 'success',
      },
    );
  });

  it('appends to par-metrics-YYYYMMDD.jsonl of the line day and reads it back', () => {
    const mk = (ts: string, cost: number, agent: string, taskId: string | null): MetricsLine => ({
      ...metricsLineFor(result({ costUsd: cost }), {
        agent,
        iter: 1,
        phaseFrom: 'a',
        phaseTo: 'b',
        promptBytes: 1,
        backend: 'claude',
        taskId,
        ts: new Date(ts),
      }),
    });
    const f1 = appendMetrics(root, mk('2026-03-25T23:59:59Z', 0.5, 'A', 'T1'));
    appendMetrics(root, mk('2026-03-25T10:00:00Z', 0.25, 'B', 'T2'));
    const f2 = appendMetrics(root, mk('2026-03-26T00:00:01Z', 1, 'A', 'T1'));
    appendMetrics(root, mk('2026-03-26T01:00:00Z', 0.125, 'judge', null));
    assert.equal(f1, join(root, '.ralph', 'logs', 'par-metrics-20260325.jsonl'));
    assert.equal(f2, join(root, '.ralph', 'logs', metricsFileName(new Date('2026-03-26T00:00:01Z'))));
    const all = readMetrics(root);
    assert.equal(all.lines.length, 4);
    const sum = summarizeCost(all.lines);
    assert.equal(sum.total, 1.875);
    assert.deepEqual(sum.byDay, { '2026-03-25': 0.75, '2026-03-26': 1.125 });
    assert.deepEqual(sum.byTask, { T1: 1.5, T2: 0.25 });
    assert.deepEqual(sum.byAgent, { A: 1.5, B: 0.25, judge: 0.125 });
    assert.equal(readMetrics(root, { from: '20260326' }).lines.length, 2);
    assert.equal(costToday(root, new Date('2026-03-26T12:00:00Z')), 1.125);
  });

  it('given malformed lines, then they are reported by file and line, not dropped silently', () => {
    const file = appendMetrics(
      root,
      metricsLineFor(result(), {
        agent: 'A',
        iter: 1,
        phaseFrom: 'a',
        phaseTo: 'b',
        promptBytes: 1,
        backend: 'claude',
        ts: new Date('2026-01-02T00:00:00Z'),
      }),
    );
    appendFileSync(file, 'oops\n{"ts":"x"}\n');
    const { lines, problems } = readMetrics(root);
    assert.equal(lines.length, 1);
    assert.deepEqual(
      problems.map((p) => [p.file, p.line]),
      [
        [file, 2],
        [file, 3],
      ],
    );
    assert.equal(problems[0]?.message, 'not JSON');
    assert.match(problems[1]?.message ?? '', /agent/);
  });

  it('given a full line, a partial older line and a torn line, then strict, spend and monitor readers differ only in leniency', async () => {
    const file = appendMetrics(
      root,
      metricsLineFor(result({ costUsd: 1 }), {
        agent: 'A',
        iter: 1,
        phaseFrom: 'a',
        phaseTo: 'b',
        promptBytes: 1,
        backend: 'claude',
        taskId: 'T1',
        ts: new Date('2026-01-02T00:00:00Z'),
      }),
    );
    appendFileSync(file, '{"ts":"2026-01-02T01:00:00Z","agent":"B","cost":"0.5","task":"T2"}\n{"ts":"2026-01-02T02:0');
    const strict = readMetrics(root);
    assert.deepEqual([strict.lines.length, strict.problems.map((p) => p.line)], [1, [2, 3]]);
    const spend = await new JsonlMetrics(join(root, '.ralph', 'logs')).read(['2026-01-02']);
    assert.deepEqual(
      spend.lines.map((l) => [l.cost, l.task]),
      [
        [1, 'T1'],
        [0.5, 'T2'],
      ],
    );
    assert.equal(spend.problems.length, 1);
    assert.match(spend.problems[0] ?? '', /par-metrics-20260102\.jsonl:3: not JSON$/);
    const monitor = readMonitorMetrics(join(root, '.ralph', 'logs'), new Date('2026-01-02T12:00:00Z'), 1);
    assert.deepEqual([monitor.lines.map((l) => l.cost), monitor.problems], [[1, 0.5], ['par-metrics-20260102.jsonl:3: not JSON']]);
  });

  it('given a metrics file that cannot be read, then budgets refuse to guess rather than count no spend', async () => {
    mkdirSync(join(root, 'par-metrics-20260102.jsonl'), { recursive: true });
    await assert.rejects(new JsonlMetrics(root).read(['2026-01-02']), MetricsUnreadableError);
  });

  it('given secrets in env values, model, task or subtype, then the file never contains them', () => {
    const env = { ANTHROPIC_API_KEY: 'sk-ant-api03-SECRETSECRETSECRET', MY_SERVICE_TOKEN: 'plain-looking-value-42' };
    const line = metricsLineFor(result({ model: 'm plain-looking-value-42', subtype: 'error sk-ant-api03-SECRETSECRETSECRET' }), {
      agent: 'A',
      iter: 1,
      phaseFrom: 'a',
      phaseTo: 'b',
      promptBytes: 1,
      backend: 'claude',
      taskId: 'T Bearer abcdefghijklmnop',
      secrets: secretValuesOf(env),
    });
    const text = readFileSync(appendMetrics(root, line), 'utf8');
    assert.ok(!text.includes('SECRETSECRET'));
    assert.ok(!text.includes('plain-looking-value-42'));
    assert.ok(!text.includes('abcdefghijklmnop'));
    assert.ok(text.includes(REDACTED));
  });
});
