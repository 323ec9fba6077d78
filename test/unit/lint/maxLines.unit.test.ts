// Files in src/ and webview-ui/ stay under 400 lines, or say why in their first line
// (eslint.config.mjs, ralph/max-lines). Each case lints a scratch text at a path of that
// tree with the repository's config; the last one lints every long file of the tree with
// inline `eslint-disable` comments ignored, so the reason line is the only way out.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { ESLint } from 'eslint';

const root = resolve(__dirname, '..', '..', '..');
const RULE = 'ralph/max-lines';

// One linter per setting: loading the config is most of a lint's time.
const linters = new Map<boolean, ESLint>();

async function maxLinesMessages(filePath: string, code: string, allowInlineConfig = true): Promise<string[]> {
  let eslint = linters.get(allowInlineConfig);
  if (!eslint) {
    eslint = new ESLint({ cwd: root, allowInlineConfig, ruleFilter: ({ ruleId }) => ruleId === RULE });
    linters.set(allowInlineConfig, eslint);
  }
  const [result] = await eslint.lintText(code, { filePath: resolve(root, filePath) });
  assert.ok(result, 'eslint returned no result');
  assert.deepEqual(
    result.messages.filter((m) => m.fatal),
    [],
    'the scratch file parses',
  );
  return result.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

/** A TypeScript text of exactly `n` lines (each a statement), after `head`. */
function lines(n: number, head: readonly string[] = []): string {
  const body = Array.from({ length: n - head.length }, (_, i) => `export const v${i} = ${i};`);
  return [...head, ...body].join('\n') + '\n';
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts') && !d.name.endsWith('.d.ts'))
    .map((d) => join(d.parentPath, d.name));
}

describe('lint: files stay under 400 lines or say why', function () {
  this.timeout(60_000);

  it('given a 401-line file in src/ or webview-ui/ with no reason, then lint fails naming its length; 400 lines pass', async () => {
    for (const file of ['src/loop/scratch.ts', 'webview-ui/scratch.ts']) {
      const bad = await maxLinesMessages(file, lines(401));
      assert.equal(bad.length, 1, `${file}: ${bad.join('; ')}`);
      assert.match(bad[0] ?? '', /401 lines \(over 400\).*Over 400 lines because/);
      assert.deepEqual(await maxLinesMessages(file, lines(400)), [], file);
    }
  });

  it('given the reason as its first line, then a long file passes; an empty reason, one further down or a disable comment do not', async () => {
    const file = 'src/loop/scratch.ts';
    assert.deepEqual(await maxLinesMessages(file, lines(450, ['// Over 400 lines because it is one table.'])), []);
    assert.deepEqual(await maxLinesMessages(file, lines(450, ['#!/usr/bin/env node', '// Over 400 lines because it is one table.'])), []);
    for (const head of [
      ['// Over 400 lines because'],
      ['// A module.', '// Over 400 lines because it is one table.'],
      ['// over 400 lines because it is one table.'],
    ]) {
      assert.equal((await maxLinesMessages(file, lines(450, head))).length, 1, head.join(' / '));
    }
    const disabled = lines(450, [`/* eslint-disable ${RULE} */`]);
    assert.deepEqual(await maxLinesMessages(file, disabled), [], 'a disable comment silences it for ESLint itself');
    assert.equal((await maxLinesMessages(file, disabled, false)).length, 1, '…but not with inline config ignored');
  });

  it('every file of src/ and webview-ui/ over 400 lines gives its reason (inline disables ignored)', async () => {
    const long = [...tsFiles(join(root, 'src')), ...tsFiles(join(root, 'webview-ui'))].filter(
      (f) => readFileSync(f, 'utf8').split('\n').length - 1 > 400,
    );
    assert.ok(long.length > 0, 'the tree has long files to check (else this test checks nothing)');
    const failing: string[] = [];
    for (const f of long) {
      const messages = await maxLinesMessages(relative(root, f), readFileSync(f, 'utf8'), false);
      if (messages.length > 0) failing.push(`${relative(root, f)}: ${messages.join('; ')}`);
    }
    assert.deepEqual(failing, []);
  });
});
