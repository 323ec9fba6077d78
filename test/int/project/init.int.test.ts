import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from '../../../src/git/exec';
import { runGate } from '../../../src/loop/gates';
import { loadConfig } from '../../../src/project/config';
import { initProject, RALPH_DIRS, RALPH_FILES } from '../../../src/project/init';
import { formatInitReport, parseInitArgs } from '../../../src/project/initReport';
import { detectLanguage } from '../../../src/project/languages';
import type { Language } from '../../../src/project/languages';

const FIXTURES = path.resolve(__dirname, '../../fixtures/languages');
const FIXTURES_DIR = (name: string): string => path.join(FIXTURES, name);

async function tempDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'ralph-init-'));
}

async function fromFixture(name: string): Promise<string> {
  const dir = await tempDir();
  await fs.cp(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}

async function git(dir: string, ...args: string[]): Promise<string> {
  return (await runGit(dir, args)).stdout.trim();
}

const CASES: readonly { fixture: string; lang: Language; evidence: string | null; build: string; test: string; pattern: string }[] = [
  {
    fixture: 'rust',
    lang: 'rust',
    evidence: 'Cargo.toml',
    build: 'cargo check --workspace',
    test: 'cargo test --workspace',
    pattern: '.unwrap()',
  },
  { fixture: 'python', lang: 'python', evidence: 'pyproject.toml', build: 'python3 -m compileall', test: 'pytest', pattern: 'except:' },
  {
    fixture: 'typescript',
    lang: 'typescript',
    evidence: 'tsconfig.json',
    build: 'npm run build',
    test: 'npm test',
    pattern: 'console.log(',
  },
  { fixture: 'javascript', lang: 'javascript', evidence: 'package.json', build: 'node --check', test: 'npm test', pattern: 'debugger;' },
  { fixture: 'go', lang: 'go', evidence: 'go.mod', build: 'go build ./...', test: 'go test ./...', pattern: 'os.Exit(' },
  { fixture: 'java', lang: 'java', evidence: 'pom.xml', build: 'mvn -q compile', test: 'mvn -q test', pattern: 'System.out.println' },
  {
    fixture: 'java-gradle',
    lang: 'java',
    evidence: 'build.gradle.kts',
    build: 'gradle compileJava',
    test: 'gradle test',
    pattern: 'System.out.println',
  },
  { fixture: 'ruby', lang: 'ruby', evidence: 'Gemfile', build: 'ruby -c', test: 'bundle exec rspec', pattern: 'rescue Exception' },
  {
    fixture: 'csharp',
    lang: 'csharp',
    evidence: 'src/App/App.csproj',
    build: 'dotnet build',
    test: 'dotnet test',
    pattern: 'Console.WriteLine',
  },
  { fixture: 'generic', lang: 'generic', evidence: null, build: 'make build', test: 'make test', pattern: 'FIXME' },
];

describe('project/init (real files, real git)', function () {
  this.timeout(60_000);

  for (const c of CASES) {
    describe(`given a ${c.fixture} project without a repository`, () => {
      let dir: string;
      let report: Awaited<ReturnType<typeof initProject>>;
      let dbCalls: string[];
      before(async () => {
        dir = await fromFixture(c.fixture);
        dbCalls = [];
        report = await initProject({
          dir,
          gitInit: true,
          createDatabase: async (ralphDir) => {
            dbCalls.push(ralphDir);
            await fs.writeFile(path.join(ralphDir, 'ralph.db'), '');
          },
        });
      });
      after(async () => fs.rm(dir, { recursive: true, force: true }));

      it(`then detects ${c.lang} from ${c.evidence ?? 'nothing (fallback)'}`, async () => {
        assert.equal(report.lang, c.lang);
        assert.equal(report.langEvidence, c.evidence);
        assert.deepEqual(await detectLanguage(dir), { lang: c.lang, evidence: c.evidence });
      });
      it('then creates the whole .ralph tree and a valid config with the language commands', async () => {
        for (const d of RALPH_DIRS) assert.ok((await fs.stat(path.join(dir, '.ralph', d))).isDirectory(), d);
        for (const f of RALPH_FILES) assert.ok((await fs.stat(path.join(dir, '.ralph', f))).isFile(), f);
        const loaded = loadConfig(dir);
        assert.ok(loaded.ok, loaded.ok ? '' : loaded.error.message);
        if (!loaded.ok) return;
        assert.equal(loaded.value.lang, c.lang);
        assert.ok(loaded.value.build.includes(c.build), loaded.value.build);
        assert.ok(loaded.value.test.includes(c.test), loaded.value.test);
        assert.ok(loaded.value.forbidden_patterns.includes(c.pattern));
        const implement = await fs.readFile(path.join(dir, '.ralph/phases/implement.md'), 'utf8');
        assert.ok(implement.includes(loaded.value.build), 'implement.md names the build command');
        const state = JSON.parse(await fs.readFile(path.join(dir, '.ralph/STATE.json'), 'utf8')) as Record<string, unknown>;
        assert.equal(state['phase'], 'assess');
        assert.equal(state['commits_total'], 0);
        const backlog = await fs.readFile(path.join(dir, '.ralph/BACKLOG.md'), 'utf8');
        assert.match(
          backlog,
          /^# BACKLOG\n\n## Wave 0\n\n\| ID \| Status \| Title \| Source \| Effort \| Deps \|\n\|----\|--------\|-------\|--------\|--------\|------\|/,
        );
      });
      it('then creates the database through the callback, once', () => {
        assert.deepEqual(dbCalls, [path.join(dir, '.ralph')]);
        assert.equal(report.database, 'created');
      });
      it("then, asked to, initializes git and commits only Ralph's own files: the user's stay untracked, and init says so", async () => {
        assert.equal(report.git.initialized, true);
        assert.equal(await git(dir, 'rev-parse', 'HEAD'), report.git.commit);
        const tracked = (await git(dir, 'ls-files')).split('\n');
        assert.ok(tracked.includes('ralph.config.json'));
        assert.ok(tracked.includes('.ralph/phases/plan.md'));
        assert.ok(tracked.includes('.ralph/.gitignore'));
        for (const derived of ['.ralph/BACKLOG.md', '.ralph/ralph.db', '.ralph/STATE.json', '.ralph/GUARDRAILS.md'])
          assert.ok(!tracked.includes(derived), `${derived} is derived or machine-local`);
        const mine = (await fs.readdir(FIXTURES_DIR(c.fixture), { recursive: true, withFileTypes: true }))
          .filter((d) => d.isFile())
          .map((d) => path.relative(FIXTURES_DIR(c.fixture), path.join(d.parentPath, d.name)).split(path.sep).join('/'));
        assert.ok(mine.length > 0);
        for (const f of mine) assert.ok(!tracked.includes(f), `the user's ${f} was committed`);
        // What is left in `git status` is exactly the user's own files.
        const status = (await git(dir, 'status', '--porcelain', '--untracked-files=all')).split('\n').filter(Boolean);
        assert.deepEqual(status.map((l) => l.slice(3)).sort(), [...mine].sort());
        assert.ok(
          report.warnings.some((w) => /not committed .*Agents work on what is committed/.test(w)),
          report.warnings.join('\n'),
        );
      });
    });
  }

  it("given package.json scripts, then the TypeScript commands are the project's own", async () => {
    const dir = await fromFixture('typescript');
    try {
      await initProject({ gitInit: true, dir });
      const c = loadConfig(dir);
      assert.ok(c.ok);
      if (!c.ok) return;
      assert.equal(c.value.build, 'npm run build');
      assert.equal(c.value.test_unit, 'npm run test:unit');
      assert.equal(c.value.lint, 'npm run lint');
      assert.equal(c.value.fmt, 'npm run format:check');
      assert.equal(c.value.name, 'tsapp');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given a JavaScript project, then core.md says nothing of types and its build gate parses every script', async () => {
    const dir = await fromFixture('javascript');
    try {
      const r = await initProject({ gitInit: true, dir });
      assert.equal(r.lang, 'javascript');
      const core = await fs.readFile(path.join(dir, '.ralph/core.md'), 'utf8');
      assert.doesNotMatch(core, /`any`|TypeScript/);
      assert.match(core, /`const` and `let`/);
      const c = loadConfig(dir);
      assert.ok(c.ok, c.ok ? '' : c.error.message);
      if (!c.ok) return;
      assert.ok(
        r.notes.some((n) => /node --check/.test(n)),
        r.notes.join('\n'),
      );
      const gate = { name: 'build', command: c.value.build, timeoutMs: 60_000 };
      assert.equal((await runGate(gate, { cwd: dir })).status, 'passed');
      await fs.writeFile(path.join(dir, 'src/broken.mjs'), 'export const x = ;\n');
      const broken = await runGate(gate, { cwd: dir });
      assert.equal(broken.status, 'failed');
      assert.match(broken.outputTail, /broken\.mjs/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given a package.json without tsconfig.json, then a typescript dependency or a .ts source says TypeScript', async () => {
    const dir = await tempDir();
    try {
      const write = (rel: string, text: string): Promise<void> =>
        fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true }).then(() => fs.writeFile(path.join(dir, rel), text));
      await write('package.json', JSON.stringify({ name: 'n' }));
      await write('types/index.d.ts', 'export declare const x: number;\n');
      assert.deepEqual(await detectLanguage(dir), { lang: 'javascript', evidence: 'package.json' });
      await write('src/lib/a.ts', 'export const a = 1;\n');
      assert.deepEqual(await detectLanguage(dir), { lang: 'typescript', evidence: 'src/lib/a.ts' });
      await write('package.json', JSON.stringify({ name: 'n', devDependencies: { typescript: '5.9.3' } }));
      assert.deepEqual(await detectLanguage(dir), { lang: 'typescript', evidence: 'package.json (typescript dependency)' });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given a pnpm project without a test script, then pnpm commands and a note that the test gate is off', async () => {
    const dir = await tempDir();
    try {
      await fs.writeFile(
        path.join(dir, 'package.json'),
        JSON.stringify({ name: 'p', scripts: { build: 'tsc', test: 'echo "Error: no test specified" && exit 1' } }),
      );
      await fs.writeFile(path.join(dir, 'pnpm-lock.yaml'), '');
      const r = await initProject({ gitInit: true, dir });
      const c = loadConfig(dir);
      assert.ok(c.ok);
      assert.equal(c.ok && c.value.build, 'pnpm run build');
      assert.equal(c.ok && c.value.test, '');
      assert.ok(r.notes.some((n) => /test gate is disabled/.test(n)));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given --lang, --name and --model, then they win over detection', async () => {
    const dir = await fromFixture('rust');
    try {
      const r = await initProject(parseInitArgs(['--lang', 'py', '--name=custom', '--model', 'sonnet', '--dir', dir, '--git-init']));
      assert.equal(r.lang, 'python');
      assert.equal(r.langSource, 'flag');
      const c = loadConfig(dir);
      assert.ok(c.ok);
      assert.equal(c.ok && c.value.name, 'custom');
      assert.equal(c.ok && c.value.model, 'sonnet');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  describe('given an initialized project a user has edited', () => {
    let dir: string;
    before(async () => {
      dir = await fromFixture('go');
      await initProject({ gitInit: true, dir, createDatabase: async (d) => fs.writeFile(path.join(d, 'ralph.db'), '') });
      await fs.appendFile(path.join(dir, '.ralph/phases/plan.md'), '\nAlways mention the ticket.\n');
      const cfg = JSON.parse(await fs.readFile(path.join(dir, 'ralph.config.json'), 'utf8')) as Record<string, unknown>;
      await fs.writeFile(path.join(dir, 'ralph.config.json'), JSON.stringify({ ...cfg, test: 'go test -race ./...' }, null, 2));
      await fs.writeFile(path.join(dir, '.ralph/GUARDRAILS.md'), '# Guardrails\n\n## G-001: mine\n');
      await fs.rm(path.join(dir, '.ralph/phases/verify.md'));
      await fs.rm(path.join(dir, '.ralph/locks'), { recursive: true });
      await fs.writeFile(path.join(dir, '.ralph/.gitignore'), 'ralph.db\n');
    });
    after(async () => fs.rm(dir, { recursive: true, force: true }));

    it('when init runs again, then it keeps every edit, fills only what is missing and says so', async () => {
      const head = await git(dir, 'rev-parse', 'HEAD');
      const r = await initProject({ gitInit: true, dir, createDatabase: () => assert.fail('the database exists; must not be recreated') });
      assert.deepEqual(r.created.sort(), ['.ralph/locks/', '.ralph/phases/verify.md']);
      // Unedited templates follow the config change (the test command); the edited one is kept.
      assert.deepEqual(r.updated, ['.ralph/phases/test_integration.md', '.ralph/core.md', '.ralph/templates.json', '.ralph/.gitignore']);
      assert.match(await fs.readFile(path.join(dir, '.ralph/phases/test_integration.md'), 'utf8'), /go test -race/);
      assert.deepEqual(r.edited, ['.ralph/phases/plan.md']);
      assert.equal(r.database, 'kept');
      assert.equal(r.git.initialized, false);
      assert.equal(await git(dir, 'rev-parse', 'HEAD'), head, 'no new commit');
      assert.match(await fs.readFile(path.join(dir, '.ralph/phases/plan.md'), 'utf8'), /Always mention the ticket/);
      assert.equal(await fs.readFile(path.join(dir, '.ralph/GUARDRAILS.md'), 'utf8'), '# Guardrails\n\n## G-001: mine\n');
      const c = loadConfig(dir);
      assert.equal(c.ok && c.value.test, 'go test -race ./...');
      const ignore = await fs.readFile(path.join(dir, '.ralph/.gitignore'), 'utf8');
      assert.match(ignore, /^ralph\.db\n/);
      assert.match(ignore, /locks\//);
      const text = formatInitReport(r);
      assert.match(text, /\+ \.ralph\/phases\/verify\.md/);
      assert.match(text, /edited by you .*\.ralph\/phases\/plan\.md/);
    });

    it('when init runs a third time, then it changes nothing at all', async () => {
      const r = await initProject({ gitInit: true, dir });
      assert.deepEqual([r.created, r.updated, r.regenerated], [[], [], []]);
      assert.match(formatInitReport(r), /Created: nothing \(already initialized\)/);
    });

    it('when init runs with force, then edited templates are backed up and regenerated, user data untouched', async () => {
      const r = await initProject({ gitInit: true, dir, force: true, now: () => new Date('2026-11-29T12:00:00.000Z') });
      assert.deepEqual(r.regenerated, ['.ralph/phases/plan.md']);
      assert.deepEqual(r.backedUp, [{ from: '.ralph/phases/plan.md', to: '.ralph/backup/2026-11-29T12-00-00-000Z/phases/plan.md' }]);
      assert.match(await fs.readFile(path.join(dir, r.backedUp[0]?.to ?? ''), 'utf8'), /Always mention the ticket/);
      assert.doesNotMatch(await fs.readFile(path.join(dir, '.ralph/phases/plan.md'), 'utf8'), /Always mention the ticket/);
      assert.equal(await fs.readFile(path.join(dir, '.ralph/GUARDRAILS.md'), 'utf8'), '# Guardrails\n\n## G-001: mine\n');
      const c = loadConfig(dir);
      assert.equal(c.ok && c.value.test, 'go test -race ./...');
      const ignored = await runGit(dir, ['check-ignore', '-q', '.ralph/backup/2026-11-29T12-00-00-000Z/phases/plan.md'], {
        allowExitCodes: [1],
      });
      assert.equal(ignored.exitCode, 0, 'backups are not committed');
    });
  });

  it('given a folder that is not a git repository, when init is not asked to create one, then it refuses before writing anything', async () => {
    const dir = await fromFixture('python');
    try {
      await assert.rejects(initProject({ dir }), (e: Error) => e.name === 'NotAGitRepositoryError' && /--git-init/.test(e.message));
      for (const p of ['.git', '.ralph', 'ralph.config.json', '.gitignore'])
        await assert.rejects(fs.stat(path.join(dir, p)), `${p} was created`);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given a repository that still tracks the derived views (an older init committed them), then init says how to stop tracking them', async () => {
    const dir = await fromFixture('ruby');
    try {
      await runGit(dir, ['init', '-q']);
      await fs.mkdir(path.join(dir, '.ralph'));
      await fs.writeFile(path.join(dir, '.ralph/BACKLOG.md'), '# BACKLOG\n');
      await runGit(dir, ['add', '-A']);
      await runGit(dir, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'mine']);
      const r = await initProject({ dir });
      assert.match(r.warnings.join('\n'), /\.ralph\/BACKLOG\.md is tracked by git[\s\S]*git rm --cached -- \.ralph\/BACKLOG\.md/);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given an existing repository with commits, then init does not commit', async () => {
    const dir = await fromFixture('ruby');
    try {
      await runGit(dir, ['init', '-q']);
      await runGit(dir, ['add', '-A']);
      await runGit(dir, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'mine']);
      const head = await git(dir, 'rev-parse', 'HEAD');
      const r = await initProject({ gitInit: true, dir });
      assert.equal(r.git.initialized, false);
      assert.equal(r.git.commit, null);
      assert.equal(await git(dir, 'rev-parse', 'HEAD'), head);
      assert.deepEqual(r.warnings, []);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given an existing invalid config, then it is kept and reported', async () => {
    const dir = await fromFixture('go');
    try {
      await fs.writeFile(path.join(dir, 'ralph.config.json'), '{\n  "name": "x",\n  "lang": "go",\n}\n');
      const r = await initProject({ gitInit: true, dir });
      assert.ok(r.kept.includes('ralph.config.json'));
      assert.match(r.warnings.join('\n'), /ralph\.config\.json:4:1: not valid JSON: trailing comma/);
      assert.equal(await fs.readFile(path.join(dir, 'ralph.config.json'), 'utf8'), '{\n  "name": "x",\n  "lang": "go",\n}\n');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('given spec documents, then SPEC_REGISTRY.md lists them unread', async () => {
    const dir = await fromFixture('generic');
    try {
      await fs.mkdir(path.join(dir, 'specs'), { recursive: true });
      await fs.mkdir(path.join(dir, 'adrs/sub'), { recursive: true });
      await fs.writeFile(path.join(dir, 'specs/api.md'), '# API\n## Auth\n## Users\n');
      await fs.writeFile(path.join(dir, 'adrs/sub/0001.yaml'), 'title: x\nstatus: accepted\n');
      await fs.writeFile(path.join(dir, 'specs/notes.txt'), 'ignored');
      const r = await initProject({ gitInit: true, dir });
      const registry = await fs.readFile(path.join(dir, '.ralph/SPEC_REGISTRY.md'), 'utf8');
      assert.match(registry, /\| adrs\/sub\/0001\.yaml \| yaml \| never \| 2 \| 0 \|/);
      assert.match(registry, /\| specs\/api\.md \| markdown \| never \| 3 \| 0 \|/);
      assert.doesNotMatch(registry, /notes\.txt/);
      assert.ok(r.notes.some((n) => /2 spec file\(s\)/.test(n)));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('project/init .gitignore (real git)', () => {
  it("given the store's files, then git ignores the database, journal, temp files, locks, logs and inbox, and tracks the rest", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-ignore-'));
    try {
      await initProject({ gitInit: true, dir });
      const ignored = [
        '.ralph/ralph.db',
        '.ralph/ralph.db.tmp-12-abc',
        '.ralph/ralph.events.journal',
        '.ralph/ralph.events.journal.tmp-12-abc',
        '.ralph/STATE.json',
        '.ralph/specs.json',
        '.ralph/locks/writer.lock',
        '.ralph/logs/par-metrics-20261129.jsonl',
        '.ralph/inbox/cmd_1.json',
        '.ralph/proposals/prop_1.json',
        '.ralph/commits/pending/p.patch',
        // derived views and the harness's logs: a run rewrites them, so they are never committed
        '.ralph/BACKLOG.md',
        '.ralph/SPEC_REGISTRY.md',
        '.ralph/GUARDRAILS.md',
        '.ralph/REFLECTIONS.md',
        '.ralph/EVOLVE_LOG.md',
      ];
      const tracked = ['ralph.config.json', '.ralph/phases/plan.md', '.ralph/core.md', '.ralph/templates.json', '.ralph/.gitignore'];
      for (const p of ignored) {
        const r = await runGit(dir, ['check-ignore', '-q', '--no-index', p], { allowExitCodes: [1] });
        assert.equal(r.exitCode, 0, `${p} should be ignored`);
      }
      for (const p of tracked) {
        const r = await runGit(dir, ['check-ignore', '-q', '--no-index', p], { allowExitCodes: [1] });
        assert.equal(r.exitCode, 1, `${p} should be tracked`);
      }
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
