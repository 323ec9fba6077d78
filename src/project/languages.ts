// Over 400 lines because it is one table of language profiles (commands, patterns, conventions) with the detection that picks one.
// Language detection (the reference's order) and, per language, the gate commands,
// forbidden patterns and conventions that `ralph init` writes into ralph.config.json and
// the phase files. Node projects are read, not guessed: their own package.json scripts
// become the commands, and a typescript dependency or a .ts source tells TypeScript from
// plain JavaScript (whose rules say nothing of types).
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { pathExists } from '../shared/fs';

export const LANGUAGES = ['rust', 'python', 'typescript', 'javascript', 'go', 'java', 'ruby', 'csharp', 'generic'] as const;
export type Language = (typeof LANGUAGES)[number];

/** What `--lang` accepts besides the canonical names. */
const ALIASES: Readonly<Record<string, Language>> = {
  rs: 'rust',
  py: 'python',
  python3: 'python',
  ts: 'typescript',
  js: 'javascript',
  node: 'javascript',
  nodejs: 'javascript',
  golang: 'go',
  kotlin: 'java',
  rb: 'ruby',
  'c#': 'csharp',
  cs: 'csharp',
  dotnet: 'csharp',
};

export class UnknownLanguageError extends Error {
  override readonly name = 'UnknownLanguageError';
  constructor(readonly given: string) {
    super(`unknown language '${given}'; expected one of ${LANGUAGES.join(', ')}`);
  }
}

/** Canonical language name for a user-supplied one; throws UnknownLanguageError. */
export function normaliseLanguage(given: string): Language {
  const key = given.trim().toLowerCase();
  if ((LANGUAGES as readonly string[]).includes(key)) return key as Language;
  const alias = ALIASES[key];
  if (alias) return alias;
  throw new UnknownLanguageError(given);
}

/** The gate commands and rules for one project. An empty command disables that gate. */
export interface LanguageProfile {
  readonly lang: Language;
  readonly displayName: string;
  readonly build: string;
  readonly test: string;
  readonly test_unit: string;
  readonly lint: string;
  readonly fmt: string;
  /** Literal substrings, or `/regex/flags` entries (see config.ts). */
  readonly forbidden_patterns: readonly string[];
  /** Globs of files the forbidden-pattern gate skips (tests, entry points). */
  readonly forbidden_exclude: readonly string[];
  /** Short coding rules written into core.md and the phase files. */
  readonly conventions: readonly string[];
  /** Build output the repository must not commit (root .gitignore when init creates the repo). */
  readonly gitignore: readonly string[];
  /** Notes for the init report (e.g. a gate disabled because no script exists). */
  readonly notes: readonly string[];
}

export interface Detection {
  readonly lang: Language;
  /** The file that decided it, or null for the generic fallback. */
  readonly evidence: string | null;
}

/** Directories a project-file search never enters. */
const SKIP_DIRS = new Set(['node_modules', 'bin', 'obj', 'target', 'vendor', 'dist', 'build', 'out']);

/**
 * Finds files by extension at the root and up to `depth` directory levels below it
 * (a .NET solution usually keeps its *.csproj in src/<Project>/), skipping hidden and
 * build directories. Sorted, root first.
 */
async function findByExtension(dir: string, exts: readonly string[], depth: number): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string, level: number): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      if (e.isFile() && exts.some((x) => e.name.toLowerCase().endsWith(x))) found.push(childRel);
    }
    if (level >= depth) return;
    for (const e of entries) {
      if (e.isDirectory() && !e.name.startsWith('.') && !SKIP_DIRS.has(e.name)) {
        await walk(rel ? `${rel}/${e.name}` : e.name, level + 1);
      }
    }
  };
  await walk('', 0);
  return found;
}

/** Manifest files in the reference's detection order; the first present decides. */
const DETECTION_ORDER: readonly (readonly [Language, readonly string[]])[] = [
  ['rust', ['Cargo.toml']],
  ['python', ['pyproject.toml', 'setup.py', 'requirements.txt', 'Pipfile']],
  // tsconfig.json first: it alone says TypeScript; a bare package.json is read further.
  ['typescript', ['tsconfig.json', 'package.json']],
  ['go', ['go.mod']],
  ['java', ['pom.xml', 'build.gradle', 'build.gradle.kts']],
  ['ruby', ['Gemfile']],
];

