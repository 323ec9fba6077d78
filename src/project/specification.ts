// specification.yaml for REQ mode (seed 001): parsing and validation with errors naming
// file and line, and the build order: Kahn's algorithm over `depends_on`, layer by layer,
// lowest `priority` first within a layer; a cycle is reported with its chain. Pure.
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { z } from 'zod';
import { err, ok } from './result';
import type { Result } from './result';
import { idSchema } from '../domain/ids';

export const REQ_STATUSES = ['pending', 'in_progress', 'done', 'blocked', 'skipped'] as const;
export type ReqStatus = (typeof REQ_STATUSES)[number];

const acceptanceSchema = z.strictObject({
  id: idSchema('requirement'),
  criteria: z.string().min(1),
});

const requirementSchema = z.strictObject({
  id: idSchema('requirement'),
  /** The commit's title (`ralph-loop: REQ-XXX - <title>`); default the description's first line. */
  title: z.string().min(1).optional(),
  description: z.string().min(1),
  acceptance_criteria: z.array(acceptanceSchema).default([]),
  priority: z.number().int().default(100),
  status: z.enum(REQ_STATUSES).default('pending'),
  depends_on: z.array(idSchema('requirement')).default([]),
});

const specificationSchema = z.strictObject({
  specification: z.strictObject({
    requirements: z.array(requirementSchema).min(1),
  }),
});

export type Requirement = z.output<typeof requirementSchema>;

export interface Specification {
  readonly file: string;
  readonly requirements: readonly Requirement[];
}

export interface SpecificationIssue {
  readonly path: string;
  readonly line: number | undefined;
  readonly column: number | undefined;
  readonly message: string;
  /** The requirement the place belongs to and the field within it, when the place is inside one. */
  readonly req?: string | undefined;
  readonly field?: string | undefined;
}

/** `(REQ-002, field priority)`: the requirement and field a message is about. */
function reqSuffix(i: SpecificationIssue): string {
  if (i.req === undefined) return '';
  return ` (${i.req}${i.field ? `, field ${i.field}` : ''})`;
}

export class SpecificationError extends Error {
  override readonly name = 'SpecificationError';
  constructor(
    readonly file: string,
    readonly issues: readonly SpecificationIssue[],
  ) {
    super(
      issues
        .map(
          (i) =>
            `${file}${i.line !== undefined ? `:${i.line}:${i.column ?? 1}` : ''}: ${i.path ? `${i.path}: ` : ''}${i.message}${reqSuffix(i)}`,
        )
        .join('\n'),
    );
  }
}

function formatPath(p: readonly PropertyKey[]): string {
  return p.map((s, i) => (typeof s === 'number' ? `[${s}]` : `${i ? '.' : ''}${String(s)}`)).join('');
}

/** The requirement (its id, else `requirements[i]`) and field a zod issue's path points into. */
function reqOf(raw: unknown, p: readonly PropertyKey[]): { req?: string; field?: string } {
  if (p[0] !== 'specification' || p[1] !== 'requirements' || typeof p[2] !== 'number') return {};
  const list = (raw as { specification?: { requirements?: unknown } } | null)?.specification?.requirements;
  const item = Array.isArray(list) ? (list[p[2]] as { id?: unknown } | undefined) : undefined;
  const id = typeof item?.id === 'string' && item.id.length <= 80 && /^[\w.-]+$/.test(item.id) ? item.id : `requirements[${p[2]}]`;
  const field = p.length > 3 ? formatPath(p.slice(3)) : undefined;
  return field === undefined ? { req: id } : { req: id, field };
}

/** The largest specification.yaml parsed (a few hundred requirements fit in a tenth of it). */
export const MAX_SPECIFICATION_BYTES = 1024 * 1024;
/** The deepest nesting parsed; a specification is about five levels deep. */
export const MAX_SPECIFICATION_DEPTH = 64;
/** Alias expansions allowed (yaml's guard against "billion laughs" documents). */
const MAX_ALIAS_COUNT = 100;

/**
 * Where the text nests deeper than `max` levels, by a cheap scan that over-estimates: flow
 * brackets outside quotes and comments, plus block indentation and leading `- `/`? `
 * indicators. The yaml parser recurses per level, and near the stack's end V8 can fail
 * hard (a fatal out-of-memory in its regexp compiler was seen here), so deep documents
 * are refused before they reach it.
 */
