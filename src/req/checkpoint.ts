// REQ mode's checkpoint (seed 001: crash recovery): after each REQ, and before its commit,
// the status object is written atomically to .ralph/req/checkpoint.json and a line appended
// to the append-only progress log beside it (in .ralph/: never in the user's checkout). Both are views for people and
// tools; the event log stays the truth (`ralph req resume` reads the events).
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
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

const checkpointSchema = z.looseObject({
  skill_name: z.literal('ralph-loop'),
  status: z.string(),
  checkpoint_at: z.string().nullable(),
  requirements: z.looseObject({ total: z.number(), done: z.number() }),
});

export type CheckpointRead =
  { readonly ok: true; readonly value: z.output<typeof checkpointSchema> } | { readonly ok: false; readonly reason: string };

/** The checkpoint as the last run left it (resume names it; the event log stays the truth). */
export function readCheckpoint(projectDir: string): CheckpointRead {
  const file = join(projectDir, CHECKPOINT_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { ok: false, reason: `no checkpoint (${CHECKPOINT_FILE} is absent): the event log` };
  }
  try {
    const parsed = checkpointSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { ok: true, value: parsed.data };
    return { ok: false, reason: `${CHECKPOINT_FILE} is not a checkpoint (${parsed.error.issues[0]?.message ?? 'invalid'}): the event log` };
  } catch (e) {
    return { ok: false, reason: `${CHECKPOINT_FILE} is not valid JSON (${(e as Error).message}): the event log` };
  }
}
