// A page-by-page copy of one sql.js database into another: SQLite's online backup API
// (sqlite3_backup_*), which sql.js compiles in and exports on its module object but does
// not wrap. Copying pages costs a memcpy per page; copying rows costs a b-tree insert per
// row and per index entry (at 20k task rows: ~2 ms against ~50 ms for INSERT … SELECT, see
// `npm run bench -- timeTravel`). The replay cursor keeps and restores its snapshots so.
import type { Database, SqlJsStatic } from 'sql.js';

/** The module exports this file calls (present in sql.js 1.17's build; checked, not assumed). */
interface BackupExports {
  _sqlite3_backup_init(dest: number, destName: number, src: number, srcName: number): number;
  _sqlite3_backup_step(backup: number, pages: number): number;
  _sqlite3_backup_finish(backup: number): number;
  _sqlite3_errmsg(db: number): number;
  _free(ptr: number): void;
  stringToNewUTF8(s: string): number;
  UTF8ToString(ptr: number): string;
}

const SQLITE_OK = 0;
const SQLITE_DONE = 101;

function backupExports(SQL: SqlJsStatic): BackupExports {
  const m = SQL as unknown as Record<string, unknown>;
  for (const name of [
    '_sqlite3_backup_init',
    '_sqlite3_backup_step',
    '_sqlite3_backup_finish',
    '_sqlite3_errmsg',
    '_free',
    'stringToNewUTF8',
    'UTF8ToString',
  ]) {
    if (typeof m[name] !== 'function') throw new Error(`sql.js: no ${name} export (the backup API this sql.js build lacks)`);
  }
  return SQL as unknown as BackupExports;
}

/** The connection handle sql.js keeps on a Database (its `db` property). */
function handleOf(db: Database): number {
  const h = (db as unknown as { db?: unknown }).db;
  if (typeof h !== 'number' || h === 0) throw new Error('sql.js: a Database without its connection handle (closed?)');
  return h;
}

/**
 * Makes schema `destName` of `dest` a page-for-page copy of schema `srcName` of `src` (two
 * distinct connections of the same sql.js module; neither inside a transaction). Whatever
 * `dest` held in that schema is replaced, its tables, indexes and rowids included; its
 * prepared statements are prepared again on their next step.
 */
export function copyPages(SQL: SqlJsStatic, dest: Database, destName: string, src: Database, srcName: string): void {
  const x = backupExports(SQL);
  const d = handleOf(dest);
  const destPtr = x.stringToNewUTF8(destName);
  const srcPtr = x.stringToNewUTF8(srcName);
  let backup: number;
  try {
    backup = x._sqlite3_backup_init(d, destPtr, handleOf(src), srcPtr);
  } finally {
    x._free(destPtr);
    x._free(srcPtr);
  }
  if (backup === 0) throw new Error(`sqlite backup: ${x.UTF8ToString(x._sqlite3_errmsg(d))}`);
  const step = x._sqlite3_backup_step(backup, -1);
  const finish = x._sqlite3_backup_finish(backup);
  if (step !== SQLITE_DONE || finish !== SQLITE_OK) {
    throw new Error(`sqlite backup: step ${step}, finish ${finish}: ${x.UTF8ToString(x._sqlite3_errmsg(d))}`);
  }
}
