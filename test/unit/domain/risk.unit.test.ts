// Risk tiers from files, source and effort (seed: Risk Classification).
import assert from 'node:assert/strict';
import { classifyRisk, DEFAULT_RISK_PATTERNS, type RiskPatterns } from '../../../src/domain/risk';

describe('domain/risk classifyRisk', () => {
  const S = { effort: 'S', source: 'ES:12' };
  const M = { effort: 'M', source: 'ES:12' };

  it('given a secret file among others, then tier 3 (checked first)', () => {
    for (const f of [
      '.env',
      'config/.env.local',
      'prod.env',
      'src/secrets/db.ts',
      'keys/server.key',
      'certs/ca.PEM',
      'src/private_api.ts',
      'Credentials.json',
    ]) {
      assert.equal(classifyRisk(['docs/a.md', f, 'db/migrations/1.sql'], S), 3, f);
    }
  });

  it('given migrations or auth paths, then tier 2', () => {
    for (const f of [
      'sql/migrations/001.sql',
      'db/migrations/2.sql',
      'src/handlers/auth/login.ts',
      'src/auth/x.ts',
      'src/middleware/auth.ts',
    ]) {
      assert.equal(classifyRisk(['src/a.ts', f], S), 2, f);
    }
  });

  it('given a tier-2 source, then tier 2 whatever the files', () => {
    assert.equal(classifyRisk(['docs/a.md'], { effort: 'S', source: 'ES:30' }), 2);
    assert.equal(classifyRisk(['docs/a.md'], { effort: 'S', source: 'ES:67.4' }), 2);
    assert.equal(classifyRisk(['docs/a.md'], { effort: 'S', source: 'ES:12, ES:30.1' }), 2);
    assert.equal(classifyRisk(['docs/a.md'], { effort: 'S', source: 'ES:300' }), 0);
  });

  it('given S effort and only docs/fixtures/ci files, then tier 0; M effort stays 1', () => {
    const files = [
      'README.md',
      'docs/guide.md',
      'test/fixtures/a.json',
      '.github/workflows/ci.yml',
      'schemas/x.yaml',
      '.ci/run',
      'ci/build.sh',
      'test_data/x.csv',
    ];
    assert.equal(classifyRisk(files, S), 0);
    assert.equal(classifyRisk(files, M), 1);
  });

  it('given one product file among docs, then tier 1', () => {
    assert.equal(classifyRisk(['docs/a.md', 'src/parser.ts'], S), 1);
  });

  it('given no files, then tier 1 (unknown change is not trivial)', () => {
    assert.equal(classifyRisk([], S), 1);
  });

  it('normalizes ./ and backslashes', () => {
    assert.equal(classifyRisk(['.\\src\\auth\\x.ts'], S), 2);
    assert.equal(classifyRisk(['./docs/a.md'], S), 0);
  });

  it('uses configured patterns', () => {
    const p: RiskPatterns = { ...DEFAULT_RISK_PATTERNS, tier3: ['**/danger/**'], tier2_sources: ['REQ-9*'] };
    assert.equal(classifyRisk(['a/danger/b.ts'], S, p), 3);
    assert.equal(classifyRisk(['.env'], S, p), 1);
    assert.equal(classifyRisk(['src/a.ts'], { effort: 'M', source: 'REQ-91' }, p), 2);
  });
});
