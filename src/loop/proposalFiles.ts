// Proposals an agent returned in its answer (evolve_goals, decomposition) written as
// `.ralph/proposals/prop_*.json` for the control plane's processProposals, which validates
// them and decides by policy. Each file appears whole (writeFileAtomic).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../shared/fs';
import type { HarnessContext } from './context';
import { idFilePath } from '../shared/idFiles';

/** Writes the proposals; returns how many files were written. */
export async function writeProposals(
  ctx: Pick<HarnessContext, 'ralphDir' | 'clock'>,
  proposals: readonly unknown[],
  stem: string,
): Promise<number> {
  const dir = join(ctx.ralphDir, 'proposals');
  await mkdir(dir, { recursive: true });
  const stamp = new Date(ctx.clock.now()).toISOString().replace(/[-:.TZ]/g, '');
  let i = 0;
  for (const p of proposals) {
    const file = idFilePath(dir, [['part', 'prop'], ['part', stamp], ['part', stem], ++i], '.json');
    await writeFileAtomic(file, JSON.stringify(p, null, 2));
  }
  return i;
}
