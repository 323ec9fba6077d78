// The run's busy time is the union of its agents' stretches, not their sum: three agents
// overlapping count once, an agent is busy through its own gates, and a gate that only
// reports a result (forbidden patterns) opens nothing.
import { strict as assert } from 'node:assert';
import { BusyClock } from '../../../src/loop/busyClock';
import type { LoopEvent } from '../../../src/loop/events';

function clockAt(): { now: () => number; sleep: () => Promise<void>; at: (t: number) => void } {
  let t = 0;
  return { now: () => t, sleep: () => Promise.resolve(), at: (v) => (t = v) };
}

const started = (agent: string): LoopEvent => ({
  type: 'agent.started',
  agent,
  phase: 'implement',
  taskId: 'T',
  promptBytes: 1,
  budgetUsd: 1,
});
const finished = (agent: string): LoopEvent => ({
  type: 'agent.finished',
  agent,
  phase: 'implement',
  taskId: 'T',
  status: 'success',
  costUsd: 0,
  durationMs: 0,
  turns: 1,
});
const gate = (type: 'gate.started' | 'gate.finished', agent: string, name: string): LoopEvent =>
  type === 'gate.started'
    ? { type, agent, gate: name, taskId: 'T' }
    : { type, agent, gate: name, taskId: 'T', status: 'passed', durationMs: 0, outputTail: '' };

describe('loop/busyClock', () => {
  it('given overlapping agents with gates and a gap, then busy is their union and each agent its own stretch', () => {
    const c = clockAt();
    const b = new BusyClock(c);
    const at = (t: number, e: LoopEvent): void => {
      c.at(t);
      b.note(e);
    };
    at(0, started('primary'));
    at(100, started('worker-1'));
    at(300, finished('primary'));
    at(300, gate('gate.started', 'primary', 'test'));
    at(400, finished('worker-1'));
    at(500, gate('gate.finished', 'primary', 'test'));
    at(500, gate('gate.finished', 'primary', 'forbidden_patterns'));
    // 500–700: nothing but the harness.
    at(700, started('worker-1'));
    at(800, finished('worker-1'));
    c.at(1000);
    assert.deepEqual(b.times(), { busyMs: 600, agentBusyMs: { primary: 500, 'worker-1': 400 } });
  });

  it('given an agent still running, then its stretch counts up to now', () => {
    const c = clockAt();
    const b = new BusyClock(c);
    b.note(started('judge'));
    c.at(250);
    assert.deepEqual(b.times(), { busyMs: 250, agentBusyMs: { judge: 250 } });
  });

  it('given a finish with no start, then nothing is counted', () => {
    const c = clockAt();
    const b = new BusyClock(c);
    c.at(50);
    b.note(finished('primary'));
    b.note(gate('gate.finished', 'primary', 'lint'));
    c.at(90);
    assert.deepEqual(b.times(), { busyMs: 0, agentBusyMs: {} });
  });
});
