// Transcripts through the REAL `claude` CLI (pinned, in .tools/) and the scripted model
// server: every invocation of a run leaves one transcript under .ralph/logs/transcripts,
// named by its agent.started event, with its tool calls in order, its footer, no secret
// value of the agents' environment, and `ralph logs` prints it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TRANSCRIPTS_DIR } from '../../../src/agents/transcript';
import { runCli } from '../../../src/cli/run';
import type { EventStore } from '../../../src/store/types';
import { freshClaudeRunEachTest } from './claudeRun';
import type { ClaudeRun } from './claudeRun';
import { addTasks, plan, script } from './sampleProject';
import type { SampleProject } from './sampleProject';

const SECRET = 'sk-ant-api03-transcript-secret-0123456789abcdef';

describe('transcripts of a run through the real claude CLI', function () {
  this.timeout(240_000);
  let run: ClaudeRun;
  let p: SampleProject;
  let store: EventStore;
  freshClaudeRunEachTest((r) => {
    run = r;
    ({ p, store } = r);
  });

  it('given a planned task whose agent writes, runs a command and quotes a secret, then one transcript per invocation tells it in order', async () => {
    await addTasks(store, p.ralphDir, [{ id: 'T-1', title: 'Add add()', effort: 'M', wave: 0 }]);
    await run.serve({
      scripts: [
        script('plan/T-1/', [], plan('T-1', [{ description: 'write add', files: ['src/add.js'] }])),
        {
          name: 'implement',
          match: 'RALPH-KEY: implement/T-1/step-1/',
          turns: [
            {
              text: `Using the key ${SECRET} to check.`,
              tools: [{ tool: 'write', path: 'src/add.js', content: 'module.exports = (a, b) => a + b;\n' }],
            },
            { tools: [{ tool: 'bash', command: 'node -e "console.log(require(\'./src/add.js\')(2, 3))"' }] },
            { text: 'done' },
          ],
        },
        { name: 'fallback', turns: [{ text: 'nothing to do' }] },
      ],
    });
    const { loop } = run.loop(
      { periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 } },
      { backend: { permissionMode: 'bypassPermissions' }, agentEnv: { SERVICE_API_KEY: SECRET } },
    );
    await loop.run();
    assert.equal(store.get<{ status: string }>("SELECT status FROM task_view WHERE task_id = 'T-1'")?.status, 'done');

    const started = store.all<{ payload: string }>("SELECT payload FROM events WHERE event_type = 'agent.started' ORDER BY event_id");
    const named = started.map((r) => (JSON.parse(r.payload) as { transcript?: string }).transcript);
    const files = readdirSync(join(p.ralphDir, TRANSCRIPTS_DIR)).sort();
    assert.ok(started.length >= 2, `${started.length} invocations`);
    assert.deepEqual(
      named.map((n) => n?.split('/').pop()),
      files,
      'one transcript per invocation, each named by its agent.started event',
    );

    const implement = files.map((f) => readFileSync(join(p.ralphDir, TRANSCRIPTS_DIR, f), 'utf8')).find((t) => t.includes(' implement '));
    assert.ok(implement, files.join(', '));
    if (process.env['RALPH_SHOW']) console.log(implement);
    const lines = implement.split('\n');
    assert.match(lines[0] ?? '', /^# primary \(primary\) implement T-1 via claude, started /);
    const kinds = lines
      .map((l) => /^\d\d:\d\d:\d\d\.\d{3} (init|assistant|tool \w+|result \w+)/.exec(l)?.[1])
      .filter((k): k is string => k !== undefined);
    const order = kinds.filter((k) => k.startsWith('tool') || k.startsWith('result'));
    assert.deepEqual(order, ['tool Write', 'result Write', 'tool Bash', 'result Bash'], implement);
    assert.ok(kinds[0] === 'init', implement);
    assert.match(implement, /^\d\d:\d\d:\d\d\.\d{3} tool Write: src\/add\.js$/m);
    assert.match(implement, /tool Bash: node -e/);
    assert.match(implement, /^# ended success: \d+ turn\(s\), \d+ tokens in/m);
    assert.match(implement, /Using the key \[REDACTED\] to check\./);
    for (const f of files) assert.ok(!readFileSync(join(p.ralphDir, TRANSCRIPTS_DIR, f), 'utf8').includes(SECRET), f);

    let out = '';
    const code = await runCli(['--dir', p.dir, 'logs', '--task', 'T-1', '--all'], {
      io: { out: (t) => void (out += t), err: () => undefined },
    });
    assert.equal(code, 0);
    assert.ok(out.includes(implement), 'ralph logs --task T-1 --all prints the transcript');
  });
});
