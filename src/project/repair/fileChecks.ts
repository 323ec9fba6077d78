// Repair checks of the .ralph tree on disk: required directories and files, the phase
// files, ralph.config.json, STATE.json (valid JSON with the reference keys), stale lock
// files of dead processes, queued patches and unprocessed or invalid proposals.
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONFIG_FILE, loadConfig } from '../config';
import { RALPH_DIR, RALPH_DIRS, RALPH_FILES } from '../init';
import { MAX_PROPOSAL_BYTES, parseProposal } from '../../domain/proposals';
import { initialState } from '../templates/files';
import { ok } from './findings';
import type { Finding } from './findings';
import { pidAlive } from '../../shared/process';

async function isDir(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await fs.stat(p)).isFile();
  } catch {
    return false;
  }
}

async function listDir(p: string): Promise<string[]> {
  try {
    return (await fs.readdir(p)).sort();
  } catch {
    return [];
  }
}

const INIT_FIX = { kind: 'init', description: 'ralph init fills in what is missing' } as const;

/** Directories, files and phase files of the tree; the config's validity. */
export async function checkRalphTree(projectDir: string): Promise<Finding[]> {
  const ralphDir = path.join(projectDir, RALPH_DIR);
  if (!(await isDir(ralphDir))) {
    return [{ check: 'files.ralph_dir', status: 'fail', message: `${RALPH_DIR}/ does not exist`, path: RALPH_DIR, fix: INIT_FIX }];
  }
  const findings: Finding[] = [];
  for (const d of RALPH_DIRS) {
    if (!(await isDir(path.join(ralphDir, d)))) {
      findings.push({
        check: 'files.dir',
        status: 'fail',
        message: `${RALPH_DIR}/${d}/ is missing`,
        path: `${RALPH_DIR}/${d}`,
        fix: INIT_FIX,
      });
    }
  }
  for (const f of RALPH_FILES) {
    if (!(await isFile(path.join(ralphDir, f)))) {
      const check = f.startsWith('phases/') ? 'files.phase' : 'files.file';
      findings.push({ check, status: 'fail', message: `${RALPH_DIR}/${f} is missing`, path: `${RALPH_DIR}/${f}`, fix: INIT_FIX });
    }
  }
  if (!findings.length) findings.push(ok('files', `${RALPH_DIRS.length} directories and ${RALPH_FILES.length} files present`));

  const config = loadConfig(projectDir);
  if (config.ok) findings.push(ok('config', `${CONFIG_FILE} is valid`));
  else
    findings.push({
      check: 'config',
      status: 'fail',
      message: config.error.message,
      path: CONFIG_FILE,
      fix: { kind: 'manual', description: `correct ${CONFIG_FILE}` },
    });
  return findings;
}

/** STATE.json: valid JSON, an object, every reference key, counters non-negative numbers. */
export async function checkStateJson(projectDir: string, maxRetries = 3): Promise<Finding[]> {
  const rel = `${RALPH_DIR}/STATE.json`;
  const fix = { kind: 'control-plane', description: 'render-state regenerates it from the event log' } as const;
  let text: string;
  try {
    text = await fs.readFile(path.join(projectDir, rel), 'utf8');
  } catch {
    return [{ check: 'state.json', status: 'fail', message: `${rel} is missing`, path: rel, fix }];
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return [{ check: 'state.json', status: 'fail', message: `${rel} is not valid JSON (${(e as Error).message})`, path: rel, fix }];
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return [{ check: 'state.json', status: 'fail', message: `${rel} is not a JSON object`, path: rel, fix }];
  }
  const state = value as Record<string, unknown>;
  const findings: Finding[] = [];
  const missing = Object.keys(initialState()).filter((k) => !(k in state));
  if (missing.length) findings.push({ check: 'state.keys', status: 'fail', message: `${rel} lacks ${missing.join(', ')}`, path: rel, fix });
  const numeric = Object.entries(initialState())
    .filter(([, v]) => typeof v === 'number')
    .map(([k]) => k)
    .filter((k) => k in state && (typeof state[k] !== 'number' || (state[k] as number) < 0));
  if (numeric.length)
    findings.push({
      check: 'state.types',
      status: 'fail',
      message: `${rel}: ${numeric.join(', ')} must be non-negative numbers`,
      path: rel,
      fix,
    });
  const retry = state['retry_count'];
  if (typeof retry === 'number' && retry > maxRetries) {
    findings.push({
      check: 'state.retry',
      status: 'warn',
      message: `retry_count ${retry} exceeds max_retries ${maxRetries}`,
      path: rel,
      fix,
    });
  }
  return findings.length ? findings : [ok('state.json', `${rel} is valid`)];
}

/** The process ledger's directory under .ralph/locks/ (src/shared/processLedger.ts). */
export const PROCESS_LEDGER_DIR = 'processes';

type LockOwner = { pid?: unknown; host?: unknown; owner?: unknown };

