// A project with a deferred tier-2 patch, built through the real control plane and a real
// `git diff` patch file: what the Deferred view, the diff provider and the commands act on.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONTROL_PROJECTIONS, controlContext, decideAndAppend, queuePatch, transitionTask } from '../../../src/control';
import { domainEvent } from '../../../src/domain/events';
import { openStore } from '../../../src/store';
import { git, gitRaw } from '../../kit/git';

export interface DeferredProject {
  readonly dir: string;
  readonly ralphDir: string;
  readonly patchId: string;
}

/** A git repo with .ralph/ralph.db holding W1-001, W1-002 (pending) and W2-001 deferred with a two-file patch. */
export async function makeDeferredProject(): Promise<DeferredProject> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-ext-')));
  git(dir, 'init', '-q', '-b', 'main');
  return seedDeferred(dir);
}

/** Adds the three tasks and the deferred patch to an existing repository (a commit and events). */
export async function seedDeferred(dir: string): Promise<DeferredProject> {
  fs.mkdirSync(path.join(dir, 'src', 'auth'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src', 'auth', 'token.js'), 'module.exports = (t) => !!t;\n');
  fs.writeFileSync(path.join(dir, 'README.md'), '# demo\n');
  git(dir, 'add', 'src', 'README.md');
  git(dir, 'commit', '-q', '-m', 'token check, before');
  // The patch: one modified, one added file, as the loop captures it (full index).
  fs.writeFileSync(path.join(dir, 'src', 'auth', 'token.js'), 'module.exports = (t) => typeof t === "string" && t.length > 8;\n');
  fs.writeFileSync(path.join(dir, 'src', 'auth', 'token.test.js'), "require('assert').ok(require('./token')('123456789'));\n");
  git(dir, 'add', 'src');
  const diff = gitRaw(dir, ['diff', '--cached', '--binary', '--full-index', '-M', '--src-prefix=a/', '--dst-prefix=b/']);
  // Back to the committed state, touching only the files of the patch.
  git(dir, 'reset', '-q', 'HEAD', '--', 'src');
  git(dir, 'checkout', '--', 'src/auth/token.js');
  fs.rmSync(path.join(dir, 'src', 'auth', 'token.test.js'));
  const ralphDir = path.join(dir, '.ralph');
  fs.mkdirSync(path.join(ralphDir, 'commits', 'pending'), { recursive: true });
  const patchRel = path.join('.ralph', 'commits', 'pending', 'W2-001.patch');
  fs.writeFileSync(path.join(dir, patchRel), diff);
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
  try {
    const ctx = controlContext(store, { ralphDir, projectDir: dir });
    const task = (id: string, title: string, wave: number): ReturnType<typeof domainEvent> =>
      domainEvent('task.created', id, 'test', { title, source: 'specs/auth.md:3', effort: 'M', deps: '-', wave, provenance: 'spec' });
    await decideAndAppend(ctx, () => ({
      events: [task('W1-001', 'Parse config', 1), task('W1-002', 'Log format', 1), task('W2-001', 'Token check', 2)],
      result: undefined,
    }));
    await transitionTask(ctx, { taskId: 'W2-001', status: 'claimed', actor: 'primary' });
    const patchId = await queuePatch(ctx, { taskId: 'W2-001', patchPath: patchRel, createdBy: 'primary' });
    await transitionTask(ctx, {
      taskId: 'W2-001',
      status: 'deferred',
      actor: 'control_plane',
      payload: { reason: 'touches src/auth/', risk_tier: 2, patch_id: patchId },
    });
    return { dir, ralphDir, patchId };
  } finally {
    await store.close();
  }
}
