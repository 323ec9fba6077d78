// The layers are lint rules (eslint.config.mjs): each test lints one import as if it were
// written in a file of that layer, with the repository's own config, and expects the
// layer's rule to fail it (and an allowed import in the same file to pass). Nothing is
// written to the tree: ESLint is given the text and the path it would have.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { ESLint } from 'eslint';

const root = resolve(__dirname, '..', '..', '..');

async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: resolve(root, filePath) });
  assert.ok(result, 'eslint returned no result');
  const fatal = result.messages.filter((m) => m.fatal);
  assert.deepEqual(fatal, [], 'the scratch file parses');
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('lint: the layers are enforced', function () {
  this.timeout(60_000);

  it('given src/domain/ importing the store, loop or a Node built-in, then lint fails; domain/, shared/ and zod pass', async () => {
    const bad = await restrictedImports(
      'src/domain/scratch.ts',
      [
        "import type { SqlReader } from '../store/types';",
        "import { Loop } from '../loop/loop';",
        "import { readFileSync } from 'node:fs';",
        'export const x = [Loop, readFileSync] as unknown as SqlReader;',
      ].join('\n'),
    );
    assert.equal(bad.length, 3, bad.join('\n'));
    for (const m of bad) assert.match(m, /src\/domain\/ is pure/);
    const good = await restrictedImports(
      'src/domain/scratch.ts',
      [
        "import { z } from 'zod';",
        "import { isId } from './ids';",
        "import { redactText } from '../shared/redaction';",
        'export const x = [z, isId, redactText];',
      ].join('\n'),
    );
    assert.deepEqual(good, []);
  });

  it('given src/ importing test/, then lint fails (test code must not be bundled)', async () => {
    for (const file of ['src/loop/scratch.ts', 'src/extension/scratch.ts', 'src/domain/scratch.ts']) {
      const bad = await restrictedImports(file, "import { waitUntil } from '../../test/kit/wait';\nexport const x = waitUntil;\n");
      assert.ok(
        bad.some((m) => /Nothing in src\/ imports test\//.test(m)),
        `${file}: ${bad.join('; ')}`,
      );
    }
  });

  it('given vscode imported outside src/extension/, then lint fails; inside it passes', async () => {
    const code = "import * as vscode from 'vscode';\nexport const x = vscode;\n";
    const bad = await restrictedImports('src/control/scratch.ts', code);
    assert.ok(
      bad.some((m) => /Only src\/extension\/ may import vscode/.test(m)),
      bad.join('; '),
    );
    assert.deepEqual(await restrictedImports('src/extension/scratch.ts', code), []);
  });

  it('given webview-ui/ importing src/ other than protocol/, then lint fails; protocol/ passes', async () => {
    const bad = await restrictedImports(
      'webview-ui/scratch.ts',
      "import { openStore } from '../src/store/open';\nexport const x = openStore;\n",
    );
    assert.ok(
      bad.some((m) => /of src\/ it imports only protocol\//.test(m)),
      bad.join('; '),
    );
    assert.deepEqual(
      await restrictedImports(
        'webview-ui/scratch.ts',
        "import type { HostToWebview } from '../src/protocol/monitor.js';\nexport type X = HostToWebview;\n",
      ),
      [],
    );
  });

  it('given src/control/ importing the loop, the CLI or project/ beyond the config module, then lint fails; the config module passes', async () => {
    const bad = await restrictedImports(
      'src/control/scratch.ts',
      [
        "import { Loop } from '../loop/loop';",
        "import { runDemo } from '../cli/demo';",
        "import { initProject } from '../project/init';",
        'export const x = [Loop, runDemo, initProject];',
      ].join('\n'),
    );
    assert.equal(bad.length, 3, bad.join('\n'));
    for (const m of bad) assert.match(m, /src\/control\/ imports only/);
    const good = await restrictedImports(
      'src/control/scratch.ts',
      [
        "import { requireConfig } from '../project/config';",
        "import { openProjectStore } from '../store/open';",
        "import { isId } from '../domain/ids';",
        "import { controlContext } from './context';",
        'export const x = [requireConfig, openProjectStore, isId, controlContext];',
      ].join('\n'),
    );
    assert.deepEqual(good, []);
  });

  it('given the config module importing control/ or the rest of project/, then lint fails; its parsers pass', async () => {
    const bad = await restrictedImports(
      'src/project/config.ts',
      [
        "import { openControl } from '../control/open';",
        "import { initProject } from './init';",
        'export const x = [openControl, initProject];',
      ].join('\n'),
    );
    assert.equal(bad.length, 2, bad.join('\n'));
    for (const m of bad) assert.match(m, /The config module/);
    const good = await restrictedImports(
      'src/project/config.ts',
      [
        "import { parseJsonWithPositions } from './jsonPositions';",
        "import { DEFAULT_RISK_PATTERNS } from '../domain/risk';",
        'export const x = [parseJsonWithPositions, DEFAULT_RISK_PATTERNS];',
      ].join('\n'),
    );
    assert.deepEqual(good, []);
  });

  it('given src/session/ importing src/extension/ or vscode, then lint fails; control/ and shared/ pass', async () => {
    const bad = await restrictedImports(
      'src/session/scratch.ts',
      ["import { Views } from '../extension/ids';", "import * as vscode from 'vscode';", 'export const x = [Views, vscode];'].join('\n'),
    );
    assert.equal(bad.length, 2, bad.join('\n'));
    assert.ok(
      bad.some((m) => /src\/session\/ is host-neutral/.test(m)),
      bad.join('; '),
    );
    const good = await restrictedImports(
      'src/session/scratch.ts',
      [
        "import { allTasks } from '../control';",
        "import { Emitter } from '../shared/emitter';",
        "import { HUMAN_ACTOR } from './names';",
        'export const x = [allTasks, Emitter, HUMAN_ACTOR];',
      ].join('\n'),
    );
    assert.deepEqual(good, []);
  });
});
