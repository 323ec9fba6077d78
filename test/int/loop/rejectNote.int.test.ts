// A human's Reject note reaches the agent: a tier-2 patch waits for review, a human rejects
// it through the inbox with a note, and the next attempt of that task sends the note to the
// model — asserted on the request the scripted model server received from the REAL claude
// CLI (pinned, confined as the product runs it).
import assert from 'node:assert/strict';
import type { LoggedRequest, ModelServer } from '../../../src/agents/scripted/modelServer';
import { submitToInbox } from '../../../src/control/inbox';
import type { EventStore } from '../../../src/store/types';
import { freshClaudeRunEachTest } from './claudeRun';
import type { ClaudeRun } from './claudeRun';
import { addTasks, plan, script } from './sampleProject';
import type { SampleProject } from './sampleProject';

/** The first request from index `from` on that `pred` accepts, as it arrives (no polling). */
async function requestWhere(server: ModelServer, from: number, pred: (r: LoggedRequest) => boolean): Promise<LoggedRequest> {
  for (let n = from + 1; ; n++) {
    await server.waitForRequests(n);
    const r = server.requests[n - 1];
    if (r !== undefined && pred(r)) return r;
  }
}

describe('loop/a Reject note reaches the next prompt (real claude CLI, scripted model server)', function () {
  this.timeout(240_000);
  let run: ClaudeRun;
  let p: SampleProject;
  let store: EventStore;
  freshClaudeRunEachTest((r) => {
    run = r;
    ({ p, store } = r);
  });

  it("given a tier-2 patch a human rejects with a note, then the task's next plan prompt carries the note and the first did not", async () => {
    const note = 'compare tokens with crypto.timingSafeEqual, never with ===';
    await addTasks(store, p.ralphDir, [{ id: 'T-4', title: 'Token check', effort: 'M', wave: 0 }]);
    const server = await run.serve({
      scripts: [
        script('plan/T-4/', [], plan('T-4', [{ description: 'token check', files: ['src/auth/token.js'] }])),
        script('implement/T-4/', [
          { tool: 'write', path: 'src/auth/token.js', content: 'module.exports = (t) => t === process.env.TOKEN;\n' },
        ]),
        // The judge never answers (its request is logged as it arrives): the human decides first.
        { name: 'slow-judge', match: 'RALPH-KEY: review_deferred/T-4/', turns: [{ hang: true }] },
        { name: 'fallback', turns: [{ text: 'nothing to do' }] },
      ],
    });
    const { loop, events } = run.loop(
      { workers: { count: 0 }, periodic: { evolve_every: 1000, refactor_every: 1000, integration_every: 1000 } },
      { once: false },
    );
    await loop.start();
    const isPlan = (r: LoggedRequest): boolean => r.prompt.includes('RALPH-KEY: plan/T-4/');
    const first = await requestWhere(server, 0, isPlan);
    // The patch is deferred (tier 2: src/auth/) and the judge has its request: now the human rejects.
    await requestWhere(server, 0, (r) => r.prompt.includes('RALPH-KEY: review_deferred/T-4/'));
    const decidedAt = server.requests.length;
    submitToInbox(p.ralphDir, { command: 'resolve-deferred', task_id: 'T-4', decision: 'reject', actor: 'human:test', rationale: note });
    const next = await requestWhere(server, decidedAt, isPlan);
    await loop.stop('test done');

    const resolved = store.all<{ actor: string; payload: string }>(
      "SELECT actor, payload FROM events WHERE entity_id = 'T-4' AND event_type = 'task.deferral_resolved'",
    );
    assert.equal(resolved.length, 1, JSON.stringify(events.filter((e) => e.type === 'log' || e.type.startsWith('task.'))));
    assert.equal(resolved[0]?.actor, 'human:test');
    assert.deepEqual(
      (({ decision, rationale }) => ({ decision, rationale }))(JSON.parse(resolved[0]!.payload) as { decision: string; rationale: string }),
      { decision: 'reject', rationale: note },
    );
    assert.ok(!first.prompt.includes(note), 'the first attempt knew nothing of a rejection');
    assert.match(
      next.prompt,
      /## Notes from earlier attempts\n(- .*\n)*- Rejected by the reviewer: compare tokens with crypto\.timingSafeEqual, never with ===/,
    );
  });
});
