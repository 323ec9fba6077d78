// Bad input of every shape, through the commands a user runs (`ralph sync-backlog`,
// `ralph init`, `ralph process-proposals`, `ralph start`) and the parsers behind them: each
// gets a clear message naming the file and the place, nothing is half-written (no event,
// no task, the user's file byte-identical), and nothing throws past the message.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../../src/cli/run';
import { runInitCommand } from '../../../src/cli/projectCommands';
import { openStore } from '../../../src/store/sqlJsStore';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { parseBacklog } from '../../../src/domain/backlog';
import { MAX_TITLE_LENGTH } from '../../../src/domain/text';
import { parseSpecification } from '../../../src/project/specification';
import { loadConfig, parseConfigText } from '../../../src/project/config';
import { parseWebviewToHost, MAX_WEBVIEW_LOG_TEXT } from '../../../src/protocol/monitor';
import { count } from '../kit/tally';

interface Run {
  code: number;
  out: string;
  err: string;
}

async function ralph(dir: string, ...argv: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const code = await runCli(['--dir', dir, ...argv], { io: { out: (t) => void (out += t), err: (t) => void (err += t) } });
  return { code, out, err };
}

async function eventCount(ralphDir: string): Promise<number> {
  const store = await openStore({ ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.get<{ n: number }>('SELECT COUNT(*) AS n FROM events')?.n ?? -1;
  } finally {
    await store.close();
  }
}

async function taskIds(ralphDir: string): Promise<string[]> {
  const store = await openStore({ ralphDir, mode: 'observer', projections: CONTROL_PROJECTIONS });
  try {
    return store.all<{ task_id: string }>('SELECT task_id FROM task_view ORDER BY task_id').map((r) => r.task_id);
  } finally {
    await store.close();
  }
}

const HEAD = `# BACKLOG

## Wave 0: Critical Fixes & Foundation

| ID | Status | Title | Source | Effort | Deps |
|----|--------|-------|--------|--------|------|
| W0-001 | pending | First task | ES:1 | S | - |
`;

/** BACKLOG.md texts, each with the line its problem is on and what the message must say. */
const BAD_BACKLOGS: { name: string; text: string | Buffer; line: number; says: RegExp }[] = [
  { name: 'a NUL in a title', text: `${HEAD}| W0-002 | pending | Add\u0000 export | ES:2 | S | - |\n`, line: 8, says: /NUL byte/ },
  {
    name: 'binary junk after the table',
    text: Buffer.concat([Buffer.from(`${HEAD}\n`), Buffer.from([0x00, 0xff, 0xfe, 0x12, 0x89, 0x0a, 0x41])]),
    line: 9,
    says: /not text/,
  },
  {
    name: 'bytes that are not UTF-8 in a title',
    text: Buffer.concat([Buffer.from(`${HEAD}| W0-002 | pending | Caf`), Buffer.from([0xc3, 0x28]), Buffer.from(' | ES:2 | S | - |\n')]),
    line: 8,
    says: /not UTF-8/,
  },
  { name: 'a terminal escape in a title', text: `${HEAD}| W0-002 | pending | \u001b[31mred | ES:2 | S | - |\n`, line: 8, says: /U\+001B/ },
  { name: 'a lone carriage return inside a row', text: `${HEAD}| W0-002 | pending | a\rb | ES:2 | S | - |\n`, line: 8, says: /U\+000D/ },
  { name: 'a DEL character', text: `${HEAD}| W0-002 | pending | a\u007fb | ES:2 | S | - |\n`, line: 8, says: /U\+007F/ },
  {
    name: 'a title over the length limit',
    text: `${HEAD}| W0-002 | pending | ${'t'.repeat(MAX_TITLE_LENGTH + 1)} | ES:2 | S | - |\n`,
    line: 8,
    says: new RegExp(`title is ${MAX_TITLE_LENGTH + 1} characters long; the limit is ${MAX_TITLE_LENGTH}`),
  },
  {
    name: 'a source cell over the length limit',
    text: `${HEAD}| W0-002 | pending | ok | ${'s'.repeat(600)} | S | - |\n`,
    line: 8,
    says: /source is 600 characters/,
  },
  { name: 'a row with seven cells', text: `${HEAD}| W0-002 | pending | a | b | S | - | extra |\n`, line: 8, says: /7 cells, expected 6/ },
  { name: 'a row with four cells', text: `${HEAD}| W0-002 | pending | a | b |\n`, line: 8, says: /4 cells, expected 6/ },
  {
    name: 'a duplicate id',
    text: `${HEAD}| W0-001 | pending | again | ES:2 | S | - |\n`,
    line: 8,
    says: /duplicate task id W0-001 \(first on line 7\)/,
  },
  { name: 'an unknown effort', text: `${HEAD}| W0-002 | pending | a | ES:2 | XXL | - |\n`, line: 8, says: /invalid effort 'XXL'/ },
  { name: 'an id with a space', text: `${HEAD}| W0 002 | pending | a | ES:2 | S | - |\n`, line: 8, says: /invalid task id 'W0 002'/ },
  { name: 'an id with a path', text: `${HEAD}| ../etc | pending | a | ES:2 | S | - |\n`, line: 8, says: /invalid task id '\.\.\/etc'/ },
  { name: 'an empty title', text: `${HEAD}| W0-002 | pending |  | ES:2 | S | - |\n`, line: 8, says: /empty title/ },
  { name: 'a row outside any wave', text: `| X-1 | pending | a | b | S | - |\n${HEAD}`, line: 1, says: /outside any '## Wave N' section/ },
  {
    name: 'a file over the size limit',
    text: `${HEAD}${'<!-- padding -->\n'.repeat(300_000)}`,
    line: 1,
    says: /BACKLOG\.md is at most 4194304 bytes/,
  },
];

describe('bad input: BACKLOG.md', function () {
  this.timeout(120_000);
  let dir: string;
  let ralphDir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-badinput-'));
    ralphDir = path.join(dir, '.ralph');
    fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/x\n');
    fs.mkdirSync(ralphDir);
    fs.writeFileSync(path.join(ralphDir, 'BACKLOG.md'), HEAD);
    const io = { stdout: (): void => undefined, stderr: (t: string): void => assert.fail(t) };
    assert.equal(await runInitCommand(['--name', 'bad-input', '--git-init'], io, { cwd: dir }), 0);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const bad of BAD_BACKLOGS) {
    it(`given ${bad.name}, then sync-backlog, init and repair name .ralph/BACKLOG.md:${bad.line}, and nothing is written`, async () => {
      count('badInputs');
      const file = path.join(ralphDir, 'BACKLOG.md');
      fs.writeFileSync(file, bad.text);
      const bytes = fs.readFileSync(file);
      const events = await eventCount(ralphDir);

      const sync = await ralph(dir, 'sync-backlog');
      assert.equal(sync.code, 1, sync.out + sync.err);
      assert.match(sync.err, new RegExp(`^ralph: \\.ralph/BACKLOG\\.md:${bad.line}: `, 'm'));
      assert.match(sync.err, bad.says);
      const init = await ralph(dir, 'init');
      assert.notEqual(init.code, 0, init.out);
      assert.match(init.err, new RegExp(`\\.ralph/BACKLOG\\.md:${bad.line}: `));
      const repair = await ralph(dir, 'repair', '--fix');
      assert.match(repair.out, new RegExp(`FAIL backlog\\.parse: malformed row\\(s\\): \\.ralph/BACKLOG\\.md:${bad.line}: `));
      assert.match(repair.out, /sync-backlog: skipped: BACKLOG\.md has malformed rows/);

      assert.deepEqual(fs.readFileSync(file), bytes, 'BACKLOG.md is left as the user wrote it');
      assert.equal(await eventCount(ralphDir), events, 'no event appended');
      assert.deepEqual(await taskIds(ralphDir), ['W0-001']);
    });
  }

  it('given the parser alone, then every bad text gives problems and never throws; a clean render parses back', () => {
    for (const bad of BAD_BACKLOGS) {
      const text = typeof bad.text === 'string' ? bad.text : bad.text.toString('utf8');
      const r = parseBacklog(text, '.ralph/BACKLOG.md');
      assert.ok(r.problems.length > 0, bad.name);
      assert.ok(
        r.problems.some((p) => p.line === bad.line && bad.says.test(p.message)),
        `${bad.name}: ${JSON.stringify(r.problems)}`,
      );
    }
  });
});

