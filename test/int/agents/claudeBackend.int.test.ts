// The Claude backend's process contract with a stand-in executable that reports what it
// received: the prompt arrives on stdin (not argv), the env is the base env plus the
// request's, IS_SANDBOX only for an explicit bypassPermissions as root, stderr redacted.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClaudeBackend, isRoot } from '../../../src/agents/claudeBackend';
import type { AgentRequest } from '../../../src/agents/types';

const ECHO = `
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => {
  process.stderr.write('auth failed for key ' + process.env.ANTHROPIC_API_KEY + '\\n');
  const report = { argv: process.argv.slice(2), stdin: input, sandbox: process.env.IS_SANDBOX ?? null, extra: process.env.EXTRA ?? null, base: process.env.BASE ?? null };
  console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: JSON.stringify(report), session_id: 's' }));
});
`;

describe('agents/claude backend process contract', () => {
  let dir: string;
  let script: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ralph-fake-claude-'));
    script = join(dir, 'fake.js');
    writeFileSync(script, ECHO);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const request: AgentRequest = {
    prompt: 'line one\n--model evil\n',
    cwd: '/tmp',
    model: 'sonnet',
    maxTurns: 3,
    timeoutMs: 10_000,
    env: { EXTRA: 'x', ANTHROPIC_API_KEY: 'sk-ant-api03-abcdefghijklmnop' },
  };
  type Report = { argv: string[]; stdin: string; sandbox: string | null; extra: string | null; base: string | null };

  it('sends the prompt on stdin, the flags in argv, base plus request env, and redacts stderr', async () => {
    const r = await createClaudeBackend({
      command: process.execPath,
      commandArgs: [script],
      baseEnv: { PATH: process.env.PATH, BASE: 'b' },
    }).run(request);
    assert.equal(r.status, 'success');
    const report = JSON.parse(r.text) as Report;
    assert.equal(report.stdin, request.prompt);
    assert.ok(!report.argv.includes('line one'));
    assert.deepEqual(report.argv.slice(0, 4), ['-p', '--output-format', 'stream-json', '--verbose']);
    assert.equal(report.extra, 'x');
    assert.equal(report.base, 'b');
    assert.equal(report.sandbox, null, 'acceptEdits needs no IS_SANDBOX');
    assert.match(r.stderrTail, /auth failed for key \[REDACTED\]/);
    assert.ok(!r.stderrTail.includes('abcdefghijklmnop'));
  });

  it('sets IS_SANDBOX=1 only for an explicit bypassPermissions as root', async () => {
    const r = await createClaudeBackend({ command: process.execPath, commandArgs: [script], baseEnv: { PATH: process.env.PATH } }).run({
      ...request,
      permissionMode: 'bypassPermissions',
    });
    const report = JSON.parse(r.text) as Report;
    assert.equal(report.sandbox, isRoot() ? '1' : null);
    assert.ok(report.argv.includes('bypassPermissions'));
  });
});
