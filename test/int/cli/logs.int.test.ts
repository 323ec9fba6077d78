// `ralph logs` (the built CLI): the latest transcript, --all, filters, and --follow printing
// lines while a transcript is written (each step waits for the follower's output before the
// next line is written) and a new transcript as it starts; SIGINT ends it with exit 0.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TranscriptWriter, transcriptPath, MAX_TRANSCRIPT_BYTES, type TranscriptRun } from '../../../src/agents/transcript';
import type { AgentResult } from '../../../src/agents/types';
import { runCli } from '../../../src/cli/run';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

const result: AgentResult = {
  status: 'success',
  text: 'done',
  structured: undefined,
  turns: 2,
  durationMs: 1500,
  tokens: { input: 100, output: 20, cacheRead: 0, cacheCreate: 0 },
  costUsd: 0.0012,
  model: 'm',
  sessionId: 's',
  exitCode: 0,
  stderrTail: '',
  subtype: 'success',
  errors: [],
} as AgentResult;

describe('ralph logs', function () {
  this.timeout(120_000);
  let dir: string;
  let ralphDir: string;
  let t = Date.parse('2026-12-01T10:00:00.000Z');
  const now = (): Date => new Date((t += 1000));
  const writer = (agent: string, taskId: string | null, secrets: string[] = []): TranscriptWriter => {
    const run: TranscriptRun = { agent, role: 'worker', phase: 'worker', taskId, backend: 'claude', startedAt: now() };
    return new TranscriptWriter(transcriptPath(ralphDir, run), run, secrets, now, (m) => assert.fail(m));
  };
  async function ralph(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await runCli(['--dir', dir, ...args], { io: { out: (s) => void (out += s), err: (s) => void (err += s) } });
    return { code, out, err };
  }

  before(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-logs-')));
    ralphDir = path.join(dir, '.ralph');
    fs.mkdirSync(ralphDir);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given transcripts of two agents, then the latest, --all, and the filters; none matching is exit 1', async () => {
    const a = writer('worker-1', 'W1-001');
    a.onEvent({ type: 'text', text: 'first run' });
    a.finish(result);
    const b = writer('worker-2', 'W1-002');
    b.onEvent({ type: 'tool_use', id: 'u1', name: 'Bash', input: { command: 'npm test' } });
    b.onEvent({ type: 'tool_result', toolUseId: 'u1', isError: true, output: 'x'.repeat(42) });
    b.finish(result);
    const latest = await ralph('logs');
    assert.equal(latest.code, 0, latest.err);
    assert.match(latest.out, /^# worker-2 \(worker\) worker W1-002 via claude/);
    assert.match(
      latest.out,
      /tool Bash: npm test\n.* result Bash: error \(42 bytes\)\n# ended success: 2 turn\(s\), 100 tokens in \(0 cached\), 20 out, \$0\.0012, 1\.5 s\n$/,
    );
    const all = await ralph('logs', '--all');
    assert.ok(all.out.indexOf('first run') < all.out.indexOf('npm test'));
    assert.match((await ralph('logs', '--agent', 'worker-1')).out, /first run/);
    assert.doesNotMatch((await ralph('logs', '--task', 'W1-001')).out, /npm test/);
    const none = await ralph('logs', '--task', 'W9-009');
    assert.equal(none.code, 1);
    assert.match(none.err, /no transcript for W9-009/);
    assert.equal((await ralph('logs', '--agent', '../x')).code, 2);
  });

  it('given a secret and a flood of text, then the file holds neither the secret nor more than its bound', () => {
    const w = writer('worker-3', 'W1-003', ['hunter2-secret-value']);
    w.onEvent({ type: 'text', text: 'the password is hunter2-secret-value and a key sk-ant-api03-abcdefghijklmnopqrstuvwxyz' });
    for (let i = 0; i < 2000; i++) w.onEvent({ type: 'text', text: 'y'.repeat(1000) });
    w.finish(result);
    const text = fs.readFileSync(w.file, 'utf8');
    assert.ok(!text.includes('hunter2-secret-value') && !text.includes('sk-ant-api03-abcdef'), text.slice(0, 300));
    assert.ok(Buffer.byteLength(text) < MAX_TRANSCRIPT_BYTES + 4096, `${Buffer.byteLength(text)}`);
    assert.match(text, /… transcript cut at 524288 bytes; the rest of this run is not kept\n# ended success/);
  });

  it('given --follow, then each line shows while the transcript grows, a new matching transcript too, and SIGINT ends it', async () => {
    const child: ChildProcess = spawn(process.execPath, [CLI, '--dir', dir, 'logs', '--follow', '--agent', 'worker-9'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const waiters: { text: string; resolve: () => void }[] = [];
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      for (const w of waiters.splice(0))
        if (out.includes(w.text)) w.resolve();
        else waiters.push(w);
    });
    const shown = (text: string): Promise<void> =>
      out.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, resolve }));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const w = writer('worker-9', 'W2-001');
      await shown('# worker-9 (worker) worker W2-001');
      w.onEvent({ type: 'text', text: 'step one' });
      await shown('assistant: step one');
      w.onEvent({ type: 'tool_use', id: 't', name: 'Edit', input: { file_path: 'src/x.ts' } });
      await shown('tool Edit: src/x.ts');
      const other = writer('worker-8', 'W2-002');
      other.onEvent({ type: 'text', text: 'not followed' });
      other.finish(result);
      w.finish(result);
      await shown('# ended success');
      const next = writer('worker-9', 'W2-003');
      next.onEvent({ type: 'text', text: 'second run' });
      await shown('assistant: second run');
      next.finish(result);
      await shown('# worker-9 (worker) worker W2-003');
      assert.ok(!out.includes('not followed'), 'another agent is not followed');
      child.kill('SIGINT');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
