// `ralph status` warns about a broken ralph.config.json, but judging the file loads and
// builds the config's zod schema, which cost about as much as the rest of status. The
// verdict (valid, or the error's message) is kept in Ralph's cache folder, one small file per
// project, under a key made of everything it depends on: the file's path and text, and the
// build that judged it (the version and the CLI entry's size and time, so a rebuilt CLI
// judges again). The text is read each time (the config is a few KiB); only the schema is
// skipped. Every cache failure only means judging the file in full. Under the sources (tests run
// through tsx) there is no build to key on: the file is judged each time.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ralphCacheDir } from '../shared/cacheDir';
import type * as ConfigModule from '../project/config';

declare const RALPH_VERSION: string | undefined;

/** project/config.ts's CONFIG_FILE (importing it from there would load the schema this avoids). */
const CONFIG_FILE = 'ralph.config.json';

/** Two 32-bit FNV-1a digests with different offsets: a cache key, not a checksum against tampering. */
function digest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** The build judging: null when there is none to key on (running from the sources). */
function buildKey(): string | null {
  if (typeof RALPH_BUNDLE === 'undefined') return null;
  const entry = require.main?.filename;
  if (entry === undefined) return null;
  try {
    const st = fs.statSync(entry);
    return `${typeof RALPH_VERSION === 'string' ? RALPH_VERSION : ''}|${entry}|${st.size}|${st.mtimeMs}`;
  } catch {
    return null;
  }
}

/**
 * What is wrong with `<projectDir>/ralph.config.json` as `loadConfig` words it, null when it
 * is valid, undefined when there is none.
 */
export async function configProblem(
  projectDir: string,
  loadProjectConfig: () => Promise<Pick<typeof ConfigModule, 'loadConfig'>>,
  cacheDir: string = path.join(ralphCacheDir(), 'config-verdicts'),
): Promise<string | null | undefined> {
  const file = path.join(projectDir, CONFIG_FILE);
  if (!fs.existsSync(file)) return undefined;
  const build = buildKey();
  let key: string | undefined;
  let entry: string | undefined;
  if (build !== null) {
    try {
      key = digest(`${build}\0${file}\0${fs.readFileSync(file, 'utf8')}`);
      entry = path.join(cacheDir, `${digest(file)}.txt`);
      const cached = fs.readFileSync(entry, 'utf8');
      const nl = cached.indexOf('\n');
      if (nl > 0 && cached.slice(0, nl) === key) {
        const message = cached.slice(nl + 1);
        return message === '' ? null : message;
      }
    } catch {
      // no verdict yet, or the file could not be read here: judge it below
    }
  }
  const { loadConfig } = await loadProjectConfig();
  const r = loadConfig(projectDir);
  const problem = r.ok ? null : r.error.message;
  if (key !== undefined && entry !== undefined) {
    try {
      fs.mkdirSync(cacheDir, { recursive: true });
      const tmp = `${entry}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, `${key}\n${problem ?? ''}`);
      fs.renameSync(tmp, entry);
    } catch {
      // an unwritable cache only costs the next status the schema
    }
  }
  return problem;
}
