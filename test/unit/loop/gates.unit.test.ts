// Forbidden patterns on added lines only: literals, /regex/, excludes, the seed's a|b|c form.
import assert from 'node:assert/strict';
import { compilePattern, findForbidden, forbiddenPatternsGate, InvalidPatternError, patternList, runGates } from '../../../src/loop/gates';

const added = [
  {
    path: 'src/app.py',
    lines: [
      { line: 3, text: 'x = eval(input())' },
      { line: 4, text: 'try:' },
      { line: 6, text: 'except:' },
    ],
  },
  { path: 'tests/test_app.py', lines: [{ line: 1, text: 'eval("1")' }] },
];

describe('loop/gates forbidden patterns', () => {
  it("given the seed's pipe-separated string, then a list of literals", () => {
    assert.deepEqual(patternList('bare except:|eval(|import *'), ['bare except:', 'eval(', 'import *']);
    assert.deepEqual(patternList(['a', ' ', 'b ']), ['a', 'b']);
    assert.deepEqual(patternList(undefined), []);
  });

  it('given literal patterns with regex characters, then they match literally', () => {
    assert.equal(compilePattern('eval(')('eval(x)'), true);
    assert.equal(compilePattern('.unwrap()')('a.unwrap()'), true);
    assert.equal(compilePattern('.unwrap()')('aXunwrap()'), false);
  });

  it('given /regex/flags, then a regular expression; a bad one is a clear error', () => {
    assert.equal(compilePattern('/console\\.log\\(/')('console.log(1)'), true);
    assert.equal(compilePattern('/todo/i')('// TODO'), true);
    assert.throws(() => compilePattern('/(/'), InvalidPatternError);
  });

  it('given added lines, then violations name file, line and pattern; excluded files are skipped', () => {
    const v = findForbidden(added, ['eval(', 'except:'], ['tests/**']);
    assert.deepEqual(
      v.map((x) => `${x.file}:${x.line}:${x.pattern}`),
      ['src/app.py:3:eval(', 'src/app.py:6:except:'],
    );
  });

  it('given no hits, then a passed gate; given no patterns, skipped', () => {
    assert.equal(forbiddenPatternsGate(added, ['import *']).status, 'passed');
    assert.equal(forbiddenPatternsGate(added, []).status, 'skipped');
    const failed = forbiddenPatternsGate(added, ['eval(']);
    assert.equal(failed.ok, false);
    assert.match(failed.outputTail, /src\/app\.py:3: forbidden "eval\(": x = eval\(input\(\)\)/);
  });
});

describe('loop/gates environment', () => {
  it("given the team store's URL and password in the environment, then the gates (the agent's code) do not see them", async () => {
    const saved = { url: process.env['RALPH_STORE_URL'], pw: process.env['PGPASSWORD'] };
    process.env['RALPH_STORE_URL'] = 'postgres://w:secret@db/ralph';
    process.env['PGPASSWORD'] = 'secret';
    try {
      const [r] = await runGates(
        [
          {
            name: 'env',
            command: `node -e "process.stdout.write([process.env.RALPH_STORE_URL, process.env.PGPASSWORD, process.env.CI].join(','))"`,
            timeoutMs: 20_000,
          },
        ],
        { cwd: process.cwd() },
      );
      assert.equal(r?.outputTail, ',,1');
    } finally {
      for (const [k, v] of [
        ['RALPH_STORE_URL', saved.url],
        ['PGPASSWORD', saved.pw],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });
});
