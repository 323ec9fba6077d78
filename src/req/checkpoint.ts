// REQ mode's checkpoint (seed 001: crash recovery): after each REQ, and before its commit,
// the status object is written atomically to .ralph/req/checkpoint.json and a line appended
// to the append-only progress log beside it (in .ralph/: never in the user's checkout). Both are views for people and
// tools; the event log stays the truth (`ralph req resume` reads the events).
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ReqStatusReport } from '../domain/reqStatus';
import { reqSummaryLine } from '../domain/reqStatus';
import { writeFileAtomic } from '../shared/fs';

export const REQ_STATE_DIR = join('.ralph', 'req');
export const CHECKPOINT_FILE = join(REQ_STATE_DIR, 'checkpoint.json');
export const PROGRESS_LOG = join(REQ_STATE_DIR, 'progress.md');

/** Writes the checkpoint and appends the progress line; returns the checkpoint's repo-relative path. */
export async function writeCheckpoint(projectDir: string, report: ReqStatusReport): Promise<string> {
  mkdirSync(join(projectDir, REQ_STATE_DIR), { recursive: true });
  await writeFileAtomic(join(projectDir, CHECKPOINT_FILE), `${JSON.stringify(report, null, 2)}\n`);
  const current = report.current ? ` building ${report.current}` : '';
  appendFileSync(
    join(projectDir, PROGRESS_LOG),
    `- ${report.checkpoint_at ?? ''} ${report.status}${current}: ${reqSummaryLine(report)}; iteration ${report.iteration}/${report.max_iterations}\n`,
  );
  return CHECKPOINT_FILE;
}
