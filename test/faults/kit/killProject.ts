// The scripted multi-task project the kill -9 runs use: the demo calculator's gates, four
// tasks in the store (one for the primary, small ones a worker takes, one tier-2 patch the
// judge approves), commands waiting in the inbox (a task added by a human, notes), and a
// scenario for the scripted claude executable answering every role's prompts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CALCULATOR_BASE_FILES, createCalculatorProject } from '../../../src/cli/demo';
import { submitToInbox } from '../../../src/control/inbox';
import { openStore } from '../../../src/store/sqlJsStore';
import { CONTROL_PROJECTIONS } from '../../../src/control/views';
import { addTasks } from '../../int/loop/sampleProject';

export interface KillTask {
  readonly id: string;
  readonly title: string;
  readonly effort: 'S' | 'M';
  readonly file: string;
  readonly content: string;
  readonly test: string;
}

/** The tasks of the project; T-3 touches src/auth/ (tier 2: judged), T-9 comes through the inbox. */
export const KILL_TASKS: readonly KillTask[] = [
  {
    id: 'T-1',
    title: 'Addition',
    effort: 'M',
    file: 'src/add.js',
    content: 'module.exports = (a, b) => a + b;\n',
    test: "require('assert').equal(require('../src/add.js')(2, 3), 5);\n",
  },
  {
    id: 'T-2',
    title: 'Multiplication',
    effort: 'S',
    file: 'src/mul.js',
    content: 'module.exports = (a, b) => a * b;\n',
    test: "require('assert').equal(require('../src/mul.js')(4, 3), 12);\n",
  },
  {
    id: 'T-3',
    title: 'Token check',
    effort: 'S',
    file: 'src/auth/token.js',
    content: "module.exports = { valid: (t) => typeof t === 'string' && t.length >= 16 };\n",
    test: "require('assert').equal(require('../src/auth/token.js').valid('x'.repeat(16)), true);\n",
  },
  {
    id: 'T-4',
    title: 'Negation',
    effort: 'S',
    file: 'src/neg.js',
    content: 'module.exports = (a) => -a;\n',
    test: "require('assert').equal(require('../src/neg.js')(2), -2);\n",
  },
  {
    id: 'T-9',
    title: 'Added by a human',
    effort: 'S',
    file: 'src/inbox.js',
    content: "module.exports = 'from the inbox';\n",
    test: "require('assert').equal(require('../src/inbox.js'), 'from the inbox');\n",
  },
];

/** Human notes sent through the inbox: each must be applied exactly once. */
export const INBOX_NOTES = ['note-a', 'note-b', 'note-c'];

const testFile = (t: KillTask): string => `test/${t.file.split('/').pop()?.replace(/\.js$/, '') ?? t.id}.test.js`;

function scenario(): Record<string, unknown> {
  const write = (t: KillTask): Record<string, unknown>[] => [
    { tool: 'write', path: t.file, content: t.content },
    { tool: 'write', path: testFile(t), content: t.test },
  ];
  const say = (key: string, tools: Record<string, unknown>[], answer: unknown): Record<string, unknown> => ({
    name: key,
    match: `RALPH-KEY: ${key}`,
    turns: [...(tools.length ? [{ tools }] : []), { text: typeof answer === 'string' ? answer : JSON.stringify(answer) }],
  });
  const scripts: Record<string, unknown>[] = [];
  for (const t of KILL_TASKS) {
    const files = [t.file, testFile(t)];
    scripts.push(
      say(`plan/${t.id}/`, [], {
        task_id: t.id,
        summary: `plan for ${t.id}`,
        steps: [{ id: 1, description: t.title, files, acceptance: 'the build and the tests pass' }],
        files,
      }),
      say(`implement/${t.id}/step-1/`, write(t), `${t.id} written`),
      say(`worker/${t.id}/`, write(t), `${t.id} done`),
    );
  }
  scripts.push(
    say('review_deferred/T-3/', [], { task_id: 'T-3', verdict: 'approve', rationale: 'A length check with a test.', confidence: 0.9 }),
    { name: 'anything else', turns: [{ text: 'Nothing to change.' }] },
  );
  return { scripts };
}

/** Creates the project in a new temp folder: git repo on main, ralph init, the tasks, the inbox. */
export async function createKillProject(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'ralph-kill9-'));
  await createCalculatorProject(dir, {
    files: { ...CALCULATOR_BASE_FILES, 'README.md': '# Calculator\n' },
    config: {
      backends: { primary: 'scripted', worker: 'scripted', judge: 'scripted', scripted: { scenario: '.ralph/kill-scenario.json' } },
      workers: { count: 1 },
      intervals: { primary: 0, worker: 0 },
    },
    ralphFiles: { '.ralph/kill-scenario.json': `${JSON.stringify(scenario(), null, 2)}\n` },
  });
  const ralphDir = join(dir, '.ralph');
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS });
  try {
    await addTasks(
      store,
      ralphDir,
      KILL_TASKS.filter((t) => t.id !== 'T-9').map((t) => ({ id: t.id, title: t.title, effort: t.effort, wave: 0 })),
    );
  } finally {
    await store.close();
  }
  const t9 = KILL_TASKS.find((t) => t.id === 'T-9') as KillTask;
  submitToInbox(ralphDir, {
    command: 'add-task',
    actor: 'human',
    task: { id: t9.id, title: t9.title, source: 'human', effort: 'S', wave: 0, deps: '-' },
  });
  for (const marker of INBOX_NOTES)
    submitToInbox(ralphDir, {
      command: 'emit-event',
      entity_type: 'note',
      entity_id: marker,
      event_type: 'human.note',
      actor: 'human',
      payload: { marker },
    });
  return dir;
}
