// The BACKLOG.md injection, tokenized inside VS Code 1.100.3's own Markdown grammar.
import * as assert from 'node:assert/strict';
import type { Token } from './grammarKit';
import { dump, ralphScopes, scopesOf, tokenize } from './grammarKit';

const MD = 'text.html.markdown';

function assertScope(tokens: readonly Token[], fragment: string, scope: string, nth = 0): void {
  const scopes = scopesOf(tokens, fragment, nth);
  assert.ok(scopes.includes(scope), `"${fragment}" should have ${scope}; tokens:\n${dump(tokens)}`);
}

async function line(text: string, index = 0): Promise<Token[]> {
  const lines = await tokenize(MD, text);
  const tokens = lines[index];
  if (tokens === undefined) throw new Error(`no line ${index}`);
  return tokens;
}

const HEADER = '| ID | Status | Title | Source | Effort | Deps |\n|----|--------|-------|--------|--------|------|\n';

describe('syntaxes: BACKLOG.md injection into Markdown', () => {
  describe('wave headers', () => {
    it('given "## Wave 2: Core Features", then Wave, the number and the title get their scopes and stay a heading', async () => {
      const t = await line('## Wave 2: Core Features');
      assertScope(t, '##', 'punctuation.definition.heading.markdown');
      assertScope(t, 'Wave', 'keyword.other.wave.ralph-backlog');
      assertScope(t, '2', 'constant.numeric.wave.ralph-backlog');
      assertScope(t, 'Core Features', 'string.unquoted.wave-title.ralph-backlog');
      assertScope(t, 'Core Features', 'markup.heading.markdown');
      assertScope(t, 'Core Features', 'entity.name.section.markdown');
    });

    it('given a high wave without a title ("## Wave 12"), then it is still a wave header', async () => {
      const t = await line('## Wave 12');
      assertScope(t, '12', 'constant.numeric.wave.ralph-backlog');
    });

    it('given other headings, then they are plain Markdown headings', async () => {
      for (const h of ['# BACKLOG', '## Waves of change', '### Wave 2: Nested']) {
        const t = await line(h);
        assert.deepEqual(ralphScopes(t), [], `${h}:\n${dump(t)}`);
        assertScope(t, h.replace(/^#+ /, ''), 'entity.name.section.markdown');
      }
    });
  });

  describe('task rows', () => {
    const statuses: Array<[string, string]> = [
      ['pending', 'variable.other.status.pending.ralph-backlog'],
      ['claimed', 'entity.name.function.status.claimed.ralph-backlog'],
      ['proposed', 'entity.name.type.status.proposed.ralph-backlog'],
      ['done', 'markup.inserted.status.done.ralph-backlog'],
      ['deferred', 'markup.changed.status.deferred.ralph-backlog'],
      ['blocked', 'invalid.illegal.status.blocked.ralph-backlog'],
      ['dropped', 'markup.strikethrough.status.dropped.ralph-backlog'],
      ['in_progress', 'invalid.deprecated.status.legacy.ralph-backlog'],
    ];
    for (const [status, scope] of statuses) {
      it(`given a row with status ${status}, then the status gets ${scope}`, async () => {
        const t = await line(`${HEADER}| W2-014 | ${status} | Do a thing | ES:30 | M | - |`, 2);
        assertScope(t, status, scope);
        assertScope(t, status, 'meta.table.row.task.ralph-backlog');
      });
    }

    it('given each status, then all seven statuses get different scopes', async () => {
      const names = new Set(statuses.slice(0, 7).map(([, s]) => s.split('.').slice(0, -2).join('.')));
      assert.equal(names.size, 7);
    });

    it('given the seed example row, then id, title, source, effort and deps are scoped', async () => {
      const t = await line(`${HEADER}| W2-008 | pending | Add test suite for W2-001 | ES:35 | M | W2-007, W2-001 |`, 2);
      assertScope(t, 'W2-008', 'variable.other.constant.task-id.ralph-backlog');
      assertScope(t, 'Add test suite for ', 'meta.cell.title.ralph-backlog');
      assertScope(t, 'W2-001', 'variable.other.constant.task-id.ralph-backlog', 0); // mentioned in the title
      assertScope(t, 'ES:35', 'string.unquoted.source.ralph-backlog');
      assertScope(t, ' M ', 'constant.language.effort.m.ralph-backlog');
      assertScope(t, 'W2-007', 'variable.other.constant.task-id.ralph-backlog');
      assertScope(t, 'W2-007', 'meta.cell.deps.ralph-backlog');
      assertScope(t, ',', 'punctuation.separator.comma.ralph-backlog');
      assertScope(t, 'W2-001', 'meta.cell.deps.ralph-backlog', 1);
      assertScope(t, '|', 'punctuation.definition.table.markdown');
    });

    for (const [effort, scope] of [
      ['S', 'constant.language.effort.s.ralph-backlog'],
      ['M', 'constant.language.effort.m.ralph-backlog'],
      ['L', 'constant.language.effort.l.ralph-backlog'],
      ['XL', 'constant.language.effort.xl.ralph-backlog'],
    ] as const) {
      it(`given effort ${effort}, then it gets ${scope}`, async () => {
        const t = await line(`| T-001 | done | x | - | ${effort} | - |`);
        assertScope(t, ` ${effort} `, scope);
      });
    }

    it('given empty cells written as "-", then they are dimmed as empty', async () => {
      const t = await line('| REQ-003 | blocked | Needs a key | - | S | - |');
      assertScope(t, 'REQ-003', 'variable.other.constant.task-id.ralph-backlog');
      assertScope(t, '-', 'comment.other.empty.ralph-backlog', 1);
      assertScope(t, '-', 'comment.other.empty.ralph-backlog', 2);
    });

    it('given Markdown inside a title, then the inline Markdown is still tokenized', async () => {
      const t = await line('| T-002 | pending | Fix `parse()` in **core** | specs/a.md | S | T-001 |');
      assertScope(t, 'parse()', 'markup.inline.raw.string.markdown');
      assertScope(t, 'core', 'markup.bold.markdown');
      assertScope(t, 'specs/a.md', 'string.unquoted.source.ralph-backlog');
    });

    it('given an escaped pipe inside the title, then the row still has six cells', async () => {
      const t = await line('| T-003 | done | Split a \\| b | - | S | - |');
      assertScope(t, 'Split a', 'meta.cell.title.ralph-backlog');
      assertScope(t, 'S', 'constant.language.effort.s.ralph-backlog', 1);
    });
  });

  describe('ordinary Markdown is left alone', () => {
    const untouched: Array<[string, string]> = [
      ['prose with status words and ids', 'The task W2-014 is done and nothing is blocked or pending.'],
      ['a table of another shape', '| Name | Value |\n|---|---|\n| W2-014 | done |'],
      ['a six-column table whose second column is not a status', '| A-1 | yes | t | s | S | - |'],
      ['a row whose first cell is not a task id', '| ID | done | t | s | S | - |'],
      ['a row with a seventh cell', '| T-001 | done | t | s | S | - | extra |'],
      ['a backlog row inside a fenced code block', '```\n| W2-001 | done | t | s | S | - |\n```'],
      ['a backlog row inside an indented code block', '    | W2-001 | done | t | s | S | - |'],
    ];
    for (const [what, text] of untouched) {
      it(`given ${what}, then no Ralph scope appears`, async () => {
        const lines = await tokenize(MD, text);
        for (const t of lines) assert.deepEqual(ralphScopes(t), [], dump(t));
      });
    }
  });
});
