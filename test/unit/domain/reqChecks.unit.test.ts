// The harness's L1b checks on fixture diffs (seed 001): new test lines / (new test + new
// implementation lines) >= 40 %, and mock/spy/fn lines over 30 % of the change's test lines
// needing a `// @mock-justified: <reason>` comment; the L3 coverage percentages of the
// common tools; the test utilities' exports.
import assert from 'node:assert/strict';
import { addedLines } from '../../../src/domain/patchText';
import { apiSummary, checkTestShare, exportedNames, parseCoveragePercent } from '../../../src/domain/reqChecks';

/** A `git diff` adding these files. */
function diff(files: Record<string, string>): string {
  return Object.entries(files)
    .map(([path, text]) => {
      const lines = text.replace(/\n$/, '').split('\n');
      return [
        `diff --git a/${path} b/${path}`,
        'new file mode 100644',
        'index 0000000..1111111',
        '--- /dev/null',
        `+++ b/${path}`,
        `@@ -0,0 +1,${lines.length} @@`,
        ...lines.map((l) => `+${l}`),
      ].join('\n');
    })
    .join('\n')
    .concat('\n');
}

const OPTS = { testGlobs: ['test/**', '**/*.test.ts'], minSharePercent: 40, maxMockPercent: 30 };
const lines = (n: number, f: (i: number) => string): string => Array.from({ length: n }, (_, i) => f(i)).join('\n');
const check = (files: Record<string, string>) => checkTestShare(addedLines(diff(files)), OPTS);

describe('domain/reqChecks: L1b on fixture diffs', () => {
  it('given 4 test lines for 6 implementation lines, then 40% passes; 3 for 6 fails and says so', () => {
    const ok = check({
      'src/a.ts': lines(6, (i) => `export const a${i} = ${i};`),
      'test/a.test.ts': lines(4, (i) => `assert.equal(a${i}, ${i});`),
    });
    assert.equal(ok.ok, true, ok.message);
    assert.equal(ok.sharePercent, 40);
    assert.deepEqual([ok.testLines, ok.implLines], [4, 6]);
    const bad = check({
      'src/a.ts': lines(6, (i) => `export const a${i} = ${i};`),
      'test/a.test.ts': lines(3, (i) => `assert.equal(a${i}, ${i});`),
    });
    assert.equal(bad.ok, false);
    assert.equal(bad.sharePercent, 33.3);
    assert.match(bad.message, /test lines 3 \/ \(test 3 \+ implementation 6\) = 33\.3% \(minimum 40%\)\ntoo few test lines/);
  });

  it('given blank lines, comments, docs and data, then they count as neither side', () => {
    const r = check({
      'src/a.ts': `// a comment\n\nexport const a = 1;\n/* block */\n * more\n`,
      'test/a.test.ts': `\nassert.equal(a, 1);\n`,
      'README.md': lines(50, (i) => `line ${i}`),
      'data/x.json': lines(50, (i) => `${i},`),
    });
    assert.deepEqual([r.testLines, r.implLines], [1, 1]);
    assert.equal(r.ok, true);
  });

  it('given only tests, or no code at all, then it passes', () => {
    assert.equal(check({ 'test/a.test.ts': 'assert.ok(true);\n' }).ok, true);
    assert.equal(check({ 'docs/a.md': '# a\n' }).sharePercent, 100);
  });

  it("given mock lines over 30% of the change's test lines without a justification, then L1b fails naming the files", () => {
    const mocky = lines(4, (i) => `const f${i} = jest.fn();`) + '\n' + lines(6, (i) => `expect(f${i % 4}).toHaveBeenCalled();`);
    const r = check({ 'src/a.ts': 'export const a = 1;\n', 'test/a.test.ts': mocky });
    assert.equal(r.ok, false);
    assert.equal(r.mockPercent, 40);
    assert.deepEqual(r.unjustified, ['test/a.test.ts']);
    assert.match(
      r.message,
      /mock\/spy\/fn lines 4 are 40% of the test lines \(limit 30%\): add a \/\/ @mock-justified: <reason> comment to test\/a\.test\.ts/,
    );
    // justified: passes, and the comment line itself is not a test line
    const ok = check({
      'src/a.ts': 'export const a = 1;\n',
      'test/a.test.ts': `// @mock-justified: the payment API is external\n${mocky}`,
    });
    assert.equal(ok.ok, true, ok.message);
    assert.equal(ok.testLines, 10);
  });

  it('given the same mocks spread over a change with many real test lines, then the density is of the whole change and passes', () => {
    const r = check({
      'src/a.ts': 'export const a = 1;\n',
      'test/a.test.ts': lines(4, (i) => `vi.spyOn(obj, 'm${i}');`),
      'test/b.test.ts': lines(20, (i) => `assert.equal(a + ${i}, ${1 + i});`),
    });
    assert.equal(r.mockPercent, 16.7);
    assert.equal(r.ok, true, r.message);
    assert.deepEqual(r.unjustified, []);
  });

  it('given mock lines of several libraries, then each counts', () => {
    const libs = [
      'sinon.stub(a, "b");',
      't.mock.fn(() => 1);',
      "mock.method(fs, 'readFile');",
      '@patch("requests.get")',
      'mocker.patch("x")',
      'm.mockReturnValue(3);',
      'Mockito.when(x).thenReturn(1);',
    ];
    const r = check({ 'test/a.test.ts': libs.join('\n') });
    assert.equal(r.mockLines, libs.length);
    assert.equal(
      check({ 'test/a.test.ts': 'const mocked = realDb();\nassert.ok(mocked);\n' }).mockLines,
      0,
      'the word alone is not a mock',
    );
  });
});

describe('domain/reqChecks: L3 coverage output', () => {
  it("given the common tools' summaries, then the line percentage is read", () => {
    assert.equal(parseCoveragePercent('Statements   : 90%\nLines        : 85.71% ( 6/7 )\n'), 85.71);
    assert.equal(parseCoveragePercent('File | % Stmts | % Branch | % Funcs | % Lines\nAll files | 70 | 60 | 50 | 81.25 |\n'), 81.25);
    assert.equal(parseCoveragePercent('Name    Stmts   Miss  Cover\nTOTAL      40      4    90%\n'), 90);
    assert.equal(parseCoveragePercent('ok  \tex\t0.01s\tcoverage: 77.5% of statements\n'), 77.5);
    assert.equal(parseCoveragePercent('all tests passed\n'), null);
    assert.equal(parseCoveragePercent('coverage: 250%\n'), null, 'not a percentage');
  });
});

describe('domain/reqChecks: test utilities', () => {
  it('given a module, then its exports and API summary are read', () => {
    const text =
      'export function makeUser(name: string) {\n  return { name };\n}\nexport const db = open();\nexport { a as b, c };\nconst hidden = 1;\n';
    assert.deepEqual(exportedNames(text).sort(), ['b', 'c', 'db', 'makeUser']);
    assert.equal(apiSummary(text), 'export function makeUser(name: string)\nexport const db = open();\nexport { a as b, c };');
    assert.deepEqual(exportedNames('exports.approx = () => 1;\nmodule.exports = { fixture, other: 1 };\n').sort(), [
      'approx',
      'fixture',
      'other',
    ]);
  });
});
