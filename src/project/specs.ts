// Spec discovery: the documents in specs/, docs/ and adrs/ that evolve_goals turns into
// backlog proposals. Content hashes live in .ralph/specs.json so the loop can ask which
// specs are new or changed since evolve_goals last read them; SPEC_REGISTRY.md is the
// human-readable table of the same. `isEvolveDue` is the pure rule that keeps evolve_goals
// from running on every cycle while the backlog is empty and the specs are unchanged.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../shared/fs';

export const SPEC_DIRS = ['specs', 'docs', 'adrs'] as const;
export const SPEC_EXTENSIONS = ['.md', '.yaml', '.yml', '.json'] as const;
export const SPECS_STATE_FILE = 'specs.json';
export const SPEC_REGISTRY_FILE = 'SPEC_REGISTRY.md';

export type SpecType = 'markdown' | 'yaml' | 'json';

export interface SpecFile {
  /** Project-relative, forward slashes, e.g. `specs/api.md`. */
  readonly path: string;
  readonly type: SpecType;
  /** sha256 of the content, hex. */
  readonly hash: string;
  /** Headings (markdown) or top-level keys (yaml, json). */
  readonly sections: number;
  readonly bytes: number;
}

const SKIP_DIRS = new Set(['node_modules', '.git']);

function typeOf(file: string): SpecType | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.md') return 'markdown';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.json') return 'json';
  return undefined;
}

