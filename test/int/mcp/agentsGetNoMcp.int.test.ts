// Ralph's own agents never get an MCP server — above all not `ralph mcp`, whose deciding tools
// would let an agent approve its own patch past the judge. The command lines the claude and
// codex backends build carry no server and no deciding tool; and with the real CLIs, a
// repository and a user configuration that both name a (marked) `ralph mcp` make a plain CLI
// run start it, while the backends' runs do not.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { createCodexBackend } from '../../../src/agents/codexBackend';
import type { AgentRequest } from '../../../src/agents/types';
import { claudeSandbox, codexMockProvider, codexSandbox, ensureAgentClis, makeTempRepo } from '../../kit/agentEnv';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const MARKED = path.join(__dirname, 'fixtures', 'markedMcpServer.cjs');
const REPORTER = path.join(__dirname, 'fixtures', 'argvReporter.cjs');

/** Every value given to a flag (a flag may repeat). */
function values(argv: readonly string[], flag: string): string[] {
  return argv.flatMap((a, i) => (a === flag && argv[i + 1] !== undefined ? [argv[i + 1] as string] : []));
}

/** The deciding tools of `ralph mcp`, under any client's naming. */
const DECIDING = /(^|__)(add_task|decide|pause|resume|stop)$|ralph/i;

function assertClaudeArgvHasNoMcp(argv: readonly string[]): void {
  assert.ok(argv.includes('--strict-mcp-config'), `strict MCP config in ${argv.join(' ')}`);
  const configs = values(argv, '--mcp-config');
  assert.ok(configs.length > 0);
  for (const c of configs) assert.deepEqual(JSON.parse(c), { mcpServers: {} });
  for (const s of values(argv, '--settings')) {
    const settings = JSON.parse(s) as Record<string, unknown>;
    for (const k of Object.keys(settings)) assert.ok(!/mcp/i.test(k), `settings key ${k}`);
  }
  for (const flag of ['--allowedTools', '--allowed-tools', '--tools'])
    for (const v of values(argv, flag))
      for (const t of v.split(/[\s,]+/)) assert.ok(!/^mcp__/.test(t) && !DECIDING.test(t), `${flag} ${t}`);
}

function markerLines(file: string): number {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

/** Runs a CLI until `until` holds (then ends it) or it exits; resolves with its stdout. */
function runUntil(
  cmd: string,
  args: string[],
  o: { cwd: string; env: Record<string, string>; input: string; until: () => boolean },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, env: o.env, detached: true });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin.end(o.input);
    const tick = setInterval(() => {
      if (o.until()) {
        clearInterval(tick);
        try {
          process.kill(-(child.pid as number), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }, 50);
    const guard = setTimeout(() => {
      clearInterval(tick);
      try {
        process.kill(-(child.pid as number), 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`${path.basename(cmd)} neither exited nor met the condition in 120 s:\n${out.slice(-2000)}`));
    }, 120_000);
    child.on('exit', () => {
      clearInterval(tick);
      clearTimeout(guard);
      resolve(out);
    });
  });
}

