// The real `codex exec --json` (pinned 0.171.0 from .tools/) against the scripted model
// server's Responses API: apply_patch and exec_command really run in a temp git repo; the
// harness times the run and prices the tokens; the metrics line is checked field by field.
// Everything runs twice: with bubblewrap on PATH (codex sandboxes commands through it) and
// without (codex falls back to its own helpers): both must write inside and nothing outside.
import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createCodexBackend } from '../../../src/agents/codexBackend';
import { detectConfinement } from '../../../src/agents/sandbox';
import { invokeAgent } from '../../../src/agents/invoke';
import { readMetrics } from '../../../src/agents/metrics';
import { DEFAULT_PRICES, priceTokens } from '../../../src/agents/pricing';
import type { AgentBackend, AgentEvent, AgentRequest } from '../../../src/agents/types';
import { codexMockProvider, codexSandbox, ensureAgentClis, makeTempRepo, pathWithout, processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';
import type { Sandbox } from '../../kit/agentEnv';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';

const MODEL = 'gpt-5.5';

const onPath = (name: string, path: string): boolean => path.split(':').some((d) => d.length > 0 && existsSync(join(d, name)));

for (const variant of ['with bubblewrap on PATH', 'without bubblewrap on PATH'] as const)
  describe(`agents/codex backend with the real codex CLI, ${variant}`, function () {
    this.timeout(180_000);
    let codexBin: string;
    let path: string;
    let noBwrap: { path: string; cleanup(): void } | undefined;
    let server: ModelServer | undefined;
    let sandbox: Sandbox | undefined;
    let repo: { dir: string; cleanup(): void };
    let project: string;

    before(function () {
      this.timeout(900_000);
      codexBin = ensureAgentClis().codex;
      path = process.env.PATH ?? '/usr/bin:/bin';
      if (variant === 'without bubblewrap on PATH') {
        noBwrap = pathWithout(['bwrap']);
        path = noBwrap.path;
      } else if (!onPath('bwrap', path)) {
        // .ci/run installs bubblewrap; a developer machine without it still runs the other half.
        this.skip();
      }
    });
    after(() => noBwrap?.cleanup());
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

    async function setUp(
      scenario: unknown,
      graceMs?: number,
    ): Promise<{ server: ModelServer; backend: AgentBackend; env: Record<string, string> }> {
      server = await startModelServer(scenario);
      sandbox = codexSandbox(path);
      const backend = createCodexBackend({
        command: codexBin,
        baseEnv: {},
        ...codexMockProvider(server.url),
        ...(graceMs !== undefined ? { graceMs } : {}),
      });
      return { server, backend, env: sandbox.env };
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

    it('given patch, command and answer turns, then the file is really written and tokens, priced cost and metrics are right', async () => {
      const { server, backend, env } = await setUp({
        match: 'TASK-HELLO',
        turns: [
          {
            text: 'Writing.',
            tools: [{ tool: 'write', path: 'hello.txt', content: 'hi\nthere\n' }],
            usage: { input_tokens: 1000, output_tokens: 100, cache_read_input_tokens: 500 },
          },
          {
            tools: [
              { tool: 'bash', command: 'cat hello.txt' },
              { tool: 'edit', path: 'hello.txt', old: 'there', new: 'world' },
            ],
            usage: { input_tokens: 10, output_tokens: 20 },
          },
          { text: 'Created hello.txt.', usage: { input_tokens: 5, output_tokens: 7 } },
        ],
      });
      const events: AgentEvent[] = [];
      const { result, metrics } = await invokeAgent(
        backend,
        request(env),
        { projectRoot: project, agent: 'B', iter: 1, phaseFrom: 'worker', phaseTo: 'worker', taskId: 'W2-003' },
        (e) => events.push(e),
      );

      assert.equal(result.status, 'success', JSON.stringify(result));
      assert.equal(readFileSync(join(repo.dir, 'hello.txt'), 'utf8'), 'hi\nworld\n');
      assert.equal(result.text, 'Created hello.txt.');
      assert.deepEqual(result.tokens, { input: 1015, output: 127, cacheRead: 500, cacheCreate: 0 });
      assert.equal(result.costUsd, priceTokens(DEFAULT_PRICES, MODEL, result.tokens));
      assert.ok(result.costUsd > 0);
      assert.equal(result.model, MODEL);
      assert.equal(result.turns, 4, 'three tool items + one completed turn');
      assert.equal(result.exitCode, 0);
      assert.ok(result.sessionId.length > 0);
      assert.ok(result.durationMs > 0);

      const kinds = events.filter((e): e is Extract<AgentEvent, { type: 'tool_use' }> => e.type === 'tool_use').map((e) => e.name);
      // The second turn's two calls may run in either order: codex executes a turn's calls side by side.
      assert.equal(kinds[0], 'file_change');
      assert.deepEqual(kinds.slice(1).sort(), ['command_execution', 'file_change']);
      const cat = events.find(
        (e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result' && /^hi\n(there|world)/.test(e.output),
      );
      assert.ok(cat !== undefined, 'the command output came back');
      assert.equal(server.requests.length, 3);
      assert.ok(server.requests.every((r) => r.api === 'openai'));
      assert.match(server.requests[0]?.prompt ?? '', /Create hello\.txt saying hi/);

      const { lines, problems } = readMetrics(project);
      assert.deepEqual(problems, []);
      assert.deepEqual(lines, [metrics]);
      const line = lines[0];
      assert.ok(line !== undefined);
      assert.equal(line.agent, 'B');
      assert.equal(line.iter, 1);
      assert.equal(line.phase_from, 'worker');
      assert.equal(line.phase_to, 'worker');
      assert.equal(line.cost, result.costUsd);
      assert.equal(line.prompt_bytes, Buffer.byteLength(request(env).prompt));
      assert.equal(line.turns, 4);
      assert.equal(line.input_tokens, 1015);
      assert.equal(line.cache_read, 500);
      assert.equal(line.cache_create, 0);
      assert.equal(line.output_tokens, 127);
      assert.equal(line.model, MODEL);
      assert.equal(line.subtype, 'success');
      assert.equal(line.backend, 'codex');
      assert.equal(line.task_id, 'W2-003');
    });

    it('given commands and patches aimed outside the workspace, then only the workspace is written', async () => {
      const outside = mkdtempSync(join(tmpdir(), 'ralph-codex-outside-'));
      try {
        writeFileSync(join(outside, 'README.md'), '# mine\n');
        const { backend, env } = await setUp({
          turns: [
            { tools: [{ tool: 'write', path: 'inside.txt', content: 'ok\n' }] },
            { tools: [{ tool: 'bash', command: `echo pwned >> ${outside}/README.md` }] },
            { tools: [{ tool: 'write', path: join(outside, 'new.txt'), content: 'pwned\n' }] },
            { tools: [{ tool: 'edit', path: join(outside, 'README.md'), old: '# mine', new: '# pwned' }] },
            { tools: [{ tool: 'bash', command: `mkdir -p ${repo.dir}/.git/hooks && echo x > ${repo.dir}/.git/hooks/pre-commit` }] },
            { text: 'done' },
          ],
        });
        const result = await backend.run(request(env));
        assert.equal(result.status, 'success', JSON.stringify(result));
        assert.equal(readFileSync(join(repo.dir, 'inside.txt'), 'utf8'), 'ok\n');
        assert.equal(readFileSync(join(outside, 'README.md'), 'utf8'), '# mine\n');
        assert.ok(!existsSync(join(outside, 'new.txt')), 'apply_patch outside the workspace was refused');
        assert.ok(!existsSync(join(repo.dir, '.git', 'hooks', 'pre-commit')), "the workspace's .git stays read-only");
      } finally {
        rmSync(outside, { recursive: true, force: true });
      }
    });

    it('given the confinement the loop gives codex on this machine, when commands and patches aim outside the worktree, then only the worktree and the scratch are written', async () => {
      const outside = mkdtempSync(join(tmpdir(), 'ralph-codex-outside-'));
      const scratch = mkdtempSync(join(tmpdir(), 'ralph-codex-scratch-'));
      try {
        writeFileSync(join(outside, 'README.md'), '# mine\n');
        const confinement = detectConfinement('codex', { PATH: path });
        // With bubblewrap the loop wraps codex in it (codex's own sandbox cannot start there);
        // without, codex's own workspace-write sandbox confines it.
        assert.equal(confinement.kind, variant === 'with bubblewrap on PATH' ? 'bwrap' : 'cli-sandbox');
        server = await startModelServer({
          turns: [
            { tools: [{ tool: 'write', path: 'inside.txt', content: 'ok\n' }] },
            { tools: [{ tool: 'bash', command: `echo pwned >> ${outside}/README.md; echo tmp > "$TMPDIR/mine.txt"` }] },
            { tools: [{ tool: 'write', path: join(outside, 'new.txt'), content: 'pwned\n' }] },
            { tools: [{ tool: 'edit', path: join(outside, 'README.md'), old: '# mine', new: '# pwned' }] },
            { tools: [{ tool: 'bash', command: `mkdir -p ${repo.dir}/.git/hooks && echo x > ${repo.dir}/.git/hooks/pre-commit` }] },
            { text: 'done' },
          ],
        });
        const backend = createCodexBackend({ command: codexBin, baseEnv: {}, confinement, ...codexMockProvider(server.url) });
        const result = await backend.run(request({ PATH: path, CODEX_API_KEY: 'test-key-not-secret-0123456789' }, { scratchDir: scratch }));
        assert.equal(result.status, 'success', JSON.stringify(result));
        assert.equal(readFileSync(join(repo.dir, 'inside.txt'), 'utf8'), 'ok\n');
        assert.equal(readFileSync(join(outside, 'README.md'), 'utf8'), '# mine\n');
        assert.ok(!existsSync(join(outside, 'new.txt')), 'a patch outside the worktree was refused');
        assert.ok(!existsSync(join(repo.dir, '.git', 'hooks', 'pre-commit')), "the worktree's .git stays read-only");
        assert.equal(readFileSync(join(scratch, 'tmp', 'mine.txt'), 'utf8'), 'tmp\n', 'its own TMPDIR (the scratch) is writable');
      } finally {
        rmSync(outside, { recursive: true, force: true });
        rmSync(scratch, { recursive: true, force: true });
      }
    });

    it('given an API error, then status error with the message', async () => {
      const { backend, env } = await setUp({ turns: [{ error: { status: 400, message: 'scripted bad request' } }] });
      const result = await backend.run(request(env));
      assert.equal(result.status, 'error', JSON.stringify(result));
      assert.equal(result.exitCode, 1);
      assert.ok(
        result.errors.some((e) => e.includes('scripted bad request')),
        JSON.stringify(result.errors),
      );
    });

    it('given a model that never stops calling tools, then the harness stops it with max_turns', async () => {
      const { backend, env } = await setUp({ turns: [{ tools: [{ tool: 'bash', command: 'true' }] }], after: 'repeat' }, 1000);
      const result = await backend.run(request(env, { maxTurns: 3 }));
      assert.equal(result.status, 'max_turns');
      assert.equal(result.turns, 3);
      await waitUntil('no process left in the repo', () => processesIn(repo.dir).length === 0, 3000);
    });

    it('given a server that never answers, when the timeout fires, then cancelled and no process is left', async () => {
      const { server, backend, env } = await setUp({ turns: [{ hang: true }] }, 1000);
      const run = backend.run(request(env, { timeoutMs: 5000 }));
      await server.waitForRequests(1);
      const result = await run;
      assert.equal(result.status, 'cancelled');
      assert.equal(result.stopReason, 'timeout');
      await waitUntil('no process left in the repo', () => processesIn(repo.dir).length === 0, 3000);
    });

    it('given a JSON schema, then the final message parses as the structured answer', async () => {
      const verdict = z.strictObject({ verdict: z.enum(['approve', 'reject']), reasons: z.array(z.string()) });
      const { server, backend, env } = await setUp({ turns: [{ structured: { verdict: 'reject', reasons: ['no tests'] } }] });
      const result = await backend.run(request(env, { jsonSchema: z.toJSONSchema(verdict) as Record<string, unknown> }));
      assert.equal(result.status, 'success', JSON.stringify(result));
      assert.deepEqual(verdict.parse(result.structured), { verdict: 'reject', reasons: ['no tests'] });
      const text = (server.requests[0]?.body as { text?: { format?: { type?: string } } }).text;
      assert.equal(text?.format?.type, 'json_schema', 'codex sent the schema to the model');
    });
  });
