// The environment of every git process Ralph starts (engine, CLI, extension, demo): git runs
// nothing the repository names. A repository's hooks (`.git/hooks/*`, a `core.hooksPath`,
// git >= 2.5x's `hook.<event>` entries) and its `core.fsmonitor` command are programs an
// agent could have planted or a cloned folder could carry; Ralph's checkouts, ref updates
// and index writes would otherwise run them outside any agent's confinement.
//
// The settings travel as `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n`
// (git >= 2.31): they outrank every config file, and git hands them on to the git processes
// it starts itself (submodules, merge helpers). Inherited command-line config
// (`GIT_CONFIG_PARAMETERS`, set by a parent git) would outrank them, so it is dropped, as
// are the variables that would redirect a command to another repository or index.
//
// Deliberately kept: filter, merge and textconv drivers from the user's own git config
// (git-lfs and friends must keep working in the user's checkout); .gitattributes alone
// cannot start a program without a driver defined in config, which no agent can write
// (.git/config is outside every worktree and checked after each invocation), and a patch
// changing .gitattributes is judged (risk tier 2). Content diffs Ralph produces also pass
// `--no-ext-diff --no-textconv` (PATCH_DIFF_ARGS). Ralph runs no network git command, so
// `core.sshCommand` and credential helpers never come into play.

/** Every hook event of githooks(5) (git 2.39 to 2.5x). */
export const GIT_HOOK_EVENTS: readonly string[] = [
  'applypatch-msg',
  'pre-applypatch',
  'post-applypatch',
  'pre-commit',
  'pre-merge-commit',
  'prepare-commit-msg',
  'commit-msg',
  'post-commit',
  'pre-rebase',
  'post-checkout',
  'post-merge',
  'pre-push',
  'pre-receive',
  'update',
  'proc-receive',
  'post-receive',
  'post-update',
  'reference-transaction',
  'push-to-checkout',
  'pre-auto-gc',
  'post-rewrite',
  'sendemail-validate',
  'fsmonitor-watchman',
  'p4-changelist',
  'p4-prepare-changelist',
  'p4-post-changelist',
  'p4-pre-submit',
  'post-index-change',
];

/** A hooks directory that cannot exist: below a device file, nothing can be created. */
export const NO_HOOKS_PATH = process.platform === 'win32' ? 'NUL' : '/dev/null';

/**
 * The config every Ralph git command runs with. `core.hooksPath` finds no hook file;
 * `hook.<event>.enabled=false` switches off configured hooks on the gits that know the
 * key (older ones ignore it); `core.fsmonitor=false` starts no monitor command or daemon;
 * `log.showSignature=false` keeps `git log` from running gpg.
 */
export const GIT_SAFETY_CONFIG: readonly (readonly [key: string, value: string])[] = [
  ['core.hooksPath', NO_HOOKS_PATH],
  ['core.fsmonitor', 'false'],
  ['log.showSignature', 'false'],
  ...GIT_HOOK_EVENTS.map((e) => [`hook.${e}.enabled`, 'false'] as const),
];

// Variables a parent git (a hook, an editor integration) may have set that would redirect
// our commands to another repository or index, or override the safety config.
const INHERITED_GIT_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_PREFIX',
  'GIT_CONFIG_PARAMETERS',
  'GIT_EXTERNAL_DIFF',
];

// The safety config as environment entries, built once: every git call starts from it.
const SAFETY_ENV: Readonly<Record<string, string>> = Object.fromEntries([
  ...GIT_SAFETY_CONFIG.flatMap(([key, value], i) => [
    [`GIT_CONFIG_KEY_${i}`, key],
    [`GIT_CONFIG_VALUE_${i}`, value],
  ]),
  ['GIT_CONFIG_COUNT', String(GIT_SAFETY_CONFIG.length)],
  // Never prompt, and keep read-only commands (status, diff) from taking index.lock
  // opportunistically, so we never collide with the user's own git in their checkout.
  ['GIT_TERMINAL_PROMPT', '0'],
  ['GIT_OPTIONAL_LOCKS', '0'],
]);

const INHERITED_CONFIG = /^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/;

/**
 * The environment for one git process: `base` (the caller's, default process.env) without
 * the inherited git redirections, with the safety config, no prompts and no optional
 * locks, then `extra` (`undefined` removes an entry, e.g. GIT_INDEX_FILE for a temp index).
 * A copy and a few deletions, not a filter over every entry: it runs before each git.
 */
export function ralphGitEnv(
  extra?: Readonly<Record<string, string | undefined>>,
  base: Readonly<Record<string, string | undefined>> = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const k of INHERITED_GIT_VARS) delete env[k];
  // Inherited config entries past our count would be ignored by git; dropped all the same.
  if ('GIT_CONFIG_COUNT' in env) for (const k of Object.keys(env)) if (INHERITED_CONFIG.test(k)) delete env[k];
  Object.assign(env, SAFETY_ENV);
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}
