// Inside the real extension host: the CLI that ships in the extension is on the integrated
// terminal's PATH (the extension's environment variable collection and a launcher in its
// global storage), so `ralph` runs in a VS Code terminal with no npm link and no Node of
// its own. Typed into a real terminal (a shell in a pty), as a user would.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';

const EXTENSION_ID = 'ralph-loop.ralph-loop';

/**
 * Types `command` (one simple command: a group's redirection would also catch what VS Code's
 * shell integration prints around it) into a new terminal; resolves with its output and
 * exit code once the shell wrote them.
 */
async function inTerminal(command: string, dir: string, timeoutMs = 30_000): Promise<{ out: string; code: string }> {
  const out = path.join(dir, `out-${Date.now()}.txt`);
  const rc = path.join(dir, `rc-${Date.now()}.txt`);
  const terminal = vscode.window.createTerminal({ name: 'ralph-path-test' });
  try {
    terminal.sendText(`${command} > '${out}' 2>&1; echo $? > '${rc}.tmp' && mv '${rc}.tmp' '${rc}'`);
    const deadline = Date.now() + timeoutMs;
    while (!fs.existsSync(rc)) {
      if (Date.now() > deadline) throw new Error(`no answer from the terminal to: ${command}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return { out: fs.readFileSync(out, 'utf8'), code: fs.readFileSync(rc, 'utf8').trim() };
  } finally {
    terminal.dispose();
  }
}

describe('exthost: the ralph CLI on the integrated terminal PATH', function () {
  this.timeout(120_000);
  let dir: string;

  before(async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext);
    await ext.activate();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-terminal-'));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('given the active extension in a trusted folder, when `ralph help` is typed into a new terminal, then the shipped CLI answers', async () => {
    // The collection is applied once the launcher is written, just after activation: a
    // terminal opened earlier has the old PATH, so ask again in a new one until it answers.
    let last = { out: '', code: '' };
    for (let attempt = 0; attempt < 20; attempt++) {
      last = await inTerminal('ralph help', dir);
      if (last.code === '0') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(last.code, '0', `ralph did not run in the terminal:\n${last.out}`);
    assert.match(last.out, /Usage: ralph \[--dir D\] <command>/);
    const which = await inTerminal('command -v ralph', dir);
    assert.equal(which.code, '0', which.out);
    const where = which.out.trim();
    assert.ok(!where.includes('node_modules'), `ralph came from ${where}, not the extension`);
    const launcher = fs.readFileSync(where, 'utf8');
    const ext = vscode.extensions.getExtension(EXTENSION_ID)!;
    assert.ok(launcher.includes(path.join(ext.extensionPath, 'dist', 'cli.js')), launcher);
  });

  it('given the workspace folder, when `ralph status --json` runs there, then it reads the project (or says it has none)', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    assert.ok(folder);
    const r = await inTerminal(`ralph --dir '${folder}' status --json`, dir);
    if (fs.existsSync(path.join(folder, '.ralph', 'ralph.db'))) {
      assert.equal(r.code, '0', r.out);
      const status = JSON.parse(r.out) as { eventsTotal: number };
      assert.ok(status.eventsTotal >= 0);
    } else {
      assert.equal(r.code, '4', r.out);
      assert.match(r.out, /no Ralph event store/);
    }
  });
});
