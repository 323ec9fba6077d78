// Property-based: BACKLOG.md's render and parse are inverse on every backlog the store can
// hold (titles with pipes, backslashes, unicode and markdown, every status and effort,
// waves past the named ones), a render is a fixed point, and any text at all — random
// bytes, mangled renders — parses into rows and problems without throwing, each problem
// at a line of the file. Seeds: RALPH_PROPERTY_SEED replays a failure fast-check reports.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseBacklog, renderBacklog } from '../../../src/domain/backlog';
import { EFFORTS, TASK_STATUSES, newTask, type Task } from '../../../src/domain/model';
import { MAX_TITLE_LENGTH } from '../../../src/domain/text';
import { count } from '../kit/tally';

const seed = process.env['RALPH_PROPERTY_SEED'] ? Number(process.env['RALPH_PROPERTY_SEED']) : 20261201;
const params = { seed, numRuns: 200 };

const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,12}$/);
// One line of text: no control characters, no U+FFFD, trimmed, not '-' (the empty marker).
const textChar = fc.oneof(
  fc.constantFrom('|', '\\', '`', '*', '#', '-', ' ', ':', '<', '>', '"', "'", 'é', '中', '文', '🙂', '\u00a0'),
  // eslint-disable-next-line no-control-regex -- control characters are what it filters out
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }).filter((c) => !/[\u0000-\u001f\u007f-\u009f\ufffd]/u.test(c)),
);
const line = (max: number): fc.Arbitrary<string> =>
  fc
    .array(textChar, { minLength: 1, maxLength: max })
    .map((cs) => cs.join('').trim())
    .filter((s) => s.length > 0 && s !== '-' && [...s].length <= MAX_TITLE_LENGTH);

const task: fc.Arbitrary<Task> = fc
  .record({
    id,
    title: line(60),
    source: fc.option(line(20), { nil: null }),
    effort: fc.constantFrom(...EFFORTS),
    deps: fc.array(id, { maxLength: 3 }),
    wave: fc.nat({ max: 12 }),
    status: fc.constantFrom(...TASK_STATUSES),
  })
  .map((r) => ({
    ...newTask({ id: r.id, title: r.title, source: r.source ?? '-', effort: r.effort, deps: r.deps.join(','), wave: r.wave }),
    status: r.status,
  }));

const backlog = fc.uniqueArray(task, { selector: (t) => t.task_id, maxLength: 25 });

describe('faults/property: BACKLOG.md parse and render', () => {
  it('given any backlog, then parse(render(tasks)) gives back every task, in wave then id order, without a problem', () => {
    fc.assert(
      fc.property(backlog, (tasks) => {
        count('badInputs');
        const { rows, problems } = parseBacklog(renderBacklog(tasks));
        assert.deepEqual(problems, []);
        const want = [...tasks]
          .sort((a, b) => a.wave - b.wave || (a.task_id < b.task_id ? -1 : a.task_id > b.task_id ? 1 : 0))
          .map((t) => [t.task_id, t.status, t.title, t.source === null || t.source === '' ? '-' : t.source, t.effort, t.deps, t.wave]);
        assert.deepEqual(
          rows.map((r) => [r.id, r.rawStatus, r.title, r.source, r.effort, r.deps, r.wave]),
          want,
        );
      }),
      params,
    );
  });

  it('given any backlog, then rendering what was parsed gives the same text (a fixed point)', () => {
    fc.assert(
      fc.property(backlog, (tasks) => {
        const text = renderBacklog(tasks);
        const again = parseBacklog(text).rows.map((r) => ({
          ...newTask({ id: r.id, title: r.title, source: r.source, effort: r.effort, deps: r.deps, wave: r.wave }),
          status: r.rawStatus as Task['status'],
        }));
        assert.equal(renderBacklog(again), text);
      }),
      params,
    );
  });

  it('given any text (random, or a render with lines cut, doubled, swapped or salted with junk), then parse never throws and every problem names a line of it', () => {
    const mangled = fc
      .tuple(backlog, fc.array(fc.tuple(fc.nat(), fc.constantFrom('cut', 'dup', 'swap', 'junk', 'nul', 'pipe')), { maxLength: 6 }))
      .map(([tasks, edits]) => {
        const lines = renderBacklog(tasks).split('\n');
        for (const [at, what] of edits) {
          const i = at % lines.length;
          if (what === 'cut') lines[i] = (lines[i] ?? '').slice(0, Math.floor((lines[i] ?? '').length / 2));
          else if (what === 'dup') lines.splice(i, 0, lines[i] ?? '');
          else if (what === 'swap') [lines[i], lines[0]] = [lines[0] ?? '', lines[i] ?? ''];
          else if (what === 'junk') lines.splice(i, 0, '\u0001\u00ff\ufffd garbage');
          else if (what === 'nul') lines[i] = `${lines[i] ?? ''}\u0000`;
          else lines[i] = `${lines[i] ?? ''} | extra |`;
        }
        return lines.join('\n');
      });
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 400 }), mangled), (text) => {
        count('badInputs');
        const n = text.split(/\r?\n/).length;
        const r = parseBacklog(text, 'BACKLOG.md');
        for (const p of r.problems) {
          assert.ok(Number.isInteger(p.line) && p.line >= 1 && p.line <= n, `line ${p.line} of ${n}`);
          assert.equal(p.file, 'BACKLOG.md');
          assert.ok(p.message.length > 0);
        }
        for (const row of r.rows) assert.ok(row.line >= 1 && row.line <= n);
        // A row that parsed is one the store can hold: its title is one clean line.
        // eslint-disable-next-line no-control-regex -- control characters are what must not be in it
        for (const row of r.rows) assert.doesNotMatch(row.title, /[\u0000-\u001f\u007f\ufffd]/);
      }),
      { ...params, numRuns: 300 },
    );
  });
});
