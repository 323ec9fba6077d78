// The git layer's view of patch text: the one parser in src/domain/patchText.ts (shared with
// the CLI's risk checks and the extension's diff view), without the hunks callers here do
// not need to keep.
import { parsePatch } from '../domain/patchText';
import type { PatchFile as ParsedFile } from '../domain/patchText';

export { addedLines, PatchParseError, readQuoted, touchedPaths } from '../domain/patchText';
export type { AddedLine, FileAddedLines, PatchFileStatus } from '../domain/patchText';

/** One file a patch touches, as the loop keeps it (no hunks). */
export type PatchFile = Omit<ParsedFile, 'hunks' | 'line'>;

/** Every file a patch touches, from its headers (renames, quoted paths, /dev/null, binary, symlinks). */
export function filesTouchedByPatch(patchText: string): PatchFile[] {
  return parsePatch(patchText).map(({ hunks: _hunks, line: _line, ...f }) => f);
}
