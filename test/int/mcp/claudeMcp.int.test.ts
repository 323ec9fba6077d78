// The real claude CLI (2.1.332) given `ralph mcp` through --mcp-config, driven by the scripted
// model: it calls add_task and then status; the task appears through the policy (a
// proposal accepted, actor mcp, claude's own client name from the handshake), and the final
// answer holds the status the server returned.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openStore } from '../../../src/store/sqlJsStore';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { claudeSandbox, ensureAgentClis } from '../../kit/agentEnv';
import { startModelServer } from '../../kit/modelServer';
import { addTasks, createSampleProject, openSampleStore } from '../loop/sampleProject';
import type { SampleProject } from '../loop/sampleProject';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');

function run(
  cmd: string,
  args: string[],
  o: { cwd: string; env: Record<string, string>; input: string },
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdin.end(o.input);
    child.on('exit', (code) => resolve({ code, out, err }));
  });
}

describe('the real claude CLI with ralph mcp (--mcp-config)', function () {
  this.timeout(300_000);
  let claude: string;
  let p: SampleProject;

  before(async function () {
    this.timeout(900_000);
    claude = ensureAgentClis().claude;
    assert.ok(fs.existsSync(CLI), 'npm run build first');
    p = createSampleProject();
    const store = await openSampleStore(p.ralphDir);
    await addTasks(store, p.ralphDir, [
      { id: 'T-1', title: 'Add mul()', effort: 'S', wave: 0 },
      { id: 'T-2', title: 'Token check', effort: 'M', wave: 1 },
    ]);
    await store.close();
  });
  after(() => p && fs.rmSync(p.dir, { recursive: true, force: true }));

  it('calls add_task and status: the task goes through the policy, the answer holds the status', async () => {
    const server = await startModelServer({
      name: 'chat',
      match: 'RALPH-CHAT',
      turns: [
        {
          text: 'Adding the task.',
          tools: [{ tool: 'mcp', server: 'ralph', name: 'add_task', input: { title: 'Validate emails', wave: 1 } }],
        },
        { text: 'Checking the loop.', tools: [{ tool: 'mcp', server: 'ralph', name: 'status', input: {} }] },
        { text: 'Here is the status:\n{{tool_result}}' },
      ],
    });
    const sandbox = claudeSandbox(server.url);
    try {
      const config = path.join(sandbox.dir, 'mcp.json');
      fs.writeFileSync(
        config,
        JSON.stringify({ mcpServers: { ralph: { command: process.execPath, args: [CLI, '--dir', p.dir, 'mcp'] } } }),
      );
      const env = {
        ...sandbox.env,
        // The tools in the first request's tool list, not behind ToolSearch; and the first
        // request waits until the server is connected (claude connects servers in the background).
        ENABLE_TOOL_SEARCH: 'false',
        CLAUDE_CODE_MCP_PREWAIT_SERVERS: 'ralph',
      };
      const r = await run(
        claude,
        [
          '-p',
          '--output-format',
          'stream-json',
          '--verbose',
          '--model',
          'claude-sonnet-4-5-20250929',
          '--max-turns',
          '5',
          '--permission-mode',
          'acceptEdits',
          '--mcp-config',
          config,
          '--allowedTools',
          'mcp__ralph',
        ],
        { cwd: p.dir, env, input: 'RALPH-CHAT: add a task to validate emails in wave 1, then tell me the status' },
      );
      const lines = r.out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const init = lines.find((l) => l['type'] === 'system' && l['subtype'] === 'init') as {
        mcp_servers?: { name: string; status: string }[];
      };
      const result = lines.filter((l) => l['type'] === 'result').at(-1) as {
        result?: string;
        is_error?: boolean;
        permission_denials?: unknown[];
      };
      assert.equal(r.code, 0, `claude failed: ${r.err}\n${r.out.slice(-2000)}`);
      assert.deepEqual(init.mcp_servers, [{ name: 'ralph', status: 'connected', source: 'dynamic' }]);
      assert.deepEqual(result.permission_denials, []);

      // The model was offered ralph's tools and got their answers back.
      const offered = ((server.requests[0]?.body as { tools?: { name: string }[] }).tools ?? [])
        .map((t) => t.name)
        .filter((n) => n.startsWith('mcp__ralph__'));
      assert.deepEqual(offered.sort(), [
        'mcp__ralph__add_task',
        'mcp__ralph__decide',
        'mcp__ralph__deferred_queue',
        'mcp__ralph__list_tasks',
        'mcp__ralph__pause',
        'mcp__ralph__resume',
        'mcp__ralph__show_task',
        'mcp__ralph__status',
        'mcp__ralph__stop',
      ]);
      assert.match(
        JSON.stringify(server.requests[1]?.body),
        /Added W1-001 \\"Validate emails\\" \(wave 1, effort S\): the policy accepted it/,
      );

      // The answer holds the status the server computed after the task was added.
      assert.equal(result.is_error, false);
      assert.match(result.result ?? '', /^Here is the status:\n=== Ralph Loop v3 Status ===/);
      assert.match(result.result ?? '', /Tasks \(3\): pending=3/);
      assert.match(result.result ?? '', /Loop: not running/);

      // In the store: accepted by the policy, with actor mcp and claude's own client name.
      const store = await openStore({ ralphDir: p.ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
      try {
        const evs = store.events().filter((e) => e.actor === 'mcp');
        // ...and the one marker that makes the command applied exactly once.
        assert.deepEqual(
          evs.map((e) => e.event_type),
          ['task.created', 'proposal.accepted', 'command.applied'],
        );
        const created = evs[0];
        assert.equal(created?.entity_id, 'W1-001');
        assert.equal(created?.payload['provenance'], 'auto');
        assert.equal(typeof created?.payload['client'], 'string');
        assert.match(String(created?.payload['client']), /claude/i);
        assert.equal(store.get<{ title: string }>("SELECT title FROM task_view WHERE task_id = 'W1-001'")?.title, 'Validate emails');
      } finally {
        await store.close();
      }
    } finally {
      sandbox.cleanup();
      await server.close();
    }
  });
});
