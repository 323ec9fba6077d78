// BACKLOG.md in the reference's table format: parse (with every malformed row reported by
// file and line, never dropped) and render (waves in order, rows by wave then id, `-` for
// empty cells). Pure: the caller reads and writes the file.
import { idProblem, quoteId } from './ids';
import { EFFORTS, isTaskStatus, type Task, type TaskStatus } from './model';
import { MAX_CELL_LENGTH, textProblem, titleProblem } from './text';

export const TABLE_HEADER = '| ID | Status | Title | Source | Effort | Deps |';
export const TABLE_SEPARATOR = '|----|--------|-------|--------|--------|------|';

/**
 * `## Wave N`, or `## Wave N: Title` when someone named the wave (in BACKLOG.md itself): a
 * wave's heading says what its tasks are, never a fixed text that may not fit them.
 */
export function waveHeading(wave: number, title?: string): string {
  return title ? `## Wave ${wave}: ${title}` : `## Wave ${wave}`;
}

/** A table row as written in BACKLOG.md. */
export interface BacklogRow {
  readonly id: string;
  /** The status cell as written (e.g. `in_progress`). */
  readonly rawStatus: string;
  readonly title: string;
  readonly source: string;
  readonly effort: string;
  readonly deps: string;
  readonly wave: number;
  readonly line: number;
}

export interface BacklogProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export interface ParsedBacklog {
  readonly rows: BacklogRow[];
  readonly problems: BacklogProblem[];
  /** The titles written after `## Wave N:`, by wave. */
  readonly waveTitles: ReadonlyMap<number, string>;
}

export class BacklogParseError extends Error {
  override readonly name = 'BacklogParseError';
  constructor(readonly problems: readonly BacklogProblem[]) {
    super(problems.map(formatProblem).join('\n'));
  }
}

export function formatProblem(p: BacklogProblem): string {
  return `${p.file}:${p.line}: ${p.message}`;
}

/** Splits `| a | b \| c |` into trimmed cells, honouring `\|` escapes. */
function splitRow(line: string): string[] {
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  const cells: string[] = [];
  let cur = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && body[i + 1] === '|') {
      cur += '|';
      i++;
    } else if (c === '|') {
      cells.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  cells.push(cur.trim());
  return cells;
}

function escapeCell(s: string): string {
  return s.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

const WAVE_RE = /^##\s+Wave\s+(\d+)\b(?:\s*[:\-–—]\s*(.*\S))?/i;
const SEPARATOR_RE = /^\|(\s*:?-+:?\s*\|)+\s*$/;

/**
 * The largest BACKLOG.md read: 300 live tasks (the backlog limit) of a few hundred
 * characters each, plus dropped and done ones, with room for notes.
 */
export const MAX_BACKLOG_BYTES = 4 * 1024 * 1024;

/** Parses BACKLOG.md text. `file` names the file in problems. */
export function parseBacklog(text: string, file = 'BACKLOG.md'): ParsedBacklog {
  const rows: BacklogRow[] = [];
  const problems: BacklogProblem[] = [];
  const waveTitles = new Map<number, string>();
  if (text.length > MAX_BACKLOG_BYTES)
    return {
      rows,
      problems: [{ file, line: 1, message: `${text.length} characters; BACKLOG.md is at most ${MAX_BACKLOG_BYTES} bytes` }],
      waveTitles,
    };
  const seen = new Map<string, number>();
  let wave: number | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const lineNo = i + 1;
    // Binary junk anywhere (a NUL would cut a title short in SQLite clients) is reported,
    // never skipped as prose: the file is not what the user meant to write.
    const notText = textProblem(i === 0 ? raw.replace(/^\ufeff/, '') : raw);
    if (notText) return void problems.push({ file, line: lineNo, message: `not text: the line ${notText}` });
    const line = raw.trim();
    const w = WAVE_RE.exec(line);
    if (w) {
      wave = Number(w[1]);
      if (w[2]) waveTitles.set(wave, w[2]);
      return;
    }
    if (!line.startsWith('|')) return;
    if (SEPARATOR_RE.test(line)) return;
    const cells = splitRow(line);
    if (cells[0]?.toLowerCase() === 'id' && cells[1]?.toLowerCase() === 'status') return;
    const problem = (message: string): void => {
      problems.push({ file, line: lineNo, message });
    };
    if (cells.length !== 6)
      return problem(`table row has ${cells.length} cells, expected 6 (ID | Status | Title | Source | Effort | Deps)`);
    const [id, status, title, source, effort, deps] = cells as [string, string, string, string, string, string];
    const badId = idProblem(id);
    if (badId !== null) return problem(`invalid task id ${quoteId(id)}: ${badId}`);
    const dup = seen.get(id);
    if (dup !== undefined) return problem(`duplicate task id ${id} (first on line ${dup})`);
    const eff = effort.toUpperCase();
    if (!(EFFORTS as readonly string[]).includes(eff)) return problem(`task ${id}: invalid effort '${effort}' (expected S, M, L or XL)`);
    if (title.length === 0 || title === '-') return problem(`task ${id}: empty title`);
    const badTitle = titleProblem(title);
    if (badTitle) return problem(`task ${id}: ${badTitle}`);
    for (const [name, v] of [
      ['source', source],
      ['deps', deps],
    ] as const)
      if (v.length > MAX_CELL_LENGTH) return problem(`task ${id}: ${name} is ${v.length} characters long; the limit is ${MAX_CELL_LENGTH}`);
    let rowWave = wave;
    if (rowWave === undefined) {
      const fromId = /^W(\d+)-/i.exec(id);
      if (!fromId) return problem(`task ${id} is outside any '## Wave N' section`);
      rowWave = Number(fromId[1]);
    }
    seen.set(id, lineNo);
    rows.push({
      id,
      rawStatus: status,
      title,
      source: source === '' ? '-' : source,
      effort: eff,
      deps: deps === '' ? '-' : deps,
      wave: rowWave,
      line: lineNo,
    });
  });
  return { rows, problems, waveTitles };
}

