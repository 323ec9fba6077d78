import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../../src/project/config';
import {
  changedSpecs,
  discoverSpecs,
  isEvolveDue,
  readSpecsState,
  recordEvolveRun,
  specFingerprint,
  SpecsStateError,
  syncSpecRegistry,
} from '../../../src/project/specs';

describe('project/specs (real files)', () => {
  let dir: string;
  let ralph: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-specs-'));
    ralph = path.join(dir, '.ralph');
    await fs.mkdir(ralph);
    await fs.mkdir(path.join(dir, 'specs/deep'), { recursive: true });
    await fs.mkdir(path.join(dir, 'docs/node_modules'), { recursive: true });
    await fs.writeFile(path.join(dir, 'specs/api.md'), '# API\n## Auth\n');
    await fs.writeFile(path.join(dir, 'specs/deep/data.json'), '{"a": 1}');
    await fs.writeFile(path.join(dir, 'docs/guide.yml'), 'intro: x\n');
    await fs.writeFile(path.join(dir, 'docs/node_modules/skip.md'), '# no');
    await fs.writeFile(path.join(dir, 'docs/image.png'), 'png');
    await fs.writeFile(path.join(dir, 'README.md'), '# not a spec dir');
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  it('given specs/, docs/, adrs/, then discovers .md .yaml .yml .json recursively and nothing else', async () => {
    const specs = await discoverSpecs(dir);
    assert.deepEqual(
      specs.map((s) => [s.path, s.type, s.sections]),
      [
        ['docs/guide.yml', 'yaml', 1],
        ['specs/api.md', 'markdown', 2],
        ['specs/deep/data.json', 'json', 1],
      ],
    );
  });

  it('given the loop cycle, then evolve_goals is due once per spec change with an empty backlog', async () => {
    const due = async (): Promise<boolean> => {
      const [specs, state] = await Promise.all([discoverSpecs(dir), readSpecsState(ralph)]);
      return isEvolveDue({
        commitsSinceLastEvolve: 0,
        evolveEvery: 5,
        backlogEmpty: true,
        specFingerprint: specFingerprint(specs),
        lastEvolveFingerprint: state.evolve_fingerprint,
      }).due;
    };
    const run = async (): Promise<string[]> => {
      const fingerprint = specFingerprint(await discoverSpecs(dir));
      const given = (await changedSpecs(dir)).map((s) => s.path);
      await recordEvolveRun(dir, {
        fingerprint,
        specsRead: given,
        itemsGenerated: { 'specs/api.md': 2 },
        now: new Date('2026-11-29T10:00:00Z'),
      });
      return given;
    };

    assert.equal(await due(), true);
    assert.deepEqual(await run(), ['docs/guide.yml', 'specs/api.md', 'specs/deep/data.json']);
    assert.equal(await due(), false, 'same specs: not again');
    assert.equal(await due(), false);
    assert.deepEqual(await changedSpecs(dir), []);

    await fs.writeFile(path.join(dir, 'specs/api.md'), '# API\n## Auth\n## Billing\n');
    assert.equal(await due(), true, 'a spec changed');
    assert.deepEqual(await run(), ['specs/api.md'], 'only the changed spec is given');
    assert.equal(await due(), false);

    const registry = await fs.readFile(path.join(ralph, 'SPEC_REGISTRY.md'), 'utf8');
    assert.match(registry, /\| specs\/api\.md \| markdown \| 2026-11-29T10:00:00\.000Z \| 3 \| 4 \|/);
  });

  it('given a spec added and one removed, then syncSpecRegistry reports both and rewrites the registry', async () => {
    await syncSpecRegistry(dir);
    await fs.rm(path.join(dir, 'docs/guide.yml'));
    await fs.mkdir(path.join(dir, 'adrs'));
    await fs.writeFile(path.join(dir, 'adrs/0001.md'), '# Decision\n');
    const r = await syncSpecRegistry(dir);
    assert.deepEqual([r.added, r.changed, r.removed], [['adrs/0001.md'], [], ['docs/guide.yml']]);
    const registry = await fs.readFile(path.join(ralph, 'SPEC_REGISTRY.md'), 'utf8');
    assert.match(registry, /adrs\/0001\.md \| markdown \| never \| 1 \| 0/);
    assert.doesNotMatch(registry, /guide\.yml/);
  });

  it('given a damaged specs.json, then a SpecsStateError names the file', async () => {
    await fs.writeFile(path.join(ralph, 'specs.json'), '{ nope');
    await assert.rejects(
      changedSpecs(dir),
      (e: unknown) => e instanceof SpecsStateError && e.message.includes(path.join(ralph, 'specs.json')),
    );
  });

  it('given no ralph.config.json, then loadConfig says so and how to fix it', () => {
    const r = loadConfig(dir);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error.message, /ralph\.config\.json: file not found; run `ralph init` to create it/);
  });
});
