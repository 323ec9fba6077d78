// The checkpoint replica's worker thread (checkpointReplica.ts holds its other end): a copy
// of the writer's database, seeded with a checkpoint's image and kept in step by running the
// writer's statements in the writer's order, so that sql.js's export of a large database (and
// its checksum) blocks this thread instead of the extension host's event loop.
import * as fs from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { crc32 } from './journal';
import { SqlDb, loadSqlJs } from './sqlDb';
import type { ReplicaReply, ReplicaRequest, ReplicaOp } from './checkpointReplica';

const port = parentPort;

// The same settings as the writer's connection (sqlJsStore.ts loadDatabase), with a smaller
// page cache: this copy is read once per checkpoint.
const PRAGMAS =
  'PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16384;';

let db: SqlDb | undefined;
let broken: string | undefined;
let work: Promise<void> = Promise.resolve();

function reply(r: ReplicaReply, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(r, transfer);
}

function fail(reason: string): void {
  if (broken !== undefined) return;
  broken = reason;
  reply({ t: 'broken', reason });
}

/** Runs one of the writer's statements; a different outcome than the writer's means the copy is no longer the same database. */
function apply(d: SqlDb, [kind, sql, params, ok]: ReplicaOp): void {
  let done = false;
  try {
    if (kind === 'exec') d.exec(sql);
    else if (kind === 'run') d.run(sql, params);
    else d.rollbackQuietly();
    done = true;
  } catch {
    // compared below
  }
  if (kind !== 'rollback' && done !== ok)
    fail(`the copy ${done ? 'ran' : 'refused'} a statement the writer ${ok ? 'ran' : 'refused'}: ${sql.slice(0, 80)}`);
}

async function handle(m: ReplicaRequest): Promise<void> {
  if (broken !== undefined) return;
  if (m.t === 'seed') {
    const SQL = await loadSqlJs(m.wasmPath);
    let data: Uint8Array;
    if ('data' in m.from) data = m.from.data;
    else {
      data = fs.readFileSync(m.from.file);
      if (data.length !== m.from.size || crc32(data) !== m.from.crc)
        return fail(`${m.from.file} changed before the checkpoint worker read it`);
    }
    db = new SqlDb(new SQL.Database(data));
    db.exec(PRAGMAS);
    for (const sql of m.prelude) apply(db, ['exec', sql, undefined, true]);
    return;
  }
  if (!db) return fail('no seed before the first statement');
  if (m.t === 'ops') {
    for (const op of m.ops) {
      apply(db, op);
      if (broken !== undefined) return;
    }
    return;
  }
  const data = db.raw.export();
  reply({ t: 'image', id: m.id, data, crc: crc32(data) }, [data.buffer as ArrayBuffer]);
}

port?.on('message', (m: ReplicaRequest) => {
  // One message at a time, in order: the seed loads sql.js asynchronously.
  work = work.then(() => handle(m)).catch((e: unknown) => fail((e as Error).message));
});
