// Runs faultChild.ts as a plain Node process: bundled once per test run with esbuild (a
// bundle starts in a fraction of the time tsx needs, which matters over dozens of kills),
// with sql.js's wasm beside it and the repository as its working directory (the scripted
// backend finds test/kit/scriptedClaude.mjs there).
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type * as Esbuild from 'esbuild';
import type { LoopEvent } from '../../../src/loop/events';

const ROOT = resolve(__dirname, '../../..');

export interface Ack {
  readonly eventId: string;
  readonly type: string;
  readonly entityId: string;
  readonly commit: string | null;
}

export interface ChildRun {
  /** The point and count it was killed at, or null when it ran to its end. */
  readonly killedAt: { point: string; n: number } | null;
  readonly acks: readonly Ack[];
  readonly events: readonly LoopEvent[];
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stopReason: string | null;
  readonly stderr: string;
  readonly pid: number;
  readonly ms: number;
}

export interface FaultChildBundle {
  run(projectDir: string, point: string, k: number, timeoutMs?: number): Promise<ChildRun>;
  dispose(): void;
}

export async function bundleFaultChild(): Promise<FaultChildBundle> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const esbuild = require('esbuild') as typeof Esbuild;
  const dir = mkdtempSync(join(tmpdir(), 'ralph-fault-child-'));
  const out = join(dir, 'faultChild.js');
  await esbuild.build({
    entryPoints: [join(__dirname, 'faultChild.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'silent',
    external: ['vscode'],
  });
  copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), join(dir, 'sql-wasm.wasm'));
  return {
    run: (projectDir, point, k, timeoutMs = 120_000) => runChild(out, projectDir, point, k, timeoutMs),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function runChild(bundle: string, projectDir: string, point: string, k: number, timeoutMs: number): Promise<ChildRun> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [bundle, projectDir, point, String(k)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const acks: Ack[] = [];
  const events: LoopEvent[] = [];
  let killedAt: { point: string; n: number } | null = null;
  let stopReason: string | null = null;
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-20_000);
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const sp = line.indexOf(' ');
    const kind = sp < 0 ? line : line.slice(0, sp);
    const rest = sp < 0 ? '' : line.slice(sp + 1);
    if (kind === 'ack') {
      const [eventId = '', type = '', entityId = '', commit = '-'] = rest.split(' ');
      acks.push({ eventId, type, entityId, commit: commit === '-' ? null : commit });
    } else if (kind === 'event') {
      try {
        events.push(JSON.parse(rest) as LoopEvent);
      } catch {
        // a torn last line of a killed child
      }
    } else if (kind === 'kill') {
      const [p = '', n = '0'] = rest.split(' ');
      killedAt = { point: p, n: Number(n) };
    } else if (kind === 'done') stopReason = rest;
  });
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(
        new Error(
          `fault child (${point}#${k}) still running after ${timeoutMs} ms; last events: ${JSON.stringify(events.slice(-5))}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      res({ killedAt, acks, events, exitCode, signal, stopReason, stderr, pid: child.pid ?? -1, ms: Date.now() - t0 });
    });
  });
}
