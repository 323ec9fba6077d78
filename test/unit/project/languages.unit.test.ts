import * as assert from 'node:assert/strict';
import { LANGUAGES, normaliseLanguage, staticProfile, UnknownLanguageError } from '../../../src/project/languages';

describe('project/languages', () => {
  it('given canonical names and aliases, then the canonical language', () => {
    for (const l of LANGUAGES) assert.equal(normaliseLanguage(l), l);
    assert.equal(normaliseLanguage('TS'), 'typescript');
    assert.equal(normaliseLanguage('c#'), 'csharp');
    assert.equal(normaliseLanguage('golang'), 'go');
    assert.equal(normaliseLanguage(' Python '), 'python');
    for (const js of ['js', 'JavaScript', 'node', 'nodejs']) assert.equal(normaliseLanguage(js), 'javascript');
  });
  it('given JavaScript, then its rules say nothing of types and TypeScript keeps forbidding any', () => {
    const js = staticProfile('javascript');
    assert.ok(!js.forbidden_patterns.some((p) => p.includes('any')), js.forbidden_patterns.join(' '));
    assert.ok(!js.conventions.some((c) => /`any`|TypeScript|types?\b/i.test(c)), js.conventions.join('\n'));
    assert.ok(staticProfile('typescript').forbidden_patterns.includes(': any'));
  });
  it('given an unknown language, then an UnknownLanguageError listing the choices', () => {
    assert.throws(
      () => normaliseLanguage('cobol'),
      (e: unknown) =>
        e instanceof UnknownLanguageError && e.name === 'UnknownLanguageError' && /expected one of rust, python/.test(e.message),
    );
  });
  it('given each language, then the seed table: build, test, lint and forbidden patterns', () => {
    const table: Record<string, [string, string, string, string]> = {
      rust: ['cargo check --workspace', 'cargo test --workspace', 'cargo clippy', '.unwrap()'],
      python: ['compileall', 'pytest', 'ruff check', 'eval('],
      typescript: ['npm run build', 'npm test', 'eslint', 'eval('],
      javascript: ['node --check', 'npm test', 'eslint', 'debugger;'],
      go: ['go build ./...', 'go test ./...', 'golangci-lint', 'panic('],
      java: ['mvn -q compile', 'mvn -q test', 'checkstyle', 'System.out.println'],
      ruby: ['ruby -c', 'rspec', 'rubocop', 'rescue Exception'],
      csharp: ['dotnet build', 'dotnet test', 'dotnet format', 'Console.WriteLine'],
      generic: ['make build', 'make test', 'make lint', 'HACK'],
    };
    for (const lang of LANGUAGES) {
      const p = staticProfile(lang);
      const [build, test, lint, pattern] = table[lang] ?? assert.fail(lang);
      assert.ok(p.build.includes(build), `${lang} build ${p.build}`);
      assert.ok(p.test.includes(test), `${lang} test ${p.test}`);
      assert.ok(p.lint.includes(lint), `${lang} lint ${p.lint}`);
      assert.ok(p.forbidden_patterns.includes(pattern), `${lang} pattern`);
      assert.ok(p.conventions.length > 0);
    }
  });
});