/** Detects the project's language in the reference order; *.csproj / *.sln by globbing. */
export async function detectLanguage(dir: string): Promise<Detection> {
  for (const [lang, files] of DETECTION_ORDER) {
    for (const f of files) {
      if (!(await pathExists(path.join(dir, f)))) continue;
      return f === 'package.json' ? detectNodeLanguage(dir) : { lang, evidence: f };
    }
  }
  const dotnet = await findByExtension(dir, ['.sln', '.csproj'], 2);
  const first = dotnet[0];
  if (first !== undefined) return { lang: 'csharp', evidence: first };
  return { lang: 'generic', evidence: null };
}

/** TypeScript sources (not declaration files, which plain JavaScript packages ship too). */
const TS_SOURCE = /\.(ts|tsx|mts|cts)$/i;
const TS_DECLARATION = /\.d\.(ts|mts|cts)$/i;

/** A package.json without tsconfig.json: TypeScript when it depends on typescript or has .ts sources. */
async function detectNodeLanguage(dir: string): Promise<Detection> {
  const pkg = await readPackageJson(dir);
  if ('typescript' in { ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}) }) {
    return { lang: 'typescript', evidence: 'package.json (typescript dependency)' };
  }
  const sources = await findByExtension(dir, ['.ts', '.tsx', '.mts', '.cts'], 2);
  const source = sources.find((f) => TS_SOURCE.test(f) && !TS_DECLARATION.test(f));
  if (source !== undefined) return { lang: 'typescript', evidence: source };
  return { lang: 'javascript', evidence: 'package.json' };
}

interface PackageJson {
  name?: unknown;
  scripts?: Record<string, unknown>;
  dependencies?: Record<string, unknown>;
  devDependencies?: Record<string, unknown>;
}