describe('agents are never given an MCP server', function () {
  this.timeout(300_000);
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-nomcp-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const request = (cwd: string, env: Record<string, string>, extra: Partial<AgentRequest> = {}): AgentRequest => ({
    prompt: 'RALPH-NO-MCP: say done',
    cwd,
    model: 'claude-sonnet-4-5-20250929',
    maxTurns: 3,
    timeoutMs: 120_000,
    env,
    ...extra,
  });

  it('the claude backend builds a strict, empty MCP config and no deciding tool, with every kind of request', async () => {
    const log = path.join(tmp, 'argv.log');
    const backend = createClaudeBackend({
      command: process.execPath,
      commandArgs: [REPORTER],
      baseEnv: { PATH: process.env.PATH, ARGV_LOG: log },
      extraArgs: ['--allowedTools', 'Read,Edit,Bash(git *)'],
    });
    await backend.run(request(tmp, {}));
    await backend.run(
      request(tmp, {}, { jsonSchema: { type: 'object' }, appendSystemPrompt: 'judge', budgetUsd: 1, permissionMode: 'dontAsk' }),
    );
    const calls = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    assert.equal(calls.length, 2);
    for (const argv of calls) {
      assert.equal(argv[0], '-p');
      assertClaudeArgvHasNoMcp(argv);
    }
  });

  it('the codex backend disables every server codex would start, after the caller overrides; unreadable list: no user config', async () => {
    const log = path.join(tmp, 'argv.log');
    const mk = (list: string) =>
      createCodexBackend({
        command: process.execPath,
        commandArgs: [REPORTER],
        baseEnv: { PATH: process.env.PATH, ARGV_LOG: log, MCP_LIST: list },
        configOverrides: ['mcp_servers.ralph.enabled=true'],
      });
    await mk(JSON.stringify([{ name: 'ralph' }, { name: 'docs server' }])).run(request(tmp, {}));
    await mk('fail').run(request(tmp, {}));
    const calls = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    assert.deepEqual(
      calls.map((a) => a.slice(0, 3).join(' ')),
      ['mcp list --json', 'exec --json --skip-git-repo-check', 'mcp list --json', 'exec --json --skip-git-repo-check'],
    );
    const exec1 = calls[1] as string[];
    const overrides = values(exec1, '-c');
    assert.deepEqual(overrides.slice(-3), [
      'mcp_servers.ralph.enabled=true',
      'mcp_servers.ralph.enabled=false',
      'mcp_servers."docs server".enabled=false',
    ]);
    assert.ok(!exec1.includes('--ignore-user-config'));
    assert.ok((calls[3] as string[]).includes('--ignore-user-config'), 'fails closed');
  });

  describe('with the real CLIs', () => {
    let clis: { claude: string; codex: string };
    let server: ModelServer;
    let repo: { dir: string; cleanup(): void };
    before(function () {
      this.timeout(900_000);
      clis = ensureAgentClis();
      assert.ok(fs.existsSync(CLI), 'npm run build first');
    });
    beforeEach(async () => {
      repo = makeTempRepo();
      server = await startModelServer({
        scripts: [
          // The plain run's model never answers: the run lasts until its servers have started.
          { name: 'plain', match: 'RALPH-PLAIN', turns: [{ hang: true }] },
          { name: 'agent', match: 'RALPH-NO-MCP', turns: [{ text: 'done' }] },
        ],
      });
    });
    afterEach(async () => {
      await server.close();
      repo.cleanup();
    });

    const serverEntry = (marker: string): Record<string, unknown> => ({
      command: process.execPath,
      args: [MARKED, marker, CLI, '--dir', repo.dir, 'mcp'],
    });

    it('claude: the repository .mcp.json (auto-enabled) and the user config start ralph mcp for a plain run, never for an agent', async () => {
      const projectMarker = path.join(tmp, 'project-server');
      const userMarker = path.join(tmp, 'user-server');
      fs.writeFileSync(path.join(repo.dir, '.mcp.json'), JSON.stringify({ mcpServers: { ralph: serverEntry(projectMarker) } }));
      fs.mkdirSync(path.join(repo.dir, '.claude'));
      fs.writeFileSync(path.join(repo.dir, '.claude', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
      const sandbox = claudeSandbox(server.url);
      try {
        fs.mkdirSync(sandbox.env.CLAUDE_CONFIG_DIR as string, { recursive: true });
        fs.writeFileSync(
          path.join(sandbox.env.CLAUDE_CONFIG_DIR as string, '.claude.json'),
          JSON.stringify({ mcpServers: { ralphuser: serverEntry(userMarker) } }),
        );
        // The control: the same configuration reaches a plain claude run.
        const plain = await runUntil(
          clis.claude,
          [
            '-p',
            '--output-format',
            'stream-json',
            '--verbose',
            '--model',
            'claude-sonnet-4-5-20250929',
            '--permission-mode',
            'acceptEdits',
          ],
          {
            cwd: repo.dir,
            env: sandbox.env,
            input: 'RALPH-PLAIN',
            until: () => markerLines(projectMarker) > 0 && markerLines(userMarker) > 0,
          },
        );
        assert.ok(
          markerLines(projectMarker) > 0 && markerLines(userMarker) > 0,
          `a plain run starts both servers:\n${plain.slice(0, 1500)}`,
        );
        fs.rmSync(projectMarker);
        fs.rmSync(userMarker);

        const events: unknown[] = [];
        const before = server.requests.length;
        const r = await createClaudeBackend({ command: clis.claude, baseEnv: sandbox.env }).run(request(repo.dir, sandbox.env), (e) =>
          events.push(e),
        );
        assert.equal(r.status, 'success', JSON.stringify(r));
        assert.equal(markerLines(projectMarker) + markerLines(userMarker), 0, 'no MCP server started for the agent');
        const offered = server.requests
          .slice(before)
          .flatMap((q) => ((q.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name));
        assert.ok(offered.length > 0);
        assert.deepEqual(
          offered.filter((n) => /^mcp__/.test(n) || n === 'WaitForMcpServers' || DECIDING.test(n)),
          [],
          'no MCP or deciding tool offered to the model',
        );
      } finally {
        sandbox.cleanup();
      }
    });

    it('codex: a server in the user config.toml starts for a plain run, never for an agent', async () => {
      const marker = path.join(tmp, 'codex-server');
      const sandbox = codexSandbox();
      try {
        const entry = serverEntry(marker) as { command: string; args: string[] };
        fs.writeFileSync(
          path.join(sandbox.env.CODEX_HOME as string, 'config.toml'),
          `[mcp_servers.ralph]\ncommand = ${JSON.stringify(entry.command)}\nargs = ${JSON.stringify(entry.args)}\n`,
        );
        const mock = codexMockProvider(server.url);
        const base = [
          'exec',
          '--json',
          '--skip-git-repo-check',
          '-C',
          repo.dir,
          '-m',
          'gpt-5.5',
          '--sandbox',
          'workspace-write',
          '--ephemeral',
        ];
        const plain = await runUntil(clis.codex, [...base, ...mock.configOverrides.flatMap((c) => ['-c', c]), ...mock.extraArgs, '-'], {
          cwd: repo.dir,
          env: sandbox.env,
          input: 'RALPH-PLAIN',
          until: () => markerLines(marker) > 0,
        });
        assert.ok(markerLines(marker) > 0, `a plain run starts the server:\n${plain.slice(0, 1500)}`);
        fs.rmSync(marker);

        const r = await createCodexBackend({ command: clis.codex, baseEnv: sandbox.env, ...mock }).run(
          request(repo.dir, sandbox.env, { model: 'gpt-5.5' }),
        );
        assert.equal(r.status, 'success', JSON.stringify(r));
        assert.equal(markerLines(marker), 0, 'no MCP server started for the agent');
      } finally {
        sandbox.cleanup();
      }
    });
  });
});
