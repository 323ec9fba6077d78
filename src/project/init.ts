// Over 400 lines because it is the one writer of the .ralph/ tree, the phase files and the config a new project starts with.
// `ralph init`: creates the .ralph/ tree, the phase files for the detected language and
// ralph.config.json. A folder that is not a git repository is the user's: init refuses it
// unless asked to create one (`gitInit`), and then commits only the files it created.
// Idempotent: existing files are never overwritten (a user may have edited them); only
// what is missing is filled in. `force` regenerates the templates (phase files, core.md)
// after copying the old ones to .ralph/backup/<time>/. The database is created by a
// callback so this module stays independent of the event store.
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runGit } from '../git/exec';
import { CONFIG_FILE, loadConfig } from './config';
import type { RalphConfig, RalphConfigInput } from './config';
import { detectLanguage, detectProjectName, languageProfile, normaliseLanguage } from './languages';
import type { Language, LanguageProfile } from './languages';
import { PHASES } from '../domain/phaseOutputs';
import { discoverSpecs, hashContent, mergeDiscovery, registryRows, renderSpecRegistry, SPEC_REGISTRY_FILE, writeSpecsState } from './specs';
import type { TemplateContext } from './templates/context';
import {
  DERIVED_FILES,
  EVOLVE_LOG_MD,
  GUARDRAILS_MD,
  RALPH_GITIGNORE_LINES,
  REFLECTIONS_MD,
  renderBacklogSkeleton,
  renderCore,
  renderInitialState,
  renderRalphGitignore,
} from './templates/files';
import { renderPhase } from './templates/phases';
import { pathExists } from '../shared/fs';

export const RALPH_DIR = '.ralph';
export const DATABASE_FILE = 'ralph.db';

/** Directories of the .ralph tree, relative to it. */
export const RALPH_DIRS: readonly string[] = [
  'phases',
  'proposals',
  'proposals/processed',
  'proposals/rejected',
  'commits',
  'commits/pending',
  'commits/applied',
  'locks',
  'logs',
  'inbox',
];

/** Files of the .ralph tree that init writes, relative to it (the database aside). */
export const RALPH_FILES: readonly string[] = [
  ...PHASES.map((p) => `phases/${p}.md`),
  'core.md',
  'GUARDRAILS.md',
  'REFLECTIONS.md',
  'EVOLVE_LOG.md',
  SPEC_REGISTRY_FILE,
  'BACKLOG.md',
  'STATE.json',
  '.gitignore',
];

export interface InitOptions {
  readonly dir: string;
  readonly lang?: string;
  readonly name?: string;
  readonly model?: string;
  /** Regenerate phase files and core.md, backing up the old ones. */
  readonly force?: boolean;
  /**
   * The folder is not a git repository: run `git init` and commit the files init created
   * (never the user's). Without it such a folder is refused before anything is written.
   */
  readonly gitInit?: boolean;
  /** Creates .ralph/ralph.db (the control plane's job); called only when it is missing. */
  readonly createDatabase?: (ralphDir: string) => Promise<void>;
  /** Clock for backup folder names (tests). */
  readonly now?: () => Date;
}

export interface InitReport {
  readonly dir: string;
  readonly lang: Language;
  /** How the language was chosen. */
  readonly langSource: 'flag' | 'config' | 'detected' | 'fallback';
  /** The manifest that decided detection (e.g. `Cargo.toml`), if any. */
  readonly langEvidence: string | null;
  readonly name: string;
  /** Project-relative paths (directories end with `/`). */
  readonly created: string[];
  /** Existing files left as they were. */
  readonly kept: string[];
  /** Templates in `kept` whose content differs from what init would write (user edits; `force` regenerates them). */
  readonly edited: string[];
  /** Existing files init changed: missing .gitignore lines added; unedited templates re-rendered after a config change. */
  readonly updated: string[];
  /** Templates rewritten by `force`. */
  readonly regenerated: string[];
  readonly backedUp: { readonly from: string; readonly to: string }[];
  readonly database: 'created' | 'kept' | 'skipped';
  readonly git: { readonly initialized: boolean; readonly commit: string | null };
  /** Things the user should know (a gate disabled, a command guessed). */
  readonly notes: string[];
  /** Problems found but not fixed (an invalid existing config, a repo without commits). */
  readonly warnings: string[];
}

