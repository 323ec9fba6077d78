// Real bubblewrap around real agent processes whose programs and projects live where the
// sandbox hides things (/tmp): Ralph's scripted claude installed under /tmp, and a CLI found
// on PATH through links into /tmp.
import { strict as assert } from 'node:assert';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import { detectConfinement } from '../../../src/agents/sandbox';
import { createScriptedBackend, defaultScriptedClaudePath } from '../../../src/agents/scriptedBackend';
import type { AgentRequest } from '../../../src/agents/types';
import { makeTempRepo } from '../../kit/agentEnv';

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
});
