// Property-based: the id grammar (src/domain/ids.ts) on arbitrary strings — separators,
// dots, spaces, NUL and other control characters, unicode, long runs. An id is what the
// grammar says and nothing else; a valid id is one path component that stays in the folder
// it is joined to, as are the file names made of ids; and every entry point agrees with
// the grammar (proposals, BACKLOG.md rows, inbox commands, the events the domain builds).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import { ID_MAX_LENGTH, InvalidIdError, checkId, idFileName, isId } from '../../../src/domain/ids';
import { domainEvent } from '../../../src/domain/events';
import { parseProposal } from '../../../src/domain/proposals';
import { parseBacklog } from '../../../src/domain/backlog';
import { inboxCommandSchema } from '../../../src/control/inbox';
import { count } from '../kit/tally';

const seed = process.env['RALPH_PROPERTY_SEED'] ? Number(process.env['RALPH_PROPERTY_SEED']) : 20261201;
const params = { seed, numRuns: 400 };

/** The grammar written out once more, independently: the oracle. */
const ORACLE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,${ID_MAX_LENGTH - 1}}$`);

const hostile = fc.constantFrom(
  '/',
  '\\',
  '.',
  '..',
  ' ',
  '\u0000',
  '\n',
  '\r',
  '\t',
  '\u001b',
  '\u007f',
  ':',
  '|',
  '*',
  '?',
  '~',
  'é',
  '中',
  '🙂',
  '\u202e',
  '%2e',
  '$(x)',
);
const plain = fc.constantFrom('W', '1', '-', '_', '.', 'a', 'Z', '0', '9');
const candidate = fc.oneof(
  fc.array(fc.oneof(plain, plain, hostile), { minLength: 0, maxLength: 12 }).map((cs) => cs.join('')),
  fc.string({ maxLength: 20 }),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/),
  fc.integer({ min: ID_MAX_LENGTH - 2, max: ID_MAX_LENGTH + 2 }).map((n) => `W${'1'.repeat(n - 1)}`),
);

describe('faults/property: the id grammar', () => {
  it('given any string, then it is an id exactly when the grammar says so, and checkId refuses the rest with InvalidIdError', () => {
    fc.assert(
      fc.property(candidate, (s) => {
        count('badInputs');
        const want = ORACLE.test(s);
        assert.equal(isId(s, 'task'), want, JSON.stringify(s));
        if (want) assert.equal(checkId('task', s), s);
        else
          assert.throws(
            () => checkId('task', s, 'the test'),
            (e: unknown) => e instanceof InvalidIdError && e.message.startsWith('the test: invalid task id'),
          );
      }),
      params,
    );
  });

  it('given any valid id, then it is one path component that stays inside the folder it is joined to, and so is a file name made of ids', () => {
    fc.assert(
      fc.property(
        candidate.filter((s) => ORACLE.test(s)),
        fc.nat(99),
        (id, n) => {
          const base = path.join(path.sep, 'project', '.ralph', 'commits', 'pending');
          const joined = path.join(base, id);
          assert.equal(path.dirname(joined), base, id);
          assert.equal(path.basename(joined), id);
          const name = idFileName([['task', id], ['agent', 'worker-1'], n], '.patch');
          assert.equal(path.dirname(path.join(base, name)), base, name);
          assert.equal(path.basename(name), name);
        },
      ),
      params,
    );
  });

  it('given any string among the parts of a file name, then idFileName refuses it unless it is an id', () => {
    fc.assert(
      fc.property(candidate, (s) => {
        count('badInputs');
        if (ORACLE.test(s)) assert.ok(idFileName([['task', s]], '.json').endsWith('.json'));
        else assert.throws(() => idFileName([['task', s]], '.json'), InvalidIdError);
      }),
      params,
    );
  });

  it('given any string as a task id, then proposals, BACKLOG.md rows, inbox commands and domain events accept it exactly when it is an id', () => {
    fc.assert(
      fc.property(candidate, (s) => {
        count('badInputs', 4);
        const want = ORACLE.test(s);
        const p = parseProposal(
          JSON.stringify({ proposal_type: 'new_task', confidence: 0.9, task: { id: s, title: 't', effort: 'S', wave: 0 } }),
          'proposals/p.json',
        );
        assert.equal(p.ok, want, `proposal ${JSON.stringify(s)}: ${p.ok ? 'accepted' : p.error}`);

        const inbox = inboxCommandSchema().safeParse({
          command: 'add-task',
          actor: 'human',
          task: { id: s, title: 't', effort: 'S', wave: 0 },
        });
        assert.equal(inbox.success, want, `inbox ${JSON.stringify(s)}`);

        let built = true;
        try {
          domainEvent('task.created', s, 'test', { title: 't', source: '-', effort: 'S', deps: '-', wave: 0, provenance: 'spec' });
        } catch {
          built = false;
        }
        assert.equal(built, want, `event ${JSON.stringify(s)}`);

        // A table cell cannot hold a line break or an unescaped pipe: those break the row itself.
        if (!/[|\r\n]/.test(s)) {
          const cell = s.trim();
          const r = parseBacklog(
            `## Wave 0\n\n| ID | Status | Title | Source | Effort | Deps |\n|---|---|---|---|---|---|\n| ${s} | pending | t | - | S | - |\n`,
          );
          const accepted = r.rows.some((row) => row.id === cell);
          assert.equal(accepted, ORACLE.test(cell), `BACKLOG.md ${JSON.stringify(s)}: ${JSON.stringify(r.problems)}`);
          for (const row of r.rows) assert.ok(ORACLE.test(row.id));
        }
      }),
      params,
    );
  });
});
