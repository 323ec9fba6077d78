// What a ralphctl-compatible command of `ralph` is (its arguments, how it needs the store,
// its inbox form) and the argument and output helpers the command tables share.
import * as path from 'node:path';
import type { ControlContext } from '../control/context';
import type * as ControlModule from '../control/index';
import type { InboxCommand } from '../control/inbox';
import type { StoredEvent } from '../store/types';
import type { IdKind } from '../domain/ids';
import { UsageError, type ParsedArgs } from './args';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

/** How a command needs the store: as the writer, read-only, or writer when free. */
export type StoreNeed = 'writer' | 'observer' | 'prefer-writer';

export interface CommandSpec {
  readonly name: string;
  readonly usage: string;
  readonly summary: string;
  readonly store: StoreNeed;
  /** Fewest and most positional arguments (checked before the store is opened). */
  readonly arity: readonly [number, number];
  readonly values?: readonly string[];
  readonly switches?: readonly string[];
  /**
   * The ids among the arguments (kind, value, how the usage names it): checked against the
   * id grammar before the store opens, for the command and its inbox file alike.
   */
  ids?(a: ParsedArgs): readonly (readonly [IdKind, string | undefined, string])[];
  /** The command classifies risk: the CLI loads the config module for the project's risk patterns. */
  readonly riskPatterns?: true;
  /** Beside a running loop, the command goes to the loop's inbox as this. */
  toInbox?(a: ParsedArgs): Promise<InboxCommand>;
  /** What the command prints once the loop applied its inbox copy: the same as `run` prints. */
  formatApplied?(events: readonly StoredEvent[], a: ParsedArgs, ctx: ControlContext): string | Promise<string>;
  /**
   * Tried before the store opens: the exit code when the command could answer without it,
   * undefined to open the store and `run` (a read-only command's quick path).
   */
  quick?(projectDir: string, a: ParsedArgs, io: CliIo, now: () => Date): Promise<number | undefined>;
  run(ctx: ControlContext, a: ParsedArgs, io: CliIo): Promise<number>;
}

/** Python's json.dumps layout for a flat object, as the reference prints. */
export function pyJson(o: Readonly<Record<string, unknown>>): string {
  return `{${Object.entries(o)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(', ')}}`;
}

export function need(a: ParsedArgs, n: number, usage: string): string[] {
  if (a.positionals.length < n) throw new UsageError(`missing arguments; usage: ralph ${usage}`);
  return a.positionals;
}

export function noMore(a: ParsedArgs, n: number, usage: string): void {
  if (a.positionals.length > n) throw new UsageError(`too many arguments; usage: ralph ${usage}`);
}

export function parsePayload(s: string | undefined): Record<string, unknown> | undefined {
  if (s === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch (e) {
    throw new UsageError(`payload_json is not valid JSON: ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError('payload_json must be a JSON object');
  return v as Record<string, unknown>;
}

export const json = (a: ParsedArgs): boolean => a.switches.has('json');

/** `--efforts S,M` (repeatable) for a worker's pick; absent = the default (S). */
export function effortsOf(a: ParsedArgs, parseEfforts: (typeof ControlModule)['parseEfforts']): string[] | undefined {
  const given = a.options.get('efforts');
  return given === undefined ? undefined : parseEfforts(given.join(','));
}
export const J = ['json'];

export function relativeToCwd(p: string): string {
  const r = path.relative(process.cwd(), p);
  return r.startsWith('..') ? p : r;
}
