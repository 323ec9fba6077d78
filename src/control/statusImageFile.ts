// The status image on disk (`.ralph/ralph.db.status.json`; domain/statusImage.ts says what it
// holds): the identity of the store's files it is checked against, and reading and writing
// it. `ralph status` loads this module instead of the store, so it imports nothing but Node
// and the pure image code.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStatusImage, sameFiles, type FileIdentity, type StatusImage, type StoreFilesIdentity } from '../domain/statusImage';

/** Beside ralph.db, matched by `ralph.db.*` in the .gitignore `ralph init` writes. */
export const STATUS_IMAGE_FILE = 'ralph.db.status.json';
/** store/checkpoint.ts's DB_FILE and store/journal.ts's JOURNAL_FILE (importing them would load the store). */
const DB_FILE = 'ralph.db';
const JOURNAL_FILE = 'ralph.events.journal';

function identityOf(file: string): FileIdentity {
  const st = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
  return st === undefined ? null : { ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs) };
}

/** This process's build (shared/bundle.d.ts): an image kept by another build is not used. */
export function buildOfThisProcess(): string {
  return typeof RALPH_BUILD === 'string' ? RALPH_BUILD : 'sources';
}

/** The identity of the files an open of the store in `ralphDir` reads. */
export function storeFilesIdentity(ralphDir: string): StoreFilesIdentity {
  return { db: identityOf(path.join(ralphDir, DB_FILE)), journal: identityOf(path.join(ralphDir, JOURNAL_FILE)) };
}

/**
 * The image of the store in `ralphDir` when its files are exactly as the writer that kept it
 * left them and that writer was this build; undefined when there is none, it is not a
 * well-formed image, or the store or the build has changed since (status then opens the store).
 */
export function currentStatusImage(ralphDir: string): StatusImage | undefined {
  let text: string;
  try {
    text = fs.readFileSync(path.join(ralphDir, STATUS_IMAGE_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const image = parseStatusImage(text);
  if (image === undefined || image.files.db === null || image.build !== buildOfThisProcess()) return undefined;
  return sameFiles(image.files, storeFilesIdentity(ralphDir)) ? image : undefined;
}

/** Writes the image whole or not at all (a reader never sees half of one). */
export function writeStatusImage(ralphDir: string, image: StatusImage): void {
  const file = path.join(ralphDir, STATUS_IMAGE_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(image));
  fs.renameSync(tmp, file);
}

/** Removes the image (a store whose image cannot be kept leaves none that could mislead). */
export function dropStatusImage(ralphDir: string): void {
  fs.rmSync(path.join(ralphDir, STATUS_IMAGE_FILE), { force: true });
}
