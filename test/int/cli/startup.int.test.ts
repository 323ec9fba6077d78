// What a `ralph` call loads and writes, on the built CLI (dist/): `help` and usage errors
// load the entry point alone (and esbuild's runtime helpers the entry points share);
// `status` the store and its own part of the control plane (not the control plane's index)
// but none of the loop, agents, project layer, git or extension chunks, and no git port; a
// command that asks git loads the git port; the loop loads only for the loop's verbs.
// Read-only commands take no writer lock and write nothing in .ralph; status judges an
// unchanged ralph.config.json from its cached verdict. And the chunks are compiled from the
// V8 code cache on the second run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { git } from '../../kit/git';

const ROOT = path.resolve(__dirname, '../../..');
const DIST = path.join(ROOT, 'dist');
const CLI = path.join(DIST, 'cli.js');

/** Chunks named for what they hold (esbuild names a split point's chunk after its module; `cli-` is src/mcp/cli.ts). */
const LOOP_OR_PROJECT = /^(loopCommands|projectCommands|host|lmBackend|composition|init|repair|cli)-/;
/** Team mode's chunks: the PostgreSQL store (and with it the `pg` driver's chunk) and `ralph store`. */
const TEAM = /^(pgStore|storeCommand)-/;
/** The store's entry for a command (opening it, sql.js) and the store itself. */
const STORE = /^(statusPath|writerAccess)-/;

/** Whether the built chunk `file` contains text matching `re`. */
function chunkHolds(file: string, re: RegExp): boolean {
  return re.test(fs.readFileSync(path.join(DIST, file), 'utf8'));
}

