// Our TextMate grammars inside the real VS Code: BACKLOG.md rows get the injected scopes (seen
// through "Developer: Inspect Editor Tokens and Scopes"), files under .ralph/logs/ open as
// Ralph Log, and screenshots show the colours of Default Dark Modern.
// The grammars are contributed by a throw-away extension folder with the manifest entries
// package.json uses (taken from package.json once it contributes them).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Session } from './harness';
import { makeGitRepo, repoRoot, startSession } from './harness';

/** The manifest entries recommended for package.json (kept identical to the report to the lead). */
export const grammarContributions = {
  languages: [
    {
      id: 'ralph-log',
      aliases: ['Ralph Log', 'ralph-log'],
      extensions: ['.ralph.log'],
      filenamePatterns: ['**/.ralph/logs/*.log'],
    },
  ],
  grammars: [
    { language: 'ralph-log', scopeName: 'text.ralph-log', path: './syntaxes/ralph-log.tmLanguage.json' },
    {
      scopeName: 'ralph-backlog.markdown.injection',
      path: './syntaxes/ralph-backlog.injection.tmLanguage.json',
      injectTo: ['text.html.markdown'],
    },
  ],
};

interface Manifest {
  contributes?: { languages?: Array<{ id: string }>; grammars?: Array<{ scopeName: string }> };
}

/** package.json's own entries when it has them, else the recommended ones. */
function contributionsInUse(): typeof grammarContributions {
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as Manifest;
  const grammars = pkg.contributes?.grammars?.filter((g) => g.scopeName.includes('ralph')) ?? [];
  const languages = pkg.contributes?.languages?.filter((l) => l.id === 'ralph-log') ?? [];
  return grammars.length === 2 && languages.length === 1
    ? ({ languages, grammars } as unknown as typeof grammarContributions)
    : grammarContributions;
}

function makeGrammarExtension(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-e2e-grammars-')));
  fs.cpSync(path.join(repoRoot, 'syntaxes'), path.join(dir, 'syntaxes'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name: 'ralph-grammars-probe',
      publisher: 'ralph-e2e',
      version: '0.0.1',
      engines: { vscode: '^1.100.0' },
      contributes: contributionsInUse(),
    }),
  );
  return dir;
}

const BACKLOG = `# BACKLOG

## Wave 2: Core Features

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| W2-001 | done | Create shared helpers | ES:59 | S | - |
| W2-007 | claimed | Parse the config file | ES:33 | M | W2-001 |
| W2-008 | pending | Add test suite | ES:35 | M | W2-007 |
| W2-009 | proposed | Cache the index | ES:36 | S | - |
| W2-010 | deferred | Rotate auth tokens | ES:30 | L | W2-001, W2-007 |
| W2-011 | blocked | Migrate the schema | ES:67 | XL | - |
| W2-012 | dropped | Old idea | - | S | - |
`;

const LOG = `2026-11-29T17:31:14.123Z INFO  primary   phase.changed assess -> plan W2-008
2026-11-29T17:31:15.002Z INFO  worker-1  task.claimed W2-009 "Cache the index"
2026-11-29T17:32:40.517Z WARN  worker-1  gate.failed W2-009 gate=test duration=12.3s
2026-11-29T17:33:02.900Z INFO  control_plane patch.promoted patch_W2-001_20261129T173302 commit 3f2a9c1e
2026-11-29T17:33:05.114Z INFO  judge     judge.verdict W2-010 verdict=approve cost=$0.0421
2026-11-29T17:34:10.000Z ERROR primary   agent.crashed W2-008 exit=137 after 1m23.5s
2026-11-29T17:35:00.000Z INFO  human     task.deferral_resolved W2-010 verdict=reject
`;

describe('e2e: grammars in VS Code 1.100.3', function () {
  this.timeout(180_000);
  let session: Session | undefined;
  let repo: string;
  let ext: string;

  before(async () => {
    repo = await makeGitRepo({ '.ralph/BACKLOG.md': BACKLOG, '.ralph/logs/ralph.log': LOG, 'README.md': '# demo\n' });
    ext = makeGrammarExtension();
    session = await startSession(repo, { payload: (server) => [['extensionDevelopmentPath', server.remoteUri(ext)]] });
  });

  after(async () => {
    await session?.dispose();
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(ext, { recursive: true, force: true });
  });

  /** Puts the cursor inside `fragment` on 1-based `line` of `text` and reads the inspector's scopes. */
  async function scopesAt(doc: string, line: number, fragment: string): Promise<string> {
    const wb = session!.workbench;
    const at = doc.split('\n')[line - 1]?.indexOf(fragment) ?? -1;
    assert.ok(at >= 0, `"${fragment}" is not on line ${line}`);
    await wb.goToLine(line, at + 2);
    await wb.runCommand('Developer: Inspect Editor Tokens and Scopes');
    const widget = wb.page.locator('.token-inspect-widget');
    await widget.locator('.tiw-metadata-scopes').waitFor();
    const text = await widget.innerText();
    await wb.page.keyboard.press('Escape');
    await widget.waitFor({ state: 'hidden' });
    return text;
  }

  it('given .ralph/BACKLOG.md, then statuses and task ids carry the injected scopes', async () => {
    const wb = session!.workbench;
    await wb.openFile('.ralph/BACKLOG.md');
    assert.match(await scopesAt(BACKLOG, 7, 'done'), /markup\.inserted\.status\.done\.ralph-backlog/);
    assert.match(await scopesAt(BACKLOG, 12, 'blocked'), /invalid\.illegal\.status\.blocked\.ralph-backlog/);
    assert.match(await scopesAt(BACKLOG, 8, 'W2-007'), /variable\.other\.constant\.task-id\.ralph-backlog/);
    await wb.page
      .locator('.part.editor .monaco-editor')
      .first()
      .click({ position: { x: 5, y: 5 } });
    await wb.screenshot('grammar-backlog');
  });

  it('given .ralph/logs/ralph.log, then it opens as Ralph Log and its actors and events are scoped', async () => {
    const wb = session!.workbench;
    await wb.openFile('.ralph/logs/ralph.log');
    await wb.statusBarItem('status.editor.mode').filter({ hasText: 'Ralph Log' }).waitFor();
    assert.match(await scopesAt(LOG, 2, 'worker-1'), /entity\.name\.type\.actor\.worker\.ralph-log/);
    assert.match(await scopesAt(LOG, 4, 'patch.promoted'), /keyword\.other\.event\.ralph-log/);
    await wb.screenshot('grammar-log');
  });
});
