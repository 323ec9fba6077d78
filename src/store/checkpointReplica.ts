// A writer's checkpoint exports taken off its thread. sql.js's export of the in-memory
// database copies it page by page and then the checkpoint sums it: at 100k events (33 MB)
// that blocked the extension host's event loop for 130–570 ms per checkpoint. The replica is
// a copy of the database in a worker thread (checkpointWorker.ts), seeded with the image a
// checkpoint just wrote and kept in step by every statement the writer runs after that
// image was taken (SqlDb's tap), in the writer's order: an export request posted at a moment
// of the writer's thread is answered with the database exactly as it was at that moment,
// because the worker handles its messages in order. The writer keeps every durability step
// (the file writes, rotation, journal trim) on its side and in its order; the worker only
// produces the bytes and their checksum. A copy that ran a statement differently (one threw
// on one side only), a worker that died, or a request that fails makes the replica broken,
// and the writer exports on its own thread again.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as WorkerThreads from 'node:worker_threads';
import type { Worker } from 'node:worker_threads';
import type { SqlDb } from './sqlDb';
import type { SqlParams } from './types';

export type ReplicaOp = readonly [kind: 'run' | 'exec' | 'rollback', sql: string, params: SqlParams | undefined, ok: boolean];

export type ReplicaRequest =
  | {
      readonly t: 'seed';
      /** The image itself, or a file to read it from that must have this size and CRC-32. */
      readonly from: { readonly data: Uint8Array } | { readonly file: string; readonly size: number; readonly crc: number };
      readonly wasmPath: string | undefined;
      readonly prelude: readonly string[];
    }
  | { readonly t: 'ops'; readonly ops: readonly ReplicaOp[] }
  | { readonly t: 'export'; readonly id: number };

export type ReplicaReply =
  | { readonly t: 'image'; readonly id: number; readonly data: Uint8Array; readonly crc: number }
  | { readonly t: 'broken'; readonly reason: string };

export interface ReplicaImage {
  readonly data: Uint8Array;
  /** CRC-32 of `data`, computed in the worker. */
  readonly crc: number;
}

/** Ops are posted once per turn of the event loop, or sooner when this many are waiting. */
const BATCH = 4096;

/**
 * The worker's script: beside the bundle (dist/checkpointWorker.js) or the sources (through
 * tsx). node:worker_threads loads here, not with the store: a short-lived command never
 * starts a replica, and loading the module is a few million instructions of its start-up.
 */
function startWorker(): Worker {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Worker } = require('node:worker_threads') as typeof WorkerThreads;
  const bundled = path.join(__dirname, 'checkpointWorker.js');
  if (fs.existsSync(bundled)) return new Worker(bundled);
  const source = path.join(__dirname, 'checkpointWorker.ts');
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(source)});`, { eval: true });
}

export class CheckpointReplica {
  private readonly worker: Worker;
  private pending: ReplicaOp[] = [];
  private seeded = false;
  private flushQueued = false;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (i: ReplicaImage) => void; reject: (e: Error) => void }>();
  private brokenReason: string | undefined;
  private detach: (() => void) | undefined;

  /**
   * Starts following `db` from this moment: call it in the same synchronous step as the
   * export whose image will seed the copy (seed()).
   */
  constructor(db: SqlDb) {
    this.worker = startWorker();
    this.worker.unref();
    this.worker.on('message', (m: ReplicaReply) => this.onReply(m));
    this.worker.on('error', (e: Error) => this.breakWith(`the checkpoint worker failed: ${e.message}`));
    this.worker.on('exit', (code) => this.breakWith(`the checkpoint worker exited (${code})`));
    const tap = (kind: ReplicaOp[0], sql: string, params: SqlParams | undefined, ok: boolean): void => this.record([kind, sql, params, ok]);
    db.tap = tap;
    this.detach = () => {
      if (db.tap === tap) db.tap = undefined;
    };
  }

  get healthy(): boolean {
    return this.seeded && this.brokenReason === undefined;
  }

  get broken(): string | undefined {
    return this.brokenReason;
  }

  /**
   * Hands the worker its starting image (transferred: the caller must not use `data` again)
   * and the statements that were run on it before this replica started following.
   */
  seed(data: Uint8Array, wasmPath: string | undefined, prelude: readonly string[] = []): void {
    // A view into a larger buffer (or one sql.js still reads from) is copied, not transferred.
    const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : new Uint8Array(data);
    this.post({ t: 'seed', from: { data: own }, wasmPath, prelude }, [own.buffer as ArrayBuffer]);
  }

  /**
   * The same, with the image read by the worker from `file`, which must have the given size
   * and CRC-32 (the copy is broken otherwise): nothing to copy on this thread.
   */
  seedFromFile(file: string, sum: { size: number; crc: number }, wasmPath: string | undefined, prelude: readonly string[] = []): void {
    this.post({ t: 'seed', from: { file, size: sum.size, crc: sum.crc }, wasmPath, prelude });
  }

  private post(seed: ReplicaRequest, transfer: ArrayBuffer[] = []): void {
    if (this.brokenReason !== undefined) return;
    this.worker.postMessage(seed, transfer);
    this.seeded = true;
    this.flush();
  }

  /**
   * The database as it is now, exported in the worker: every statement run before this call
   * is in it, none run after.
   */
  exportImage(): Promise<ReplicaImage> {
    if (!this.healthy) return Promise.reject(new Error(this.brokenReason ?? 'the checkpoint replica is not seeded'));
    this.flush();
    const id = this.nextId++;
    const p = new Promise<ReplicaImage>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.worker.postMessage({ t: 'export', id } satisfies ReplicaRequest);
    return p;
  }

  async dispose(): Promise<void> {
    this.breakWith('disposed');
    await this.worker.terminate().catch(() => undefined);
  }

  private record(op: ReplicaOp): void {
    if (this.brokenReason !== undefined) return;
    this.pending.push(op);
    if (!this.seeded) return;
    if (this.pending.length >= BATCH) this.flush();
    else if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => {
        this.flushQueued = false;
        this.flush();
      });
    }
  }

  private flush(): void {
    if (!this.seeded || this.pending.length === 0 || this.brokenReason !== undefined) return;
    const ops = this.pending;
    this.pending = [];
    try {
      this.worker.postMessage({ t: 'ops', ops } satisfies ReplicaRequest);
    } catch (e) {
      this.breakWith(`the writer's statements could not be sent to the checkpoint worker: ${(e as Error).message}`);
    }
  }

  private onReply(m: ReplicaReply): void {
    if (m.t === 'broken') return this.breakWith(m.reason);
    const w = this.waiting.get(m.id);
    this.waiting.delete(m.id);
    w?.resolve({ data: m.data, crc: m.crc });
  }

  private breakWith(reason: string): void {
    if (this.brokenReason !== undefined) return;
    this.brokenReason = reason;
    this.pending = [];
    this.detach?.();
    this.detach = undefined;
    for (const w of this.waiting.values()) w.reject(new Error(reason));
    this.waiting.clear();
  }
}
