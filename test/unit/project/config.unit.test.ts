import * as assert from 'node:assert/strict';
import { DEFAULT_RISK_PATTERNS } from '../../../src/domain/risk';
import {
  ConfigError,
  configJsonSchema,
  parseConfigText,
  parseForbiddenPattern,
  splitPatternString,
  suggestKey,
  validateConfig,
} from '../../../src/project/config';
import type { RalphConfig } from '../../../src/project/config';
import { checkJsonSchema } from './jsonSchemaCheck';

/** The sample config of the seed's Configuration Reference, verbatim. */
const SEED_SAMPLE = {
  name: 'project-name',
  lang: 'python',
  build: 'python -m py_compile',
  lint: 'ruff check',
  test: 'pytest',
  test_unit: 'pytest -x --tb=short',
  fmt: 'ruff format --check',
  forbidden_patterns: 'bare except:|eval(|import *',
  domain_constraints: 'ALL SQL must include tenant_id',
  model: 'opus',
  budget_primary: '2.50',
  budget_worker: '5.00',
};

function valid(text: string): RalphConfig {
  const r = parseConfigText(text);
  if (!r.ok) assert.fail(r.error.message);
  return r.value;
}

function invalid(text: string): ConfigError {
  const r = parseConfigText(text, '/p/ralph.config.json');
  if (r.ok) assert.fail('expected the config to be rejected');
  assert.ok(r.error instanceof ConfigError);
  assert.equal(r.error.name, 'ConfigError');
  return r.error;
}

