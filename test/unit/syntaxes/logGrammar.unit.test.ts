// The ralph-log grammar: Ralph's operational log lines, tokenized with vscode-textmate.
import * as assert from 'node:assert/strict';
import type { Token } from './grammarKit';
import { dump, ralphScopes, scopesOf, tokenize } from './grammarKit';

const LOG = 'text.ralph-log';

async function line(text: string): Promise<Token[]> {
  const [tokens] = await tokenize(LOG, text);
  if (tokens === undefined) throw new Error('no line');
  return tokens;
}

async function assertScope(text: string, fragment: string, scope: string, nth = 0): Promise<void> {
  const t = await line(text);
  const scopes = scopesOf(t, fragment, nth);
  assert.ok(scopes.includes(scope), `"${fragment}" should have ${scope}; tokens:\n${dump(t)}`);
}

const CANONICAL =
  '2026-11-29T17:31:14.123Z INFO  worker-1  task.claimed W2-014 "Add test suite" phase=implement cost=$0.1234 duration=12.3s';

describe('syntaxes: ralph-log grammar', () => {
  it('given the canonical line, then every field gets its scope', async () => {
    await assertScope(CANONICAL, '2026-11-29T17:31:14.123Z', 'comment.other.timestamp.ralph-log');
    await assertScope(CANONICAL, 'INFO', 'markup.inserted.level.info.ralph-log');
    await assertScope(CANONICAL, 'worker-1', 'entity.name.type.actor.worker.ralph-log');
    await assertScope(CANONICAL, 'task.claimed', 'keyword.other.event.ralph-log');
    await assertScope(CANONICAL, 'W2-014', 'variable.other.constant.task-id.ralph-log');
    await assertScope(CANONICAL, '"Add test suite"', 'string.quoted.double.ralph-log');
    await assertScope(CANONICAL, 'phase', 'variable.parameter.key.ralph-log');
    await assertScope(CANONICAL, 'implement', 'entity.name.section.phase.ralph-log');
    await assertScope(CANONICAL, '$0.1234', 'constant.numeric.cost.ralph-log');
    await assertScope(CANONICAL, '12.3s', 'constant.numeric.duration.ralph-log');
  });

  describe('levels, one scope each', () => {
    const cases: Array<[string, string]> = [
      ['TRACE', 'comment.other.level.trace.ralph-log'],
      ['DEBUG', 'markup.changed.level.debug.ralph-log'],
      ['INFO', 'markup.inserted.level.info.ralph-log'],
      ['WARN', 'markup.deleted.level.warning.ralph-log'],
      ['WARNING', 'markup.deleted.level.warning.ralph-log'],
      ['ERROR', 'invalid.illegal.level.error.ralph-log'],
      ['FATAL', 'invalid.illegal.level.error.ralph-log'],
      ['[info]', 'markup.inserted.level.info.ralph-log'],
      ['[warning]', 'markup.deleted.level.warning.ralph-log'],
      ['[error]', 'invalid.illegal.level.error.ralph-log'],
    ];
    for (const [level, scope] of cases) {
      it(`given ${level}, then ${scope}`, async () => {
        await assertScope(`2026-11-29 17:31:14.123 ${level} loop.started`, level, scope);
      });
    }
  });

  describe('actors, one scope each', () => {
    const cases: Array<[string, string]> = [
      ['primary', 'entity.name.function.actor.primary.ralph-log'],
      ['worker-2', 'entity.name.type.actor.worker.ralph-log'],
      ['judge', 'keyword.control.actor.judge.ralph-log'],
      ['control_plane', 'support.class.actor.control-plane.ralph-log'],
      ['human', 'variable.language.actor.human.ralph-log'],
    ];
    for (const [actor, scope] of cases) {
      it(`given actor ${actor}, then ${scope}`, async () => {
        await assertScope(`2026-11-29T17:31:14Z INFO [${actor}] patch.promoted W2-014`, actor, scope);
      });
    }
  });

  it('given a promotion line, then the patch id, event, hash and task id are scoped', async () => {
    const text = '17:31:14 INFO control_plane patch.promoted patch_W2-014_20261129T173114 → W2-014 done (commit 3f2a9c1e)';
    await assertScope(text, '17:31:14', 'comment.other.timestamp.ralph-log');
    await assertScope(text, 'patch.promoted', 'keyword.other.event.ralph-log');
    await assertScope(text, 'patch_W2-014_20261129T173114', 'variable.other.constant.patch-id.ralph-log');
    await assertScope(text, 'W2-014', 'variable.other.constant.task-id.ralph-log', 1);
    await assertScope(text, '3f2a9c1e', 'constant.language.hash.ralph-log');
  });

  it('given a judge verdict, then approve, reject and modify are coloured apart', async () => {
    await assertScope('judge judge.verdict T-001 verdict=approve', 'approve', 'markup.inserted.verdict.approve.ralph-log');
    await assertScope('judge judge.verdict T-001 verdict=reject', 'reject', 'invalid.illegal.verdict.reject.ralph-log');
    await assertScope('judge judge.verdict T-001 verdict=modify', 'modify', 'markup.changed.verdict.modify.ralph-log');
  });

  it('given durations and token counts, then they are numbers of their kind', async () => {
    const text = 'agent.finished primary took 1m23.5s (450ms spawn) 12.5k tokens 1h2m';
    await assertScope(text, '1m23.5s', 'constant.numeric.duration.ralph-log');
    await assertScope(text, '450ms', 'constant.numeric.duration.ralph-log');
    await assertScope(text, '12.5k', 'constant.numeric.tokens.ralph-log');
    await assertScope(text, '1h2m', 'constant.numeric.duration.ralph-log');
  });

  it('given phase names, then underscore phases always and plain-word phases only after phase= or an arrow', async () => {
    await assertScope('phase assess -> evolve_goals', 'evolve_goals', 'entity.name.section.phase.ralph-log');
    await assertScope('phase.changed primary plan -> implement', 'implement', 'entity.name.section.phase.ralph-log');
    const t = await line('we plan to commit later');
    assert.deepEqual(ralphScopes(t), [], dump(t));
  });

  it('given look-alikes of task ids (UTF-8, SHA-256), then they are not task ids', async () => {
    const t = await line('wrote UTF-8 file with SHA-256 digest');
    assert.ok(!ralphScopes(t).includes('variable.other.constant.task-id.ralph-log'), dump(t));
  });
});
