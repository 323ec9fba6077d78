// Spawns test/int/store/storeChild.ts and lets tests wait on what it prints (no sleeps).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export interface Child {
  readonly proc: ChildProcess;
  /** Complete lines printed so far. */
  readonly lines: string[];
  waitForLine(pred: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or signal) once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill9(): Promise<void>;
}

export function spawnStoreChild(args: readonly string[]): Child {
  const script = path.join(__dirname, 'storeChild.ts');
  const proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const waiters: { pred: (l: string) => boolean; resolve: (l: string) => void }[] = [];
  proc.stdout?.setEncoding('utf8');
  proc.stdout?.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const l of parts) {
      lines.push(l);
      for (const w of [...waiters]) {
        if (w.pred(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    }
  });
  proc.stderr?.setEncoding('utf8');
  proc.stderr?.on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    proc,
    lines,
    exited,
    waitForLine(pred, timeoutMs = 60_000): Promise<string> {
      const hit = lines.find(pred);
      if (hit !== undefined) return Promise.resolve(hit);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`child did not print the expected line; stdout:\n${lines.slice(-5).join('\n')}\nstderr:\n${stderr}`)),
          timeoutMs,
        );
        waiters.push({
          pred,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
        void exited.then(() => {
          // give the last 'data' events a chance before failing: 'close' comes after them
          const late = lines.find(pred);
          clearTimeout(timer);
          if (late !== undefined) resolve(late);
          else
            reject(new Error(`child exited before printing the expected line; stdout:\n${lines.slice(-5).join('\n')}\nstderr:\n${stderr}`));
        });
      });
    },
    async kill9(): Promise<void> {
      proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs python3's sqlite3 on `db` and returns the JSON the script prints. */
export function pythonSqlite<T>(db: string, script: string): T {
  const code = `import sqlite3, json, sys\ncon = sqlite3.connect(sys.argv[1])\n${script}`;
  const out = execFileSync('python3', ['-c', code, db], { encoding: 'utf8' });
  return JSON.parse(out) as T;
}
