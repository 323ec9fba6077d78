// BACKLOG.md: the reference table format, parse <-> render, problems reported by line.
import assert from 'node:assert/strict';
import { importStatus, parseBacklog, renderBacklog, skeletonBacklog, waveHeading } from '../../../src/domain/backlog';
import { newTask } from '../../../src/domain/model';

const SAMPLE = `# BACKLOG

## Wave 0: Critical Fixes & Foundation

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| W0-001 | done | Create shared helpers | ES:59 | S | - |
| W0-002 | in_progress | Pipe \\| in title |  | m | W0-001 |

## Wave 2: Core Features

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| W2-008 | pending | Add test suite | ES:35 | M | W2-007 |
`;

describe('domain/backlog', () => {
  it('parses rows with their wave, normalized effort, `-` for empty cells and \\| escapes', () => {
    const { rows, problems } = parseBacklog(SAMPLE);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      rows.map((r) => [r.id, r.rawStatus, r.title, r.source, r.effort, r.deps, r.wave, r.line]),
      [
        ['W0-001', 'done', 'Create shared helpers', 'ES:59', 'S', '-', 0, 7],
        ['W0-002', 'in_progress', 'Pipe | in title', '-', 'M', 'W0-001', 0, 8],
        ['W2-008', 'pending', 'Add test suite', 'ES:35', 'M', 'W2-007', 2, 14],
      ],
    );
  });

  it('reports malformed rows with file and line, never dropping them silently', () => {
    const text = `## Wave 1\n| ID | Status | Title | Source | Effort | Deps |\n|---|---|---|---|---|---|\n| W1-001 | pending | ok | - | S | - |\n| W1-002 | pending | five cells | S | - |\n| W1-001 | pending | dup | - | S | - |\n| W1-003 | pending | effort | - | huge | - |\n`;
    const { rows, problems } = parseBacklog(text, '.ralph/BACKLOG.md');
    assert.equal(rows.length, 1);
    assert.deepEqual(
      problems.map((p) => `${p.file}:${p.line}`),
      ['.ralph/BACKLOG.md:5', '.ralph/BACKLOG.md:6', '.ralph/BACKLOG.md:7'],
    );
    assert.match(problems[0]?.message ?? '', /5 cells, expected 6/);
    assert.match(problems[1]?.message ?? '', /duplicate task id W1-001 \(first on line 4\)/);
  });

  it('maps statuses on import: in_progress/implemented/tested/planned/unknown -> pending; done without a patch -> pending with a note', () => {
    for (const s of ['in_progress', 'implemented', 'tested', 'planned']) assert.deepEqual(importStatus(s), { status: 'pending' });
    assert.equal(importStatus('weird').status, 'pending');
    assert.ok(importStatus('weird').note);
    assert.equal(importStatus('done').status, 'pending');
    assert.match(importStatus('done').note ?? '', /no promoted patch/);
    assert.deepEqual(importStatus('blocked'), { status: 'blocked' });
  });

  it('renders the reference format: waves in order, rows by id, `-` for empty', () => {
    const tasks = [
      { ...newTask({ id: 'W1-002', title: 'b', effort: 'S', wave: 1 }), source: null },
      { ...newTask({ id: 'W1-001', title: 'a | b', source: 'ES:1', effort: 'M', wave: 1, deps: 'W0-001' }), status: 'done' as const },
      newTask({ id: 'W12-001', title: 'far', source: 'ES:2', effort: 'S', wave: 12 }),
    ];
    assert.equal(
      renderBacklog(tasks),
      [
        '# BACKLOG',
        '',
        '## Wave 1',
        '',
        '| ID | Status | Title | Source | Effort | Deps |',
        '|----|--------|-------|--------|--------|------|',
        '| W1-001 | done | a \\| b | ES:1 | M | W0-001 |',
        '| W1-002 | pending | b | - | S | - |',
        '',
        '## Wave 12',
        '',
        '| ID | Status | Title | Source | Effort | Deps |',
        '|----|--------|-------|--------|--------|------|',
        '| W12-001 | pending | far | ES:2 | S | - |',
        '',
      ].join('\n'),
    );
  });

  it('round-trips: render(parse(render(x))) == render(x)', () => {
    const text = renderBacklog([newTask({ id: 'W0-001', title: 'x | y', source: 'ES:1', effort: 'XL', wave: 0, deps: 'A,B' })]);
    const rows = parseBacklog(text).rows;
    const again = renderBacklog(
      rows.map((r) => newTask({ id: r.id, title: r.title, source: r.source, effort: r.effort, wave: r.wave, deps: r.deps })),
    );
    assert.equal(again, text);
  });

  it('heads waves "Wave N", or with the title someone gave it, and has a skeleton with waves 0-2', () => {
    assert.equal(waveHeading(0), '## Wave 0');
    assert.equal(waveHeading(3, 'Search'), '## Wave 3: Search');
    const sk = skeletonBacklog();
    assert.match(sk, /## Wave 2\n/);
    assert.deepEqual(parseBacklog(sk), { rows: [], problems: [], waveTitles: new Map() });
  });

  it('reads the wave titles and renders them back', () => {
    const text = '# BACKLOG\n\n## Wave 0: Critical Fixes & Foundation\n\n## Wave 4 - Polish\n\n## Wave 5\n';
    const { waveTitles } = parseBacklog(text);
    assert.deepEqual(
      [...waveTitles],
      [
        [0, 'Critical Fixes & Foundation'],
        [4, 'Polish'],
      ],
    );
    assert.match(
      renderBacklog([], [0, 4, 5], waveTitles),
      /## Wave 0: Critical Fixes & Foundation[\s\S]*## Wave 4: Polish[\s\S]*## Wave 5\n/,
    );
  });
});
