// REQ mode's settings from ralph.config.json's `req` section, with the language profile's
// defaults for what differs per language: the test-utilities module, the coverage command
// and the globs that make a file a test file.
import { join } from 'node:path';
import type { RalphConfig } from '../project/config';
import type { Language } from '../project/languages';

export interface ReqLanguageDefaults {
  /** Repo-relative path of the test-utilities module. */
  readonly testUtils: string;
  /** Prints a line-coverage percentage after running the whole suite ('' = L3 not available). */
  readonly coverage: string;
  readonly testFiles: readonly string[];
}

export const REQ_LANGUAGE_DEFAULTS: Record<Language, ReqLanguageDefaults> = {
  typescript: {
    testUtils: 'test/test-utils.ts',
    coverage: 'npx --no-install c8 --reporter=text-summary npm test',
    testFiles: ['**/*.test.ts', '**/*.spec.ts', '**/*.test.js', '**/*.spec.js', 'test/**', 'tests/**', '**/__tests__/**'],
  },
  javascript: {
    testUtils: 'test/test-utils.js',
    coverage: 'npx --no-install c8 --reporter=text-summary npm test',
    testFiles: ['**/*.test.js', '**/*.spec.js', '**/*.test.mjs', '**/*.spec.mjs', 'test/**', 'tests/**', '**/__tests__/**'],
  },
  python: {
    testUtils: 'tests/test_utils.py',
    coverage: 'coverage run -m pytest && coverage report',
    testFiles: ['tests/**', '**/test_*.py', '**/*_test.py'],
  },
  go: { testUtils: 'internal/testutil/testutil.go', coverage: 'go test -cover ./...', testFiles: ['**/*_test.go', '**/testutil/**'] },
  rust: { testUtils: 'tests/common/mod.rs', coverage: 'cargo llvm-cov --summary-only', testFiles: ['tests/**', '**/tests.rs'] },
  java: { testUtils: 'src/test/java/TestUtils.java', coverage: 'mvn -q verify jacoco:report', testFiles: ['src/test/**'] },
  ruby: {
    testUtils: 'spec/support/test_utils.rb',
    coverage: 'COVERAGE=1 bundle exec rspec',
    testFiles: ['spec/**', 'test/**', '**/*_spec.rb', '**/*_test.rb'],
  },
  csharp: {
    testUtils: 'Tests/TestUtils.cs',
    coverage: 'dotnet test /p:CollectCoverage=true',
    testFiles: ['**/*Tests/**', '**/*Tests.cs', '**/*Test.cs'],
  },
  generic: {
    testUtils: 'test/test-utils.js',
    coverage: '',
    testFiles: ['test/**', 'tests/**', '**/*.test.*', '**/*_test.*', '**/test_*'],
  },
};

export interface ReqSettings {
  readonly specFile: string;
  readonly specShownAs: string;
  readonly maxIterations: number;
  readonly rounds: number;
  readonly roundTimeoutMs: number;
  readonly coveragePercent: number;
  /** '' = L3 skipped (no coverage tool for the language), said in the layer's summary. */
  readonly coverageCommand: string;
  readonly testSharePercent: number;
  readonly mockDensityPercent: number;
  readonly testUtilsPath: string;
  readonly testUtilsExports: readonly string[];
  readonly testFiles: readonly string[];
}

export function reqSettingsFromConfig(projectDir: string, c: RalphConfig): ReqSettings {
  const d = REQ_LANGUAGE_DEFAULTS[c.lang as Language] ?? REQ_LANGUAGE_DEFAULTS.generic;
  return {
    specFile: join(projectDir, c.req.spec),
    specShownAs: c.req.spec,
    maxIterations: c.req.max_iterations,
    rounds: Math.max(1, c.req.retries),
    roundTimeoutMs: c.req.round_timeout * 1000,
    coveragePercent: c.req.coverage,
    coverageCommand: c.req.coverage_command ?? d.coverage,
    testSharePercent: c.req.test_line_share,
    mockDensityPercent: c.req.mock_density,
    testUtilsPath: c.req.test_utils.path ?? d.testUtils,
    testUtilsExports: c.req.test_utils.exports,
    testFiles: c.req.test_files ?? d.testFiles,
  };
}
