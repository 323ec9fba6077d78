import * as assert from 'node:assert/strict';
import {
  countSections,
  isEvolveDue,
  mergeDiscovery,
  renderSpecRegistry,
  specFingerprint,
  specsChangedSince,
} from '../../../src/project/specs';
import type { EvolveDueInput, SpecFile, SpecsState } from '../../../src/project/specs';

const spec = (path: string, hash: string): SpecFile => ({ path, type: 'markdown', hash, sections: 1, bytes: 10 });

describe('project/specs', () => {
  describe('isEvolveDue (evolve once per spec change, not on every cycle)', () => {
    const base: EvolveDueInput = {
      commitsSinceLastEvolve: 0,
      evolveEvery: 5,
      backlogEmpty: true,
      specFingerprint: 'f1',
      lastEvolveFingerprint: null,
    };

    it('given an empty backlog and specs never evolved, then due (cold start)', () => {
      assert.deepEqual(isEvolveDue(base), { due: true, reason: 'empty_backlog_specs_changed' });
    });
    it('given an empty backlog and the same specs it already evolved from, then NOT due again', () => {
      assert.deepEqual(isEvolveDue({ ...base, lastEvolveFingerprint: 'f1' }), { due: false, reason: 'specs_unchanged' });
    });
    it('given cycle after cycle with nothing changing, then it stays not due', () => {
      let runs = 0;
      let last: string | null = null;
      for (let cycle = 0; cycle < 10; cycle++) {
        if (isEvolveDue({ ...base, lastEvolveFingerprint: last }).due) {
          runs++;
          last = base.specFingerprint;
        }
      }
      assert.equal(runs, 1);
    });
    it('given an empty backlog and a spec changed since, then due once more', () => {
      assert.deepEqual(isEvolveDue({ ...base, specFingerprint: 'f2', lastEvolveFingerprint: 'f1' }), {
        due: true,
        reason: 'empty_backlog_specs_changed',
      });
    });
    it('given an empty backlog and no specs, then not due', () => {
      assert.deepEqual(isEvolveDue({ ...base, specFingerprint: null }), { due: false, reason: 'no_specs' });
    });
    it('given a non-empty backlog, then only the commit interval makes it due', () => {
      assert.deepEqual(isEvolveDue({ ...base, backlogEmpty: false, commitsSinceLastEvolve: 4 }), { due: false, reason: 'not_yet' });
      assert.deepEqual(isEvolveDue({ ...base, backlogEmpty: false, commitsSinceLastEvolve: 5 }), { due: true, reason: 'interval' });
    });
  });

  describe('specFingerprint', () => {
    it('given no specs, then null; given any edit, addition or removal, then a different value; order does not matter', () => {
      assert.equal(specFingerprint([]), null);
      const a = specFingerprint([spec('specs/a.md', '1'), spec('specs/b.md', '2')]);
      assert.equal(specFingerprint([spec('specs/b.md', '2'), spec('specs/a.md', '1')]), a);
      assert.notEqual(specFingerprint([spec('specs/a.md', '1'), spec('specs/b.md', '3')]), a);
      assert.notEqual(specFingerprint([spec('specs/a.md', '1')]), a);
    });
  });

  describe('specsChangedSince', () => {
    it('given specs read at their hash, a new one and an edited one, then only the new and edited', () => {
      const state: SpecsState = {
        version: 1,
        evolve_fingerprint: null,
        specs: {
          'specs/a.md': { hash: '1', read_hash: '1', last_read: 't', sections: 1, items_generated: 2 },
          'specs/b.md': { hash: '2', read_hash: '2', last_read: 't', sections: 1, items_generated: 0 },
        },
      };
      const changed = specsChangedSince([spec('specs/a.md', '1'), spec('specs/b.md', '9'), spec('docs/c.md', '3')], state);
      assert.deepEqual(
        changed.map((s) => s.path),
        ['specs/b.md', 'docs/c.md'],
      );
    });
    it('given a rescan, then read marks survive and removed files are dropped', () => {
      const state: SpecsState = {
        version: 1,
        evolve_fingerprint: null,
        specs: {
          'specs/a.md': { hash: '1', read_hash: '1', last_read: 't', sections: 1, items_generated: 2 },
          'specs/gone.md': { hash: 'x', read_hash: null, last_read: null, sections: 0, items_generated: 0 },
        },
      };
      const next = mergeDiscovery(state, [spec('specs/a.md', '5')]);
      assert.deepEqual(Object.keys(next.specs), ['specs/a.md']);
      assert.equal(next.specs['specs/a.md']?.read_hash, '1');
      assert.equal(next.specs['specs/a.md']?.items_generated, 2);
    });
  });

  describe('countSections', () => {
    it('counts markdown headings outside fences, yaml and json top-level keys', () => {
      assert.equal(countSections('# A\ntext\n## B\n```\n# not a heading\n```\n#nope\n', 'markdown'), 2);
      assert.equal(countSections('a: 1\nb:\n  c: 2\n# comment\n- x\n', 'yaml'), 2);
      assert.equal(countSections('{"a":1,"b":{"c":2}}', 'json'), 2);
      assert.equal(countSections('{oops', 'json'), 0);
    });
  });

  describe('renderSpecRegistry', () => {
    it('renders the reference table', () => {
      const text = renderSpecRegistry([{ file: 'specs/a|b.md', type: 'markdown', lastRead: null, sections: 3, itemsGenerated: 0 }]);
      assert.ok(text.includes('| File | Type | Last Read | Sections | Items Generated |'));
      assert.ok(text.includes('| specs/a\\|b.md | markdown | never | 3 | 0 |'));
    });
  });
});
