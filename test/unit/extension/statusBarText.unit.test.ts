import * as assert from 'node:assert/strict';
import { statusBarView } from '../../../src/extension/statusBarText';
import type { StatusBarFacts } from '../../../src/extension/statusBarText';

const base: StatusBarFacts = {
  name: '',
  state: 'running',
  observing: false,
  observedPid: null,
  phase: 'implement',
  task: 'W1-002',
  cost: 1.5,
  forecast: null,
  unconfined: [],
  others: '',
};

describe('extension: the status bar text', () => {
  it('given a running loop, then the phase, task and cost, and no warning', () => {
    const v = statusBarView(base);
    assert.equal(v.text, '$(sync~spin) Ralph: implement · W1-002 · $1.50 today');
    assert.equal(v.warning, false);
    assert.match(v.tooltip, /^Ralph loop running: run by this window\n/);
  });

  it('given agents running unconfined, then a warning icon, the warning colour and the roles first in the tooltip', () => {
    const v = statusBarView({ ...base, unconfined: ['primary (claude)', 'worker (claude)'] });
    assert.equal(v.text, '$(warning) $(sync~spin) Ralph: implement · W1-002 · $1.50 today');
    assert.equal(v.warning, true);
    assert.match(
      v.tooltip,
      /^WARNING: agents run UNCONFINED \(agents\.unconfined: true\): primary \(claude\), worker \(claude\) could write/,
    );
  });

  it('given the loop stopped after an unconfined run, then no colour, and the tooltip speaks of the last run', () => {
    const v = statusBarView({ ...base, state: 'stopped', unconfined: ['primary (claude)'] });
    assert.equal(v.warning, false);
    assert.equal(v.text, '$(debug-stop) Ralph: stopped · $1.50 today');
    assert.match(v.tooltip, /^WARNING: the last run's agents ran UNCONFINED/);
  });

  it('given an observed loop, then the eye and the pid it follows', () => {
    const v = statusBarView({ ...base, observing: true, observedPid: 4242, name: ' [calc]' });
    assert.equal(v.text, '$(eye) Ralph [calc]: observing · implement · W1-002 · $1.50 today');
    assert.match(v.tooltip, /run by another process \(pid 4242\)/);
  });

  it('given a loop paused because every agent fails alike, then "paused: <a few words>" and the whole reason first in the tooltip', () => {
    const reason = 'primary fails the same way: the API refuses with 429 (rate or usage limit); wait for the limit to reset, then resume';
    const v = statusBarView({ ...base, state: 'paused', pause: { reason, short: 'API rate limit (429)' } });
    assert.equal(v.text, '$(debug-pause) Ralph: paused: API rate limit (429) · W1-002 · $1.50 today');
    assert.ok(v.tooltip.startsWith(`Paused: ${reason}\nRalph loop paused`), v.tooltip);
    assert.equal(statusBarView({ ...base, state: 'paused' }).text, '$(debug-pause) Ralph: paused · W1-002 · $1.50 today');
  });
});
