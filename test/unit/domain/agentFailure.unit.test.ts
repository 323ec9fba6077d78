// The shared failure classes, one per case, read from agent.finished events shaped as the
// invocation appends them (src/loop/invocation.ts: status, turns, cost and duration always;
// exit code, the first errors and the stderr tail when the run did not succeed) with the
// messages the pinned CLIs print, and read the way the loop reads them (src/loop/loop.ts).
import assert from 'node:assert/strict';
import type { AgentEnding } from '../../../src/domain/agentFailure';
import { sharedFailureClass } from '../../../src/domain/agentFailure';
import { domainEvent } from '../../../src/domain/events';
import type { EventData } from '../../../src/domain/events';

type Finished = EventData<'agent.finished'>;

/** A worker's failed implement run through the claude CLI, with the fields given replaced. */
function finished(over: Partial<Finished>): AgentEnding {
  const event = domainEvent('agent.finished', 'worker-1', 'worker-1', {
    role: 'worker',
    phase: 'implement',
    task_id: 'T-4',
    backend: 'claude',
    status: 'error',
    turns: 1,
    cost_usd: 0,
    duration_ms: 2140,
    exit_code: 1,
    errors: [],
    stderr_tail: '',
    ...over,
  });
  return event.data as unknown as AgentEnding;
}

describe('domain/agentFailure: the shared failure class of an agent.finished event', () => {
  it('given a CLI that is not logged in (the API answers 401), then not_logged_in', () => {
    const e = finished({
      errors: ['Invalid API key · Please run /login'],
      stderr_tail: 'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}\n',
    });
    assert.equal(sharedFailureClass(e), 'not_logged_in');
  });

  it('given a 429 from the API, then rate_limited', () => {
    const e = finished({
      errors: ['API Error: Request rejected (429) · This request would exceed the rate limit for your organization'],
    });
    assert.equal(sharedFailureClass(e), 'rate_limited');
  });

  it('given repeated 529s from the API, then overloaded', () => {
    const e = finished({ turns: 0, errors: ['API Error: Repeated 529 Overloaded errors'], cost_usd: 0 });
    assert.equal(sharedFailureClass(e), 'overloaded');
  });

  it('given a CLI that is not installed (the spawn fails), then cli_missing', () => {
    // The process runner reports a spawn failure as the stderr tail, with no exit code.
    const e = finished({ status: 'crashed', turns: 0, duration_ms: 3, exit_code: null, errors: [], stderr_tail: 'spawn claude ENOENT' });
    assert.equal(sharedFailureClass(e), 'cli_missing');
  });

  it('given a CLI that crashes before its first turn, then cli_crashed', () => {
    const e = finished({
      status: 'crashed',
      turns: 0,
      duration_ms: 412,
      exit_code: 1,
      stderr_tail:
        "file:///usr/lib/node_modules/@anthropic-ai/claude-code/cli.js:2817\nTypeError: Cannot read properties of undefined (reading 'map')\n    at main (cli.js:2817:19)\n",
    });
    assert.equal(sharedFailureClass(e), 'cli_crashed');
  });

  it("given a failure of the task's own (tests still failing after its turns), then no shared class", () => {
    const e = finished({
      turns: 14,
      cost_usd: 0.4213,
      duration_ms: 183_000,
      errors: ['npm test exited with 1: 3 failing (test/parser.test.ts: expected 2 tokens, got 3)'],
      stderr_tail: '',
    });
    assert.equal(sharedFailureClass(e), null);
  });
});
