import * as assert from 'node:assert/strict';
import { buildOrder, DependencyCycleError, nextReadyRequirement, parseSpecification } from '../../../src/project/specification';
import type { Requirement, Specification, SpecificationError } from '../../../src/project/specification';

/** The example of seed 001, verbatim. */
const SEED_EXAMPLE = `specification:
  requirements:
    - id: REQ-001
      description: "Create User Model"
      acceptance_criteria:
        - id: AC-001-01
          criteria: "email (unique), password_hash, created_at"
      priority: 1
      status: pending
    - id: REQ-002
      description: "Password encryption"
      depends_on: [REQ-001]
      priority: 2
      status: pending
`;

function parsed(text: string): Specification {
  const r = parseSpecification(text);
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
}

function rejected(text: string): SpecificationError {
  const r = parseSpecification(text, 'spec/specification.yaml');
  if (r.ok) assert.fail('expected a SpecificationError');
  assert.equal(r.error.name, 'SpecificationError');
  return r.error;
}

const req = (id: string, priority: number, depends_on: string[] = [], status: Requirement['status'] = 'pending'): Requirement => ({
  id,
  description: id,
  acceptance_criteria: [],
  priority,
  status,
  depends_on,
});

describe('project/specification', () => {
  describe('parseSpecification', () => {
    it('given the seed example, then parses it with defaults', () => {
      const s = parsed(SEED_EXAMPLE);
      assert.equal(s.requirements.length, 2);
      assert.deepEqual(s.requirements[0]?.acceptance_criteria, [
        { id: 'AC-001-01', criteria: 'email (unique), password_hash, created_at' },
      ]);
      assert.deepEqual(s.requirements[1]?.depends_on, ['REQ-001']);
      assert.deepEqual(s.requirements[1]?.acceptance_criteria, []);
    });
    it('given broken YAML, then names the file and line', () => {
      const e = rejected('specification:\n  requirements: [\n    - id: x\n');
      assert.match(e.message, /^spec\/specification\.yaml:\d+:\d+: not valid YAML/);
    });
    it('given a wrong type, then names the path and line of the value', () => {
      const e = rejected(SEED_EXAMPLE.replace('priority: 2', 'priority: high'));
      assert.equal(e.issues[0]?.path, 'specification.requirements[1].priority');
      assert.equal(e.issues[0]?.line, 13);
      assert.match(e.message, /spec\/specification\.yaml:13:\d+: specification\.requirements\[1\]\.priority: /);
    });
    it('given a missing description, then reported at the requirement', () => {
      const e = rejected('specification:\n  requirements:\n    - id: REQ-001\n');
      assert.match(e.message, /:3:\d+: specification\.requirements\[0\]\.description/);
    });
    it('given an unknown key, a duplicate id, an unknown or self dependency, then each is named with its line', () => {
      const e = rejected(`specification:
  requirements:
    - id: REQ-001
      description: a
      prio: 1
`);
      assert.match(e.message, /unknown key\(s\) "prio"/);
      const d = rejected(`specification:
  requirements:
    - id: REQ-001
      description: a
    - id: REQ-001
      description: b
      depends_on: [REQ-009, REQ-001]
`);
      assert.match(d.message, /:5:\d+: specification\.requirements\[1\]\.id: duplicate id "REQ-001"/);
      assert.match(d.message, /:7:\d+: .*depends on unknown requirement "REQ-009"/);
      assert.match(d.message, /REQ-001 depends on itself/);
    });
  });

  describe('buildOrder', () => {
    it('given layers, then Kahn order with priority ascending within a layer', () => {
      const r = buildOrder([req('A', 5), req('B', 1), req('C', 1, ['A']), req('D', 0, ['A', 'B']), req('E', 9, ['D'])]);
      assert.ok(r.ok);
      if (!r.ok) return;
      assert.deepEqual(
        r.value.layers.map((l) => l.map((x) => x.id)),
        [['B', 'A'], ['D', 'C'], ['E']],
      );
      assert.deepEqual(
        r.value.order.map((x) => x.id),
        ['B', 'A', 'D', 'C', 'E'],
      );
    });
    it('given the seed example, then REQ-001 before REQ-002', () => {
      const r = buildOrder(parsed(SEED_EXAMPLE).requirements);
      assert.ok(r.ok);
      assert.deepEqual(r.ok && r.value.order.map((x) => x.id), ['REQ-001', 'REQ-002']);
    });
    it('given a cycle, then reports the chain', () => {
      const r = buildOrder([req('A', 1), req('B', 1, ['A', 'D']), req('C', 1, ['B']), req('D', 1, ['C']), req('E', 1, ['D'])]);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.ok(r.error instanceof DependencyCycleError);
      assert.deepEqual(r.error.chain, ['B', 'D', 'C', 'B']);
      assert.equal(r.error.message, 'dependency cycle: B -> D -> C -> B');
    });
  });

  describe('nextReadyRequirement', () => {
    const order = [req('A', 2), req('B', 1), req('C', 0, ['A'])];
    it('given nothing done, then the ready one with the best priority', () => {
      assert.equal(nextReadyRequirement(order)?.id, 'B');
    });
    it('given A done, then C (priority 0) before B', () => {
      assert.equal(nextReadyRequirement(order, new Map([['A', 'done']]))?.id, 'C');
    });
    it('given one in progress after a crash, then it is resumed first', () => {
      assert.equal(nextReadyRequirement(order, new Map([['A', 'in_progress']]))?.id, 'A');
    });
    it('given all done or blocked, then nothing', () => {
      assert.equal(
        nextReadyRequirement(
          order,
          new Map([
            ['A', 'blocked'],
            ['B', 'done'],
          ]),
        ),
        undefined,
      );
    });
  });
});

describe('project/specification: messages name the REQ and the field', () => {
  it('given a bad priority and an unknown dependency, then each message names file, line, REQ and field', () => {
    const text = [
      'specification:',
      '  requirements:',
      '    - id: REQ-001',
      '      description: "a"',
      '    - id: REQ-002',
      '      description: "b"',
      '      priority: high',
      '    - id: REQ-003',
      '      description: "c"',
      '      depends_on: [REQ-009]',
      '',
    ].join('\n');
    const r = parseSpecification(text, 'specification.yaml');
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.match(
      r.error.message,
      /^specification\.yaml:7:\d+: specification\.requirements\[1\]\.priority: .*\(REQ-002, field priority\)$/m,
    );
    const bad = parseSpecification(text.replace('priority: high', 'priority: 2'), 'specification.yaml');
    assert.equal(bad.ok, false);
    if (bad.ok) return;
    assert.match(bad.error.message, /^specification\.yaml:10:\d+: .*unknown requirement "REQ-009" \(REQ-003, field depends_on\[0\]\)$/m);
  });
});
