// AGENTS.md in REQ mode (seed 001): only the orchestrator writes it, appending each REQ's
// `agentmd_addition` under a heading naming the REQ; past 500 lines the oldest entries move
// to .sprint-state/ralph-loop/agents-archive/ (one file per archiving, never overwritten),
// leaving the file's preamble and the newest entries. Writes are atomic.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../shared/fs';
import { redactText } from '../shared/redaction';
import type { Clock } from '../loop/sleep';

export const AGENTS_MD = 'AGENTS.md';
export const AGENTS_ARCHIVE_DIR = join('.sprint-state', 'ralph-loop', 'agents-archive');
export const AGENTS_MD_MAX_LINES = 500;

export interface AgentsMdWrite {
  readonly linesAdded: number;
  readonly totalLines: number;
  /** Repo-relative archive file, when entries were archived. */
  readonly archivedTo: string | null;
  readonly archivedLines: number;
}

// An entry is the heading the orchestrator writes, `## REQ-001`.
const ENTRY = /^## REQ-/;

/** Appends a REQ's addition; archives the oldest entries when the file passes the limit. */
export async function appendAgentsMd(
  projectDir: string,
  reqId: string,
  addition: string,
  clock: Clock,
  maxLines = AGENTS_MD_MAX_LINES,
): Promise<AgentsMdWrite> {
  const file = join(projectDir, AGENTS_MD);
  const before = existsSync(file)
    ? readFileSync(file, 'utf8')
    : "# AGENTS.md\n\nWritten by Ralph Loop's REQ mode from each requirement's agentmd_addition.\n";
  // An agent's answer may quote a secret it saw: redacted like every event payload before it is committed.
  const entry = [`## ${reqId}`, ...redactText(addition).replace(/\r\n/g, '\n').trim().split('\n'), ''];
  const lines = [...before.replace(/\n+$/, '').split('\n'), '', ...entry];
  let archivedTo: string | null = null;
  let archivedLines = 0;
  let kept = lines;
  if (lines.length > maxLines) {
    // The preamble (everything before the first entry) stays; whole entries go, oldest first.
    const first = lines.findIndex((l) => ENTRY.test(l));
    const preamble = first < 0 ? [] : lines.slice(0, first);
    const entries: string[][] = [];
    for (const l of first < 0 ? lines : lines.slice(first)) {
      if (ENTRY.test(l) || entries.length === 0) entries.push([l]);
      else (entries[entries.length - 1] as string[]).push(l);
    }
    const out: string[][] = [];
    let size = preamble.length + entries.reduce((n, e) => n + e.length, 0);
    while (entries.length > 1 && size > maxLines) {
      const e = entries.shift() as string[];
      out.push(e);
      size -= e.length;
    }
    if (out.length > 0) {
      const stamp = new Date(clock.now()).toISOString().replace(/[-:.]/g, '');
      const rel = join(AGENTS_ARCHIVE_DIR, `AGENTS-${stamp}-${reqId}.md`);
      mkdirSync(join(projectDir, AGENTS_ARCHIVE_DIR), { recursive: true });
      const archived = out.flat();
      await writeFileAtomic(join(projectDir, rel), `# AGENTS.md entries archived before ${reqId}\n\n${archived.join('\n')}\n`);
      archivedTo = rel;
      archivedLines = archived.length;
      kept = [...preamble, ...entries.flat()];
    }
  }
  const text = `${kept.join('\n').replace(/\n+$/, '')}\n`;
  await writeFileAtomic(file, text);
  return { linesAdded: entry.length, totalLines: text.split('\n').length - 1, archivedTo, archivedLines };
}
