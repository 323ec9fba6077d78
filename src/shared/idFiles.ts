// The one function that turns ids into a file path: the name comes from domain/ids.ts's
// idFileName (every part follows the id grammar), and the result is checked to sit
// directly in `dir`, so no id, however it got into the store, can write elsewhere.
import * as path from 'node:path';
import { idFileName, type IdKind } from '../domain/ids';

/** `dir/<part>_<part>…<ext>`; throws InvalidIdError for a part that is not an id. */
export function idFilePath(dir: string, parts: readonly (readonly [IdKind, string] | number)[], ext: string): string {
  const file = path.join(dir, idFileName(parts, ext));
  // idFileName already rules out separators and dot-names; this is the last word on it.
  if (path.dirname(file) !== path.normalize(dir).replace(/[\\/]+$/, '')) throw new Error(`${file} is not directly in ${dir}`);
  return file;
}