const SPEC_OK = `specification:
  requirements:
    - id: REQ-1
      description: Parse input
`;

/** specification.yaml texts: what the error must say, and the line it must name (if any). */
const BAD_SPECS: { name: string; text: string; line?: number; says: RegExp }[] = [
  {
    name: 'an alias bomb (billion laughs)',
    text: [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...'bcdefg'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefg'[i]}`).join(',')}]`),
      'specification:',
      '  requirements: *g',
    ].join('\n'),
    line: 2,
    says: /aliases expand to too many nodes/,
  },
  {
    name: 'block nesting 5000 deep',
    text: `specification:\n  requirements:\n  ${'- '.repeat(5000)}x\n`,
    line: 3,
    says: /nested deeper than 64 levels/,
  },
  { name: 'flow nesting 20000 deep', text: `a: ${'['.repeat(20000)}${']'.repeat(20000)}\n`, line: 1, says: /nested deeper than 64 levels/ },
  { name: 'indentation 300 columns deep', text: `specification:\n${' '.repeat(300)}requirements: []\n`, line: 2, says: /nested deeper/ },
  {
    name: 'a file over the size limit',
    text: `${SPEC_OK}${'# padding\n'.repeat(120_000)}`,
    says: /a specification is at most 1048576 bytes/,
  },
  { name: 'a NUL byte', text: `${SPEC_OK}      \u0000\n`, line: 5, says: /NUL byte/ },
  { name: 'an unresolved alias', text: 'specification:\n  requirements: *nope\n', line: 2, says: /Unresolved alias/ },
  { name: 'an empty file', text: '', line: 1, says: /the file is empty/ },
  { name: 'a scalar document', text: 'just text\n', says: /expected object/ },
  { name: 'a list at the root', text: '- a\n- b\n', line: 1, says: /expected object/ },
  { name: 'invalid YAML', text: 'specification:\n  requirements: [\n', line: 3, says: /not valid YAML/ },
  { name: 'a tab indentation', text: 'specification:\n\trequirements: []\n', line: 2, says: /not valid YAML/ },
  { name: 'two documents', text: `${SPEC_OK}---\n${SPEC_OK}`, line: 5, says: /not valid YAML/ },
  { name: 'requirements not a list', text: 'specification:\n  requirements: 3\n', line: 2, says: /requirements: .*expected array/ },
  { name: 'no requirements', text: 'specification:\n  requirements: []\n', line: 2, says: /requirements: .*at least 1|>=1/ },
  {
    name: 'a requirement without id',
    text: 'specification:\n  requirements:\n    - description: x\n',
    line: 3,
    says: /requirements\[0\]\.id/,
  },
  { name: 'an unknown key', text: `${SPEC_OK}      colour: red\n`, line: 3, says: /unknown key\(s\) "colour"/ },
  { name: 'a duplicate id', text: `${SPEC_OK}    - id: REQ-1\n      description: again\n`, line: 5, says: /duplicate id "REQ-1"/ },
  { name: 'an unknown dependency', text: `${SPEC_OK}      depends_on: [REQ-9]\n`, line: 5, says: /unknown requirement "REQ-9"/ },
  { name: 'a self dependency', text: `${SPEC_OK}      depends_on: [REQ-1]\n`, line: 5, says: /depends on itself/ },
  { name: 'a wrong status', text: `${SPEC_OK}      status: finished\n`, line: 5, says: /status/ },
  { name: 'a priority that is text', text: `${SPEC_OK}      priority: high\n`, line: 5, says: /priority: .*expected number/ },
  {
    name: 'a duplicate key',
    text: 'specification:\n  requirements: []\n  requirements: []\n',
    line: 3,
    says: /not valid YAML.*unique|not valid YAML/,
  },
];

