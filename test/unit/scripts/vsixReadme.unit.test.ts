// The changelog the .vsix ships: the headings and each entry's first sentence, nested entries
// and the rest of each entry left for the repository's full CHANGELOG.md.
import { strict as assert } from 'node:assert';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const SCRIPT = pathToFileURL(resolve(__dirname, '..', '..', '..', 'scripts', 'vsix-readme.mjs')).href;

describe('scripts/vsix-readme.mjs: the condensed changelog', () => {
  it('given entries over several lines with nested ones, then each keeps its first sentence under its headings, tests and CI left out', async () => {
    const { condenseChangelog } = (await import(SCRIPT)) as { condenseChangelog: (md: string) => string };
    const full = [
      '# Changelog',
      '',
      '## Unreleased',
      '',
      '### Tests and CI',
      '- The suite runs in parallel. It is faster.',
      '',
      '### Team mode',
      '- The event store on PostgreSQL: the same events, the same',
      '  projections. Appends with optimistic concurrency.',
      '  - a nested detail that stays in the full file',
      '- `ralph store migrate` copies a history (verified event by event)',
      '',
      '### Project',
      '- Skeleton. Bundles and tests.',
      '',
    ].join('\n');
    assert.equal(
      condenseChangelog(full),
      [
        '# Changelog',
        '',
        '## Unreleased',
        '',
        '### Team mode',
        '',
        '- The event store on PostgreSQL: the same events, the same projections.',
        '- `ralph store migrate` copies a history (verified event by event)',
        '',
        '### Project',
        '',
        '- Skeleton.',
        '',
        "Each entry in full, with what was measured and how it is tested: CHANGELOG.md in the project's repository.",
        '',
      ].join('\n'),
    );
  });

  it('given an entry of one long sentence, then it is cut at a word with a mark that it goes on', async () => {
    const { condenseChangelog, SENTENCE_LIMIT } = (await import(SCRIPT)) as {
      condenseChangelog: (md: string) => string;
      SENTENCE_LIMIT: number;
    };
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    const line = condenseChangelog(`## X\n- ${words}\n`)
      .split('\n')
      .find((l) => l.startsWith('- '))!;
    assert.ok(line.length <= 2 + SENTENCE_LIMIT + 2, line);
    assert.ok(line.length > 2 + SENTENCE_LIMIT - 10, line);
    assert.match(line, /^- word0 .* word\d+ …$/);
  });

  it('given a section for servers, then the Extensions view keeps its first paragraph and says where the rest is', async () => {
    const { shortenSections } = (await import(SCRIPT)) as { shortenSections: (md: string, short?: string[]) => string };
    const md = [
      '# R',
      '',
      '## Team',
      '',
      'First paragraph',
      'goes on.',
      '',
      '```sh',
      'x',
      '```',
      '',
      '### Roles',
      '',
      'More.',
      '',
      '## Safety',
      '',
      'Kept.',
      '',
    ].join('\n');
    assert.equal(
      shortenSections(md, ['Team']),
      [
        '# R',
        '',
        '## Team',
        '',
        'First paragraph',
        'goes on.',
        '',
        '*(The rest of "Team" is in the project\'s README.)*',
        '',
        '## Safety',
        '',
        'Kept.',
        '',
      ].join('\n'),
    );
    assert.equal(shortenSections(md, []), md);
  });

  it('given a section of many entries, then its newest are kept and the rest counted', async () => {
    const { condenseChangelog, ENTRY_LIMIT } = (await import(SCRIPT)) as { condenseChangelog: (md: string) => string; ENTRY_LIMIT: number };
    const entries = Array.from({ length: ENTRY_LIMIT + 3 }, (_, i) => `- Entry ${i}. More.`);
    const out = condenseChangelog(['## A', ...entries, '', '## B', '- Only one.', ''].join('\n')).split('\n');
    const a = out.slice(out.indexOf('## A'), out.indexOf('## B'));
    assert.deepEqual(
      a.filter((l) => l.startsWith('- ')),
      [...Array.from({ length: ENTRY_LIMIT }, (_, i) => `- Entry ${i}.`), '- … and 3 more'],
    );
    assert.ok(out.includes('- Only one.'));
    assert.ok(!out.some((l) => l.startsWith('- … and 0')));
  });
});