describe('ralph start-up: what each command loads and writes (built CLI)', function () {
  this.timeout(120_000);
  let dir: string;
  let repo: string;
  let cacheDir: string;
  let printer: string;

  /** Runs the built CLI; returns its exit code, output and the dist/ files it loaded. */
  function ralph(...args: string[]): { code: number; out: string; err: string; loaded: string[] } {
    const list = path.join(dir, `loaded-${process.hrtime.bigint()}.json`);
    const r = spawnSync(process.execPath, ['--require', printer, CLI, ...args], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, RALPH_LOADED_LIST: list, RALPH_CODE_CACHE_DIR: cacheDir },
    });
    const loaded = (JSON.parse(fs.readFileSync(list, 'utf8')) as string[])
      .filter((f) => path.dirname(f) === DIST)
      .map((f) => path.basename(f))
      .sort();
    return { code: r.status ?? -1, out: r.stdout, err: r.stderr, loaded };
  }

  /** What loads before any command runs: the entry point and the small helper chunks it imports. */
  let entryOnly: string[];

  /** Every file under .ralph with its size and modification time. */
  function snapshot(): Map<string, string> {
    const out = new Map<string, string>();
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else {
          const st = fs.statSync(p);
          out.set(path.relative(repo, p), `${st.size}@${st.mtimeMs}`);
        }
      }
    };
    walk(path.join(repo, '.ralph'));
    return out;
  }

  before(() => {
    assert.ok(fs.existsSync(CLI), `${CLI} missing: npm run build`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-startup-'));
    cacheDir = path.join(dir, 'code-cache');
    printer = path.join(dir, 'printer.js');
    fs.writeFileSync(
      printer,
      "process.on('exit', () => require('fs').writeFileSync(process.env.RALPH_LOADED_LIST, JSON.stringify(Object.keys(require.cache))));\n",
    );
    repo = path.join(dir, 'repo');
    fs.mkdirSync(path.join(repo, '.ralph'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-q', '--allow-empty', '-m', 'init');
    fs.writeFileSync(
      path.join(repo, '.ralph', 'BACKLOG.md'),
      '# BACKLOG\n\n## Wave 0\n\n| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n| W0-001 | pending | One | ES:1 | S | - |\n',
    );
    const init = ralph('init');
    assert.equal(init.code, 0, init.err);
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given `ralph help` or an unknown command, then only the entry point and the dispatcher load', () => {
    const help = ralph('help');
    assert.equal(help.code, 0);
    assert.match(help.out, /Usage: ralph/);
    assert.match(help.out, /claim-ready-task/);
    entryOnly = help.loaded;
    assert.ok(entryOnly.includes('cli.js'));
    // A static import of the store, zod or the control plane from the dispatcher would land here.
    const entry = fs.statSync(CLI).size;
    const run = entryOnly.find((f) => f.startsWith('run-'));
    const dispatcherBytes = run === undefined ? 0 : fs.statSync(path.join(DIST, run)).size;
    assert.ok(dispatcherBytes < 64 * 1024, `the dispatcher is ${dispatcherBytes} bytes: it imports something heavy statically`);
    // The entry installs the code cache and loads the dispatcher through it (run-*.js: the
    // argument parser and the command tables, plain data); besides them, esbuild's helpers and
    // NODE_EXTRA_CA_CERTS's restore (shared with the PostgreSQL store).
    assert.ok(entry < 8 * 1024, `dist/cli.js is ${entry} bytes: the dispatcher belongs in its own chunk, loaded through the code cache`);
    const dispatcher = entryOnly.filter((f) => f.startsWith('run-'));
    assert.equal(dispatcher.length, 1, `loaded: ${entryOnly.join(' ')}`);
    const helpers = entryOnly
      .filter((f) => f !== 'cli.js' && !f.startsWith('run-'))
      .reduce((n, f) => n + fs.statSync(path.join(DIST, f)).size, 0);
    assert.ok(helpers < 6144, `help loaded ${helpers} bytes of chunks besides cli.js and the dispatcher: ${entryOnly.join(' ')}`);
    const unknown = ralph('no-such-command');
    assert.equal(unknown.code, 2);
    assert.deepEqual(unknown.loaded, entryOnly);
    const usage = ralph('status', 'extra-argument');
    assert.equal(usage.code, 2);
    assert.deepEqual(usage.loaded, entryOnly);
  });

  it('given `ralph status` after a writer closed, then it answers from the status image: no store, sql.js or schema loads', () => {
    ralph('status'); // the first judges ralph.config.json (its schema), later ones take the cached verdict
    const quick = ralph('status');
    assert.equal(quick.code, 0, quick.err);
    assert.match(quick.out, /=== Ralph Loop v3 Status ===/);
    assert.ok(
      quick.loaded.some((f) => f.startsWith('statusQuick-')),
      `loaded: ${quick.loaded.join(' ')}`,
    );
    const heavy = quick.loaded.filter((f) => STORE.test(f) || chunkHolds(f, /wasmBinary|\bZodError\b/));
    assert.deepEqual(heavy, [], `status loaded the store: ${quick.loaded.join(' ')}`);
    // Without the image, the same answer from the store.
    const image = path.join(repo, '.ralph', 'ralph.db.status.json');
    const kept = fs.readFileSync(image);
    try {
      fs.rmSync(image);
      const opened = ralph('status');
      assert.equal(opened.code, 0, opened.err);
      assert.equal(opened.out, quick.out);
      assert.ok(
        opened.loaded.some((f) => f.startsWith('statusPath-')),
        `loaded: ${opened.loaded.join(' ')}`,
      );
      // Not the control plane's index (`control-`): status loads only what it runs.
      assert.deepEqual(
        opened.loaded.filter((f) => LOOP_OR_PROJECT.test(f) || TEAM.test(f) || f.startsWith('gitPort-') || f.startsWith('control-')),
        [],
      );
    } finally {
      fs.writeFileSync(image, kept);
    }
  });

  it('given an unchanged ralph.config.json, then status takes its verdict from the cache without the schema; an edit is judged again', () => {
    const config = path.join(repo, 'ralph.config.json');
    const text = fs.readFileSync(config, 'utf8');
    const schema = (r: { loaded: string[] }): string[] => r.loaded.filter((f) => f.startsWith('config-'));
    ralph('status');
    const cached = ralph('status');
    assert.equal(cached.code, 0, cached.err);
    assert.equal(cached.err, '');
    assert.deepEqual(schema(cached), []);
    try {
      fs.writeFileSync(config, `${text}}`);
      const broken = ralph('status');
      assert.equal(broken.code, 0, broken.err);
      assert.match(broken.err, /^ralph: warning: .*ralph\.config\.json:\d+:\d+: not valid JSON/m);
      assert.equal(schema(broken).length, 1, `loaded: ${broken.loaded.join(' ')}`);
      // The same broken text again: the same warning, from the cache.
      const brokenAgain = ralph('status');
      assert.equal(brokenAgain.err, broken.err);
      assert.deepEqual(schema(brokenAgain), []);
    } finally {
      fs.writeFileSync(config, text);
    }
    const fixed = ralph('status');
    assert.equal(fixed.err, '');
  });

  it('given read-only commands, then no writer lock is taken and nothing under .ralph changes', () => {
    const before = snapshot();
    for (const args of [
      ['status'],
      ['status', '--json'],
      ['pick-ready-task', 'worker'],
      ['get-deferred-queue'],
      ['should-review-deferred'],
    ]) {
      const r = ralph(...args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.err}`);
    }
    assert.deepEqual(snapshot(), before);
    assert.equal(fs.existsSync(path.join(repo, '.ralph', 'locks', 'writer.lock')), false);
  });

  it('given a command that asks git, then the git port loads; the loop loads only for its own verbs', () => {
    const claim = ralph('claim-ready-task', 'worker');
    assert.equal(claim.code, 0, claim.err);
    assert.equal(claim.out.trim(), 'W0-001');
    assert.deepEqual(
      claim.loaded.filter((f) => LOOP_OR_PROJECT.test(f) || f.startsWith('gitPort-')),
      [],
    );
    fs.writeFileSync(path.join(repo, 'one.txt'), 'one\n');
    git(repo, 'add', 'one.txt');
    git(repo, '-c', 'user.email=t@example.invalid', '-c', 'user.name=T', 'commit', '-q', '-m', 'W0-001');
    fs.writeFileSync(path.join(repo, '.ralph', 'W0-001.patch'), git(repo, 'format-patch', '-1', '--stdout'));
    const queued = ralph('queue-patch', 'W0-001', '.ralph/W0-001.patch', 'worker');
    assert.equal(queued.code, 0, queued.err);
    const promoted = ralph('promote-patch', queued.out.trim(), git(repo, 'rev-parse', 'HEAD'));
    assert.equal(promoted.code, 0, promoted.err);
    assert.match(promoted.out, /^PROMOTED /);
    assert.ok(
      promoted.loaded.some((f) => f.startsWith('gitPort-')),
      `promote-patch loaded: ${promoted.loaded.join(' ')}`,
    );
    assert.deepEqual(
      promoted.loaded.filter((f) => LOOP_OR_PROJECT.test(f)),
      [],
    );
    const stop = ralph('stop', 'bench');
    assert.ok(
      stop.loaded.some((f) => f.startsWith('loopCommands-')),
      `stop loaded: ${stop.loaded.join(' ')}`,
    );
  });

  it('given a second run, then its chunks compile from the code cache', () => {
    ralph('status');
    const entries = fs.readdirSync(cacheDir).filter((f) => f.endsWith('.v8'));
    // The entry point and what it imports load before the cache is installed; the dispatcher after.
    const loaded = ralph('status').loaded.filter((f) => !entryOnly.includes(f) || f.startsWith('run-'));
    assert.ok(loaded.some((f) => f.startsWith('run-')));
    assert.ok(loaded.length > 0);
    for (const chunk of loaded) {
      assert.ok(
        entries.some((e) => e.startsWith(`${chunk.slice(0, -'.js'.length)}-`)),
        `no cache entry for ${chunk} in ${entries.join(' ')}`,
      );
    }
  });
});
