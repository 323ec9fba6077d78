// A Codex invocation's transcript: the real `codex exec --json` (pinned 0.171.0 from .tools/),
// confined as the loop confines it, against the scripted model server's Responses API; the
// transcript writer the loop uses is fed its events. Like Claude's, the file shows the
// agent's messages and each tool call (the patch's files, the command) with its result, in
// order, between the header and the footer, and no secret value of the agent's environment.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCodexBackend } from '../../../src/agents/codexBackend';
import { detectConfinement } from '../../../src/agents/sandbox';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';
import { TranscriptWriter, transcriptPath } from '../../../src/agents/transcript';
import { codexMockProvider, ensureAgentClis, makeTempRepo } from '../../kit/agentEnv';

const SECRET = 'sk-proj-codex-transcript-secret-0123456789abcdef';

describe('agents/codex transcript through the real codex CLI, confined', function () {
  this.timeout(180_000);
  let server: ModelServer | undefined;
  let repo: { dir: string; cleanup(): void };
  let ralphDir: string;

  beforeEach(() => {
    repo = makeTempRepo();
    ralphDir = mkdtempSync(join(tmpdir(), 'ralph-codex-transcript-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    repo.cleanup();
    rmSync(ralphDir, { recursive: true, force: true });
  });

  it("given a patch, a command and a message quoting a secret, then the transcript tells them in order, like Claude's, redacted", async () => {
    const codexBin = ensureAgentClis().codex;
    server = await startModelServer({
      turns: [
        { text: `Writing hello.txt with ${SECRET}.`, tools: [{ tool: 'write', path: 'hello.txt', content: 'hi\n' }] },
        { tools: [{ tool: 'bash', command: 'cat hello.txt' }] },
        { text: 'Created hello.txt.' },
      ],
    });
    const path = process.env.PATH ?? '/usr/bin:/bin';
    const confinement = detectConfinement('codex', { PATH: path });
    assert.notEqual(confinement.kind, 'none', 'the loop never runs codex unconfined');
    const backend = createCodexBackend({ command: codexBin, baseEnv: {}, confinement, ...codexMockProvider(server.url) });
    const env = { PATH: path, CODEX_API_KEY: 'test-key-not-secret-0123456789', SERVICE_TOKEN: SECRET };
    const run = {
      agent: 'worker-1',
      role: 'worker',
      phase: 'worker',
      taskId: 'W2-003',
      backend: backend.id,
      startedAt: new Date(),
      cwd: repo.dir,
    };
    const transcript = new TranscriptWriter(
      transcriptPath(ralphDir, run),
      run,
      [SECRET],
      () => new Date(),
      (m) => assert.fail(m),
    );
    const scratch = mkdtempSync(join(tmpdir(), 'ralph-codex-scratch-'));
    try {
      const result = await backend.run(
        {
          prompt: 'Create hello.txt. TASK-HELLO',
          cwd: repo.dir,
          model: 'gpt-5.5',
          maxTurns: 5,
          timeoutMs: 60_000,
          env,
          scratchDir: scratch,
        },
        transcript.onEvent,
      );
      transcript.finish(result);
      assert.equal(result.status, 'success', JSON.stringify(result));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }

    const text = readFileSync(transcript.file, 'utf8');
    if (process.env['RALPH_SHOW']) console.log(text);
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^# worker-1 \(worker\) worker W2-003 via codex, started /);
    const kinds = lines
      .map((l) => /^\d\d:\d\d:\d\d\.\d{3} (init|assistant|tool \w+|result \w+)/.exec(l)?.[1])
      .filter((k) => k !== undefined);
    // Tool calls and their results in order; codex announces a turn's patch before it
    // completes the turn's message, so a message and the call of its turn may come either way.
    assert.deepEqual(
      kinds.filter((k) => k.startsWith('tool') || k.startsWith('result')),
      ['tool file_change', 'result file_change', 'tool command_execution', 'result command_execution'],
      text,
    );
    assert.equal(kinds.filter((k) => k === 'assistant').length, 2, text);
    assert.equal(kinds.at(-1), 'assistant', text);
    // The patch's file (in the worktree, so relative) and the command, as Claude's Write and Bash show theirs.
    assert.match(text, /^\d\d:\d\d:\d\d\.\d{3} tool file_change: hello\.txt \(add\)$/m);
    assert.match(text, /^\d\d:\d\d:\d\d\.\d{3} tool command_execution: .*cat hello\.txt/m);
    assert.match(text, /^\d\d:\d\d:\d\d\.\d{3} result command_execution: ok \(\d+ bytes\)$/m);
    assert.match(text, /assistant: Writing hello\.txt with \[REDACTED\]\./);
    assert.match(text, /assistant: Created hello\.txt\.$/m);
    assert.match(lines.at(-1) ?? '', /^# ended success: \d+ turn\(s\), \d+ tokens in \(\d+ cached\), \d+ out, \$\d+\.\d{4}, \d+\.\d s$/);
    assert.ok(!text.includes(SECRET), 'no secret value in the transcript');
  });
});
