// Fingerprints of what no agent may change, taken before and after every agent invocation
// (integrity.ts compares them): the repository's git config, hooks, info/ and alternates,
// worktree configs, the agent worktree's own `.git` pointer, refs other than those Ralph and
// the user move in normal work, ralph.config.json, and `.ralph/` except what Ralph itself
// writes; and, where no confinement is active, the files of the user's checkout. Small
// files keep their content, so a hook or config line an agent added can be put back.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { runGit, splitNul } from '../git/exec';

/** Under `.ralph/`: written by Ralph during a run (the store, views, logs, patches, inbox). */
export const RALPH_WRITES: readonly string[] = [
  'ralph.db',
  'ralph.events.journal',
  'locks',
  'logs',
  'commits',
  'proposals',
  'inbox',
  'incidents',
  'STATE.json',
  'BACKLOG.md',
  'REFLECTIONS.md',
  'GUARDRAILS.md',
  'SPEC_REGISTRY.md',
];

/** Content kept for restoring (git config, hooks, info files are small). */
const KEEP_CONTENT_BYTES = 256 * 1024;

export interface GuardScope {
  /** The user's checkout (top level). */
  readonly projectDir: string;
  /** The repository's common git dir. */
  readonly commonDir: string;
  /** The agent's worktree, whose `.git` pointer must not change; null for the judge's folder. */
  readonly worktree: string | null;
  /** Refs nobody is warned about: the agent's own branch and other agents' `ralph/*`. */
  readonly ignoreRef: (ref: string) => boolean;
  /** Cover the user's checkout too (no confinement active). */
  readonly checkout: boolean;
}

export interface Entry {
  readonly digest: string;
  /** The bytes, for small files (restoring an agent's change). */
  readonly content?: Buffer;
  /** A symbolic link's target (hooks can be links). */
  readonly link?: string;
}

/** Logical path (`.git/hooks/pre-commit`, `ref refs/tags/v1`, `ralph.config.json`) -> entry. */
export type Snapshot = ReadonlyMap<string, Entry>;

const sha = (b: Buffer | string): string => createHash('sha1').update(b).digest('hex');

async function addFile(out: Map<string, Entry>, key: string, path: string, keep: boolean): Promise<void> {
  let st;
  try {
    st = await lstat(path);
  } catch {
    return;
  }
  if (st.isSymbolicLink()) {
    const link = await readlink(path).catch(() => '');
    out.set(key, { digest: `link:${link}`, link });
  } else if (st.isFile()) {
    const content = await readFile(path).catch(() => undefined);
    if (content === undefined) return;
    out.set(key, {
      digest: `${st.mode.toString(8)}:${sha(content)}`,
      ...(keep && content.length <= KEEP_CONTENT_BYTES ? { content } : {}),
    });
  } else if (st.isDirectory()) {
    out.set(key, { digest: 'dir' });
  }
}

/** Every file below `dir` (recursively), keyed by `prefix` + its relative path. */
async function addTree(out: Map<string, Entry>, prefix: string, dir: string, skip: (rel: string) => boolean, keep: boolean): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  await Promise.all(
    entries
      .filter((e) => !skip(e.name))
      .map((e) =>
        e.isDirectory()
          ? addTree(out, `${prefix}${e.name}/`, join(dir, e.name), () => false, keep)
          : addFile(out, `${prefix}${e.name}`, join(dir, e.name), keep),
      ),
  );
}

