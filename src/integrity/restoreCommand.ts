// `ralph restore-incident <incident-id>`: puts back what an incident record says Ralph can
// safely restore (a hook or config line the agent added, a config it changed). Refs and the
// checkout's files are never touched: Ralph cannot tell an agent's change there from yours.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { restoreIncident } from './integrity';
import type { IncidentRecord } from './integrity';

const ID = /^incident_[0-9]{8,20}_[0-9a-f]{8}$/;

const recordSchema = z.looseObject({
  incident_id: z.string().regex(ID),
  project: z.string().min(1),
  common_dir: z.string().min(1),
  changes: z.array(
    z.looseObject({
      path: z.string().min(1),
      change: z.enum(['added', 'removed', 'modified']),
      restorable: z.boolean(),
      before_base64: z.string().optional(),
      before_mode: z.number().int().min(0).max(0o777).optional(),
      before_link: z.string().optional(),
    }),
  ),
});

export interface RestoreIo {
  out(text: string): void;
  err(text: string): void;
}

export async function restoreIncidentCommand(projectDir: string, argv: readonly string[], io: RestoreIo): Promise<number> {
  const [id, ...rest] = argv;
  if (id === undefined || rest.length > 0) {
    io.err('usage: ralph restore-incident <incident-id>\n');
    return 2;
  }
  if (!ID.test(id)) {
    io.err(`ralph restore-incident: ${JSON.stringify(id)} is not an incident id (incident_<time>_<8 hex>)\n`);
    return 2;
  }
  const file = join(projectDir, '.ralph', 'incidents', `${id}.json`);
  let record: IncidentRecord;
  try {
    const parsed = recordSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    if (!parsed.success) {
      io.err(`${file}: not an incident record: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}\n`);
      return 1;
    }
    record = parsed.data as IncidentRecord;
  } catch (e) {
    io.err(`ralph restore-incident: cannot read ${file}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
  const done = await restoreIncident(record);
  for (const line of done) io.out(`${line}\n`);
  const left = record.changes.filter((c) => !c.restorable);
  for (const c of left) io.out(`not restored (check it yourself): ${c.path} ${c.change}\n`);
  if (done.length === 0 && left.length === 0) io.out('nothing to restore\n');
  return 0;
}