async function readText(p: string): Promise<string | undefined> {
  try {
    return await fs.readFile(p, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** .ralph/templates.json: sha256 of each template as init last wrote it. */
export const TEMPLATE_RECORD_FILE = 'templates.json';

async function readTemplateRecord(file: string): Promise<Record<string, string>> {
  const text = await readText(file);
  if (text === undefined) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
    }
  } catch {
    // A damaged record only makes init more careful: every difference counts as an edit.
  }
  return {};
}

const rel = (dir: string, p: string): string => path.relative(dir, p).split(path.sep).join('/');

/** The config init writes: explicit where a user is likely to edit, defaults elsewhere. */
export function initialConfig(name: string, profile: LanguageProfile, model: string): RalphConfigInput {
  return {
    name,
    lang: profile.lang,
    build: profile.build,
    lint: profile.lint,
    test: profile.test,
    test_unit: profile.test_unit,
    fmt: profile.fmt,
    forbidden_patterns: [...profile.forbidden_patterns],
    forbidden_exclude: [...profile.forbidden_exclude],
    domain_constraints: [],
    model,
    backends: { primary: 'claude', worker: 'claude', judge: 'claude' },
    budgets: { primary: 2.5, worker: 5, judge: 1, per_task: 20, per_day: 50 },
    workers: { count: 1, effort: ['S'] },
  };
}

function contextFrom(name: string, profile: LanguageProfile, config: RalphConfig | undefined): TemplateContext {
  return {
    name: config?.name ?? name,
    profile,
    build: config?.build ?? profile.build,
    test: config?.test ?? profile.test,
    test_unit: config?.test_unit ?? profile.test_unit,
    lint: config?.lint ?? profile.lint,
    fmt: config?.fmt ?? profile.fmt,
    forbidden_patterns: config?.forbidden_patterns ?? profile.forbidden_patterns,
    domain_constraints: config?.domain_constraints ?? [],
  };
}

/** The folder was not a git repository and init was not asked to create one. */
export class NotAGitRepositoryError extends Error {
  override readonly name = 'NotAGitRepositoryError';
  constructor(readonly dir: string) {
    super(
      `${dir} is not a git repository. Ralph's agents work in git worktrees and promote patches as commits: run \`git init\` (and commit your files) first, or let Ralph create the repository and commit only its own files (\`ralph init --git-init\`, or Initialize Git in VS Code).`,
    );
  }
}

/** True when `dir` is inside a git work tree. */
export async function isGitRepository(dir: string): Promise<boolean> {
  return isGitRepo(dir);
}

async function isGitRepo(dir: string): Promise<boolean> {
  try {
    const r = await runGit(dir, ['rev-parse', '--is-inside-work-tree'], { allowExitCodes: [128] });
    return r.exitCode === 0 && r.stdout.trim() === 'true';
  } catch {
    return false;
  }
}

async function hasCommit(dir: string): Promise<boolean> {
  const r = await runGit(dir, ['rev-parse', '--verify', '--quiet', 'HEAD'], { allowExitCodes: [1, 128] });
  return r.exitCode === 0;
}

/** Author/committer env when git has no identity configured, so the first commit works anywhere. */
async function identityEnv(dir: string): Promise<Record<string, string>> {
  const get = async (key: string): Promise<string> => (await runGit(dir, ['config', '--get', key], { allowExitCodes: [1] })).stdout.trim();
  const env: Record<string, string> = {};
  if (!(await get('user.name'))) env['GIT_AUTHOR_NAME'] = env['GIT_COMMITTER_NAME'] = 'Ralph Loop';
  if (!(await get('user.email'))) env['GIT_AUTHOR_EMAIL'] = env['GIT_COMMITTER_EMAIL'] = 'ralph@localhost';
  return env;
}

/** Appends the lines of `wanted` missing from the file; returns whether it changed. */
async function mergeLines(file: string, wanted: readonly string[], header: string): Promise<'created' | 'updated' | 'kept'> {
  const current = await readText(file);
  if (current === undefined) {
    await fs.writeFile(file, `${header}\n${wanted.join('\n')}\n`);
    return 'created';
  }
  const have = new Set(current.split(/\r?\n/).map((l) => l.trim()));
  const missing = wanted.filter((l) => !have.has(l));
  if (missing.length === 0) return 'kept';
  const sep = current.endsWith('\n') || current.length === 0 ? '' : '\n';
  await fs.writeFile(file, `${current}${sep}${header}\n${missing.join('\n')}\n`);
  return 'updated';
}

/** Creates or completes the Ralph project in `options.dir`. Never overwrites user files unless `force` (templates only, with backup). */
export async function initProject(options: InitOptions): Promise<InitReport> {
  const dir = path.resolve(options.dir);
  await fs.mkdir(dir, { recursive: true });
  const ralphDir = path.join(dir, RALPH_DIR);
  const now = options.now ?? (() => new Date());

  const created: string[] = [];
  const kept: string[] = [];
  const edited: string[] = [];
  const updated: string[] = [];
  const regenerated: string[] = [];
  const backedUp: { from: string; to: string }[] = [];
  const notes: string[] = [];
  const warnings: string[] = [];

  // An existing, valid config is the user's word: it decides language and commands.
  const configPath = path.join(dir, CONFIG_FILE);
  const configExists = await pathExists(configPath);
  let existingConfig: RalphConfig | undefined;
  if (configExists) {
    const loaded = loadConfig(dir);
    if (loaded.ok) existingConfig = loaded.value;
    else warnings.push(`existing ${CONFIG_FILE} is invalid and was left unchanged:\n${loaded.error.message}`);
  }

  let lang: Language;
  let langSource: InitReport['langSource'];
  let langEvidence: string | null = null;
  if (existingConfig) {
    lang = existingConfig.lang;
    langSource = 'config';
    if (options.lang !== undefined && normaliseLanguage(options.lang) !== lang) {
      warnings.push(`--lang ${options.lang} ignored: ${CONFIG_FILE} says "${lang}" (edit it to change the language)`);
    }
  } else if (options.lang !== undefined) {
    lang = normaliseLanguage(options.lang);
    langSource = 'flag';
  } else {
    const d = await detectLanguage(dir);
    lang = d.lang;
    langEvidence = d.evidence;
    langSource = d.evidence === null ? 'fallback' : 'detected';
  }
  const profile = await languageProfile(lang, dir);
  const name = existingConfig?.name ?? options.name ?? (await detectProjectName(dir));
  if (!existingConfig) notes.push(...profile.notes);

  // Git first, and only when asked: a folder without a repository is refused before anything is written.
  let gitInitialized = false;
  if (!(await isGitRepo(dir))) {
    if (options.gitInit !== true) throw new NotAGitRepositoryError(dir);
    const branch = (await runGit(dir, ['config', '--get', 'init.defaultBranch'], { allowExitCodes: [1] })).stdout.trim();
    await runGit(dir, branch ? ['init', '--quiet'] : ['init', '--quiet', '--initial-branch=main']);
    gitInitialized = true;
  }

  for (const d of ['', ...RALPH_DIRS]) {
    const abs = path.join(ralphDir, d);
    if (!(await pathExists(abs))) {
      await fs.mkdir(abs, { recursive: true });
      created.push(`${rel(dir, abs)}/`);
    }
  }

  const ctx = contextFrom(name, profile, existingConfig);
  const backupRoot = path.join(ralphDir, 'backup', now().toISOString().replace(/[:.]/g, '-'));

  // Hashes of the templates as init last wrote them: a template whose content still has
  // that hash was not edited by the user, so it may follow a config change; any other
  // difference is a user edit and is kept unless `force`.
  const recordPath = path.join(ralphDir, TEMPLATE_RECORD_FILE);
  const record = await readTemplateRecord(recordPath);
  let recordChanged = false;

  /** Writes a file if missing; templates follow the config unless edited, `force` regenerates edited ones (backed up). */
  const place = async (relPath: string, content: string, template: boolean): Promise<void> => {
    const abs = path.join(ralphDir, relPath);
    const shown = rel(dir, abs);
    const current = await readText(abs);
    const remember = (): void => {
      if (template && record[relPath] !== hashContent(content)) {
        record[relPath] = hashContent(content);
        recordChanged = true;
      }
    };
    if (current === undefined) {
      await fs.mkdir(path.dirname(abs), { recursive: true });
      await fs.writeFile(abs, content);
      created.push(shown);
      remember();
      return;
    }
    if (current === content) {
      kept.push(shown);
      remember();
      return;
    }
    if (template && record[relPath] === hashContent(current)) {
      await fs.writeFile(abs, content);
      updated.push(shown);
      remember();
      return;
    }
    if (template && options.force) {
      const backup = path.join(backupRoot, relPath);
      await fs.mkdir(path.dirname(backup), { recursive: true });
      await fs.copyFile(abs, backup);
      await fs.writeFile(abs, content);
      backedUp.push({ from: shown, to: rel(dir, backup) });
      regenerated.push(shown);
      remember();
      return;
    }
    kept.push(shown);
    if (template) edited.push(shown);
  };

  for (const phase of PHASES) await place(`phases/${phase}.md`, renderPhase(phase, ctx), true);
  await place('core.md', renderCore(ctx), true);
  if (recordChanged) {
    const existed = await pathExists(recordPath);
    await fs.writeFile(recordPath, `${JSON.stringify(record, null, 2)}\n`);
    // Ralph's own file like the templates it records (committed with them into a new repository).
    (existed ? updated : created).push(rel(dir, recordPath));
  }
  await place('GUARDRAILS.md', GUARDRAILS_MD, false);
  await place('REFLECTIONS.md', REFLECTIONS_MD, false);
  await place('EVOLVE_LOG.md', EVOLVE_LOG_MD, false);
  await place('BACKLOG.md', renderBacklogSkeleton(), false);

  const statePath = path.join(ralphDir, 'STATE.json');
  const stateText = await readText(statePath);
  if (stateText !== undefined) {
    try {
      JSON.parse(stateText);
    } catch {
      warnings.push(`${rel(dir, statePath)} is not valid JSON; \`ralph repair --fix\` regenerates it from the database`);
    }
  }
  await place('STATE.json', renderInitialState(), false);

  // Spec registry: pre-filled from specs/, docs/, adrs/ when missing; hashes remembered
  // unread, so the first evolve_goals run is pointed at every spec.
  const registryPath = path.join(ralphDir, SPEC_REGISTRY_FILE);
  if (!(await pathExists(registryPath))) {
    const specs = await discoverSpecs(dir);
    const state = mergeDiscovery({ version: 1, specs: {}, evolve_fingerprint: null }, specs);
    await writeSpecsState(ralphDir, state);
    await fs.writeFile(registryPath, renderSpecRegistry(registryRows(specs, state)));
    created.push(rel(dir, registryPath));
    if (specs.length)
      notes.push(`${specs.length} spec file(s) found in specs/, docs/, adrs/: evolve_goals will turn them into backlog proposals`);
  } else {
    kept.push(rel(dir, registryPath));
  }

  const ignorePath = path.join(ralphDir, '.gitignore');
  const ignoreShown = rel(dir, ignorePath);
  if (!(await pathExists(ignorePath))) {
    await fs.writeFile(ignorePath, renderRalphGitignore());
    created.push(ignoreShown);
  } else if ((await mergeLines(ignorePath, RALPH_GITIGNORE_LINES, '# Added by ralph init')) === 'updated') {
    updated.push(ignoreShown);
  } else {
    kept.push(ignoreShown);
  }

  if (!configExists) {
    const config = initialConfig(name, profile, options.model ?? 'opus');
    await fs.writeFile(configPath, `${JSON.stringify(config, null, 2)}\n`);
    created.push(CONFIG_FILE);
  } else {
    kept.push(CONFIG_FILE);
    if (options.model !== undefined && existingConfig && existingConfig.model !== options.model) {
      warnings.push(`--model ${options.model} ignored: ${CONFIG_FILE} says "${existingConfig.model}"`);
    }
  }

  let database: InitReport['database'] = 'skipped';
  if (await pathExists(path.join(ralphDir, DATABASE_FILE))) {
    database = 'kept';
  } else if (options.createDatabase) {
    await options.createDatabase(ralphDir);
    database = 'created';
    created.push(`${RALPH_DIR}/${DATABASE_FILE}`);
  }

  let commit: string | null = null;
  if (gitInitialized) {
    // A new repository: keep build output out of the tree (a .gitignore only if there is
    // none: an existing one is the user's), then commit exactly the files init created —
    // the user's own files stay untracked, for them to commit or not.
    if (profile.gitignore.length && !(await pathExists(path.join(dir, '.gitignore')))) {
      await mergeLines(path.join(dir, '.gitignore'), profile.gitignore, '# Build output (added by ralph init)');
      created.push('.gitignore');
    }
    const files = created.filter((p) => !p.endsWith('/'));
    // `git add` of a path .gitignore'd (the database, STATE.json) would fail: let git decide what is ignored.
    const ignored = new Set(
      (await runGit(dir, ['check-ignore', '--no-index', '--stdin'], { input: files.join('\n'), allowExitCodes: [1] })).stdout
        .split('\n')
        .filter(Boolean),
    );
    const toCommit = files.filter((f) => !ignored.has(f));
    await runGit(dir, ['add', '--', ...toCommit]);
    await runGit(dir, ['commit', '--quiet', '--no-verify', '-m', 'chore: initialize Ralph Loop', '--', ...toCommit], {
      env: await identityEnv(dir),
    });
    commit = (await runGit(dir, ['rev-parse', 'HEAD'])).stdout.trim();
    // Agents work in worktrees of HEAD: the user's own files must be committed to be seen.
    const untracked = (await runGit(dir, ['ls-files', '--others', '--exclude-standard'])).stdout.split('\n').filter(Boolean);
    if (untracked.length > 0) {
      warnings.push(
        `${untracked.length} file(s) of yours are not committed (Ralph committed only its own). Agents work on what is committed: review and commit them before starting the loop (git add … && git commit).`,
      );
    }
  } else if (!(await hasCommit(dir))) {
    warnings.push('the repository has no commit yet; commit your files before starting the loop (agents work in worktrees of HEAD)');
  } else {
    // A project initialized before the derived views were ignored still tracks them: every run would dirty the checkout.
    const derived = DERIVED_FILES.map((f) => `${RALPH_DIR}/${f}`);
    const tracked = (await runGit(dir, ['ls-files', '--', ...derived])).stdout.split('\n').filter(Boolean);
    if (tracked.length > 0) {
      warnings.push(
        `${tracked.join(', ')} ${tracked.length === 1 ? 'is' : 'are'} tracked by git, but Ralph rewrites ${tracked.length === 1 ? 'it' : 'them'} on every run (derived views and logs, ignored by .ralph/.gitignore). Stop tracking them once: git rm --cached -- ${tracked.join(' ')} && git commit -m "ralph: stop tracking derived files"`,
      );
    }
  }

  return {
    dir,
    lang,
    langSource,
    langEvidence,
    name,
    created,
    kept,
    edited,
    updated,
    regenerated,
    backedUp,
    database,
    git: { initialized: gitInitialized, commit },
    notes,
    warnings,
  };
}