/** Headings outside code fences (markdown); top-level keys (yaml/json). */
export function countSections(text: string, type: SpecType): number {
  if (type === 'markdown') {
    let inFence = false;
    let n = 0;
    for (const line of text.split(/\r?\n/)) {
      if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
      else if (!inFence && /^#{1,6}\s+\S/.test(line)) n++;
    }
    return n;
  }
  if (type === 'yaml') return text.split(/\r?\n/).filter((l) => /^[^\s#-][^:]*:(\s|$)/.test(l)).length;
  try {
    const v = JSON.parse(text) as unknown;
    if (Array.isArray(v)) return v.length;
    return v !== null && typeof v === 'object' ? Object.keys(v).length : 0;
  } catch {
    return 0;
  }
}

export function hashContent(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

/** Every spec file under specs/, docs/, adrs/ (recursively), sorted by path. */
export async function discoverSpecs(projectDir: string): Promise<SpecFile[]> {
  const found: SpecFile[] = [];
  const walk = async (rel: string): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(path.join(projectDir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const childRel = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!e.name.startsWith('.') && !SKIP_DIRS.has(e.name)) await walk(childRel);
        continue;
      }
      const type = typeOf(e.name);
      if (!e.isFile() || type === undefined) continue;
      const content = await fs.readFile(path.join(projectDir, childRel));
      found.push({
        path: childRel,
        type,
        hash: hashContent(content),
        sections: countSections(content.toString('utf8'), type),
        bytes: content.length,
      });
    }
  };
  for (const d of SPEC_DIRS) await walk(d);
  return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

const specRecordSchema = z.object({
  hash: z.string(),
  /** Hash of the content evolve_goals last read; null = never read. */
  read_hash: z.string().nullable().default(null),
  last_read: z.string().nullable().default(null),
  sections: z.number().int().min(0).default(0),
  items_generated: z.number().int().min(0).default(0),
});
export type SpecRecord = z.infer<typeof specRecordSchema>;

const specsStateSchema = z.object({
  version: z.literal(1),
  specs: z.record(z.string(), specRecordSchema).default({}),
  /** Fingerprint of all specs as seen by the last evolve_goals run; null = never ran. */
  evolve_fingerprint: z.string().nullable().default(null),
});
export type SpecsState = z.infer<typeof specsStateSchema>;

export class SpecsStateError extends Error {
  override readonly name = 'SpecsStateError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

function emptyState(): SpecsState {
  return { version: 1, specs: {}, evolve_fingerprint: null };
}

/** Reads .ralph/specs.json; missing = empty state; malformed = SpecsStateError. */
export async function readSpecsState(ralphDir: string): Promise<SpecsState> {
  const file = path.join(ralphDir, SPECS_STATE_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyState();
    throw e;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new SpecsStateError(file, `not valid JSON (${(e as Error).message}); delete it to rescan every spec`);
  }
  const r = specsStateSchema.safeParse(raw);
  if (!r.success) throw new SpecsStateError(file, r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return r.data;
}

export async function writeSpecsState(ralphDir: string, state: SpecsState): Promise<void> {
  await writeFileAtomic(path.join(ralphDir, SPECS_STATE_FILE), `${JSON.stringify(state, null, 2)}\n`);
}

/** Fingerprint of a set of specs: changes when any file is added, removed or edited. */
export function specFingerprint(specs: readonly Pick<SpecFile, 'path' | 'hash'>[]): string | null {
  if (specs.length === 0) return null;
  const lines = specs.map((s) => `${s.path}\0${s.hash}`).sort();
  return hashContent(lines.join('\n'));
}

/** Specs never read by evolve_goals, or edited since it read them. Pure. */
export function specsChangedSince(specs: readonly SpecFile[], state: SpecsState): SpecFile[] {
  return specs.filter((s) => state.specs[s.path]?.read_hash !== s.hash);
}

/** The new or changed specs of a project: what the next evolve_goals run is pointed at. */
export async function changedSpecs(projectDir: string, ralphDir = path.join(projectDir, '.ralph')): Promise<SpecFile[]> {
  const [specs, state] = await Promise.all([discoverSpecs(projectDir), readSpecsState(ralphDir)]);
  return specsChangedSince(specs, state);
}

export interface RegistryRow {
  readonly file: string;
  readonly type: SpecType;
  readonly lastRead: string | null;
  readonly sections: number;
  readonly itemsGenerated: number;
}

/** SPEC_REGISTRY.md as the table `| File | Type | Last Read | Sections | Items Generated |`. */
export function renderSpecRegistry(rows: readonly RegistryRow[]): string {
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const body = rows.map((r) => `| ${esc(r.file)} | ${r.type} | ${r.lastRead ?? 'never'} | ${r.sections} | ${r.itemsGenerated} |`);
  return [
    '# Spec Registry',
    '',
    'Spec documents discovered in specs/, docs/ and adrs/. Maintained by Ralph; evolve_goals reads new and changed files.',
    '',
    '| File | Type | Last Read | Sections | Items Generated |',
    '|------|------|-----------|----------|-----------------|',
    ...body,
    '',
  ].join('\n');
}

/** Merges discovery into the state: hashes and sections updated, removed files dropped. Pure. */
export function mergeDiscovery(state: SpecsState, specs: readonly SpecFile[]): SpecsState {
  const next: Record<string, SpecRecord> = {};
  for (const s of specs) {
    const prev = state.specs[s.path];
    next[s.path] = {
      hash: s.hash,
      read_hash: prev?.read_hash ?? null,
      last_read: prev?.last_read ?? null,
      sections: s.sections,
      items_generated: prev?.items_generated ?? 0,
    };
  }
  return { ...state, specs: next };
}

export function registryRows(specs: readonly SpecFile[], state: SpecsState): RegistryRow[] {
  return specs.map((s) => {
    const rec = state.specs[s.path];
    return {
      file: s.path,
      type: s.type,
      lastRead: rec?.last_read ?? null,
      sections: s.sections,
      itemsGenerated: rec?.items_generated ?? 0,
    };
  });
}

export interface SpecSync {
  readonly specs: SpecFile[];
  readonly added: string[];
  readonly changed: string[];
  readonly removed: string[];
}

/** Rescans, updates .ralph/specs.json and rewrites SPEC_REGISTRY.md. */
export async function syncSpecRegistry(projectDir: string, ralphDir = path.join(projectDir, '.ralph')): Promise<SpecSync> {
  const [specs, state] = await Promise.all([discoverSpecs(projectDir), readSpecsState(ralphDir)]);
  const added = specs.filter((s) => !state.specs[s.path]).map((s) => s.path);
  const changed = specs.filter((s) => state.specs[s.path] && state.specs[s.path]?.hash !== s.hash).map((s) => s.path);
  const present = new Set(specs.map((s) => s.path));
  const removed = Object.keys(state.specs).filter((p) => !present.has(p));
  const next = mergeDiscovery(state, specs);
  await writeSpecsState(ralphDir, next);
  await writeFileAtomic(path.join(ralphDir, SPEC_REGISTRY_FILE), renderSpecRegistry(registryRows(specs, next)));
  return { specs, added, changed, removed };
}

export interface EvolveRun {
  /** The fingerprint of all specs when the run started (from specFingerprint). */
  readonly fingerprint: string | null;
  /** Specs the run was given and read. */
  readonly specsRead: readonly string[];
  /** Accepted items per spec path, if known. */
  readonly itemsGenerated?: Readonly<Record<string, number>>;
  readonly now?: Date;
}

/** Records an evolve_goals run: specs marked read at their current hash, the fingerprint kept. */
export async function recordEvolveRun(projectDir: string, run: EvolveRun, ralphDir = path.join(projectDir, '.ralph')): Promise<void> {
  const [specs, state] = await Promise.all([discoverSpecs(projectDir), readSpecsState(ralphDir)]);
  const merged = mergeDiscovery(state, specs);
  const when = (run.now ?? new Date()).toISOString();
  for (const p of run.specsRead) {
    const rec = merged.specs[p];
    if (!rec) continue;
    merged.specs[p] = {
      ...rec,
      read_hash: rec.hash,
      last_read: when,
      items_generated: rec.items_generated + (run.itemsGenerated?.[p] ?? 0),
    };
  }
  const next: SpecsState = { ...merged, evolve_fingerprint: run.fingerprint };
  await writeSpecsState(ralphDir, next);
  await writeFileAtomic(path.join(ralphDir, SPEC_REGISTRY_FILE), renderSpecRegistry(registryRows(specs, next)));
}

export interface EvolveDueInput {
  readonly commitsSinceLastEvolve: number;
  /** periodic.evolve_every from the config. */
  readonly evolveEvery: number;
  /** No actionable task (nothing pending, claimed, proposed or deferred). */
  readonly backlogEmpty: boolean;
  /** specFingerprint of the specs now; null when there are none. */
  readonly specFingerprint: string | null;
  /** The fingerprint the last evolve_goals run saw; null when it never ran. */
  readonly lastEvolveFingerprint: string | null;
}

export type EvolveDecision =
  | { readonly due: true; readonly reason: 'interval' | 'empty_backlog_specs_changed' }
  | { readonly due: false; readonly reason: 'not_yet' | 'no_specs' | 'specs_unchanged' };

/**
 * Whether evolve_goals is due. Every `evolveEvery` commits; and, with an empty backlog
 * and specs present, once per change of the spec set, not on every cycle: a run that
 * found nothing to add is not repeated until a spec changes (it would find nothing again).
 */
export function isEvolveDue(input: EvolveDueInput): EvolveDecision {
  if (input.evolveEvery > 0 && input.commitsSinceLastEvolve >= input.evolveEvery) return { due: true, reason: 'interval' };
  if (!input.backlogEmpty) return { due: false, reason: 'not_yet' };
  if (input.specFingerprint === null) return { due: false, reason: 'no_specs' };
  if (input.specFingerprint !== input.lastEvolveFingerprint) return { due: true, reason: 'empty_backlog_specs_changed' };
  return { due: false, reason: 'specs_unchanged' };
}
