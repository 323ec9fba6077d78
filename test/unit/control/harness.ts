// A control plane over a real sql.js store in a temp folder, with a stepping clock and a
// git port backed by a set of known commits (the edge; integration tests use real git).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openStore } from '../../../src/store/sqlJsStore';
import type { EventStore } from '../../../src/store/types';
import { CONTROL_PROJECTIONS, controlContext, type ControlContext } from '../../../src/control/index';

export interface Harness {
  readonly dir: string;
  readonly ralphDir: string;
  store: EventStore;
  ctx: ControlContext;
  readonly commits: Set<string>;
  advance(ms: number): void;
  nowMs(): number;
  writeBacklog(text: string): void;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export async function harness(startIso = '2026-11-29T12:00:00.000Z'): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-control-'));
  const ralphDir = path.join(dir, '.ralph');
  let now = Date.parse(startIso);
  const commits = new Set<string>();
  const clock = (): number => now;
  const open = (): Promise<EventStore> =>
    openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, clock, checkpointDebounceMs: 50 });
  const mk = (store: EventStore): ControlContext =>
    controlContext(store, { ralphDir, projectDir: dir, git: { commitExists: async (h) => commits.has(h) }, now: () => new Date(now) });
  const store = await open();
  const h: Harness = {
    dir,
    ralphDir,
    store,
    ctx: mk(store),
    commits,
    advance: (ms) => {
      now += ms;
    },
    nowMs: () => now,
    writeBacklog: (text) => {
      fs.mkdirSync(ralphDir, { recursive: true });
      fs.writeFileSync(path.join(ralphDir, 'BACKLOG.md'), text);
    },
    reopen: async () => {
      await h.store.close();
      h.store = await open();
      h.ctx = mk(h.store);
    },
    close: async () => {
      await h.store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

export const BACKLOG = `# BACKLOG

## Wave 0: Critical Fixes & Foundation

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| W0-001 | pending | Set up helpers | ES:1 | S | - |
| W0-002 | in_progress | Config loader | ES:2 | M | W0-001 |

## Wave 1: Core Infrastructure

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| W1-001 | pending | Auth handler | ES:30 | S | - |
| W1-002 | done | Docs | ES:5 | S | - |
`;

/** Writes a git-style patch touching `files` under the project; returns its relative path. */
export function writePatch(h: Harness, name: string, files: readonly string[]): string {
  const rel = path.join('.ralph', 'commits', 'pending', `${name}.patch`);
  const body = files.map((f) => `diff --git a/${f} b/${f}\n--- a/${f}\n+++ b/${f}\n@@ -1 +1 @@\n-a\n+b\n`).join('');
  fs.mkdirSync(path.dirname(path.join(h.dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(h.dir, rel), body);
  return rel;
}
