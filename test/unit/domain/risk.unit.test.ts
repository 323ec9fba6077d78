// Risk tiers from files, source and effort (seed: Risk Classification).
import assert from 'node:assert/strict';
import {
  assessChange,
  classifyRisk,
  CONTROL_FILES_REASON,
  DEFAULT_RISK_PATTERNS,
  isControlPath,
  symlinkDestination,
  type RiskPatterns,
} from '../../../src/domain/risk';

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
      '.github/CODEOWNERS',
      'schemas/x.yaml',
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

  it('given CI definitions or files that make git run programs, then tier 2 by default (even S effort docs-only)', () => {
    for (const f of [
      '.github/workflows/ci.yml',
      '.gitlab-ci.yml',
      '.ci/run',
      '.gitattributes',
      'sub/dir/.gitattributes',
      '.gitmodules',
      '.husky/pre-commit',
    ]) {
      assert.equal(classifyRisk(['docs/a.md', f], S), 2, f);
    }
  });
});

describe('domain/risk assessChange', () => {
  const M = { effort: 'M', source: 'ES:12' };

  it("given Ralph's control files, then tier 3, listed, with the reason; patterns cannot switch it off", () => {
    const none: RiskPatterns = { tier3: [], tier2: [], tier2_sources: [], tier0: ['**'] };
    for (const f of ['ralph.config.json', '.ralph/ralph.events.journal', '.ralph/inbox/cmd_x.json', '.RALPH/STATE.json']) {
      const a = assessChange([{ path: 'src/a.ts' }, { path: f }], M, none);
      assert.equal(a.tier, 3, f);
      assert.deepEqual(a.controlFiles, [f]);
      assert.match(a.reasons[0] ?? '', new RegExp(CONTROL_FILES_REASON.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    }
    // A rename away from a control file is a change to it too.
    assert.deepEqual(assessChange([{ path: 'x.json', oldPath: 'ralph.config.json' }], M).controlFiles, ['ralph.config.json']);
    assert.equal(isControlPath('sub/ralph.config.json'), false);
    assert.equal(isControlPath('.ralphrc'), false);
  });

  it('given a symlink whose target leaves the repository, then tier 3 naming the link and target', () => {
    for (const [link, target] of [
      ['lnk', '/etc/passwd'],
      ['docs/l', '../../outside'],
      ['a/b/c', '../../../x'],
      ['l', 'C:\\Windows'],
    ] as const) {
      const a = assessChange([{ path: link, symlinkTarget: target }], M);
      assert.equal(a.tier, 3, `${link} -> ${target}`);
      assert.match(a.reasons[0] ?? '', /points outside the repository/);
      assert.ok((a.reasons[0] ?? '').includes(link));
    }
  });

  it("given a symlink into .git or Ralph's state, or with an unknown target, then tier 3", () => {
    assert.equal(assessChange([{ path: 'docs/h', symlinkTarget: '../.git/hooks' }], M).tier, 3);
    assert.equal(assessChange([{ path: 'db', symlinkTarget: '.ralph/ralph.db' }], M).tier, 3);
    assert.equal(assessChange([{ path: 'l', symlinkTarget: null }], M).tier, 3);
  });

  it('given a symlink inside the repository, then it is classified like any file', () => {
    assert.equal(assessChange([{ path: 'docs/l', symlinkTarget: '../src/a.ts' }], M).tier, 1);
    assert.equal(symlinkDestination('docs/l', '../src/./a.ts'), 'src/a.ts');
    assert.equal(symlinkDestination('l', '..'), null);
  });

  it('given tier-3 and tier-2 files, then the reasons name each path and pattern (never content)', () => {
    const a = assessChange([{ path: 'config/.env' }, { path: 'src/auth/x.ts' }], M);
    assert.equal(a.tier, 3);
    assert.deepEqual(a.reasons, ['config/.env matches the tier-3 pattern **/.env']);
    assert.deepEqual(assessChange([{ path: 'src/auth/x.ts' }], M).reasons, ['src/auth/x.ts matches the tier-2 pattern **/auth/**']);
  });
});
