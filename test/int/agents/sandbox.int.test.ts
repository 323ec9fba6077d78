// Real bubblewrap around real agent processes whose programs and projects live where the
// sandbox hides things (/tmp): Ralph's scripted claude installed under /tmp, a CLI found on
// PATH through links into /tmp, and a CLI that cannot load what it needs there, which must
// say so with the sandbox's own words instead of failing as a vague agent crash.
import { strict as assert } from 'node:assert';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { detectConfinement, SANDBOX_START_FAILED } from '../../../src/agents/sandbox';
import { createScriptedBackend, defaultScriptedClaudePath } from '../../../src/agents/scriptedBackend';
import type { AgentRequest } from '../../../src/agents/types';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import { Loop } from '../../../src/loop/loop';
import { JsonlMetrics } from '../../../src/loop/metricsFile';
import { makeTempRepo } from '../../kit/agentEnv';
import { addTasks, createSampleProject, openSampleStore, sampleSettings } from '../loop/sampleProject';

/** A stand-in CLI speaking just enough stream-json: init, a file written in its cwd, a result. */
const FAKE_CLI = (importLine: string): string => `#!/usr/bin/env node
${importLine}
import { writeFileSync } from 'node:fs';
process.stdout.write(JSON.stringify({ type: 'system', subtype: 'init', session_id: 's1', model: 'fake', tools: [] }) + '\\n');
writeFileSync('written-by-agent.txt', WORD + '\\n');
process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: WORD, num_turns: 1, total_cost_usd: 0, usage: {} }) + '\\n');
`;

