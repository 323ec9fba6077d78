// The command-line face of `ralph init`: argument parsing and the printed report. The
// lead wires `ralph init [--lang L] [--name N] [--model M] [--dir D] [--force]` to these.
import type { InitOptions, InitReport } from './init';

export class InitUsageError extends Error {
  override readonly name = 'InitUsageError';
}

export const INIT_USAGE = 'Usage: ralph init [--lang L] [--name N] [--model M] [--dir D] [--force] [--git-init]';

/** Parses init's arguments (after the `init` word) into options, without the database callback. */
export function parseInitArgs(argv: readonly string[], cwd: string = process.cwd()): Omit<InitOptions, 'createDatabase'> {
  const opts: { dir: string; lang?: string; name?: string; model?: string; force?: boolean; gitInit?: boolean } = { dir: cwd };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const [flag, inline] =
      a.startsWith('--') && a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '') throw new InitUsageError(`${flag} needs a value\n${INIT_USAGE}`);
      return v;
    };
    switch (flag) {
      case '--lang':
        opts.lang = value();
        break;
      case '--name':
        opts.name = value();
        break;
      case '--model':
        opts.model = value();
        break;
      case '--dir':
        opts.dir = value();
        break;
      case '--force':
        opts.force = true;
        break;
      case '--git-init':
        opts.gitInit = true;
        break;
      default:
        throw new InitUsageError(`unknown argument '${a}'\n${INIT_USAGE}`);
    }
  }
  return opts;
}

/** A short, readable account of what init did. */
export function formatInitReport(report: InitReport): string {
  const lines: string[] = [];
  const how =
    report.langSource === 'detected'
      ? `detected from ${report.langEvidence ?? '?'}`
      : report.langSource === 'flag'
        ? 'from --lang'
        : report.langSource === 'config'
          ? 'from ralph.config.json'
          : 'no manifest found; generic fallback';
  lines.push(`Ralph project "${report.name}" in ${report.dir}`);
  lines.push(`Language: ${report.lang} (${how})`);
  if (report.git.initialized)
    lines.push(`Git: initialized a repository; Ralph's own files are in the first commit ${report.git.commit?.slice(0, 8) ?? '(none)'}`);
  const files = report.created.filter((p) => !p.endsWith('/'));
  const dirs = report.created.length - files.length;
  if (report.created.length === 0) lines.push('Created: nothing (already initialized)');
  else lines.push(`Created: ${files.length} file(s)${dirs ? ` and ${dirs} folder(s)` : ''}`, ...files.map((p) => `  + ${p}`));
  if (report.updated.length) lines.push('Updated:', ...report.updated.map((p) => `  ~ ${p}`));
  if (report.regenerated.length) {
    lines.push('Regenerated (old copies backed up):', ...report.backedUp.map((b) => `  ! ${b.from} (backup: ${b.to})`));
  }
  if (report.kept.length) lines.push(`Kept: ${report.kept.length} existing file(s) unchanged`);
  if (report.edited.length) lines.push(`  of which edited by you (use --force to regenerate, with backup): ${report.edited.join(', ')}`);
  lines.push(
    `Database: ${report.database === 'created' ? 'created .ralph/ralph.db' : report.database === 'kept' ? 'kept existing .ralph/ralph.db' : 'not created'}`,
  );
  for (const n of report.notes) lines.push(`Note: ${n}`);
  for (const w of report.warnings) lines.push(`Warning: ${w}`);
  if (report.created.includes('ralph.config.json'))
    lines.push('Next: review ralph.config.json, add spec documents to specs/, then run `ralph start`.');
  return `${lines.join('\n')}\n`;
}