export function nestingProblem(text: string, max = MAX_SPECIFICATION_DEPTH): { line: number; column: number; depth: number } | undefined {
  let flow = 0;
  let line = 1;
  let lineStart = 0;
  let atLineStart = true;
  let block = 0;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') {
      line++;
      lineStart = i + 1;
      atLineStart = true;
      block = 0;
      if (quote === null) continue;
    }
    if (quote !== null) {
      if (quote === '"' && c === '\\') i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (atLineStart) {
      let j = i;
      while (text[j] === ' ' || text[j] === '\t') j++;
      let depth = Math.ceil((j - i) / 2);
      while ((text[j] === '-' || text[j] === '?') && (text[j + 1] === ' ' || text[j + 1] === '\t')) {
        depth++;
        j += 2;
        while (text[j] === ' ') j++;
      }
      block = depth;
      atLineStart = false;
      if (block + flow > max) return { line, column: j - lineStart + 1, depth: block + flow };
      i = j - 1;
      continue;
    }
    if (c === '#' && (i === lineStart || /\s/.test(text[i - 1] ?? ''))) {
      const end = text.indexOf('\n', i);
      i = (end < 0 ? text.length : end) - 1;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[' || c === '{') {
      flow++;
      if (block + flow > max) return { line, column: i - lineStart + 1, depth: block + flow };
    } else if ((c === ']' || c === '}') && flow > 0) flow--;
  }
  return undefined;
}

/** Parses and validates the text of a specification.yaml. */
export function parseSpecification(text: string, file = 'specification.yaml'): Result<Specification, SpecificationError> {
  const refuse = (line: number | undefined, column: number | undefined, message: string): Result<Specification, SpecificationError> =>
    err(new SpecificationError(file, [{ path: '', line, column, message }]));
  if (text.length > MAX_SPECIFICATION_BYTES)
    return refuse(undefined, undefined, `${text.length} characters; a specification is at most ${MAX_SPECIFICATION_BYTES} bytes`);
  const deep = nestingProblem(text);
  if (deep) return refuse(deep.line, deep.column, `nested deeper than ${MAX_SPECIFICATION_DEPTH} levels`);
  const nul = text.indexOf('\u0000');
  if (nul >= 0) {
    const before = text.slice(0, nul);
    const line = before.split('\n').length;
    return refuse(line, nul - before.lastIndexOf('\n'), 'contains a NUL byte: not a text file');
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    return err(
      new SpecificationError(
        file,
        doc.errors.map((e) => {
          const lp = lineCounter.linePos(e.pos[0]);
          return { path: '', line: lp.line, column: lp.col, message: `not valid YAML: ${e.message.split('\n')[0] ?? e.message}` };
        }),
      ),
    );
  }
  const posOf = (p: readonly PropertyKey[]): { line: number; column: number } | undefined => {
    // The nearest node that exists on the path: a missing key is reported at its parent.
    for (let n = p.length; n >= 0; n--) {
      const node = doc.getIn(p.slice(0, n) as unknown[], true) as YamlNode | undefined;
      const start = node && (isMap(node) || isSeq(node) || isScalar(node)) ? node.range?.[0] : undefined;
      if (start !== undefined) {
        const lp = lineCounter.linePos(start);
        return { line: lp.line, column: lp.col };
      }
    }
    return undefined;
  };
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (e) {
    // yaml throws a ReferenceError when aliases would expand past the limit (an alias bomb),
    // and for an alias whose anchor does not exist.
    const message = (e as Error).message;
    const bomb = /excessive alias count/i.test(message);
    const alias = /(^|[\s[{,:-])(\*[^\s,[\]{}]+)/m.exec(text);
    const lp = alias ? lineCounter.linePos(alias.index + (alias[1] ?? '').length) : undefined;
    const why = bomb
      ? `aliases expand to too many nodes (more than ${MAX_ALIAS_COUNT} expansions; an alias bomb?)`
      : `not valid YAML: ${message.split('\n')[0] ?? message}`;
    return refuse(lp?.line, lp?.col, why);
  }
  if (raw === null || raw === undefined) return refuse(1, 1, 'the file is empty; expected a mapping with specification.requirements');
  const parsed = specificationSchema.safeParse(raw);
  if (!parsed.success) {
    return err(
      new SpecificationError(
        file,
        parsed.error.issues.map((i) => {
          const pos = posOf(i.path);
          const message = i.code === 'unrecognized_keys' ? `unknown key(s) ${i.keys.map((k) => `"${k}"`).join(', ')}` : i.message;
          return { path: formatPath(i.path), line: pos?.line, column: pos?.column, message, ...reqOf(raw, i.path) };
        }),
      ),
    );
  }

  // Cross-references: unique ids, dependencies that exist and are not the requirement itself.
  const reqs = parsed.data.specification.requirements;
  const issues: SpecificationIssue[] = [];
  const seen = new Map<string, number>();
  reqs.forEach((r, i) => {
    const base = ['specification', 'requirements', i];
    const first = seen.get(r.id);
    if (first !== undefined) {
      const pos = posOf([...base, 'id']);
      issues.push({
        path: formatPath([...base, 'id']),
        line: pos?.line,
        column: pos?.column,
        message: `duplicate id "${r.id}" (first at requirements[${first}])`,
        req: r.id,
        field: 'id',
      });
    } else {
      seen.set(r.id, i);
    }
    const acIds = new Set<string>();
    r.acceptance_criteria.forEach((ac, j) => {
      if (acIds.has(ac.id)) {
        const pos = posOf([...base, 'acceptance_criteria', j, 'id']);
        issues.push({
          path: formatPath([...base, 'acceptance_criteria', j, 'id']),
          line: pos?.line,
          column: pos?.column,
          message: `duplicate acceptance criterion id "${ac.id}"`,
          req: r.id,
          field: `acceptance_criteria[${j}].id`,
        });
      }
      acIds.add(ac.id);
    });
  });
  const ids = new Set(reqs.map((r) => r.id));
  reqs.forEach((r, i) => {
    r.depends_on.forEach((d, j) => {
      const p = ['specification', 'requirements', i, 'depends_on', j];
      const pos = posOf(p);
      const field = `depends_on[${j}]`;
      if (d === r.id)
        issues.push({ path: formatPath(p), line: pos?.line, column: pos?.column, message: `${r.id} depends on itself`, req: r.id, field });
      else if (!ids.has(d))
        issues.push({
          path: formatPath(p),
          line: pos?.line,
          column: pos?.column,
          message: `${r.id} depends on unknown requirement "${d}"`,
          req: r.id,
          field,
        });
    });
  });
  if (issues.length > 0) return err(new SpecificationError(file, issues));
  return ok({ file, requirements: reqs });
}

export class DependencyCycleError extends Error {
  override readonly name = 'DependencyCycleError';
  constructor(readonly chain: readonly string[]) {
    super(`dependency cycle: ${chain.join(' -> ')}`);
  }
}

export interface BuildOrder {
  /** Requirements in build order. */
  readonly order: readonly Requirement[];
  /** The same, grouped by Kahn layer (layer n depends only on layers < n). */
  readonly layers: readonly (readonly Requirement[])[];
}

const byPriority = (a: Requirement, b: Requirement): number => a.priority - b.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Finds one cycle among `remaining` (each has an unresolved dependency inside the set). */
function findCycle(remaining: ReadonlyMap<string, Requirement>): string[] {
  const start = [...remaining.keys()].sort()[0] ?? '';
  const pathIds: string[] = [];
  const index = new Map<string, number>();
  let cur = start;
  for (;;) {
    const at = index.get(cur);
    if (at !== undefined) return [...pathIds.slice(at), cur];
    index.set(cur, pathIds.length);
    pathIds.push(cur);
    const next = remaining
      .get(cur)
      ?.depends_on.filter((d) => remaining.has(d))
      .sort()[0];
    if (next === undefined) return [...pathIds, cur]; // unreachable when every node is on a cycle or leads to one
    cur = next;
  }
}

/**
 * Topological build order (Kahn's algorithm by layers, priority ascending then id within a
 * layer). A cycle is a DependencyCycleError carrying the chain, e.g. A -> B -> A.
 */
export function buildOrder(requirements: readonly Requirement[]): Result<BuildOrder, DependencyCycleError> {
  const remaining = new Map(requirements.map((r) => [r.id, r] as const));
  const known = new Set(remaining.keys());
  const layers: Requirement[][] = [];
  const placed = new Set<string>();
  while (remaining.size > 0) {
    const layer = [...remaining.values()].filter((r) => r.depends_on.every((d) => placed.has(d) || !known.has(d))).sort(byPriority);
    if (layer.length === 0) return err(new DependencyCycleError(findCycle(remaining)));
    for (const r of layer) {
      remaining.delete(r.id);
      placed.add(r.id);
    }
    layers.push(layer);
  }
  return ok({ order: layers.flat(), layers });
}

/**
 * The next requirement to build: pending (or in progress, after a crash), every dependency
 * done, lowest priority number first. `status` overrides the file's statuses (e.g. from
 * the checkpoint). Undefined when nothing is ready.
 */
export function nextReadyRequirement(
  order: readonly Requirement[],
  status: ReadonlyMap<string, ReqStatus> = new Map(),
): Requirement | undefined {
  const statusOf = (r: Requirement): ReqStatus => status.get(r.id) ?? r.status;
  const byId = new Map(order.map((r) => [r.id, r] as const));
  const ready = order.filter(
    (r) =>
      (statusOf(r) === 'pending' || statusOf(r) === 'in_progress') &&
      r.depends_on.every((d) => {
        const dep = byId.get(d);
        return dep !== undefined && statusOf(dep) === 'done';
      }),
  );
  // Resume an interrupted one first, then by priority; `order` breaks ties (earlier layer first).
  return (
    ready.find((r) => statusOf(r) === 'in_progress') ??
    [...ready].sort((a, b) => a.priority - b.priority || order.indexOf(a) - order.indexOf(b))[0]
  );
}