async function readJsonFile(p: string): Promise<unknown> {
  try {
    return JSON.parse(await fs.readFile(p, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** npm's placeholder test script, which always fails. */
const NPM_PLACEHOLDER_TEST = /no test specified/;

async function readPackageJson(dir: string): Promise<PackageJson> {
  const raw = await readJsonFile(path.join(dir, 'package.json'));
  return raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as PackageJson) : {};
}

/** A JavaScript project without a build: every tracked or new script must at least parse. */
const NODE_SYNTAX_CHECK = "git ls-files -z --cached --others --exclude-standard '*.js' '*.mjs' '*.cjs' | xargs -0 -r -n1 node --check";

async function nodeCommands(
  dir: string,
  lang: 'typescript' | 'javascript',
): Promise<Pick<LanguageProfile, 'build' | 'test' | 'test_unit' | 'lint' | 'fmt' | 'notes'>> {
  const pkg = await readPackageJson(dir);
  const scripts: Record<string, string> = {};
  for (const [k, v] of Object.entries(pkg.scripts ?? {})) if (typeof v === 'string') scripts[k] = v;
  const deps = { ...(pkg.dependencies ?? {}), ...(pkg.devDependencies ?? {}) };

  // The project's package manager, from its lock file.
  let run = (s: string): string => (s === 'test' ? 'npm test' : `npm run ${s}`);
  let exec = 'npx';
  if (await pathExists(path.join(dir, 'pnpm-lock.yaml'))) {
    run = (s) => (s === 'test' ? 'pnpm test' : `pnpm run ${s}`);
    exec = 'pnpm exec';
  } else if (await pathExists(path.join(dir, 'yarn.lock'))) {
    run = (s) => `yarn ${s}`;
    exec = 'yarn';
  } else if ((await pathExists(path.join(dir, 'bun.lockb'))) || (await pathExists(path.join(dir, 'bun.lock')))) {
    run = (s) => `bun run ${s}`;
    exec = 'bunx';
  }
  const has = (s: string): boolean => scripts[s] !== undefined && !(s === 'test' && NPM_PLACEHOLDER_TEST.test(scripts[s] ?? ''));
  const firstScript = (...names: string[]): string | undefined => names.find(has);
  const notes: string[] = [];

  let build = '';
  const buildScript = firstScript('build', 'compile', 'typecheck');
  if (buildScript) build = run(buildScript);
  else if (await pathExists(path.join(dir, 'tsconfig.json'))) build = `${exec} tsc --noEmit -p .`;
  else if (lang === 'javascript') {
    build = NODE_SYNTAX_CHECK;
    notes.push('no build script: the build gate checks that every .js/.mjs/.cjs file parses (node --check)');
  } else notes.push('no build script and no tsconfig.json: the build gate is disabled');

  const test = has('test') ? run('test') : '';
  if (!test) notes.push('no test script in package.json: the test gate is disabled');
  const unitScript = firstScript('test:unit', 'unit', 'test-unit');
  const test_unit = unitScript ? run(unitScript) : test;

  let lint = '';
  const lintScript = firstScript('lint', 'eslint');
  if (lintScript) lint = run(lintScript);
  else if ('eslint' in deps) lint = `${exec} eslint .`;

  let fmt = '';
  const fmtScript = firstScript('format:check', 'fmt:check', 'prettier:check', 'check:format', 'lint:format');
  if (fmtScript) fmt = run(fmtScript);
  else if ('prettier' in deps) fmt = `${exec} prettier --check .`;
  else if ('@biomejs/biome' in deps) fmt = `${exec} biome format .`;

  return { build, test, test_unit, lint, fmt, notes };
}

async function javaCommands(dir: string): Promise<Pick<LanguageProfile, 'build' | 'test' | 'test_unit' | 'lint' | 'fmt' | 'notes'>> {
  if (await pathExists(path.join(dir, 'pom.xml'))) {
    const mvn = (await pathExists(path.join(dir, 'mvnw'))) ? './mvnw' : 'mvn';
    return {
      build: `${mvn} -q compile`,
      test: `${mvn} -q test`,
      test_unit: `${mvn} -q test`,
      lint: `${mvn} -q checkstyle:check`,
      fmt: '',
      notes: [],
    };
  }
  const gradle = (await pathExists(path.join(dir, 'gradlew'))) ? './gradlew' : 'gradle';
  return {
    build: `${gradle} compileJava`,
    test: `${gradle} test`,
    test_unit: `${gradle} test`,
    lint: `${gradle} checkstyleMain`,
    fmt: '',
    notes: [],
  };
}

async function genericCommands(dir: string): Promise<Pick<LanguageProfile, 'build' | 'test' | 'test_unit' | 'lint' | 'fmt' | 'notes'>> {
  let makefile: string | undefined;
  for (const f of ['Makefile', 'makefile', 'GNUmakefile']) {
    try {
      makefile = await fs.readFile(path.join(dir, f), 'utf8');
      break;
    } catch {
      // try the next name
    }
  }
  if (makefile === undefined) {
    return { build: '', test: '', test_unit: '', lint: '', fmt: '', notes: ['no Makefile: set build / test / lint in ralph.config.json'] };
  }
  const target = (t: string): boolean => new RegExp(`^${t}\\s*:`, 'm').test(makefile ?? '');
  const notes: string[] = [];
  const pick = (t: string): string => {
    if (target(t)) return `make ${t}`;
    notes.push(`Makefile has no '${t}' target: that gate is disabled`);
    return '';
  };
  const build = pick('build');
  const test = pick('test');
  const lint = pick('lint');
  return { build, test, test_unit: target('test-unit') ? 'make test-unit' : test, lint, fmt: target('fmt') ? 'make fmt' : '', notes };
}

type StaticProfile = Omit<LanguageProfile, 'lang' | 'notes'>;

const STATIC: Readonly<Record<Exclude<Language, 'typescript' | 'javascript' | 'java' | 'generic'>, StaticProfile>> = {
  rust: {
    displayName: 'Rust',
    build: 'cargo check --workspace',
    test: 'cargo test --workspace',
    test_unit: 'cargo test --workspace --quiet',
    lint: 'cargo clippy --workspace',
    fmt: 'cargo fmt --check',
    forbidden_patterns: ['.unwrap()', '.expect(', 'panic!('],
    forbidden_exclude: ['tests/**', 'benches/**', 'examples/**', '**/tests.rs', '**/*_test.rs'],
    conventions: [
      'Return `Result` and propagate errors with `?`; no `.unwrap()`, `.expect()` or `panic!()` outside tests.',
      'Keep `cargo clippy` clean; prefer borrowing over cloning.',
      'Unit tests live in a `#[cfg(test)] mod tests` beside the code; integration tests in tests/.',
    ],
    gitignore: ['target/'],
  },
  python: {
    displayName: 'Python',
    build: 'python3 -m compileall -q -x "/(\\.|venv|node_modules)" .',
    test: 'pytest',
    test_unit: 'pytest -x -q --tb=short',
    lint: 'ruff check',
    fmt: 'ruff format --check',
    forbidden_patterns: ['except:', 'eval(', 'import *'],
    forbidden_exclude: [],
    conventions: [
      'Catch specific exceptions; never a bare `except:`.',
      'No `eval(` and no `from x import *`.',
      'Type hints on public functions; tests with pytest under tests/.',
    ],
    gitignore: ['__pycache__/', '*.pyc', '.venv/', '.pytest_cache/', '.ruff_cache/'],
  },
  go: {
    displayName: 'Go',
    build: 'go build ./...',
    test: 'go test ./...',
    test_unit: 'go test -short ./...',
    lint: 'golangci-lint run',
    fmt: 'test -z "$(gofmt -l .)"',
    forbidden_patterns: ['panic(', 'os.Exit('],
    forbidden_exclude: ['**/*_test.go', 'main.go', 'cmd/**', '**/main.go'],
    conventions: [
      'Return errors and wrap them with `fmt.Errorf("...: %w", err)`; no `panic()` in library code.',
      '`os.Exit` only in package main.',
      'Table-driven tests in *_test.go beside the code; keep gofmt clean.',
    ],
    gitignore: [],
  },
  ruby: {
    displayName: 'Ruby',
    build: "git ls-files -z --cached --others --exclude-standard '*.rb' | xargs -0 -r -n1 ruby -c > /dev/null",
    test: 'bundle exec rspec',
    test_unit: 'bundle exec rspec --fail-fast',
    lint: 'bundle exec rubocop',
    fmt: '',
    forbidden_patterns: ['eval(', 'puts ', 'rescue Exception'],
    forbidden_exclude: ['spec/**', 'test/**', 'bin/**', 'exe/**', 'Rakefile'],
    conventions: [
      'Rescue specific errors (`rescue StandardError` at most), never `rescue Exception`.',
      'No `eval(`; no `puts` in library code (use a logger).',
      'Specs with RSpec under spec/; keep rubocop clean.',
    ],
    gitignore: ['.bundle/', 'vendor/bundle/'],
  },
  csharp: {
    displayName: 'C#',
    build: 'dotnet build',
    test: 'dotnet test',
    test_unit: 'dotnet test',
    lint: 'dotnet format --verify-no-changes',
    fmt: 'dotnet format whitespace --verify-no-changes',
    forbidden_patterns: ['Console.WriteLine', 'Thread.Sleep('],
    forbidden_exclude: ['**/*Tests/**', '**/*.Tests/**', 'tests/**', 'test/**', '**/Program.cs'],
    conventions: [
      'Log through ILogger, not `Console.WriteLine`.',
      'In async code use `await Task.Delay`, never `Thread.Sleep`.',
      'Nullable reference types on; tests in a *.Tests project.',
    ],
    gitignore: ['bin/', 'obj/'],
  },
};

const TYPESCRIPT: StaticProfile = {
  displayName: 'TypeScript',
  build: 'npm run build',
  test: 'npm test',
  test_unit: 'npm test',
  lint: 'npx eslint .',
  fmt: '',
  forbidden_patterns: [': any', 'as any', 'console.log(', 'eval('],
  forbidden_exclude: ['**/*.test.*', '**/*.spec.*', 'test/**', 'tests/**', '**/__tests__/**', 'scripts/**'],
  conventions: [
    'Strict types: no `any` (use `unknown` and narrow); explicit return types on exported functions.',
    'No `console.log` in production code (use the project logger); no `eval(`.',
    'Validate external input at the edges; tests beside the code or under test/.',
  ],
  gitignore: ['node_modules/', 'dist/', 'coverage/'],
};

const JAVASCRIPT: StaticProfile = {
  displayName: 'JavaScript',
  build: NODE_SYNTAX_CHECK,
  test: 'npm test',
  test_unit: 'npm test',
  lint: 'npx eslint .',
  fmt: '',
  forbidden_patterns: ['console.log(', 'eval(', 'debugger;'],
  forbidden_exclude: TYPESCRIPT.forbidden_exclude,
  conventions: [
    '`const` and `let`, never `var`; `===` and `!==`, never `==`.',
    'No `console.log` in production code (use the project logger); no `eval(`; no `debugger;` left behind.',
    'JSDoc on exported functions; validate external input at the edges; tests beside the code or under test/.',
  ],
  gitignore: TYPESCRIPT.gitignore,
};

const JAVA: StaticProfile = {
  displayName: 'Java',
  build: 'mvn -q compile',
  test: 'mvn -q test',
  test_unit: 'mvn -q test',
  lint: 'mvn -q checkstyle:check',
  fmt: '',
  forbidden_patterns: ['System.out.println', '/catch\\s*\\(\\s*Exception\\s+\\w+\\s*\\)\\s*\\{\\s*\\}/'],
  forbidden_exclude: ['src/test/**', '**/src/test/**'],
  conventions: [
    'Log through the project logger (SLF4J), never `System.out.println`.',
    'Never swallow exceptions: a `catch` logs or rethrows; catch the narrowest type.',
    'Tests with JUnit under src/test/java mirroring the main package.',
  ],
  gitignore: ['target/', 'build/', '.gradle/'],
};

const GENERIC: StaticProfile = {
  displayName: 'Generic',
  build: 'make build',
  test: 'make test',
  test_unit: 'make test',
  lint: 'make lint',
  fmt: '',
  forbidden_patterns: ['TODO', 'FIXME', 'HACK'],
  forbidden_exclude: [],
  conventions: [
    'Leave no TODO, FIXME or HACK markers: finish the work or propose a task.',
    'Keep the Makefile targets build, test and lint working.',
  ],
  gitignore: [],
};

/** The full profile for a language, reading the project where commands depend on it. */
export async function languageProfile(lang: Language, dir: string): Promise<LanguageProfile> {
  switch (lang) {
    case 'typescript':
      return { lang, ...TYPESCRIPT, ...(await nodeCommands(dir, lang)) };
    case 'javascript':
      return { lang, ...JAVASCRIPT, ...(await nodeCommands(dir, lang)) };
    case 'java':
      return { lang, ...JAVA, ...(await javaCommands(dir)) };
    case 'generic':
      return { lang, ...GENERIC, ...(await genericCommands(dir)) };
    default:
      return { lang, ...STATIC[lang], notes: [] };
  }
}

/** The profile without reading any project: the seed table's defaults. */
export function staticProfile(lang: Language): LanguageProfile {
  switch (lang) {
    case 'typescript':
      return { lang, ...TYPESCRIPT, notes: [] };
    case 'javascript':
      return { lang, ...JAVASCRIPT, notes: [] };
    case 'java':
      return { lang, ...JAVA, notes: [] };
    case 'generic':
      return { lang, ...GENERIC, notes: [] };
    default:
      return { lang, ...STATIC[lang], notes: [] };
  }
}

/** A project name from its manifest (package.json, Cargo.toml, pyproject.toml), else the folder name. */
export async function detectProjectName(dir: string): Promise<string> {
  const pkg = await readJsonFile(path.join(dir, 'package.json'));
  if (pkg !== null && typeof pkg === 'object' && typeof (pkg as PackageJson).name === 'string' && (pkg as { name: string }).name) {
    return (pkg as { name: string }).name;
  }
  for (const f of ['Cargo.toml', 'pyproject.toml']) {
    try {
      const text = await fs.readFile(path.join(dir, f), 'utf8');
      const m = /^\s*name\s*=\s*"([^"]+)"/m.exec(text);
      if (m?.[1]) return m[1];
    } catch {
      // not present
    }
  }
  return path.basename(path.resolve(dir));
}