/** Refs as git stores them: loose files under refs/ and packed-refs (loose wins). */
async function refs(commonDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const packed = await readFile(join(commonDir, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    const m = /^([0-9a-f]{40,64}) (refs\/\S+)$/.exec(line);
    if (m?.[1] !== undefined && m[2] !== undefined) out.set(m[2], m[1]);
  }
  const walk = async (dir: string, name: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    await Promise.all(
      entries.map(async (e) => {
        const ref = `${name}/${e.name}`;
        if (e.isDirectory()) await walk(join(dir, e.name), ref);
        else if (!e.name.endsWith('.lock')) {
          const v = (await readFile(join(dir, e.name), 'utf8').catch(() => '')).trim();
          if (v.length > 0) out.set(ref, v);
        }
      }),
    );
  };
  await walk(join(commonDir, 'refs'), 'refs');
  return out;
}

const CHECKOUT_BATCH = 256;

/** Files of the checkout git would see (tracked and untracked, not ignored), by stat. */
async function addCheckout(out: Map<string, Entry>, projectDir: string): Promise<void> {
  const r = await runGit(projectDir, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ':(exclude).ralph']);
  const files = [...new Set(splitNul(r.stdout))];
  // A few hundred at a time: a checkout of 100k files would otherwise hold 100k pending stats.
  for (let i = 0; i < files.length; i += CHECKOUT_BATCH) {
    await Promise.all(
      files.slice(i, i + CHECKOUT_BATCH).map(async (rel) => {
        try {
          const st = await lstat(join(projectDir, rel));
          out.set(`checkout ${rel}`, { digest: `${st.mode}:${st.size}:${st.mtimeMs}:${st.ino}` });
        } catch {
          // listed, then removed: absent in this snapshot
        }
      }),
    );
  }
}

// The reads go out together, not one after another: the loop's event loop is busy with other
// agents and gates, and each sequential await waits a turn of it (a 17-entry snapshot took
// ~190 ms when each turn took 2 ms; with the reads together, ~15 ms). Entries are keyed, so
// the order they land in does not matter.
export async function takeSnapshot(scope: GuardScope): Promise<Snapshot> {
  const out = new Map<string, Entry>();
  const g = scope.commonDir;
  const worktreeConfigs = async (): Promise<void> => {
    let admins: string[] = [];
    try {
      admins = (await readdir(join(g, 'worktrees'), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch {
      admins = [];
    }
    await Promise.all(
      admins.map((a) => addFile(out, `.git/worktrees/${a}/config.worktree`, join(g, 'worktrees', a, 'config.worktree'), true)),
    );
  };
  const refEntries = async (): Promise<void> => {
    for (const [ref, value] of await refs(g)) if (!scope.ignoreRef(ref)) out.set(`ref ${ref}`, { digest: value });
  };
  await Promise.all([
    addFile(out, '.git/config', join(g, 'config'), true),
    addTree(out, '.git/hooks/', join(g, 'hooks'), () => false, true),
    addTree(out, '.git/info/', join(g, 'info'), () => false, true),
    addFile(out, '.git/objects/info/alternates', join(g, 'objects', 'info', 'alternates'), true),
    worktreeConfigs(),
    scope.worktree !== null ? addFile(out, 'worktree .git', join(scope.worktree, '.git'), true) : undefined,
    refEntries(),
    addFile(out, 'ralph.config.json', join(scope.projectDir, 'ralph.config.json'), true),
    addTree(out, '.ralph/', join(scope.projectDir, '.ralph'), (rel) => isRalphWrite(rel), false),
    scope.checkout ? addCheckout(out, scope.projectDir) : undefined,
  ]);
  return out;
}

/** Whether a path under `.ralph/` (relative to it) is one Ralph writes during a run. */
export function isRalphWrite(rel: string): boolean {
  const first = rel.split(sep)[0] ?? rel;
  // Its files and their temporaries (atomic writes: `<name>.tmp-<pid>-<id>`, `<name>.<pid>.tmp`).
  return RALPH_WRITES.some((w) => first === w || first.startsWith(`${w}.`)) || /\.tmp(\b|-|$)/.test(first);
}

export type ChangeKind = 'added' | 'removed' | 'modified';

export interface SnapshotChange {
  readonly path: string;
  readonly change: ChangeKind;
  readonly before?: Entry;
  readonly after?: Entry;
}

/** What differs between two snapshots, in path order. */
export function compareSnapshots(before: Snapshot, after: Snapshot): SnapshotChange[] {
  const out: SnapshotChange[] = [];
  for (const [path, b] of before) {
    const a = after.get(path);
    if (a === undefined) out.push({ path, change: 'removed', before: b });
    else if (a.digest !== b.digest) out.push({ path, change: 'modified', before: b, after: a });
  }
  for (const [path, a] of after) if (!before.has(path)) out.push({ path, change: 'added', after: a });
  return out.sort((x, y) => x.path.localeCompare(y.path));
}
