// A thin, statement-caching SqlWriter over one sql.js Database, and the sql.js loader
// (one wasm instance per process, located beside the bundle or in node_modules).
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import initSqlJs from 'sql.js';
import type { Database, SqlJsStatic, Statement } from 'sql.js';
import type { SqlParams, SqlRow, SqlValue, SqlWriter } from './types';
import { readWasm } from './wasmFile';

let sqlJs: Promise<SqlJsStatic> | undefined;
let sqlJsWasm: string | undefined;

/**
 * Where sql-wasm.wasm is: beside the bundle (dist/, compressed: wasmFile.ts) or in
 * node_modules (sources, tests).
 */
export function defaultWasmPath(): string {
  for (const name of ['sql-wasm.wasm.br', 'sql-wasm.wasm']) {
    const bundled = path.join(__dirname, name);
    if (fs.existsSync(bundled)) return bundled;
  }
  // Not a literal: the bundler must not try to resolve it (the bundle uses the copy above).
  const spec = ['sql.js', 'dist', 'sql-wasm.wasm'].join('/');
  return require.resolve(spec);
}

/**
 * Asks V8 to compile WebAssembly with its baseline compiler only (`--liftoff-only`):
 * sql.js then starts several times faster, at some cost in steady-state query speed
 * (see `npm run bench -- store`). Process-wide, so only a host that owns its process
 * (the CLI) should call it, before the first store opens. Returns false when too late.
 */
export function enableFastWasmStartup(): boolean {
  if (sqlJs) return false;
  v8.setFlagsFromString('--liftoff-only');
  return true;
}

/** Loads sql.js once per process; later calls share the compiled module. */
export function loadSqlJs(wasmPath?: string): Promise<SqlJsStatic> {
  if (!sqlJs) {
    sqlJsWasm = wasmPath ?? defaultWasmPath();
    const wasm = sqlJsWasm;
    // Reading the bytes ourselves lets sql.js compile them without its fetch/XHR fallbacks.
    const wasmBinary = readWasm(wasm);
    sqlJs = initSqlJs({ locateFile: () => wasm, wasmBinary: wasmBinary as unknown as ArrayBuffer });
    sqlJs.catch(() => {
      sqlJs = undefined;
    });
  }
  return sqlJs;
}

type BindObject = Record<string, SqlValue>;

function toBind(params: SqlParams | undefined): SqlValue[] | BindObject | undefined {
  if (params === undefined) return undefined;
  if (Array.isArray(params)) return params as SqlValue[];
  // sql.js wants the prefix in the key; accept `{ id }` for `:id`, `$id` or `@id`.
  const out: BindObject = {};
  for (const [k, v] of Object.entries(params as Readonly<Record<string, SqlValue>>)) {
    if (/^[:$@]/.test(k)) out[k] = v;
    else {
      out[`:${k}`] = v;
      out[`$${k}`] = v;
      out[`@${k}`] = v;
    }
  }
  return out;
}

/**
 * Sees every statement that may change the database, after it ran, with whether it threw:
 * the checkpoint replica (checkpointReplica.ts) runs the same statements on its copy.
 */
export type SqlTap = (kind: 'run' | 'exec' | 'rollback', sql: string, params: SqlParams | undefined, ok: boolean) => void;

/** Statements that read only: not shown to the tap. */
const READ_ONLY = /^\s*SELECT\b/i;

/** SqlWriter over a sql.js Database; prepared statements are cached by SQL text. */
export class SqlDb implements SqlWriter {
  private readonly cache = new Map<string, Statement>();
  /** Set while a checkpoint replica follows this database. */
  tap: SqlTap | undefined;

  constructor(readonly raw: Database) {}

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      // Bound the cache: ad-hoc queries with inlined values must not grow it forever.
      if (this.cache.size > 500) this.clearCache();
      this.cache.set(sql, s);
    }
    return s;
  }

  all<R extends object = SqlRow>(sql: string, params?: SqlParams): R[] {
    if (this.tap && !READ_ONLY.test(sql)) return this.tapped('run', sql, params, () => this.allRows<R>(sql, params));
    return this.allRows<R>(sql, params);
  }

  private allRows<R extends object>(sql: string, params: SqlParams | undefined): R[] {
    const s = this.stmt(sql);
    try {
      const b = toBind(params);
      if (b) s.bind(b as never);
      const rows: R[] = [];
      // getAsObject() asks sqlite for every column's name again on every row (a call into
      // the wasm and a string decoded per column): read the names once per query instead.
      let names: string[] | undefined;
      while (s.step()) {
        names ??= s.getColumnNames();
        const values = s.get();
        const row: Record<string, SqlValue> = {};
        for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i] as SqlValue;
        rows.push(row as R);
      }
      return rows;
    } finally {
      s.reset();
    }
  }

  get<R extends object = SqlRow>(sql: string, params?: SqlParams): R | undefined {
    if (this.tap && !READ_ONLY.test(sql)) return this.tapped('run', sql, params, () => this.getRow<R>(sql, params));
    return this.getRow<R>(sql, params);
  }

  private getRow<R extends object>(sql: string, params: SqlParams | undefined): R | undefined {
    const s = this.stmt(sql);
    try {
      const b = toBind(params);
      if (b) s.bind(b as never);
      return s.step() ? (s.getAsObject() as R) : undefined;
    } finally {
      s.reset();
    }
  }

  run(sql: string, params?: SqlParams): void {
    if (this.tap) return this.tapped('run', sql, params, () => this.runOnce(sql, params));
    this.runOnce(sql, params);
  }

  /** Runs `fn`, then shows the statement to the tap (a copy of its parameters: callers may reuse theirs). */
  private tapped<T>(kind: 'run' | 'exec', sql: string, params: SqlParams | undefined, fn: () => T): T {
    let ok = false;
    try {
      const out = fn();
      ok = true;
      return out;
    } finally {
      const copy = params === undefined ? undefined : Array.isArray(params) ? [...(params as unknown[])] : { ...params };
      this.tap?.(kind, sql, copy as SqlParams | undefined, ok);
    }
  }

  private runOnce(sql: string, params: SqlParams | undefined): void {
    const s = this.stmt(sql);
    try {
      const b = toBind(params);
      if (b) s.bind(b as never);
      s.step();
    } finally {
      s.reset();
    }
  }

  /** Runs several statements without parameters (DDL, BEGIN/COMMIT). */
  exec(sql: string): void {
    if (this.tap) return this.tapped('exec', sql, undefined, () => void this.raw.exec(sql));
    this.raw.exec(sql);
  }

  /** ROLLBACK that never masks the error that caused it (SQLite may have rolled back already). */
  rollbackQuietly(): void {
    let ok = false;
    try {
      this.raw.exec('ROLLBACK');
      ok = true;
    } catch {
      // no transaction was active
    }
    this.tap?.('rollback', 'ROLLBACK', undefined, ok);
  }

  clearCache(): void {
    for (const s of this.cache.values()) s.free();
    this.cache.clear();
  }

  close(): void {
    this.clearCache();
    this.raw.close();
  }
}

/** The sql-wasm.wasm this process loaded sql.js from (for a worker that loads its own). */
export function loadedWasmPath(): string | undefined {
  return sqlJsWasm;
}
