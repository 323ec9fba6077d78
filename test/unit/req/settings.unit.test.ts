// REQ mode's settings from ralph.config.json (src/req/settings.ts): the seed's defaults (15
// iterations, 3 rounds of 300 s, coverage 80 %, test share 40 %, mock density 30 %) and the
// language profile's coverage tool, test-utilities module and test globs, each overridable.
import * as assert from 'node:assert/strict';
import { validateConfig } from '../../../src/project/config';
import type { RalphConfig } from '../../../src/project/config';
import { reqSettingsFromConfig } from '../../../src/req/settings';

function config(o: Record<string, unknown>): RalphConfig {
  const r = validateConfig({ name: 'p', build: 'true', test: 'true', ...o });
  if (!r.ok) throw r.error;
  return r.value;
}

describe('req: settings from ralph.config.json', () => {
  it("given no req section, then the seed's defaults and the language's tools", () => {
    const s = reqSettingsFromConfig('/p', config({ lang: 'typescript' }));
    assert.equal(s.specFile, '/p/specification.yaml');
    assert.equal(s.maxIterations, 15);
    assert.equal(s.rounds, 3);
    assert.equal(s.roundTimeoutMs, 300_000);
    assert.equal(s.coveragePercent, 80);
    assert.equal(s.testSharePercent, 40);
    assert.equal(s.mockDensityPercent, 30);
    assert.equal(s.testUtilsPath, 'test/test-utils.ts', "the seed's test-utils.ts for TypeScript");
    assert.match(s.coverageCommand, /c8/);
  });

  it('given other languages, then each has its own coverage tool and test-utilities module', () => {
    const of = (lang: string): [string, string] => {
      const s = reqSettingsFromConfig('/p', config({ lang }));
      return [s.coverageCommand, s.testUtilsPath];
    };
    assert.deepEqual(of('python'), ['coverage run -m pytest && coverage report', 'tests/test_utils.py']);
    assert.match(of('go')[0], /go test -cover/);
    assert.match(of('rust')[0], /cargo llvm-cov/);
    assert.equal(of('generic')[0], '', 'no coverage tool: L3 says it was skipped');
  });

  it('given a req section, then it overrides the coverage command and threshold, rounds, timeout and the module', () => {
    const s = reqSettingsFromConfig(
      '/p',
      config({
        lang: 'python',
        req: {
          spec: 'docs/spec.yaml',
          coverage: 90,
          coverage_command: 'pytest --cov=src --cov-report=term',
          retries: 2,
          round_timeout: 120,
          max_iterations: 4,
          test_utils: { path: 'tests/helpers.py', exports: ['make_user'] },
        },
      }),
    );
    assert.equal(s.specFile, '/p/docs/spec.yaml');
    assert.equal(s.coveragePercent, 90);
    assert.equal(s.coverageCommand, 'pytest --cov=src --cov-report=term');
    assert.equal(s.rounds, 2);
    assert.equal(s.roundTimeoutMs, 120_000);
    assert.equal(s.maxIterations, 4);
    assert.equal(s.testUtilsPath, 'tests/helpers.py');
    assert.deepEqual(s.testUtilsExports, ['make_user']);
  });
});
