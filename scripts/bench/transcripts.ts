// `npm run bench -- transcripts`: what keeping a transcript costs per agent invocation. The
// same stream of events (a typical invocation: an init, assistant messages, Bash/Read/Write/
// Edit calls and their results; and a long one, ten times as many) goes to a listener that
// does nothing ("without", what an invocation's stream costs anyway) and to the
// TranscriptWriter the loop uses (open, header, one redacted line per event, footer, close:
// "with"). Prints wall ms per invocation (median and p95 over many), CPU ms, the file's
// bytes, the machine's load. Never asserts timings.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TranscriptWriter, transcriptPath } from '../../src/agents/transcript';
import type { AgentEvent, AgentResult } from '../../src/agents/types';

const RUNS = Number(process.env['RALPH_BENCH_TRANSCRIPT_RUNS'] ?? 300);
const SECRETS = ['sk-ant-api03-bench-secret-0123456789abcdef', 'ghp_benchTokenNotReal0123456789abcdefABCD'];

/** An invocation's stream: `calls` tool calls, each with a message before it, and the final answer. */
function stream(calls: number): AgentEvent[] {
  const events: AgentEvent[] = [{ type: 'init', sessionId: 'bench-session', model: 'claude-sonnet-4-5', cwd: '/tmp/ralph-wt/worker-1' }];
  const tools = ['Bash', 'Read', 'Write', 'Edit'] as const;
  for (let i = 0; i < calls; i++) {
    const name = tools[i % tools.length]!;
    if (i % 2 === 0)
      events.push({
        type: 'text',
        text: `Step ${i}: ${'I read the failing test and the module it covers, then change the check. '.repeat(4)}`,
      });
    const input =
      name === 'Bash'
        ? { command: `npm test -- --grep 'case ${i}' 2>&1 | tail -40` }
        : { file_path: `/tmp/ralph-wt/worker-1/src/module${i % 9}/file${i}.ts`, content: 'x'.repeat(400) };
    events.push({ type: 'tool_use', id: `toolu_${i}`, name, input });
    events.push({
      type: 'tool_result',
      toolUseId: `toolu_${i}`,
      isError: i % 7 === 3,
      output: 'line of output\n'.repeat(20 + (i % 5) * 60),
    });
  }
  events.push({ type: 'text', text: 'Done: the check is fixed and the tests pass.' });
  return events;
}

const result: AgentResult = {
  status: 'success',
  text: 'Done',
  structured: undefined,
  turns: 12,
  durationMs: 19_000,
  tokens: { input: 12000, output: 900, cacheRead: 30000, cacheCreate: 2000 },
  costUsd: 0.08,
  model: 'claude-sonnet-4-5',
  sessionId: 'bench-session',
  exitCode: 0,
  stderrTail: '',
  subtype: 'success',
  errors: [],
};

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
}

function measure(label: string, events: readonly AgentEvent[], dir: string): void {
  const without: number[] = [];
  const withT: number[] = [];
  let bytes = 0;
  let sink = 0;
  const noop = (e: AgentEvent): void => {
    sink += e.type.length;
  };
  let cpuUs = 0;
  for (let r = 0; r < RUNS; r++) {
    let t = performance.now();
    for (const e of events) noop(e);
    without.push(performance.now() - t);

    const run = {
      agent: 'worker-1',
      role: 'worker',
      phase: 'worker',
      taskId: `B-${r}`,
      backend: 'claude',
      startedAt: new Date(Date.UTC(2026, 11, 2, 3, 0, 0, r)),
    };
    t = performance.now();
    const cpu = process.cpuUsage();
    const w = new TranscriptWriter(
      transcriptPath(dir, run),
      run,
      SECRETS,
      () => new Date(),
      (m) => {
        throw new Error(m);
      },
    );
    for (const e of events) w.onEvent(e);
    w.finish(result);
    withT.push(performance.now() - t);
    const used = process.cpuUsage(cpu);
    cpuUs += used.user + used.system;
    bytes = fs.statSync(w.file).size;
  }
  without.sort((a, b) => a - b);
  withT.sort((a, b) => a - b);
  const fmt = (xs: number[]): string => `median ${percentile(xs, 50).toFixed(3)} ms, p95 ${percentile(xs, 95).toFixed(3)} ms`;
  console.log(
    `${label}: ${events.length} events per invocation, ${RUNS} invocations\n` +
      `  without a transcript: ${fmt(without)}\n` +
      `  with a transcript:    ${fmt(withT)} (overhead ≈ ${(percentile(withT, 50) - percentile(without, 50)).toFixed(3)} ms per invocation)\n` +
      `  CPU time with a transcript: ${(cpuUs / RUNS / 1000).toFixed(3)} ms per invocation (user + system; less sensitive to the load than wall time)\n` +
      `  transcript file: ${bytes} bytes (bound ${512 * 1024})${sink < 0 ? '' : ''}`,
  );
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-bench-transcripts-'));
try {
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${os.cpus().length} cores (the numbers grow with the load)`,
  );
  measure('typical invocation (24 tool calls)', stream(24), dir);
  measure('long invocation (240 tool calls)', stream(240), dir);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
