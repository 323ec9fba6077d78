// The CLI command lines the backends build (the headless contracts of claude -p and codex
// exec), as pure functions.
import { strict as assert } from 'node:assert';
import { claudeArgs, defaultPermissionMode, schemaForClaude } from '../../../src/agents/claudeBackend';
import { codexArgs } from '../../../src/agents/codexBackend';
import { InvalidAgentRequestError, validateAgentRequest } from '../../../src/agents/types';
import type { AgentRequest } from '../../../src/agents/types';

const req: AgentRequest = { prompt: 'p', cwd: '/w', model: 'sonnet', maxTurns: 7, timeoutMs: 1000 };

describe('agents/backend command lines', () => {
  it('claude: headless stream-json with --verbose, model, max turns and permission mode; prompt not in argv', () => {
    assert.deepEqual(claudeArgs(req, 'acceptEdits'), [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'sonnet',
      '--max-turns',
      '7',
      '--permission-mode',
      'acceptEdits',
      '--strict-mcp-config',
      '--mcp-config',
      '{"mcpServers":{}}',
    ]);
  });

  it('claude: optional budget, schema without $schema, appended system prompt and extra flags', () => {
    const args = claudeArgs(
      {
        ...req,
        budgetUsd: 2.5,
        jsonSchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
        appendSystemPrompt: 'be brief',
      },
      'dontAsk',
      ['--allowedTools', 'Read,Edit'],
    );
    assert.deepEqual(args.slice(8), [
      '--max-budget-usd',
      '2.5',
      '--permission-mode',
      'dontAsk',
      '--strict-mcp-config',
      '--mcp-config',
      '{"mcpServers":{}}',
      '--json-schema',
      '{"type":"object"}',
      '--append-system-prompt',
      'be brief',
      '--allowedTools',
      'Read,Edit',
    ]);
    assert.deepEqual(schemaForClaude({ $schema: 'x', type: 'string' }), { type: 'string' });
  });

  it('claude: acceptEdits is the default permission mode (works as root without IS_SANDBOX)', () => {
    assert.equal(defaultPermissionMode(), 'acceptEdits');
  });

  it('codex: exec --json with repo check skipped, cwd, model, sandbox, overrides, schema file, stdin prompt', () => {
    assert.deepEqual(codexArgs(req, { configOverrides: ['analytics.enabled=false'], extraArgs: ['--disable', 'plugins'] }, '/tmp/s.json'), [
      'exec',
      '--json',
      '--skip-git-repo-check',
      '-C',
      '/w',
      '-m',
      'sonnet',
      '--sandbox',
      'workspace-write',
      '--ephemeral',
      '-c',
      'sandbox_workspace_write.exclude_slash_tmp=true',
      '-c',
      'analytics.enabled=false',
      '--output-schema',
      '/tmp/s.json',
      '--disable',
      'plugins',
      '-',
    ]);
  });

  it('codex: /tmp stays read-only only under workspace-write', () => {
    assert.ok(!codexArgs(req, { sandbox: 'read-only' }).includes('sandbox_workspace_write.exclude_slash_tmp=true'));
    assert.ok(codexArgs(req, {}).includes('sandbox_workspace_write.exclude_slash_tmp=true'));
  });

  it('rejects requests no backend can run, naming the field', () => {
    assert.throws(
      () => validateAgentRequest({ ...req, prompt: '' }),
      (e: unknown) => e instanceof InvalidAgentRequestError && e.field === 'prompt',
    );
    assert.throws(() => validateAgentRequest({ ...req, maxTurns: 0 }), /maxTurns/);
    assert.throws(() => validateAgentRequest({ ...req, timeoutMs: 0 }), /timeoutMs/);
    assert.throws(() => validateAgentRequest({ ...req, budgetUsd: -1 }), /budgetUsd/);
  });
});