async function readOwner(file: string): Promise<LockOwner | undefined> {
  try {
    const v: unknown = JSON.parse(await fs.readFile(file, 'utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The process ledger: one `<pid>.json` per agent or gate process group a run started,
 * removed when the group ends. A record whose owning run is dead was left by a killed run;
 * the next start ends the group (if it still runs) and forgets the record.
 */
async function checkProcessLedger(projectDir: string, rel: string): Promise<Finding[]> {
  const left: string[] = [];
  for (const name of await listDir(path.join(projectDir, rel))) {
    const owner = await readOwner(path.join(projectDir, rel, name));
    const ownerPid = owner?.owner;
    if (!/^\d+\.json$/.test(name) || typeof ownerPid !== 'number') {
      left.push(`${name} (unreadable)`);
      continue;
    }
    if (!pidAlive(ownerPid)) left.push(`${name} (run pid ${ownerPid} is gone)`);
  }
  if (left.length === 0) return [];
  return [
    {
      check: 'locks.processes',
      status: 'warn',
      message: `${rel}/ holds ${left.length} process record(s) of a run that was killed: ${left.join(', ')}`,
      path: rel,
      fix: {
        kind: 'control-plane',
        description: 'the next ralph start ends those process groups (if still running) and removes the records',
      },
    },
  ];
}

/**
 * Lock files in .ralph/locks/ whose owner (JSON with `pid` and `host`) is a dead process on
 * this host, and the process ledger's records of dead runs. Reported, not removed here: the
 * store takes a dead writer's lock over with an event (the control plane's job).
 */
export async function checkLocks(projectDir: string, host: string = os.hostname()): Promise<Finding[]> {
  const locksRel = `${RALPH_DIR}/locks`;
  const findings: Finding[] = [];
  for (const name of await listDir(path.join(projectDir, locksRel))) {
    const rel = `${locksRel}/${name}`;
    if (name === PROCESS_LEDGER_DIR && (await isDir(path.join(projectDir, rel)))) {
      findings.push(...(await checkProcessLedger(projectDir, rel)));
      continue;
    }
    const owner = await readOwner(path.join(projectDir, rel));
    if (!owner || typeof owner.pid !== 'number') {
      findings.push({ check: 'locks.unreadable', status: 'warn', message: `${rel} has no readable owner`, path: rel });
      continue;
    }
    if (owner.host !== undefined && owner.host !== host) {
      findings.push({
        check: 'locks.remote',
        status: 'warn',
        message: `${rel} is held by pid ${owner.pid} on another host (${String(owner.host)})`,
        path: rel,
      });
      continue;
    }
    if (!pidAlive(owner.pid)) {
      findings.push({
        check: 'locks.stale',
        status: 'fail',
        message: `${rel} is held by pid ${owner.pid}, which is not running`,
        path: rel,
        fix: { kind: 'control-plane', description: 'the store takes the lock over (with an event) when a writer opens it' },
      });
    }
  }
  return findings.length ? findings : [ok('locks', 'no stale locks')];
}

/** Patches waiting in commits/pending/, and proposals not yet processed (invalid ones named). */
export async function checkQueues(projectDir: string): Promise<Finding[]> {
  const findings: Finding[] = [];
  const pendingRel = `${RALPH_DIR}/commits/pending`;
  // A closed patch's file moves to commits/applied/ or commits/discarded/ (older runs left it
  // here with a copy in applied/: done, not queued). Which of the others are queued only the
  // store knows (repair's store checks replace this count when it exists).
  const applied = new Set(await listDir(path.join(projectDir, RALPH_DIR, 'commits', 'applied')));
  const patches = (await listDir(path.join(projectDir, pendingRel))).filter((f) => f.endsWith('.patch') && !applied.has(f));
  findings.push(
    patches.length
      ? {
          check: 'patches.pending',
          status: 'warn',
          message: `${patches.length} patch file(s) in ${pendingRel}/ not yet promoted (queued, or discarded)`,
          fix: { kind: 'control-plane', description: 'the loop applies or discards them' },
        }
      : ok('patches.pending', 'no queued patches'),
  );

  const propRel = `${RALPH_DIR}/proposals`;
  const proposals = (await listDir(path.join(projectDir, propRel))).filter((f) => /^prop_.*\.json$/.test(f));
  for (const f of proposals) {
    const rel = `${propRel}/${f}`;
    let problem: string | undefined;
    try {
      const st = await fs.stat(path.join(projectDir, rel));
      // The same rules as process-proposals (domain/proposals), so repair's verdict is its verdict.
      if (st.size > MAX_PROPOSAL_BYTES) problem = `${rel}: ${st.size} bytes; a proposal file is at most ${MAX_PROPOSAL_BYTES / 1024} KiB`;
      else {
        const r = parseProposal(await fs.readFile(path.join(projectDir, rel), 'utf8'), rel);
        if (!r.ok) problem = r.error;
      }
    } catch (e) {
      problem = `${rel}: cannot be read (${(e as Error).message})`;
    }
    if (problem) {
      findings.push({
        check: 'proposals.invalid',
        status: 'fail',
        message: problem,
        path: rel,
        fix: { kind: 'control-plane', description: 'process-proposals rejects it with an event and moves it to proposals/rejected/' },
      });
    }
  }
  findings.push(
    proposals.length
      ? {
          check: 'proposals.unprocessed',
          status: 'warn',
          message: `${proposals.length} unprocessed proposal(s) in ${propRel}/`,
          fix: { kind: 'control-plane', description: 'process-proposals' },
        }
      : ok('proposals.unprocessed', 'no unprocessed proposals'),
  );
  return findings;
}
