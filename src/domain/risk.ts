// Risk classification (tier 0..3) of a change from the files it touches, its task's source
// and effort. Pure: patterns are data (ralph.config.json `risk_patterns`), matched as
// picomatch globs against repo-relative paths, case-insensitively like the reference.
// Two rules are not data, because no configuration may switch them off: a change to Ralph's
// own configuration or state is refused outright (control files), and a symbolic link whose
// target leaves the repository (or reaches into .git or Ralph's state) is tier 3.
import picomatch from 'picomatch';

export type RiskTier = 0 | 1 | 2 | 3;

/** Glob lists per tier; `tier2_sources` match a task's spec source (e.g. `ES:30.2`). */
export interface RiskPatterns {
  readonly tier3: readonly string[];
  readonly tier2: readonly string[];
  readonly tier2_sources: readonly string[];
  readonly tier0: readonly string[];
}

/**
 * Equivalent to the reference's case-insensitive substring lists, written as globs:
 * tier 3 `.env`, secrets, credentials, `.key`, `.pem`, private; tier 2 sql/migrations/,
 * migrations/, handlers/auth/, auth/, middleware/auth and sources ES:30, ES:67; tier 0
 * (S effort only) schemas/, docs/, test_data/, fixtures/, README, `.md`, ci/, .github/.
 * A substring may occur in a file name or in a directory name, hence both forms.
 */
export const DEFAULT_RISK_PATTERNS: RiskPatterns = {
  tier3: [
    '**/.env',
    '**/.env.*',
    '**/*.env',
    '**/*.env.*',
    '**/*secrets*',
    '**/*secrets*/**',
    '**/*credentials*',
    '**/*credentials*/**',
    '**/*.key',
    '**/*.pem',
    '**/*private*',
    '**/*private*/**',
  ],
  tier2: [
    '**/sql/migrations/**',
    '**/migrations/**',
    '**/handlers/auth/**',
    '**/auth/**',
    '**/middleware/auth*',
    '**/middleware/auth*/**',
    // CI definitions run with the repository's secrets on every push.
    '.github/workflows/**',
    '.github/actions/**',
    '.gitlab-ci.yml',
    '.ci/**',
    '.circleci/**',
    '.buildkite/**',
    '.travis.yml',
    'azure-pipelines.yml',
    'Jenkinsfile',
    // Files that make git (or the hooks a project installs) run programs.
    '**/.gitattributes',
    '.gitmodules',
    '.lfsconfig',
    '.husky/**',
    '.pre-commit-config.yaml',
  ],
  tier2_sources: ['ES:30', 'ES:30.*', 'ES:67', 'ES:67.*'],
  tier0: [
    '**/schemas/**',
    '**/docs/**',
    '**/test_data/**',
    '**/fixtures/**',
    '**/README*',
    '**/*.md',
    '**/ci/**',
    '**/.ci/**',
    '**/.github/**',
  ],
};

/** What classification needs to know about the task. */
export interface RiskTaskFacts {
  readonly effort: string | null | undefined;
  readonly source: string | null | undefined;
}

type Matcher = (s: string) => boolean;

/** One tier's globs, each compiled alone so a reason can name the glob that matched. */
type NamedMatchers = readonly { readonly glob: string; readonly test: Matcher }[];

interface CompiledPatterns {
  readonly tier3: NamedMatchers;
  readonly tier2: NamedMatchers;
  readonly tier2Sources: NamedMatchers;
  readonly tier0: NamedMatchers;
}

const compiledCache = new WeakMap<RiskPatterns, CompiledPatterns>();

function compileList(globs: readonly string[]): NamedMatchers {
  return globs.map((glob) => ({ glob, test: picomatch(glob, { dot: true, nocase: true }) }));
}

function compile(patterns: RiskPatterns): CompiledPatterns {
  let c = compiledCache.get(patterns);
  if (c === undefined) {
    c = {
      tier3: compileList(patterns.tier3),
      tier2: compileList(patterns.tier2),
      tier2Sources: compileList(patterns.tier2_sources),
      tier0: compileList(patterns.tier0),
    };
    compiledCache.set(patterns, c);
  }
  return c;
}

function firstMatch(list: NamedMatchers, s: string): string | undefined {
  return list.find((m) => m.test(s))?.glob;
}

/** Normalizes a path to the repo-relative, forward-slash form the globs expect. */
export function normalizeRepoPath(file: string): string {
  let p = file.replace(/\\/g, '/');
  while (p.startsWith('./')) p = p.slice(2);
  while (p.startsWith('/')) p = p.slice(1);
  return p;
}

/** A source such as `ES:30.2, ES:12` is matched whole and per comma-separated part. */
function sourceParts(source: string): string[] {
  const parts = source
    .split(/[,;]/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && s !== '-');
  return parts.length > 1 ? [source.trim(), ...parts] : parts;
}

/** Why a change to Ralph's control files is never promoted, by the loop or by a judge. */
export const CONTROL_FILES_REASON = "agents may not change Ralph's configuration or state; change it yourself";

