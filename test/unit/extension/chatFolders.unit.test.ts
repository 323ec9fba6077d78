// Which folder's loop a chat request addresses in a multi-root window (chat/folders.ts): the
// named one, the only one with a Ralph project, the one holding the task, the one whose loop
// can take the verb, the active editor's; otherwise a question naming the candidates.
import * as assert from 'node:assert/strict';
import { chooseFolder, folderToken, takeFolder, type ChatFolder } from '../../../src/extension/chat/folders';

const folder = (
  name: string,
  o: { tasks?: string[]; loop?: 'running' | 'paused' | 'stopped'; initialized?: boolean } = {},
): ChatFolder => ({
  name,
  projectDir: `/ws/${name}`,
  initialized: o.initialized ?? true,
  loopState: () => o.loop ?? 'stopped',
  hasTask: (id) => Promise.resolve((o.tasks ?? []).includes(id)),
});

describe('chat: which folder a request addresses', () => {
  const api = folder('api', { tasks: ['W1-001', 'SHARED-1'], loop: 'running' });
  const web = folder('web', { tasks: ['W2-001', 'SHARED-1'], loop: 'paused' });
  const two = [api, web];

  it('takes folder:<name> (bare or quoted) out of the prompt', () => {
    assert.deepEqual(takeFolder('W1-001 folder:api looks fine'), { prompt: 'W1-001 looks fine', named: 'api' });
    assert.deepEqual(takeFolder('folder:"my app" why'), { prompt: 'why', named: 'my app' });
    assert.deepEqual(takeFolder('no folder here'), { prompt: 'no folder here' });
    assert.equal(folderToken('api'), 'folder:api');
    assert.equal(folderToken('my app'), 'folder:"my app"');
  });

  it('a named folder wins (by name or directory name, any case); an unknown name says which folders there are', async () => {
    assert.equal(((await chooseFolder(two, { named: 'WEB', activeDir: '/ws/api/x.ts' })) as { folder: ChatFolder }).folder, web);
    const none = await chooseFolder(two, { named: 'db' });
    assert.equal(none.kind, 'none');
    assert.match((none as { message: string }).message, /no folder named "db"; its Ralph folders are api, web/);
  });

  it('one folder with a Ralph project is the one, whatever else the window holds', async () => {
    const c = await chooseFolder([api, folder('docs', { initialized: false })], {});
    assert.deepEqual([c.kind, (c as { folder?: ChatFolder }).folder?.name], ['folder', 'api']);
  });

  it('the folder that holds the task; a task in none is a clear refusal; in both, the active editor decides or it asks', async () => {
    assert.equal(((await chooseFolder(two, { taskId: 'W2-001', activeDir: '/ws/api/a.ts' })) as { folder: ChatFolder }).folder, web);
    assert.match(
      ((await chooseFolder(two, { taskId: 'NOPE-1' })) as { message: string }).message,
      /No folder of this window \(api, web\) has a task NOPE-1/,
    );
    assert.equal(((await chooseFolder(two, { taskId: 'SHARED-1', activeDir: '/ws/web/src/a.ts' })) as { folder: ChatFolder }).folder, web);
    const ask = await chooseFolder(two, { taskId: 'SHARED-1' });
    assert.equal(ask.kind, 'ask');
    assert.match(
      (ask as { question: string }).question,
      /^Which folder\? 2 folders of this window hold SHARED-1: \*\*api\*\*, \*\*web\*\*/,
    );
  });

  it('a loop verb goes to the one folder whose loop can take it; none is a refusal', async () => {
    assert.equal(((await chooseFolder(two, { verb: 'pause', activeDir: '/ws/web' })) as { folder: ChatFolder }).folder, api);
    assert.equal(((await chooseFolder(two, { verb: 'resume' })) as { folder: ChatFolder }).folder, web);
    const both = [api, folder('web', { loop: 'running' })];
    assert.equal((await chooseFolder(both, { verb: 'stop' })).kind, 'ask');
    const idle = [folder('a'), folder('b')];
    assert.match(
      ((await chooseFolder(idle, { verb: 'stop' })) as { message: string }).message,
      /No loop is running in any folder of this window \(a, b\)/,
    );
  });

  it('nothing says which: the active editor (the deepest folder containing it), else a question', async () => {
    const nested = folder('inner');
    const outer = folder('ws');
    const ws = [
      { ...outer, projectDir: '/ws' },
      { ...nested, projectDir: '/ws/inner' },
    ];
    assert.equal(((await chooseFolder(ws, { activeDir: '/ws/inner/x.ts' })) as { folder: ChatFolder }).folder.name, 'inner');
    assert.equal(((await chooseFolder(two, { activeDir: '/ws/apiary/x.ts' })) as { kind: string }).kind, 'ask');
    const ask = await chooseFolder(two, {});
    assert.deepEqual(
      (ask as { folders: readonly ChatFolder[] }).folders.map((f) => f.name),
      ['api', 'web'],
    );
    assert.match((ask as { question: string }).question, /have a Ralph project: \*\*api\*\*, \*\*web\*\*\. Say it with `folder:api`/);
    assert.equal((await chooseFolder([], {})).kind, 'none');
  });
});
