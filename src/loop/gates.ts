// The gates the HARNESS runs (a model's "tests pass" is never taken): build, test, lint commands
// from ralph.config.json, each in the worktree with a timeout, output captured with a
// bounded tail, the process group killed on stop or timeout, progress lines streamed; and
// forbidden patterns checked only on the lines the change adds (from the patch).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { confineSpawn, credentialFreeHome } from '../agents/sandbox';
import type { Confinement } from '../agents/sandbox';
import type { ProcessLedgerPort } from '../shared/processLedger';
import picomatch from 'picomatch';
import { runShell, tailOf } from './shell';
import type { FileAddedLines } from '../git/patchParse';
import { withoutStoreCredentials } from '../store/storeUrl';

export interface GateSpec {
  /** 'build' | 'test' | 'lint' | 'test_unit' | ...; also the event's gate name. */
  readonly name: string;
  /** A shell command line; empty = the gate is disabled (reported as skipped). */
  readonly command: string;
  readonly timeoutMs: number;
}

export type GateStatus = 'passed' | 'failed' | 'timeout' | 'cancelled' | 'skipped' | 'error';

export interface GateResult {
  readonly gate: string;
  readonly status: GateStatus;
  /** passed or skipped. */
  readonly ok: boolean;
  readonly command: string;
  readonly exitCode: number | null;
  readonly durationMs: number;
  /** The last `tailBytes` of combined stdout+stderr, in order. */
  readonly outputTail: string;
  /** Forbidden-pattern hits, for that gate only. */
  readonly violations?: readonly PatternViolation[];
}

export interface GateRunOptions {
  readonly cwd: string;
  readonly signal?: AbortSignal;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Bytes of output kept; default 8 KiB. */
  readonly tailBytes?: number;
  readonly graceMs?: number;
  readonly onProgress?: (gate: string, line: string) => void;
  /** Where gate commands' process groups are recorded while they run. */
  readonly ledger?: ProcessLedgerPort;
  /**
   * Runs the commands in bubblewrap (kind `bwrap`): only `cwd` and `scratch` are writable,
   * and HOME and TMPDIR are in `scratch`. Other kinds run them as they are, with a HOME in
   * `scratch` without the store's credential files when the user's home has some.
   */
  readonly confinement?: Confinement;
  /** The gates' own writable folder (created when missing). */
  readonly scratch?: string;
}

/** HOME, TMPDIR and the XDG folders inside the gates' scratch folder, created. */
function scratchVariables(scratch: string): Record<string, string> {
  const dirs = { HOME: 'home', TMPDIR: 'tmp', XDG_CACHE_HOME: 'cache', XDG_CONFIG_HOME: 'config' };
  const out: Record<string, string> = {};
  for (const [name, sub] of Object.entries(dirs)) {
    out[name] = join(scratch, sub);
    mkdirSync(out[name], { recursive: true });
  }
  return { ...out, TMP: out.TMPDIR ?? '', TEMP: out.TMPDIR ?? '' };
}

const DEFAULT_TAIL = 8192;

/** Runs one command gate; never throws for a failing command. */
export async function runGate(spec: GateSpec, opts: GateRunOptions): Promise<GateResult> {
  const tailBytes = opts.tailBytes ?? DEFAULT_TAIL;
  const base = { gate: spec.name, command: spec.command };
  if (spec.command.trim().length === 0) {
    return { ...base, status: 'skipped', ok: true, exitCode: null, durationMs: 0, outputTail: 'no command configured' };
  }
  const onProgress = opts.onProgress;
  const confined = opts.confinement?.kind === 'bwrap' && opts.scratch !== undefined ? opts.confinement : undefined;
  const env: Record<string, string | undefined> = {
    // The gates run the agent's code: the team store's credentials stay out of its reach.
    ...withoutStoreCredentials(process.env),
    CI: '1',
    FORCE_COLOR: '0',
    NO_COLOR: '1',
    ...opts.env,
    ...(opts.scratch === undefined ? {} : confined !== undefined ? scratchVariables(opts.scratch) : credentialFreeHome(opts.scratch)),
  };
  const outcome = await runShell({
    command: spec.command,
    cwd: opts.cwd,
    env,
    ...(confined !== undefined
      ? {
          spawnAs: (file: string, args: readonly string[]) =>
            confineSpawn(confined, file, args, { cwd: opts.cwd, scratch: opts.scratch, path: env.PATH }),
        }
      : {}),
    timeoutMs: spec.timeoutMs,
    ...(opts.signal ? { signal: opts.signal } : {}),
    graceMs: opts.graceMs ?? 3000,
    tailBytes,
    ...(onProgress ? { onLine: (line: string) => onProgress(spec.name, line) } : {}),
    ...(opts.ledger ? { ledger: opts.ledger } : {}),
  });
  const outputTail = outcome.outputTail.replace(/\n$/, '');
  const common = { ...base, exitCode: outcome.exitCode, durationMs: outcome.durationMs };
  if (outcome.spawnError !== undefined) {
    return { ...common, status: 'error', ok: false, outputTail: tailOf(outcome.spawnError, tailBytes) };
  }
  if (outcome.stopReason === 'timeout') {
    return {
      ...common,
      status: 'timeout',
      ok: false,
      outputTail: `${outputTail}\n[gate ${spec.name} timed out after ${spec.timeoutMs} ms]`,
    };
  }
  if (outcome.stopReason === 'abort') return { ...common, status: 'cancelled', ok: false, outputTail };
  const passed = outcome.exitCode === 0;
  return { ...common, status: passed ? 'passed' : 'failed', ok: passed, outputTail };
}

