// The chat tool catalogue: hostile input is refused with the field named, the deciding tools
// are the ones that change the store, the handshake's client name is made safe to store.
import assert from 'node:assert/strict';
import { clientFromHandshake } from '../../../src/mcp/server';
import { inputJsonSchema, parseToolInput, READING_TOOLS, TOOLS, vscodeToolName } from '../../../src/mcp/tools';

const byName = (n: string): (typeof TOOLS)[number] => {
  const t = TOOLS.find((x) => x.name === n);
  assert.ok(t, n);
  return t;
};

describe('mcp/tools catalogue', () => {
  it('names the reading and the deciding tools', () => {
    assert.deepEqual(
      READING_TOOLS.map((t) => t.name),
      ['status', 'list_tasks', 'show_task', 'deferred_queue'],
    );
    assert.deepEqual(
      TOOLS.filter((t) => t.decides).map((t) => t.name),
      ['add_task', 'decide', 'pause', 'resume', 'stop'],
    );
    for (const t of TOOLS.filter((x) => x.decides)) assert.ok(t.confirm, `${t.name} asks for confirmation in VS Code`);
    assert.equal(vscodeToolName(byName('decide')), 'ralph_decide');
  });

  it('refuses hostile ids, multi-line or oversized text, unknown fields and wrong types, naming the field', () => {
    const bad: [string, unknown, RegExp][] = [
      ['show_task', { task_id: '../../etc/passwd' }, /task_id: task id/],
      ['show_task', { task_id: 'x'.repeat(65) }, /task_id/],
      ['show_task', {}, /task_id/],
      ['decide', { task_id: 'T-1', decision: 'merge' }, /decision/],
      ['decide', { task_id: 'T-1', decision: 'reject', note: 'n'.repeat(4001) }, /note/],
      ['add_task', { title: 'a\nb' }, /title: title must be one line/],
      ['add_task', { title: 'ok', deps: ['A', 'b c'] }, /deps\.1/],
      ['add_task', { title: 'ok', confidence: 2 }, /confidence/],
      ['add_task', { title: 'ok', admin: true }, /admin|Unrecognized/i],
      ['list_tasks', { status: ['done', 'merged'] }, /status\.1/],
      ['list_tasks', { tier: 7 }, /tier/],
    ];
    for (const [name, input, re] of bad) {
      const r = parseToolInput(byName(name), input);
      assert.equal(r.ok, false, `${name} ${JSON.stringify(input)}`);
      if (!r.ok) assert.match(r.error, re, `${name} ${JSON.stringify(input)}`);
    }
    const ok = parseToolInput(byName('add_task'), { title: '  Validate emails  ', wave: 1, deps: ['W0-001'] });
    assert.deepEqual(ok, { ok: true, args: { title: 'Validate emails', wave: 1, deps: ['W0-001'] } });
  });

  it('gives every tool a JSON Schema of its input (what package.json declares for VS Code)', () => {
    const s = inputJsonSchema(byName('decide'));
    assert.equal(s['type'], 'object');
    assert.deepEqual(s['required'], ['task_id', 'decision']);
    assert.equal(s['$schema'], undefined);
    for (const t of TOOLS) assert.equal(inputJsonSchema(t)['type'], 'object', t.name);
  });

  it('keeps the handshake client name printable and bounded, and never empty', () => {
    assert.deepEqual(clientFromHandshake({ name: 'claude-code', version: '2.1.332' }), { name: 'claude-code', version: '2.1.332' });
    assert.deepEqual(clientFromHandshake({ name: 'evil\n\u0007name', version: 42 }), { name: 'evil  name' });
    assert.equal(clientFromHandshake({ name: 'x'.repeat(500) }).name.length, 100);
    assert.deepEqual(clientFromHandshake(undefined), { name: 'unknown-client' });
    assert.deepEqual(clientFromHandshake({ name: '   ' }), { name: 'unknown-client' });
  });
});
