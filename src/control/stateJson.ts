// STATE.json read back: the loop's position (phase, iteration, current item) lives there, and
// `ralph status` reads it on its quick path too, so this module imports nothing else.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const STATE_FILE = 'STATE.json';

/** STATE.json as an object; undefined when it is missing, unreadable or not an object. */
export function readStateJson(ralphDir: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(path.join(ralphDir, STATE_FILE), 'utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
