// Small file-system facts several layers need.
import { access } from 'node:fs/promises';

/** True when the path exists (following links); never throws. */
export async function pathExists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}