describe('bad input: specification.yaml', () => {
  for (const bad of BAD_SPECS) {
    it(`given ${bad.name}, then parseSpecification returns an error naming specification.yaml${bad.line ? `:${bad.line}` : ''}`, () => {
      count('badInputs');
      let r: ReturnType<typeof parseSpecification> | undefined;
      assert.doesNotThrow(() => (r = parseSpecification(bad.text, 'specification.yaml')));
      assert.ok(r && !r.ok, 'refused');
      const message = r.error.message;
      assert.match(
        message,
        bad.line === undefined ? /^specification\.yaml[:]/m : new RegExp(`^specification\\.yaml:${bad.line}:\\d+: `, 'm'),
      );
      assert.match(message, bad.says);
    });
  }
});

const VALID_TASK = { id: 'W2-001', title: 'Export', source: 'ES:9', effort: 'S', wave: 2, deps: '-' };
const proposal = (task: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  proposal_type: 'new_task',
  confidence: 0.9,
  task,
  rationale: 'r',
  ...extra,
});

/** Proposal files of every wrong shape: the content and what the rejection must name. */
const BAD_PROPOSALS: { name: string; content: string | Buffer; says: RegExp }[] = [
  { name: 'an array', content: '[]', says: /\(root\): .*expected object, received array/ },
  { name: 'null', content: 'null', says: /\(root\): .*expected object/ },
  { name: 'a number', content: '42', says: /\(root\): .*expected object/ },
  { name: 'a string', content: '"new_task"', says: /\(root\): .*expected object/ },
  { name: 'an empty object', content: '{}', says: /proposal_type/ },
  {
    name: 'an unknown proposal_type',
    content: JSON.stringify(proposal(VALID_TASK, { proposal_type: 'rewrite_everything' })),
    says: /proposal_type/,
  },
  { name: 'no task', content: JSON.stringify({ proposal_type: 'new_task', confidence: 0.9 }), says: /task/ },
  { name: 'a task that is a string', content: JSON.stringify(proposal({}, { task: 'W2-001' })), says: /task/ },
  { name: 'an id with a path', content: JSON.stringify(proposal({ ...VALID_TASK, id: '../../etc/passwd' })), says: /task\.id/ },
  { name: 'an id with a space', content: JSON.stringify(proposal({ ...VALID_TASK, id: 'W2 001' })), says: /task\.id/ },
  { name: 'an empty title', content: JSON.stringify(proposal({ ...VALID_TASK, title: '   ' })), says: /task\.title/ },
  {
    name: 'a NUL in the title',
    content: JSON.stringify(proposal({ ...VALID_TASK, title: 'Add\u0000 export' })),
    says: /task\.title: title contains a NUL byte/,
  },
  {
    name: 'an escape in the title',
    content: JSON.stringify(proposal({ ...VALID_TASK, title: '\u001b]0;pwned\u0007' })),
    says: /task\.title: title contains the control character U\+001B/,
  },
  {
    name: 'a two-line title',
    content: JSON.stringify(proposal({ ...VALID_TASK, title: 'a\nb' })),
    says: /task\.title: title must be one line/,
  },
  {
    name: 'a title over the limit',
    content: JSON.stringify(proposal({ ...VALID_TASK, title: 'x'.repeat(1000) })),
    says: /task\.title: title is 1000 characters long/,
  },
  {
    name: 'a NUL in the source',
    content: JSON.stringify(proposal({ ...VALID_TASK, source: 'ES\u0000' })),
    says: /task\.source: contains a NUL byte/,
  },
  { name: 'an unknown effort', content: JSON.stringify(proposal({ ...VALID_TASK, effort: 'XXL' })), says: /task\.effort/ },
  { name: 'a negative wave', content: JSON.stringify(proposal({ ...VALID_TASK, wave: -1 })), says: /task\.wave/ },
  { name: 'a fractional wave', content: JSON.stringify(proposal({ ...VALID_TASK, wave: 1.5 })), says: /task\.wave/ },
  { name: 'a huge wave', content: JSON.stringify(proposal({ ...VALID_TASK, wave: 1e9 })), says: /task\.wave/ },
  { name: 'a wave that is text', content: JSON.stringify(proposal({ ...VALID_TASK, wave: '2' })), says: /task\.wave/ },
  { name: 'a confidence above 1', content: JSON.stringify(proposal(VALID_TASK, { confidence: 2 })), says: /confidence/ },
  { name: 'a confidence that is text', content: JSON.stringify(proposal(VALID_TASK, { confidence: 'high' })), says: /confidence/ },
  { name: 'deps that are a number', content: JSON.stringify(proposal({ ...VALID_TASK, deps: 7 })), says: /task\.deps/ },
  { name: 'deps with a non-string', content: JSON.stringify(proposal({ ...VALID_TASK, deps: ['W0-001', {}] })), says: /task\.deps/ },
  { name: 'a rationale over the limit', content: JSON.stringify(proposal(VALID_TASK, { rationale: 'r'.repeat(5000) })), says: /rationale/ },
  {
    name: 'a decompose with no sub-tasks',
    content: JSON.stringify({ proposal_type: 'decompose', parent_task: 'W0-001', sub_tasks: [], rationale: 'r' }),
    says: /sub_tasks/,
  },
  {
    name: 'a decompose into 1000 sub-tasks',
    content: JSON.stringify({
      proposal_type: 'decompose',
      parent_task: 'W0-001',
      sub_tasks: Array.from({ length: 1000 }, (_, i) => ({ id: `S-${i}`, title: 't', effort: 'S' })),
      rationale: 'r',
    }),
    says: /sub_tasks/,
  },
  {
    name: 'a drop_task without a task',
    content: JSON.stringify({ proposal_type: 'drop_task', rationale: 'r' }),
    says: /drop_task needs task_id/,
  },
  {
    name: 'a reprioritize without new_wave',
    content: JSON.stringify({ proposal_type: 'reprioritize', task_id: 'W0-001' }),
    says: /new_wave/,
  },
  { name: 'invalid JSON', content: '{ "proposal_type": "new_task", ', says: /not valid JSON/ },
  { name: 'single quotes', content: "{'proposal_type': 'new_task'}", says: /not valid JSON/ },
  { name: 'an empty file', content: '', says: /not valid JSON/ },
  { name: 'binary junk', content: Buffer.from([0x00, 0x01, 0xff, 0xfe, 0x80]), says: /not UTF-8 text/ },
  {
    name: 'UTF-16 text',
    content: Buffer.from(`\ufeff${JSON.stringify(proposal(VALID_TASK))}`, 'utf16le'),
    says: /not valid JSON|not UTF-8/,
  },
  {
    name: 'a file over the size limit',
    content: JSON.stringify(proposal(VALID_TASK, { notes: 'n'.repeat(300 * 1024) })),
    says: /bytes; a proposal file is at most 256 KiB/,
  },
  {
    name: 'a JSON nesting 100000 deep',
    content: `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    says: /\(root\): .*expected object, received array/,
  },
];

describe('bad input: proposals', function () {
  this.timeout(120_000);
  let dir: string;
  let ralphDir: string;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-badprop-'));
    ralphDir = path.join(dir, '.ralph');
    fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/x\n');
    fs.mkdirSync(ralphDir);
    fs.writeFileSync(path.join(ralphDir, 'BACKLOG.md'), HEAD);
    const io = { stdout: (): void => undefined, stderr: (t: string): void => assert.fail(t) };
    assert.equal(await runInitCommand(['--name', 'bad-proposals', '--git-init'], io, { cwd: dir }), 0);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it(`given ${BAD_PROPOSALS.length} proposal files of every wrong shape (and a symlink), then each is rejected with its file and place, archived with its reason, and no task is created`, async () => {
    const props = path.join(ralphDir, 'proposals');
    BAD_PROPOSALS.forEach((b, i) => fs.writeFileSync(path.join(props, `prop_bad_${String(i).padStart(2, '0')}.json`), b.content));
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'root:x:0:0\n');
    fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(props, 'prop_bad_link.json'));
    count('badInputs', BAD_PROPOSALS.length + 1);
    const events = await eventCount(ralphDir);

    const r = await ralph(dir, 'process-proposals', '--json');
    assert.equal(r.code, 0, r.err);
    const result = JSON.parse(r.out) as { counts: Record<string, number>; reports: { file: string; outcome: string; detail: string }[] };
    assert.deepEqual(result.counts, { accepted: 0, rejected: BAD_PROPOSALS.length + 1, deferred: 0 });
    BAD_PROPOSALS.forEach((b, i) => {
      const name = `prop_bad_${String(i).padStart(2, '0')}.json`;
      const rep = result.reports.find((x) => x.file === name);
      assert.ok(rep, `${name} (${b.name}) reported`);
      assert.equal(rep.outcome, 'rejected', b.name);
      assert.ok(rep.detail.startsWith(`proposals/${name}: `), `${b.name}: ${rep.detail.slice(0, 200)}`);
      assert.match(rep.detail, b.says, `${b.name}: ${rep.detail.slice(0, 300)}`);
      assert.ok(rep.detail.length < 2000, `${b.name}: the reason stays short (${rep.detail.length})`);
      assert.match(r.err, new RegExp(`^${name.replace(/\./g, '\\.')}: rejected: `, 'm'));
    });
    const link = result.reports.find((x) => x.file === 'prop_bad_link.json');
    assert.match(link?.detail ?? '', /is a symbolic link; a proposal must be a regular file/);
    assert.doesNotMatch(JSON.stringify(result), /root:x:0:0/, "the link's target is never read");

    assert.deepEqual(await taskIds(ralphDir), ['W0-001']);
    assert.equal(await eventCount(ralphDir), events + BAD_PROPOSALS.length + 1, 'exactly one proposal.rejected each');
    const rejected = fs.readdirSync(path.join(props, 'rejected'));
    assert.equal(rejected.filter((f) => f.endsWith('.error.txt')).length, BAD_PROPOSALS.length + 1);
    assert.equal(rejected.filter((f) => f.endsWith('.json')).length, BAD_PROPOSALS.length + 1);
    assert.deepEqual(
      fs.readdirSync(props).filter((f) => f.endsWith('.json')),
      [],
    );
    assert.deepEqual(fs.readdirSync(path.join(props, 'processing')), []);
  });
});

/** ralph.config.json texts of every wrong shape: where the message must point and what it must say. */
const BAD_CONFIGS: { name: string; text: string; at?: string; says: RegExp }[] = [
  { name: 'an empty file', text: '', at: '1:1', says: /the file is empty/ },
  { name: 'an array', text: '[]', at: '1:1', says: /expected a JSON object, got an array/ },
  { name: 'a string', text: '"x"', at: '1:1', says: /expected a JSON object/ },
  { name: 'null', text: 'null', at: '1:1', says: /expected a JSON object/ },
  { name: 'a trailing comma', text: '{"name": "x",}', at: '1:14', says: /trailing comma/ },
  { name: 'single quotes', text: "{'name': 'x'}", at: '1:2', says: /single quotes|double quotes/ },
  { name: 'a comment', text: '{\n  // mine\n  "name": "x"\n}', at: '2:3', says: /not valid JSON/ },
  { name: 'a duplicate key', text: '{"name": "x", "name": "y"}', at: '1:15', says: /duplicate key "name"/ },
  { name: 'a NUL outside strings', text: '{"name": "x",\u0000"lang": "go"}', at: '1:14', says: /U\+0000 \(a control character\)/ },
  { name: 'a NUL inside a string', text: '{"name": "x\u0000"}', at: '1:12', says: /control character in string/ },
  { name: 'nesting 20000 deep', text: `{"name": ${'['.repeat(20_000)}${']'.repeat(20_000)}}`, says: /nested deeper than 64 levels/ },
  {
    name: 'a __proto__ key',
    text: '{"name": "x", "lang": "go", "__proto__": {"workers": {"count": 7}}}',
    says: /__proto__: unknown key "__proto__"/,
  },
  { name: 'an unknown key', text: '{"name": "x", "lnag": "go"}', at: '1:15', says: /did you mean "lang"/ },
  { name: 'a name that is a number', text: '{"name": 3}', at: '1:2', says: /name: expected string, got/ },
  {
    name: 'a worker count that is text',
    text: '{"name": "x", "workers": {"count": "2"}}',
    says: /workers\.count: expected number, got the string "2"/,
  },
  { name: 'a negative worker count', text: '{"name": "x", "workers": {"count": -1}}', says: /workers\.count/ },
  { name: 'an infinite number', text: '{"name": "x", "workers": {"count": 1e400}}', says: /workers\.count/ },
  {
    name: 'a budget that is a word',
    text: '{"name": "x", "budgets": {"primary": "lots"}}',
    says: /budgets\.primary: expected a non-negative number or a dollar string/,
  },
  { name: 'an unknown backend', text: '{"name": "x", "backends": {"primary": "gpt"}}', says: /backends\.primary/ },
  {
    name: 'a broken /regex/ pattern',
    text: '{"name": "x", "forbidden_patterns": ["/(/"]}',
    says: /forbidden_patterns.*not a valid regular expression/,
  },
  { name: 'an object where a list goes', text: '{"name": "x", "forbidden_exclude": {"a": 1}}', says: /forbidden_exclude/ },
];

describe('bad input: ralph.config.json', function () {
  this.timeout(60_000);
  for (const bad of BAD_CONFIGS) {
    it(`given ${bad.name}, then the error names ralph.config.json${bad.at ? `:${bad.at}` : ''} and what is wrong, without throwing`, () => {
      count('badInputs');
      let r: ReturnType<typeof parseConfigText> | undefined;
      assert.doesNotThrow(() => (r = parseConfigText(bad.text, 'ralph.config.json')));
      assert.ok(r && !r.ok, 'refused');
      assert.match(r.error.message, bad.at ? new RegExp(`ralph\\.config\\.json:${bad.at}: `) : /ralph\.config\.json(:\d+:\d+)?: /);
      assert.match(r.error.message, bad.says);
    });
  }

  it('given a config over the size limit, or a bad one in a project, then `ralph start` refuses with the message and writes nothing', async () => {
    count('badInputs', 2);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-badconfig-'));
    try {
      fs.writeFileSync(path.join(dir, 'go.mod'), 'module example.com/x\n');
      const io = { stdout: (): void => undefined, stderr: (t: string): void => assert.fail(t) };
      assert.equal(await runInitCommand(['--name', 'bad-config', '--git-init'], io, { cwd: dir }), 0);
      const cfg = path.join(dir, 'ralph.config.json');
      fs.writeFileSync(cfg, `{"name": "x", "pad": "${'p'.repeat(1024 * 1024)}"}`);
      const big = loadConfig(dir);
      assert.ok(!big.ok);
      assert.match(big.error.message, /ralph\.config\.json: \d+ bytes; the limit is 1048576/);

      fs.writeFileSync(cfg, '{"name": "x", "workers": {"count": "many"}}');
      const before = snapshot(path.join(dir, '.ralph'));
      const start = await ralph(dir, 'start', '--once');
      assert.equal(start.code, 1, start.out + start.err);
      assert.match(start.err, /ralph\.config\.json:1:\d+: workers\.count: expected number, got the string "many"/);
      assert.deepEqual(snapshot(path.join(dir, '.ralph')), before, 'nothing under .ralph changed');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Every file under `dir` with its size and mtime: what "nothing written" compares. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const st = fs.statSync(p);
        out.push(`${path.relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out.sort();
}

describe('bad input: the monitor page', () => {
  it('given a log message of 10 MB, then the host keeps at most a bounded line that says it was cut', () => {
    count('badInputs');
    const r = parseWebviewToHost({ method: 'log', params: { level: 'warn', text: 'x'.repeat(10_000_000) } });
    assert.ok(r.ok);
    assert.equal(r.message.method, 'log');
    const text = (r.message.params as { text: string }).text;
    assert.ok(text.length < MAX_WEBVIEW_LOG_TEXT + 100, `${text.length}`);
    assert.match(text, /… \(9998000 more characters cut\)$/);
  });

  it('given ids and method names of unbounded length, then refused with a short reason', () => {
    count('badInputs', 2);
    const long = parseWebviewToHost({ method: 'openTask', id: 1, params: { taskId: 'T'.repeat(100_000) } });
    assert.ok(!long.ok);
    assert.ok(long.reason.length < 1000, `${long.reason.length}`);
    const method = parseWebviewToHost({ method: 'm'.repeat(100_000), params: {} });
    assert.ok(!method.ok);
    assert.ok(method.reason.length < 1000, `${method.reason.length}`);
  });
});