export interface GateListOptions extends GateRunOptions {
  /** Stop at the first failing gate (a failed build makes tests meaningless); default true. */
  readonly stopOnFailure?: boolean;
  readonly onGateStart?: (gate: string) => void;
  readonly onGateEnd?: (result: GateResult) => void;
}

/** Runs gates in order. Skipped gates are reported, not run. */
export async function runGates(specs: readonly GateSpec[], opts: GateListOptions): Promise<GateResult[]> {
  const results: GateResult[] = [];
  for (const spec of specs) {
    if (opts.signal?.aborted) break;
    opts.onGateStart?.(spec.name);
    const r = await runGate(spec, opts);
    results.push(r);
    opts.onGateEnd?.(r);
    if (!r.ok && (opts.stopOnFailure ?? true)) break;
  }
  return results;
}

export interface PatternViolation {
  readonly file: string;
  readonly line: number;
  readonly pattern: string;
  readonly text: string;
}

export class InvalidPatternError extends Error {
  override readonly name = 'InvalidPatternError';
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(`forbidden pattern ${JSON.stringify(pattern)}: ${reason}`);
  }
}

type LineTest = (text: string) => boolean;

/** `/regex/flags` entries are regular expressions; anything else is a literal substring. */
export function compilePattern(pattern: string): LineTest {
  const m = /^\/(.+)\/([dgimsuy]*)$/.exec(pattern);
  if (m) {
    let re: RegExp;
    try {
      re = new RegExp(m[1] as string, (m[2] as string).replace('g', ''));
    } catch (e) {
      throw new InvalidPatternError(pattern, e instanceof Error ? e.message : String(e));
    }
    return (t) => re.test(t);
  }
  return (t) => t.includes(pattern);
}

/** The seed's config writes patterns as one `a|b|c` string; ours is a list. Both accepted. */
export function patternList(patterns: string | readonly string[] | undefined): string[] {
  if (patterns === undefined) return [];
  const list = typeof patterns === 'string' ? patterns.split('|') : [...patterns];
  return list.map((p) => p.trim()).filter((p) => p.length > 0);
}

/** Checks only the lines a change adds; files matching `exclude` globs are skipped. */
export function findForbidden(
  added: readonly FileAddedLines[],
  patterns: readonly string[],
  exclude: readonly string[] = [],
): PatternViolation[] {
  const tests = patterns.map((p) => ({ p, test: compilePattern(p) }));
  const skip = exclude.length > 0 ? picomatch([...exclude], { dot: true }) : () => false;
  const out: PatternViolation[] = [];
  for (const f of added) {
    if (skip(f.path)) continue;
    for (const l of f.lines) {
      for (const { p, test } of tests) {
        if (test(l.text)) out.push({ file: f.path, line: l.line, pattern: p, text: l.text.trim().slice(0, 200) });
      }
    }
  }
  return out;
}

/** The forbidden-pattern check as a gate result, listing the hits as its output. */
export function forbiddenPatternsGate(
  added: readonly FileAddedLines[],
  patterns: readonly string[],
  exclude: readonly string[] = [],
): GateResult {
  const started = Date.now();
  const violations = findForbidden(added, patterns, exclude);
  const ok = violations.length === 0;
  const lines = violations.slice(0, 50).map((v) => `${v.file}:${v.line}: forbidden ${JSON.stringify(v.pattern)}: ${v.text}`);
  if (violations.length > 50) lines.push(`… and ${violations.length - 50} more`);
  return {
    gate: 'forbidden_patterns',
    status: patterns.length === 0 ? 'skipped' : ok ? 'passed' : 'failed',
    ok,
    command: patterns.join(' | '),
    exitCode: null,
    durationMs: Date.now() - started,
    outputTail: ok ? '' : lines.join('\n'),
    violations,
  };
}
