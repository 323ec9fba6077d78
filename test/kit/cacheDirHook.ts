// Mocha global fixtures (required by the .mocharc files): every test run gets its own Ralph
// cache directory (agents' worktrees, scratch homes, judge folders), removed when the run
// ends, so tests never write to the user's ~/.cache and never see another run's worktrees.
// Child processes the tests start (the CLI, loop children) inherit it through the
// environment, and so do mocha's parallel workers: they start after this module has set it
// in the main process, find it set, and leave its removal to the main process's teardown.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const own = process.env.RALPH_CACHE_DIR === undefined;
const dir = own ? mkdtempSync(join(tmpdir(), 'ralph-test-cache-')) : process.env.RALPH_CACHE_DIR;
if (own) process.env.RALPH_CACHE_DIR = dir;

export function mochaGlobalTeardown(): void {
  if (own && dir !== undefined) rmSync(dir, { recursive: true, force: true });
}
