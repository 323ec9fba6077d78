import * as assert from 'node:assert/strict';
import { extractJsonAnswer } from '../../../src/agents/structured';
import { staticProfile, LANGUAGES } from '../../../src/project/languages';
import {
  HARNESS_PHASES,
  isAgentPhase,
  PHASES,
  phaseOutputJsonSchema,
  proposalSchema,
  validatePhaseOutput,
} from '../../../src/domain/phaseOutputs';
import type { TemplateContext } from '../../../src/project/templates/context';
import { renderPhase } from '../../../src/project/templates/phases';
import { checkJsonSchema } from '../project/jsonSchemaCheck';

function ctxFor(lang: (typeof LANGUAGES)[number]): TemplateContext {
  const profile = staticProfile(lang);
  return { name: 'demo', profile, ...profile, domain_constraints: [] };
}

describe('domain/phaseOutputs and phase templates', () => {
  for (const phase of HARNESS_PHASES) {
    describe(`given the ${phase} phase file, a phase the harness does itself`, () => {
      const text = renderPhase(phase, ctxFor('rust'));
      it('then it says that no agent runs it and asks for no answer', () => {
        assert.match(text, new RegExp(`^# Phase: ${phase}\n\nNo agent runs in this phase: the harness`));
        assert.doesNotMatch(text, /```json/);
      });
    });
  }

  for (const phase of PHASES.filter(isAgentPhase)) {
    describe(`given the ${phase} phase file`, () => {
      const text = renderPhase(phase, ctxFor('rust'));
      it('then its example JSON block is valid for the harness schema', () => {
        const r = validatePhaseOutput(phase, extractJsonAnswer(text));
        assert.ok(r.ok, r.ok ? '' : r.message);
      });
      it('then its example also satisfies the JSON Schema given to backends with structured output', () => {
        assert.deepEqual(checkJsonSchema(phaseOutputJsonSchema(phase), extractJsonAnswer(text)), []);
      });
      it('then it forbids editing STATE.json, BACKLOG.md and the database, and asks for a final JSON block', () => {
        assert.match(text, /NEVER edit `\.ralph\/STATE\.json`, `\.ralph\/BACKLOG\.md`, `\.ralph\/ralph\.db`/);
        assert.match(text, /End your answer with ONE fenced ```json block/);
      });
    });
  }

  it('given each language, then implement names its build command and conventions', () => {
    for (const lang of LANGUAGES) {
      const ctx = ctxFor(lang);
      const text = renderPhase('implement', ctx);
      if (ctx.build) assert.ok(text.includes(`\`${ctx.build}\``), `${lang}: ${ctx.build}`);
      assert.ok(text.includes(ctx.profile.conventions[0] ?? '?'), lang);
    }
  });

  describe('validatePhaseOutput', () => {
    it('given no block, then says so', () => {
      const r = validatePhaseOutput('plan', undefined);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.message, /did not end with a fenced ```json block/);
    });
    it('given a reflection with an unknown class, then names the path and the allowed values', () => {
      const r = validatePhaseOutput('reflect', { class: 'cosmic', diagnosis: 'd', lesson: 'l', decision: 'retry' });
      assert.equal(r.ok, false);
      assert.match(
        r.ok ? '' : r.message,
        /class: Invalid option: expected one of "transient"\|"recoverable"\|"environment"\|"fundamental"/,
      );
    });
    it('given a plan step without files, then rejects it', () => {
      const r = validatePhaseOutput('plan', {
        task_id: 'W1-001',
        summary: 's',
        steps: [{ id: 1, description: 'd', files: [], acceptance: 'a' }],
        files: ['a'],
      });
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.message, /steps\[0\]\.files/);
    });
    it('given a modify verdict without a modification, then rejects it', () => {
      const r = validatePhaseOutput('review_deferred', { task_id: 'W1-001', verdict: 'modify', rationale: 'r', confidence: 0.5 });
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.message, /modification/);
    });
    it('given a confidence above 1, then rejects the verdict', () => {
      assert.equal(
        validatePhaseOutput('review_deferred', { task_id: 'W1-001', verdict: 'approve', rationale: 'r', confidence: 1.5 }).ok,
        false,
      );
    });
  });

  describe('proposalSchema', () => {
    it('given each reference proposal type, then accepts it', () => {
      const task = { id: 'W3-035', title: 't', source: 'ES:42.3', effort: 'S', wave: 3, deps: '-' };
      for (const p of [
        { proposal_type: 'new_task', confidence: 0.85, task, rationale: 'r' },
        {
          proposal_type: 'decompose',
          confidence: 0.8,
          parent_task: 'W3-001',
          sub_tasks: [task, { ...task, id: 'W3-036' }],
          rationale: 'r',
        },
        { proposal_type: 'drop_task', confidence: 0.9, task_id: 'W3-001', rationale: 'r' },
        { proposal_type: 'reprioritize', confidence: 0.9, task_id: 'W3-001', old_wave: 3, new_wave: 2, rationale: 'r' },
      ]) {
        assert.ok(proposalSchema.safeParse(p).success, p.proposal_type);
      }
    });
    it('given an unknown type or effort, then rejects it', () => {
      assert.equal(proposalSchema.safeParse({ proposal_type: 'rewrite', confidence: 1, rationale: 'r' }).success, false);
      assert.equal(
        proposalSchema.safeParse({
          proposal_type: 'new_task',
          confidence: 1,
          task: { id: 'a', title: 't', effort: 'XXL', wave: 0 },
          rationale: 'r',
        }).success,
        false,
      );
    });
  });
});
