// Risk classification (tier 0..3) of a change from the files it touches, its task's source
// and effort. Pure: patterns are data (ralph.config.json `risk_patterns`), matched as
// picomatch globs against repo-relative paths, case-insensitively like the reference.
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
  tier2: ['**/sql/migrations/**', '**/migrations/**', '**/handlers/auth/**', '**/auth/**', '**/middleware/auth*', '**/middleware/auth*/**'],
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

interface CompiledPatterns {
  readonly tier3: Matcher;
  readonly tier2: Matcher;
  readonly tier2Sources: Matcher;
  readonly tier0: Matcher;
}

const compiledCache = new WeakMap<RiskPatterns, CompiledPatterns>();

function compileList(globs: readonly string[]): Matcher {
  if (globs.length === 0) return () => false;
  return picomatch([...globs], { dot: true, nocase: true });
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

/**
 * The seed's algorithm: any tier-3 file -> 3; any tier-2 file -> 2; tier-2 source -> 2;
 * effort S and every file tier-0 -> 0; else 1. Unlike the reference, an empty file list
 * is never tier 0: a change we know nothing about is normal, not trivial.
 */
export function classifyRisk(files: readonly string[], task: RiskTaskFacts, patterns: RiskPatterns = DEFAULT_RISK_PATTERNS): RiskTier {
  const m = compile(patterns);
  const paths = files.map(normalizeRepoPath).filter((p) => p.length > 0);
  if (paths.some((p) => m.tier3(p))) return 3;
  if (paths.some((p) => m.tier2(p))) return 2;
  if (task.source && sourceParts(task.source).some((s) => m.tier2Sources(s))) return 2;
  if (task.effort === 'S' && paths.length > 0 && paths.every((p) => m.tier0(p))) return 0;
  return 1;
}
