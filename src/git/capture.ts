// Patch capture: a worktree's whole change relative to its base commit (committed or not,
// new untracked files, deletions, renames, binary files, mode changes; never `.ralph/`)
// written as one `git diff --binary` file that `git apply` can replay anywhere.
import { writeFileAtomic } from '../shared/fs';
import { runGit } from './exec';
import { addedLines, filesTouchedByPatch } from './patchParse';
import type { FileAddedLines, PatchFile } from './patchParse';
import { RALPH_EXCLUDE_PATHSPEC, repoRoot, withSnapshotIndex } from './repo';

export interface PatchStats {
  readonly files: number;
  readonly insertions: number;
  readonly deletions: number;
  readonly bytes: number;
}

export interface CapturedPatch {
  /** The patch file written (also written when empty, so the caller can inspect it). */
  readonly path: string;
  readonly baseCommit: string;
  readonly files: readonly PatchFile[];
  readonly addedLines: readonly FileAddedLines[];
  readonly isEmpty: boolean;
  readonly stats: PatchStats;
}

/** Arguments that make a diff replayable by `git apply --3way` in any clone of the repo. */
export const PATCH_DIFF_ARGS: readonly string[] = [
  '--binary',
  '--full-index',
  '-M',
  '--no-color',
  '--no-ext-diff',
  '--no-textconv',
  '--src-prefix=a/',
  '--dst-prefix=b/',
];

/** Captures the worktree's full change against `baseCommit` into `outFile`. */
export async function capturePatch(worktree: string, baseCommit: string, outFile: string): Promise<CapturedPatch> {
  const top = await repoRoot(worktree);
  const diff = await withSnapshotIndex(top, (env) =>
    runGit(
      top,
      [
        '-c',
        'diff.noprefix=false',
        '-c',
        'diff.mnemonicPrefix=false',
        'diff',
        '--cached',
        ...PATCH_DIFF_ARGS,
        baseCommit,
        '--',
        ':(top)',
        RALPH_EXCLUDE_PATHSPEC,
      ],
      { env },
    ),
  );
  await writeFileAtomic(outFile, diff.stdoutBuffer, { mkdir: true });
  const files = filesTouchedByPatch(diff.stdout);
  return {
    path: outFile,
    baseCommit,
    files,
    addedLines: addedLines(diff.stdout),
    isEmpty: diff.stdoutBuffer.length === 0,
    stats: {
      files: files.length,
      insertions: files.reduce((n, f) => n + f.insertions, 0),
      deletions: files.reduce((n, f) => n + f.deletions, 0),
      bytes: diff.stdoutBuffer.length,
    },
  };
}
