// Decisions on blocked REQs from another process (`ralph req decide` beside a running REQ
// loop, the VS Code actions): one JSON file each in .ralph/req/decisions/, written
// atomically, taken by the running engine between REQs. Applied exactly once: the
// `req.decided` event names its file, so a file seen again after a crash (applied, not yet
// deleted) is only deleted. A decision that does not apply moves to failed/ with the reason.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { idSchema } from '../domain/ids';
import { REQ_DECISIONS } from '../domain/reqEvents';
import type { ReqDecision } from '../domain/reqEvents';
import { writeFileAtomicSync } from '../shared/fs';

export const DECISIONS_DIR = join('req', 'decisions');

const decisionSchema = z.strictObject({
  req: idSchema('requirement'),
  decision: z.enum(REQ_DECISIONS),
  actor: z.string().min(1).max(200),
  note: z.string().max(2000).nullish(),
});
export type QueuedDecision = z.output<typeof decisionSchema>;

/** A contextual learning the user marks permanent (`ralph req promote`), queued the same way. */
const promotionSchema = z.strictObject({
  promote: z.string().min(1).max(2000),
  actor: z.string().min(1).max(200),
});
export type QueuedPromotion = z.output<typeof promotionSchema>;

let seq = 0;

/** Queues a decision for the running engine; returns the file. */
export function queueReqDecision(ralphDir: string, d: { req: string; decision: ReqDecision; actor: string; note?: string }): string {
  const dir = join(ralphDir, DECISIONS_DIR);
  mkdirSync(dir, { recursive: true });
  const parsed = decisionSchema.parse(d);
  const stamp = new Date().toISOString().replace(/[-:.TZ]/g, '');
  const file = join(dir, `${stamp}_${process.pid}_${++seq}_${parsed.req}.json`);
  writeFileAtomicSync(file, `${JSON.stringify(parsed)}\n`);
  return file;
}

export type TakenDecision =
  { readonly name: string; readonly decision: QueuedDecision } | { readonly name: string; readonly promotion: QueuedPromotion };

/** Queues a learning promotion for the running engine; returns the file. */
export function queueLearningPromotion(ralphDir: string, p: { text: string; actor: string }): string {
  const dir = join(ralphDir, DECISIONS_DIR);
  mkdirSync(dir, { recursive: true });
  const parsed = promotionSchema.parse({ promote: p.text, actor: p.actor });
  const stamp = new Date().toISOString().replace(/[-:.TZ]/g, '');
  const file = join(dir, `${stamp}_${process.pid}_${++seq}_learning.json`);
  writeFileAtomicSync(file, `${JSON.stringify(parsed)}\n`);
  return file;
}

/** The queued decisions in the order they were made; unreadable files move to failed/. */
export function pendingReqDecisions(ralphDir: string): TakenDecision[] {
  const dir = join(ralphDir, DECISIONS_DIR);
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch {
    return [];
  }
  const out: TakenDecision[] = [];
  for (const name of names) {
    try {
      const json: unknown = JSON.parse(readFileSync(join(dir, name), 'utf8'));
      const isPromotion = typeof json === 'object' && json !== null && 'promote' in json;
      const parsed = isPromotion ? promotionSchema.safeParse(json) : decisionSchema.safeParse(json);
      if (parsed.success)
        out.push(isPromotion ? { name, promotion: parsed.data as QueuedPromotion } : { name, decision: parsed.data as QueuedDecision });
      else
        failReqDecision(
          ralphDir,
          name,
          `invalid decision: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
    } catch (e) {
      failReqDecision(ralphDir, name, `unreadable: ${(e as Error).message}`);
    }
  }
  return out;
}

export function doneReqDecision(ralphDir: string, name: string): void {
  rmSync(join(ralphDir, DECISIONS_DIR, name), { force: true });
}

export function failReqDecision(ralphDir: string, name: string, reason: string): void {
  const failed = join(ralphDir, DECISIONS_DIR, 'failed');
  mkdirSync(failed, { recursive: true });
  try {
    renameSync(join(ralphDir, DECISIONS_DIR, name), join(failed, name));
    writeFileAtomicSync(join(failed, `${name}.error.txt`), `${reason}\n`);
  } catch {
    // already moved by a concurrent reader
  }
}
