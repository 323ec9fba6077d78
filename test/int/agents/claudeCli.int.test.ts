// The real `claude` CLI (pinned 2.1.332 from .tools/) against the scripted model server:
// real flags, real tools writing real files in a temp git repo, real stream-json parsed by
// our backend, metrics lines checked field by field. The model is the only scripted part.
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { invokeAgent } from '../../../src/agents/invoke';
import { metricsFileName, readMetrics } from '../../../src/agents/metrics';
import type { AgentEvent, AgentRequest } from '../../../src/agents/types';
import { claudeSandbox, ensureAgentClis, makeTempRepo, processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';
import type { Sandbox } from '../../kit/agentEnv';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';

const MODEL = 'claude-sonnet-4-5-20250929';

describe('agents/claude backend with the real claude CLI', function () {
  this.timeout(180_000);
  let claudeBin: string;
  let server: ModelServer | undefined;
  let sandbox: Sandbox | undefined;
  let repo: { dir: string; cleanup(): void };
  let project: string;

  before(function () {
    this.timeout(900_000); // first install of the pinned CLIs
    claudeBin = ensureAgentClis().claude;
  });
  beforeEach(() => {
    repo = makeTempRepo();
    project = mkdtempSync(join(tmpdir(), 'ralph-project-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    sandbox?.cleanup();
    sandbox = undefined;
    repo.cleanup();
    rmSync(project, { recursive: true, force: true });
  });

  async function setUp(scenario: unknown): Promise<{ server: ModelServer; env: Record<string, string> }> {
    server = await startModelServer(scenario);
    sandbox = claudeSandbox(server.url);
    return { server, env: sandbox.env };
  }

  function request(env: Record<string, string>, overrides: Partial<AgentRequest> = {}): AgentRequest {
    return {
      prompt: 'Create hello.txt saying hi. TASK-HELLO',
      cwd: repo.dir,
      model: MODEL,
      maxTurns: 5,
      timeoutMs: 60_000,
      env,
      ...overrides,
    };
  }

  it('given a write-then-answer script, then the file is really written and tokens, cost, turns and metrics are exact', async () => {
    const { server, env } = await setUp({
      match: 'TASK-HELLO',
      turns: [
        {
          text: 'Writing the file.',
          tools: [{ tool: 'write', path: 'hello.txt', content: 'hi\n' }],
          usage: { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 2000, cache_creation_input_tokens: 400 },
        },
        { tools: [{ tool: 'bash', command: 'git status --porcelain' }], usage: { input_tokens: 10, output_tokens: 30 } },
        { text: 'Created hello.txt.', usage: { input_tokens: 5, output_tokens: 7 } },
      ],
    });
    const events: AgentEvent[] = [];
    const backend = createClaudeBackend({ command: claudeBin, baseEnv: {} });
    const { result, metrics, metricsFile } = await invokeAgent(
      backend,
      request(env),
      { projectRoot: project, agent: 'A', iter: 4, phaseFrom: 'implement', phaseTo: 'verify', taskId: 'W1-001' },
      (e) => events.push(e),
    );

    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(readFileSync(join(repo.dir, 'hello.txt'), 'utf8'), 'hi\n');
    assert.equal(result.text, 'Created hello.txt.');
    assert.equal(result.turns, 3);
    assert.deepEqual(result.tokens, { input: 1015, output: 137, cacheRead: 2000, cacheCreate: 400 });
    // Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    const expected = (1015 * 3 + 137 * 15 + 2000 * 0.3 + 400 * 3.75) / 1e6;
    assert.ok(Math.abs(result.costUsd - expected) < 1e-6, `cost ${result.costUsd} vs ${expected}`);
    assert.equal(result.model, MODEL);
    assert.equal(result.exitCode, 0);
    assert.match(result.sessionId, /^[0-9a-f-]{36}$/);
    assert.equal(result.subtype, 'success');

    assert.equal(events[0]?.type, 'init');
    const toolUses = events.filter((e): e is Extract<AgentEvent, { type: 'tool_use' }> => e.type === 'tool_use');
    assert.deepEqual(
      toolUses.map((t) => t.name),
      ['Write', 'Bash'],
    );
    const bashResult = events.filter((e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result')[1];
    assert.match(bashResult?.output ?? '', /\?\? hello\.txt/);

    assert.equal(server.requests.length, 3);
    assert.ok(server.requests.every((r) => r.api === 'anthropic' && r.answer === 'stream'));
    assert.match(server.requests[0]?.prompt ?? '', /Create hello\.txt saying hi/);

    // The metrics line, field by field.
    assert.equal(metricsFile, join(project, '.ralph', 'logs', metricsFileName(new Date(metrics.ts))));
    const { lines, problems } = readMetrics(project);
    assert.deepEqual(problems, []);
    assert.equal(lines.length, 1);
    const line = lines[0];
    assert.ok(line !== undefined);
    assert.match(line.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(line.agent, 'A');
    assert.equal(line.iter, 4);
    assert.equal(line.phase_from, 'implement');
    assert.equal(line.phase_to, 'verify');
    assert.ok(line.duration > 0 && line.duration < 60);
    assert.ok(Math.abs(line.cost - expected) < 1e-6);
    assert.equal(line.prompt_bytes, Buffer.byteLength(request(env).prompt));
    assert.equal(line.turns, 3);
    assert.equal(line.input_tokens, 1015);
    assert.equal(line.cache_read, 2000);
    assert.equal(line.cache_create, 400);
    assert.equal(line.output_tokens, 137);
    assert.equal(line.model, MODEL);
    assert.equal(line.subtype, 'success');
    assert.equal(line.backend, 'claude');
    assert.equal(line.task_id, 'W1-001');
    assert.ok(!readFileSync(metricsFile, 'utf8').includes(env.ANTHROPIC_API_KEY ?? '<none>'));
  });

  it('given a model that never stops calling tools, then max_turns with turns clamped to the limit', async () => {
    const { env } = await setUp({ turns: [{ tools: [{ tool: 'bash', command: 'true' }] }], after: 'repeat' });
    const result = await createClaudeBackend({ command: claudeBin, baseEnv: {} }).run(request(env, { maxTurns: 2 }));
    assert.equal(result.status, 'max_turns');
    assert.equal(result.subtype, 'error_max_turns');
    assert.equal(result.turns, 2);
    assert.equal(result.exitCode, 1);
  });

  it('given expensive turns and a budget, then the CLI stops the run with budget', async () => {
    const { env } = await setUp({
      turns: [{ tools: [{ tool: 'bash', command: 'true' }], usage: { input_tokens: 200_000, output_tokens: 1000 } }],
      after: 'repeat',
    });
    const result = await createClaudeBackend({ command: claudeBin, baseEnv: {} }).run(request(env, { maxTurns: 20, budgetUsd: 1 }));
    assert.equal(result.status, 'budget');
    assert.equal(result.subtype, 'error_max_budget_usd');
    assert.ok(result.costUsd >= 1, `cost ${result.costUsd}`);
    assert.ok(result.turns < 20);
  });

  it('given an API error, then status error with the message and exit code 1', async () => {
    const { server, env } = await setUp({ turns: [{ error: { status: 400, message: 'scripted bad request' } }] });
    const result = await createClaudeBackend({ command: claudeBin, baseEnv: {} }).run(request(env));
    assert.equal(result.status, 'error');
    assert.equal(result.exitCode, 1);
    assert.ok(
      result.errors.some((e) => e.includes('scripted bad request')),
      JSON.stringify(result.errors),
    );
    assert.ok(server.requests.length >= 1);
  });

  it('given a transient overload, then the CLI retries (api_retry lines, ignored by the parser) and succeeds', async () => {
    const { server, env } = await setUp({ turns: [{ error: { status: 529, message: 'overloaded', times: 1 }, text: 'Recovered.' }] });
    const result = await createClaudeBackend({ command: claudeBin, baseEnv: {} }).run(request(env));
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.equal(result.text, 'Recovered.');
    assert.deepEqual(
      server.requests.map((r) => r.answer),
      ['error 529', 'stream'],
    );
  });

  it('given a server that never answers, when the timeout fires, then cancelled and no process is left', async () => {
    const { server, env } = await setUp({ turns: [{ hang: true }] });
    const run = createClaudeBackend({ command: claudeBin, baseEnv: {}, graceMs: 2000 }).run(request(env, { timeoutMs: 8000 }));
    await server.waitForRequests(1);
    assert.ok(processesIn(repo.dir).length >= 1, 'claude is running in the repo');
    const result = await run;
    assert.equal(result.status, 'cancelled');
    assert.equal(result.stopReason, 'timeout');
    await waitUntil('no process left in the repo', () => processesIn(repo.dir).length === 0, 3000);
  });

  it('given an abort signal mid-run, then cancelled within the grace period', async () => {
    const { server, env } = await setUp({ turns: [{ hang: true }] });
    const controller = new AbortController();
    const run = createClaudeBackend({ command: claudeBin, baseEnv: {}, graceMs: 2000 }).run(request(env, { signal: controller.signal }));
    await server.waitForRequests(1);
    const stopAt = Date.now();
    controller.abort();
    const result = await run;
    assert.equal(result.status, 'cancelled');
    assert.equal(result.stopReason, 'abort');
    assert.ok(Date.now() - stopAt < 5000);
    await waitUntil('no process left in the repo', () => processesIn(repo.dir).length === 0, 3000);
  });

  it('given a JSON schema, then the structured answer validates with zod', async () => {
    const verdict = z.strictObject({ verdict: z.enum(['approve', 'reject', 'modify']), reasons: z.array(z.string()).min(1) });
    const { server, env } = await setUp({
      turns: [{ tools: [{ tool: 'bash', command: 'git log --oneline' }] }, { structured: { verdict: 'approve', reasons: ['gates pass'] } }],
    });
    const result = await createClaudeBackend({ command: claudeBin, baseEnv: {} }).run(
      request(env, { jsonSchema: z.toJSONSchema(verdict) as Record<string, unknown> }),
    );
    assert.equal(result.status, 'success', JSON.stringify(result));
    assert.deepEqual(verdict.parse(result.structured), { verdict: 'approve', reasons: ['gates pass'] });
    const tools = (server.requests[0]?.body as { tools?: { name: string }[] }).tools ?? [];
    assert.ok(
      tools.some((t) => t.name === 'StructuredOutput'),
      'the CLI offered the StructuredOutput tool',
    );
  });

  it('given a missing binary, then crashed with the spawn error in the stderr tail', async () => {
    const { env } = await setUp({ turns: [{ text: 'unused' }] });
    const result = await createClaudeBackend({ command: join(repo.dir, 'no-claude'), baseEnv: {} }).run(request(env));
    assert.equal(result.status, 'crashed');
    assert.ok(result.stderrTail.length > 0);
    assert.ok(!existsSync(join(repo.dir, 'hello.txt')));
  });
});