/** Statuses the reference maps to pending on import. */
const IMPORT_AS_PENDING = ['in_progress', 'implemented', 'tested', 'planned'];

/**
 * The status a BACKLOG.md row is imported with. Work in flight (claimed, proposed, the
 * reference's in_progress/implemented/tested/planned, anything unknown) restarts as
 * pending; `done` without a promoted patch would break the invariant, so it is pending
 * too and reported (`note`).
 */
export function importStatus(raw: string): { status: TaskStatus; note?: string } {
  const s = raw.trim().toLowerCase();
  if (s === 'done') return { status: 'pending', note: 'marked done in BACKLOG.md but no promoted patch exists; imported as pending' };
  if (s === 'pending' || s === 'blocked' || s === 'dropped' || s === 'deferred') return { status: s };
  if (s === 'claimed' || s === 'proposed') return { status: 'pending', note: `was ${s}; nobody owns it now, imported as pending` };
  if (IMPORT_AS_PENDING.includes(s)) return { status: 'pending' };
  return isTaskStatus(s) ? { status: s } : { status: 'pending', note: `unknown status '${raw}', imported as pending` };
}

export function renderRow(t: Pick<Task, 'task_id' | 'status' | 'title' | 'source' | 'effort' | 'deps'>): string {
  const cell = (v: string | null): string => (v === null || v.trim() === '' ? '-' : escapeCell(v));
  return `| ${cell(t.task_id)} | ${t.status} | ${cell(t.title)} | ${cell(t.source)} | ${cell(t.effort)} | ${cell(t.deps)} |`;
}

/**
 * Renders BACKLOG.md: `# BACKLOG`, then each wave (and every wave in `emptyWaves`), headed
 * `## Wave N` or with the title `waveTitles` keeps for it (read from the file it replaces).
 */
export function renderBacklog(
  tasks: readonly Task[],
  emptyWaves: readonly number[] = [],
  waveTitles: ReadonlyMap<number, string> = new Map(),
): string {
  const byWave = new Map<number, Task[]>();
  for (const w of emptyWaves) byWave.set(w, []);
  for (const t of tasks) {
    const list = byWave.get(t.wave) ?? [];
    list.push(t);
    byWave.set(t.wave, list);
  }
  const out: string[] = ['# BACKLOG', ''];
  for (const wave of [...byWave.keys()].sort((a, b) => a - b)) {
    const list = (byWave.get(wave) ?? []).sort((a, b) => (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0));
    out.push(waveHeading(wave, waveTitles.get(wave)), '', TABLE_HEADER, TABLE_SEPARATOR);
    for (const t of list) out.push(renderRow(t));
    out.push('');
  }
  return out.join('\n');
}

/** The skeleton `init` writes when there is no BACKLOG.md: waves 0-2, empty tables. */
export function skeletonBacklog(): string {
  return renderBacklog([], [0, 1, 2]);
}