describe('agents/sandbox: bubblewrap around agents whose programs and projects live under /tmp', function () {
  this.timeout(60_000);
  let root: string;
  let repo: { dir: string; cleanup(): void };
  const bwrap = detectConfinement('claude');
  before(function () {
    if (bwrap.kind !== 'bwrap') throw new Error(`this machine and CI run agents in bubblewrap, found: ${bwrap.summary}`);
  });
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ralph-sbx-int-'));
    repo = makeTempRepo();
    assert.ok(repo.dir.startsWith('/tmp/') || !tmpdir().startsWith('/tmp'), 'the project is under /tmp, hidden by the sandbox');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(root, { recursive: true, force: true });
  });

  const request = (over: Partial<AgentRequest> = {}): AgentRequest => ({
    prompt: 'Do it. TASK-1',
    cwd: repo.dir,
    model: 'sonnet',
    maxTurns: 5,
    timeoutMs: 30_000,
    ...over,
  });

  it('given the scripted claude installed under /tmp and a scenario file there, then the confined agent runs, writes its project and nothing else of /tmp', async () => {
    // Ralph's scripted claude and the module it imports, copied where the sandbox hides
    // things; its dependencies resolve through a link beside them to Ralph's node_modules.
    const install = join(root, 'scripted');
    mkdirSync(install, { recursive: true });
    const source = dirname(defaultScriptedClaudePath());
    for (const f of ['scriptedClaude.mjs', 'scenario.cjs']) cpSync(join(source, f), join(install, f));
    symlinkSync(resolve(source, '..', '..', '..', 'node_modules'), join(install, 'node_modules'));
    const scenario = join(root, 'scenario.json');
    const outside = join(root, 'outside.txt');
    writeFileSync(
      scenario,
      JSON.stringify({
        match: 'TASK-1',
        turns: [
          {
            tools: [
              { tool: 'write', path: 'inside.txt', content: 'in\n' },
              { tool: 'bash', command: `echo escaped > ${outside}; ls ${root} | wc -l` },
            ],
          },
          { text: 'done' },
        ],
      }),
    );
    const r = await createScriptedBackend({
      scenario,
      scriptPath: join(install, 'scriptedClaude.mjs'),
      baseEnv: { PATH: process.env.PATH },
      confinement: detectConfinement('scripted'),
    }).run(request({ scratchDir: join(root, 'scratch') }));
    assert.equal(r.status, 'success', `${r.subtype}: ${r.errors.join('; ')} ${r.stderrTail}`);
    assert.equal(readFileSync(join(repo.dir, 'inside.txt'), 'utf8'), 'in\n');
    assert.ok(!existsSync(outside), 'the rest of /tmp is not writable (nor visible)');
  });

  it('given a CLI found on PATH through links in /tmp whose real package lives in /tmp, then it runs confined and sees its own modules', async () => {
    const pkg = join(root, 'prefix', 'lib', 'node_modules', 'fake-cli');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'word.mjs'), "export const WORD = 'from-its-own-module';\n");
    writeFileSync(join(pkg, 'cli.mjs'), FAKE_CLI("import { WORD } from './word.mjs';"));
    chmodSync(join(pkg, 'cli.mjs'), 0o755);
    mkdirSync(join(root, 'prefix', 'bin'));
    symlinkSync('../lib/node_modules/fake-cli/cli.mjs', join(root, 'prefix', 'bin', 'fake-claude'));
    symlinkSync(join(root, 'prefix', 'bin'), join(root, 'bin-link'));
    for (const command of ['fake-claude', join(root, 'bin-link', 'fake-claude')]) {
      const r = await createClaudeBackend({
        command,
        cli: 'scripted',
        baseEnv: { PATH: `${join(root, 'bin-link')}:${process.env.PATH ?? ''}` },
        confinement: bwrap,
      }).run(request());
      assert.equal(r.status, 'success', `${command}: ${r.subtype}: ${r.errors.join('; ')} ${r.stderrTail}`);
      assert.equal(r.text, 'from-its-own-module');
      assert.equal(readFileSync(join(repo.dir, 'written-by-agent.txt'), 'utf8'), 'from-its-own-module\n');
      rmSync(join(repo.dir, 'written-by-agent.txt'));
    }
  });

  it('given a CLI that needs a file the sandbox hides, then the result says it did not start inside its sandbox, with what it printed', async () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'word.mjs'), "export const WORD = 'never';\n");
    const pkg = join(root, 'pkg', 'node_modules', 'fake-cli');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, 'cli.mjs'), FAKE_CLI(`import { WORD } from '${join(elsewhere, 'word.mjs')}';`));
    chmodSync(join(pkg, 'cli.mjs'), 0o755);
    const r = await createClaudeBackend({
      command: join(pkg, 'cli.mjs'),
      cli: 'scripted',
      baseEnv: { PATH: process.env.PATH },
      confinement: bwrap,
    }).run(request());
    assert.equal(r.status, 'crashed');
    assert.equal(r.subtype, SANDBOX_START_FAILED);
    assert.match(r.errors[0] ?? '', /^the agent did not start inside its sandbox \(exit 1 before any output\): /);
    assert.ok((r.errors[0] ?? '').includes(`Cannot find module '${join(elsewhere, 'word.mjs')}'`), r.errors[0]);

    const missing = await createClaudeBackend({
      command: 'no-such-agent-cli',
      cli: 'scripted',
      baseEnv: { PATH: process.env.PATH },
      confinement: bwrap,
    }).run(request());
    assert.equal(missing.subtype, SANDBOX_START_FAILED);
    assert.equal(
      missing.errors[0],
      'bubblewrap could not start the agent (exit 1 before any output): bwrap: execvp no-such-agent-cli: No such file or directory',
    );
  });

  it('given an agent CLI bubblewrap cannot start, when the loop runs, then it stops at the first invocation with what bubblewrap said, no retries', async () => {
    const p = createSampleProject();
    const store = await openSampleStore(p.ralphDir);
    try {
      await addTasks(store, p.ralphDir, [{ id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 }]);
      const settings = sampleSettings();
      const backend = createClaudeBackend({
        command: 'no-such-agent-cli',
        cli: 'scripted',
        baseEnv: { PATH: process.env.PATH },
        confinement: bwrap,
      });
      const loop = new Loop({
        projectDir: p.dir,
        settings,
        control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
        backends: { primary: backend, worker: backend, judge: backend },
        metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
        once: true,
      });
      const summary = await loop.run();
      assert.match(
        summary.stopReason,
        /the claude agent cannot run confined: bubblewrap could not start the agent \(exit 1 before any output\): bwrap: execvp no-such-agent-cli: No such file or directory/,
      );
      const finished = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'agent.finished'");
      assert.equal(finished.length, 1, 'one invocation, not a retry per attempt');
      const payload = JSON.parse(finished[0]?.payload ?? '{}') as { status?: string; stderr_tail?: string; errors?: string[] };
      assert.equal(payload.status, 'crashed');
      assert.match(payload.stderr_tail ?? '', /bwrap: execvp no-such-agent-cli/);
      assert.match(payload.errors?.[0] ?? '', /^bubblewrap could not start the agent/);
    } finally {
      await store.close().catch(() => undefined);
      rmSync(p.dir, { recursive: true, force: true });
    }
  });
});