describe('project/config', () => {
  describe('given the seed sample config', () => {
    it('accepts it, with string budgets as numbers and the pattern string split', () => {
      const c = valid(JSON.stringify(SEED_SAMPLE, null, 2));
      assert.equal(c.budgets.primary, 2.5);
      assert.equal(c.budgets.worker, 5);
      assert.deepEqual(c.forbidden_patterns, ['bare except:', 'eval(', 'import *']);
      assert.deepEqual(c.domain_constraints, ['ALL SQL must include tenant_id']);
      assert.equal(c.build, 'python -m py_compile');
    });
    it('fills every default', () => {
      const c = valid(JSON.stringify(SEED_SAMPLE));
      assert.equal(c.workers.count, 1);
      assert.deepEqual(c.workers.effort, ['S']);
      assert.equal(c.limits.max_retries, 3);
      assert.equal(c.backends.primary, 'claude');
      assert.equal(c.backends.claude.binary, 'claude');
      assert.equal(c.backends.codex.prices.output_per_mtok, 10);
      assert.deepEqual(c.risk_patterns.tier3, DEFAULT_RISK_PATTERNS.tier3);
      assert.equal(c.req.spec, 'specification.yaml');
      assert.equal(c.req.max_iterations, 15);
      assert.equal(c.req.coverage, 80);
      assert.equal(c.req.test_line_share, 40);
      assert.equal(c.req.retries, 3);
      assert.deepEqual(c.intervals, { primary: 20, worker: 30 });
      assert.equal(c.target_branch, undefined);
    });
  });

  describe('given a minimal config', () => {
    it('takes gate commands and forbidden patterns from the language', () => {
      const c = valid('{"name": "x", "lang": "rust"}');
      assert.equal(c.build, 'cargo check --workspace');
      assert.equal(c.test, 'cargo test --workspace');
      assert.ok(c.forbidden_patterns.includes('.unwrap()'));
      assert.ok(c.forbidden_exclude.includes('tests/**'));
    });
    it('keeps an empty command as "gate disabled"', () => {
      assert.equal(valid('{"name": "x", "lang": "rust", "fmt": ""}').fmt, '');
    });
    it('lets nested budgets win over the seed flat keys', () => {
      const c = valid('{"name": "x", "budget_primary": "9", "budgets": {"primary": 1.5}}');
      assert.equal(c.budgets.primary, 1.5);
    });
    it('accepts "$2.50" and replaces a risk list only where given', () => {
      const c = valid('{"name": "x", "budgets": {"per_day": "$12.50"}, "risk_patterns": {"tier3": ["**/*.secret"]}}');
      assert.equal(c.budgets.per_day, 12.5);
      assert.deepEqual(c.risk_patterns.tier3, ['**/*.secret']);
      assert.deepEqual(c.risk_patterns.tier2, DEFAULT_RISK_PATTERNS.tier2);
    });
  });

  describe('given a config of the wrong type', () => {
    it('names the file, the JSON path, the line:column and what was expected', () => {
      const e = invalid('{\n  "name": "x",\n  "workers": { "count": "two" }\n}');
      assert.equal(e.issues.length, 1);
      const [i] = e.issues;
      assert.equal(i?.path, 'workers.count');
      assert.equal(i?.line, 3);
      assert.equal(i?.column, 16);
      assert.match(e.message, /^\/p\/ralph\.config\.json:3:16: workers\.count: expected number, got the string "two"$/);
    });
    it('explains a bad budget string', () => {
      const e = invalid('{"name": "x", "budgets": {"worker": "lots"}}');
      assert.match(e.message, /budgets\.worker: expected a non-negative number or a dollar string such as "2\.50", got the string "lots"/);
    });
    it('lists the allowed values of an enum', () => {
      const e = invalid('{"name": "x", "backends": {"judge": "gpt"}}');
      assert.match(e.message, /backends\.judge: expected one of "claude", "codex", "scripted", "vscode-lm", got the string "gpt"/);
    });
    it('reports a missing required key', () => {
      const e = invalid('{"lang": "go"}');
      assert.match(e.message, /name: missing required key; expected string/);
    });
    it('reports every problem, in file order', () => {
      const e = invalid('{\n"name": 1,\n"lang": "cobol"\n}');
      assert.deepEqual(
        e.issues.map((i) => [i.path, i.line]),
        [
          ['name', 2],
          ['lang', 3],
        ],
      );
    });
    it('rejects an invalid /regex/ forbidden pattern', () => {
      const e = invalid('{"name": "x", "forbidden_patterns": ["/(unclosed/"]}');
      assert.match(e.message, /forbidden_patterns: a \/regex\/ entry is not a valid regular expression/);
    });
  });

  describe('given an unknown key', () => {
    it('is an error with a suggestion when close to a known key', () => {
      const e = invalid('{\n  "name": "x",\n  "budgest": {}\n}');
      assert.equal(e.issues[0]?.line, 3);
      assert.match(e.message, /ralph\.config\.json:3:3: budgest: unknown key "budgest"; did you mean "budgets"\?/);
    });
    it('suggests within nested objects', () => {
      const e = invalid('{"name": "x", "limits": {"max_retry": 2}}');
      assert.match(e.message, /limits\.max_retry: unknown key "max_retry"; did you mean "max_retries"\?/);
    });
    it('given a key earlier versions took and never read, then it is refused saying what to do', () => {
      const e = invalid('{\n  "name": "x",\n  "intervals": {\n    "sleep": {"implement": 5}\n  }\n}');
      assert.equal(e.issues.length, 1);
      assert.equal(e.issues[0]?.line, 4);
      assert.match(e.message, /ralph\.config\.json:4:5: intervals\.sleep: removed: the loop never sleeps between phases .*Delete the key/);
    });
    it('lists the known keys when nothing is close', () => {
      const e = invalid('{"name": "x", "workers": {"zzzzzzzz": 1}}');
      assert.match(e.message, /unknown key "zzzzzzzz"; known keys: count, effort/);
    });
  });

  describe('given text that is not JSON', () => {
    it('names the line and column where it stops being JSON', () => {
      const e = invalid('{\n  "name": "x",\n  "model": "opus"\n  "lang": "go"\n}');
      assert.equal(e.issues[0]?.line, 4);
      assert.equal(e.issues[0]?.column, 3);
      assert.match(e.message, /^\/p\/ralph\.config\.json:4:3: not valid JSON: unexpected '"', expected ',' or '}'/);
    });
    it('reports a trailing comma and an empty file', () => {
      assert.match(invalid('{"name": "x",\n}').message, /:2:1: not valid JSON: trailing comma/);
      assert.match(invalid('').message, /:1:1: not valid JSON: the file is empty/);
    });
    it('rejects a JSON value that is not an object', () => {
      assert.match(invalid('[1]').message, /expected a JSON object, got an array/);
    });
  });

  describe('forbidden patterns', () => {
    it('split the seed string on | with \\| as a literal bar', () => {
      assert.deepEqual(splitPatternString('a|b\\|c| d '), ['a', 'b|c', 'd']);
    });
    it('are literal unless written /regex/flags', () => {
      assert.deepEqual(parseForbiddenPattern('eval('), { kind: 'literal', text: 'eval(' });
      const r = parseForbiddenPattern('/console\\.log\\(/i');
      assert.equal(r.kind, 'regex');
      assert.ok(r.kind === 'regex' && r.regex.test('CONSOLE.LOG('));
    });
  });

  describe('suggestKey', () => {
    it('matches ignoring case and separators, and refuses far keys', () => {
      assert.equal(suggestKey('testUnit', ['test', 'test_unit']), 'test_unit');
      assert.equal(suggestKey('qqqq', ['name', 'lang']), undefined);
    });
  });

  describe('the generated JSON Schema', () => {
    const schema = configJsonSchema();
    it('is draft-07 with a description on every property', () => {
      assert.equal(schema['$schema'], 'http://json-schema.org/draft-07/schema#');
      const missing: string[] = [];
      const walk = (s: Record<string, unknown>, at: string): void => {
        const props = s['properties'] as Record<string, Record<string, unknown>> | undefined;
        for (const [k, v] of Object.entries(props ?? {})) {
          if (typeof v['description'] !== 'string') missing.push(`${at}.${k}`);
          walk(v, `${at}.${k}`);
        }
      };
      walk(schema, '$');
      assert.deepEqual(missing, []);
    });
    it('validates the seed sample config and a config init writes', () => {
      assert.deepEqual(checkJsonSchema(schema, SEED_SAMPLE), []);
      const full = {
        name: 'x',
        lang: 'go',
        budgets: { primary: 1, per_day: '10' },
        workers: { count: 2, effort: ['S', 'M'] },
        backends: { worker: 'codex', codex: { prices: { input_per_mtok: 2 } } },
      };
      assert.deepEqual(checkJsonSchema(schema, full), []);
      assert.ok(validateConfig(full).ok);
    });
    it('rejects what zod rejects: unknown key, wrong type, bad enum, missing name', () => {
      for (const bad of [
        { ...SEED_SAMPLE, budgest: {} },
        { ...SEED_SAMPLE, workers: { count: 'two' } },
        { ...SEED_SAMPLE, lang: 'cobol' },
        { ...SEED_SAMPLE, budgets: { primary: 'lots' } },
        { lang: 'go' },
      ]) {
        assert.notDeepEqual(checkJsonSchema(schema, bad), [], JSON.stringify(bad));
        assert.equal(validateConfig(bad).ok, false, JSON.stringify(bad));
      }
    });
  });
});
