import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { configJsonSchema } from '../../../src/project/config';
import { checkJsonSchema } from '../../unit/project/jsonSchemaCheck';

const ROOT = path.resolve(__dirname, '../../..');

describe('scripts/generate-schema.ts (real process)', function () {
  this.timeout(60_000);
  it('given the zod schema, then writes the same JSON Schema, which accepts the seed sample', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-schema-'));
    try {
      const out = path.join(dir, 'schema/ralph.config.schema.json');
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'node_modules/tsx/dist/cli.mjs'), path.join(ROOT, 'scripts/generate-schema.ts'), out],
        { cwd: ROOT },
      );
      const written = JSON.parse(await fs.readFile(out, 'utf8')) as Record<string, unknown>;
      assert.deepEqual(written, configJsonSchema());
      assert.deepEqual(
        checkJsonSchema(written, { name: 'p', lang: 'python', forbidden_patterns: 'bare except:|eval(|import *', budget_primary: '2.50' }),
        [],
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
