// The in-process backend (the shape the VS Code LM backend plugs into) with a scenario-played
// model: real local tools in a temp repo, turn/budget/timeout/stop handling, confinement.
import { strict as assert } from 'node:assert';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { createInProcessBackend } from '../../../src/agents/inProcess';
import { confinedPath, executeLocalTool, PathOutsideWorkspaceError } from '../../../src/agents/localTools';
import type { AgentEvent, AgentRequest } from '../../../src/agents/types';
import { makeTempRepo, processesIn } from '../../kit/agentEnv';
import { waitUntil } from '../../kit/wait';
import { scenarioChatModel } from '../../kit/scenarioChatModel';

describe('agents/in-process backend', function () {
  this.timeout(20_000);
  let repo: { dir: string; cleanup(): void };
  beforeEach(() => {
    repo = makeTempRepo();
  });
  afterEach(() => repo.cleanup());

  const request = (over: Partial<AgentRequest> = {}): AgentRequest => ({
    prompt: 'Do the task',
    cwd: repo.dir,
    model: 'copilot-gpt-test',
    maxTurns: 5,
    timeoutMs: 10_000,
    env: { PATH: process.env.PATH },
    ...over,
  });
  const backend = (scenario: unknown) => createInProcessBackend({ id: 'vscode-lm', model: () => scenarioChatModel(scenario), baseEnv: {} });

  it('given write, edit and bash turns, then the files change, events flow and tokens are counted and priced', async () => {
    const events: AgentEvent[] = [];
    const r = await backend({
      turns: [
        { text: 'Writing', tools: [{ tool: 'write', path: 'src/a.txt', content: 'one\n' }] },
        {
          tools: [
            { tool: 'edit', path: 'src/a.txt', old: 'one', new: 'two' },
            { tool: 'bash', command: 'cat src/a.txt; echo err >&2' },
          ],
        },
        { text: 'Finished.' },
      ],
    }).run(request(), (e) => events.push(e));
    assert.equal(r.status, 'success');
    assert.equal(readFileSync(join(repo.dir, 'src', 'a.txt'), 'utf8'), 'two\n');
    assert.equal(r.text, 'Finished.');
    assert.equal(r.turns, 3);
    assert.ok(r.tokens.input > 0 && r.tokens.output > 0);
    assert.ok(r.costUsd > 0);
    assert.equal(r.model, 'copilot-gpt-test');
    assert.deepEqual(
      events.map((e) => e.type),
      ['init', 'text', 'tool_use', 'tool_result', 'tool_use', 'tool_use', 'tool_result', 'tool_result', 'text'],
    );
    const bash = events.filter((e): e is Extract<AgentEvent, { type: 'tool_result' }> => e.type === 'tool_result').at(-1);
    assert.equal(bash?.output, 'two\nerr');
  });

  it('given endless tools, then max_turns; given a low budget, then budget; given a model error, then error', async () => {
    const loop = { turns: [{ tools: [{ tool: 'bash', command: 'true' }] }], after: 'repeat' };
    assert.equal((await backend(loop).run(request({ maxTurns: 3 }))).status, 'max_turns');
    const budget = await backend(loop).run(request({ maxTurns: 50, budgetUsd: 0.0001 }));
    assert.equal(budget.status, 'budget');
    const err = await backend({ turns: [{ error: { status: 403, message: 'NoPermissions: the user denied access' } }] }).run(request());
    assert.equal(err.status, 'error');
    assert.deepEqual(err.errors, ['ScriptedModelError: NoPermissions: the user denied access']);
  });

  it('given a model that never answers and ignores the signal, when the timeout fires, then cancelled', async () => {
    const r = await backend({ turns: [{ hang: true }] }).run(request({ timeoutMs: 300 }));
    assert.equal(r.status, 'cancelled');
    assert.equal(r.stopReason, 'timeout');
  });

  it('given a long command, when stopped, then cancelled and the command is gone', async () => {
    const controller = new AbortController();
    let started = false;
    const run = backend({ turns: [{ tools: [{ tool: 'bash', command: 'sleep 1000' }] }] }).run(
      request({ signal: controller.signal }),
      (e) => {
        if (e.type === 'tool_use') started = true;
      },
    );
    await waitUntil('the command runs', () => started && processesIn(repo.dir).length > 0);
    controller.abort();
    const r = await run;
    assert.equal(r.status, 'cancelled');
    assert.equal(r.stopReason, 'abort');
    await waitUntil('no process left', () => processesIn(repo.dir).length === 0, 3000);
  });

  it('given a JSON schema, then the final JSON block is the structured answer', async () => {
    const schema = z.strictObject({ verdict: z.enum(['approve', 'reject']) });
    const model = scenarioChatModel({ turns: [{ structured: { verdict: 'approve' } }] });
    const r = await createInProcessBackend({ model: () => model }).run(
      request({ jsonSchema: z.toJSONSchema(schema) as Record<string, unknown> }),
    );
    assert.deepEqual(schema.parse(r.structured), { verdict: 'approve' });
    const sent = model.calls[0]?.[0];
    assert.ok(sent?.role === 'user' && sent.text.includes('JSON Schema'));
  });

  it('confines file tools to the working directory, symlinks included', async () => {
    mkdirSync(join(repo.dir, 'sub'));
    assert.equal(confinedPath(repo.dir, 'sub/x.txt'), join(repo.dir, 'sub', 'x.txt'));
    assert.throws(() => confinedPath(repo.dir, '../escape.txt'), PathOutsideWorkspaceError);
    assert.throws(() => confinedPath(repo.dir, '/etc/passwd'), PathOutsideWorkspaceError);
    symlinkSync('/tmp', join(repo.dir, 'link'));
    assert.throws(() => confinedPath(repo.dir, 'link/evil.txt'), PathOutsideWorkspaceError);
    symlinkSync('/nonexistent-target-xyz', join(repo.dir, 'dangling'));
    assert.throws(() => confinedPath(repo.dir, 'dangling'), PathOutsideWorkspaceError);
    const out = await executeLocalTool('Write', { file_path: '../../x', content: 'no' }, { cwd: repo.dir, env: {} });
    assert.equal(out.isError, true);
    writeFileSync(join(repo.dir, 'dup.txt'), 'a a');
    const dup = await executeLocalTool('Edit', { file_path: 'dup.txt', old_string: 'a', new_string: 'b' }, { cwd: repo.dir, env: {} });
    assert.match(dup.output, /more than once/);
  });
});
