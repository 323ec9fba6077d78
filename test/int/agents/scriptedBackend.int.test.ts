// The scripted backend: the real Claude backend driving src/agents/scripted/scriptedClaude.mjs, which
// performs the scenario's tool calls itself. Fast, and it exercises the same parser.
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { createScriptedBackend } from '../../../src/agents/scriptedBackend';
import type { AgentEvent, AgentRequest } from '../../../src/agents/types';
import { makeTempRepo, processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';

describe('agents/scripted backend (scriptedClaude.mjs)', function () {
  this.timeout(30_000);
  let repo: { dir: string; cleanup(): void };
  beforeEach(() => {
    repo = makeTempRepo();
  });
  afterEach(() => repo.cleanup());

  const request = (over: Partial<AgentRequest> = {}): AgentRequest => ({
    prompt: 'Do it. TASK-1',
    cwd: repo.dir,
    model: 'sonnet',
    maxTurns: 5,
    timeoutMs: 20_000,
    ...over,
  });
  const backend = (scenario: unknown, graceMs?: number): ReturnType<typeof createScriptedBackend> =>
    createScriptedBackend({
      scenario: JSON.stringify(scenario),
      baseEnv: { PATH: process.env.PATH },
      ...(graceMs !== undefined ? { graceMs } : {}),
    });

  it('given write, edit and bash turns, then the files change and the result adds up', async () => {
    const events: AgentEvent[] = [];
    const r = await backend({
      match: 'TASK-1',
      turns: [
        {
          text: 'Writing',
          tools: [{ tool: 'write', path: 'src/a.txt', content: 'one\n' }],
          usage: { input_tokens: 1000, output_tokens: 100 },
        },
        {
          tools: [
            { tool: 'edit', path: 'src/a.txt', old: 'one', new: 'two' },
            { tool: 'bash', command: 'cat src/a.txt' },
          ],
        },
        { text: 'All done.' },
      ],
    }).run(request(), (e) => events.push(e));
    assert.equal(r.status, 'success');
    assert.equal(readFileSync(join(repo.dir, 'src', 'a.txt'), 'utf8'), 'two\n');
    assert.equal(r.text, 'All done.');
    assert.equal(r.turns, 3);
    assert.deepEqual(r.tokens, { input: 1200, output: 140, cacheRead: 0, cacheCreate: 0 });
    assert.ok(Math.abs(r.costUsd - (1200 * 3 + 140 * 15) / 1e6) < 1e-9);
    const bash = events.filter((e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result').at(-1);
    assert.equal(bash?.output, 'two');
  });

  it('given endless tool calls, then max_turns; given expensive turns, then budget; given an API error, then error', async () => {
    const loop = {
      turns: [{ tools: [{ tool: 'bash', command: 'true' }], usage: { input_tokens: 400_000, output_tokens: 0 } }],
      after: 'repeat',
    };
    const maxTurns = await backend(loop).run(request({ maxTurns: 2 }));
    assert.equal(maxTurns.status, 'max_turns');
    assert.equal(maxTurns.turns, 2);
    const budget = await backend(loop).run(request({ maxTurns: 10, budgetUsd: 2 }));
    assert.equal(budget.status, 'budget');
    assert.equal(budget.turns, 2);
    const error = await backend({ turns: [{ error: { status: 500, message: 'boom' } }] }).run(request());
    assert.equal(error.status, 'error');
    assert.deepEqual(error.errors, ['API Error: 500 boom']);
    assert.equal(error.exitCode, 1);
  });

  it('given a transient error, then api_retry lines are ignored and the turn plays', async () => {
    const r = await backend({ turns: [{ error: { status: 529, message: 'overloaded', times: 2 }, text: 'ok' }] }).run(request());
    assert.equal(r.status, 'success');
    assert.equal(r.text, 'ok');
  });

  it('given an agent that started a grandchild sleep and hangs, when aborted, then cancelled and the sleep is gone', async () => {
    const controller = new AbortController();
    let started = false;
    const run = backend(
      { turns: [{ tools: [{ tool: 'bash', command: 'sleep 1000 >/dev/null 2>&1 & echo started' }] }, { hang: true }] },
      1000,
    ).run(request({ signal: controller.signal }), (e) => {
      if (e.type === 'tool_result' && e.output === 'started') started = true;
    });
    await waitUntil('the grandchild started', () => started);
    assert.ok(processesIn(repo.dir).length >= 2, 'agent and sleep are running');
    controller.abort();
    const r = await run;
    assert.equal(r.status, 'cancelled');
    assert.equal(r.stopReason, 'abort');
    await waitUntil('no process left', () => processesIn(repo.dir).length === 0, 3000);
  });

  it('given a JSON schema, then the structured answer validates with zod', async () => {
    const schema = z.strictObject({ steps: z.array(z.string()), files: z.array(z.string()) });
    const r = await backend({ turns: [{ structured: { steps: ['a'], files: ['x.ts'] } }] }).run(
      request({ jsonSchema: z.toJSONSchema(schema) as Record<string, unknown> }),
    );
    assert.equal(r.status, 'success');
    assert.deepEqual(schema.parse(r.structured), { steps: ['a'], files: ['x.ts'] });
  });

  it('given an invalid scenario, then crashed with the validation message in the stderr tail', async () => {
    const r = await backend({ turns: [{ tools: [{ tool: 'nope' }] }] }).run(request());
    assert.equal(r.status, 'crashed');
    assert.match(r.stderrTail, /inline scenario: invalid scenario: turns\.0\.tools\.0\.tool/);
  });
});