/** Ralph's configuration and state at the project root: `ralph.config.json`, `.ralph/**`. */
export function isControlPath(file: string): boolean {
  const p = normalizeRepoPath(file).toLowerCase();
  return p === 'ralph.config.json' || p === '.ralph' || p.startsWith('.ralph/');
}

/**
 * Where a symbolic link at repo path `link` with `target` points, as a repo-relative path,
 * or null when it leaves the repository (absolute, or above the top through `..`).
 */
export function symlinkDestination(link: string, target: string): string | null {
  if (target.startsWith('/') || /^[A-Za-z]:[\\/]/.test(target) || target.startsWith('\\')) return null;
  const parts = normalizeRepoPath(link).split('/').slice(0, -1);
  for (const seg of target.replace(/\\/g, '/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg !== '..') parts.push(seg);
    else if (parts.pop() === undefined) return null;
  }
  return parts.join('/');
}

/** What classification needs to know about one changed path. */
export interface ChangedPath {
  readonly path: string;
  /** The name before a rename or copy. */
  readonly oldPath?: string;
  /** Set when the path is a symbolic link after the change: its target, null when unknown. */
  readonly symlinkTarget?: string | null;
}

export interface RiskAssessment {
  readonly tier: RiskTier;
  /** Why, one line per finding that decided or raised the tier (paths, never content). */
  readonly reasons: readonly string[];
  /** Ralph's control files among the paths: the change must not be promoted at all. */
  readonly controlFiles: readonly string[];
}

/** Why a symbolic link is tier 3, or null when it stays inside the repository's ordinary files. */
function symlinkProblem(c: ChangedPath): string | null {
  if (c.symlinkTarget === undefined) return null;
  if (c.symlinkTarget === null) return `symlink ${c.path}: its target is not in the patch`;
  const dest = symlinkDestination(c.path, c.symlinkTarget);
  if (dest === null) return `symlink ${c.path} points outside the repository (${JSON.stringify(c.symlinkTarget)})`;
  const top = dest.split('/')[0]?.toLowerCase();
  if (top === '.git' || isControlPath(dest))
    return `symlink ${c.path} points into ${top === '.git' ? '.git' : "Ralph's state"} (${JSON.stringify(c.symlinkTarget)})`;
  return null;
}

/**
 * The seed's algorithm over every changed path (old and new names alike): any tier-3 file
 * or dangerous symlink -> 3; any tier-2 file -> 2; tier-2 source -> 2; effort S and every
 * file tier-0 -> 0; else 1. A control file makes it 3 and is listed in `controlFiles`.
 * Unlike the reference, an empty file list is never tier 0: a change we know nothing
 * about is normal, not trivial.
 */
export function assessChange(
  changes: readonly ChangedPath[],
  task: RiskTaskFacts,
  patterns: RiskPatterns = DEFAULT_RISK_PATTERNS,
): RiskAssessment {
  const m = compile(patterns);
  const paths = [...new Set(changes.flatMap((c) => [c.path, ...(c.oldPath !== undefined ? [c.oldPath] : [])]).map(normalizeRepoPath))]
    .filter((p) => p.length > 0)
    .sort();
  const controlFiles = paths.filter(isControlPath);
  const reasons: string[] = [];
  if (controlFiles.length > 0) reasons.push(`${controlFiles.join(', ')}: ${CONTROL_FILES_REASON}`);
  for (const c of changes) {
    const why = symlinkProblem(c);
    if (why !== null) reasons.push(why);
  }
  for (const p of paths) {
    const glob = firstMatch(m.tier3, p);
    if (glob !== undefined) reasons.push(`${p} matches the tier-3 pattern ${glob}`);
  }
  if (reasons.length > 0) return { tier: 3, reasons, controlFiles };
  for (const p of paths) {
    const glob = firstMatch(m.tier2, p);
    if (glob !== undefined) reasons.push(`${p} matches the tier-2 pattern ${glob}`);
  }
  const source = task.source ? sourceParts(task.source).find((s) => firstMatch(m.tier2Sources, s) !== undefined) : undefined;
  if (source !== undefined) reasons.push(`the task's source ${source} is tier 2`);
  if (reasons.length > 0) return { tier: 2, reasons, controlFiles };
  if (task.effort === 'S' && paths.length > 0 && paths.every((p) => firstMatch(m.tier0, p) !== undefined)) {
    return { tier: 0, reasons: ['an S-effort change to tier-0 files only'], controlFiles };
  }
  return { tier: 1, reasons: [], controlFiles };
}

/** The tier of a list of paths (a plan's files, a patch's files without symlink facts). */
export function classifyRisk(files: readonly string[], task: RiskTaskFacts, patterns: RiskPatterns = DEFAULT_RISK_PATTERNS): RiskTier {
  return assessChange(
    files.map((path) => ({ path })),
    task,
    patterns,
  ).tier;
}
