// The harness's own REQ checks that read the change rather than run a command (seed 001):
// L1b, the share of test lines among the lines a change adds (>= 40 % by default), and the
// mock density rule (mock/spy/fn lines over 30 % of the change's test lines need a
// `// @mock-justified: <reason>` comment in each test file of the change that mocks); and
// reading a coverage tool's percentage for L3. Lines are the non-blank, non-comment lines
// the change adds. Pure.
import picomatch from 'picomatch';
import type { FileAddedLines } from './patchText';

export interface TestShareVerdict {
  readonly ok: boolean;
  readonly testLines: number;
  readonly implLines: number;
  /** test / (test + implementation), percent; 100 when the change adds no code lines. */
  readonly sharePercent: number;
  readonly mockLines: number;
  readonly mockPercent: number;
  /** When the change's test lines are over the mock density limit: its mocking test files without a justification. */
  readonly unjustified: readonly string[];
  readonly message: string;
}

// A mock, spy or stub line in the common test libraries (jest/vitest/sinon/node:test/unittest.mock/...).
const MOCK_LINE =
  /\b(jest\.(fn|mock|spyOn)|vi\.(fn|mock|spyOn)|sinon\.(stub|spy|mock|fake|replace)|mock\.(fn|method|patch|Mock|timers)|MagicMock|Mock\(|mocker\.|spyOn\(|createMock|\.mockReturnValue|\.mockImplementation|\.mockResolvedValue|td\.(func|replace)|gomock|mockall|Mockito\.|when\()|@patch\b/;
const JUSTIFIED = /@mock-justified:\s*\S/;
// Blank and comment lines (the justification comment too) are neither test nor implementation.
const BLANK_OR_COMMENT = /^\s*($|\/\/|#|\/\*|\*)/;

/** Checks L1b on the lines the change adds. Documentation and data files count as neither side. */
export function checkTestShare(
  added: readonly FileAddedLines[],
  opts: { readonly testGlobs: readonly string[]; readonly minSharePercent: number; readonly maxMockPercent: number },
): TestShareVerdict {
  const isTest = picomatch([...opts.testGlobs], { dot: true });
  const isCode = (p: string): boolean => !/\.(md|txt|json|ya?ml|toml|lock|csv|svg|png|jpg|gif)$/i.test(p) && !/(^|\/)AGENTS\.md$/.test(p);
  let testLines = 0;
  let implLines = 0;
  let mockLines = 0;
  const mocking: string[] = [];
  for (const f of added) {
    if (!isCode(f.path)) continue;
    const lines = f.lines.filter((l) => !BLANK_OR_COMMENT.test(l.text));
    if (isTest(f.path)) {
      testLines += lines.length;
      const mocks = lines.filter((l) => MOCK_LINE.test(l.text)).length;
      mockLines += mocks;
      if (mocks > 0 && !f.lines.some((l) => JUSTIFIED.test(l.text))) mocking.push(f.path);
    } else implLines += lines.length;
  }
  const total = testLines + implLines;
  const sharePercent = total === 0 ? 100 : Math.round((testLines * 1000) / total) / 10;
  const mockPercent = testLines === 0 ? 0 : Math.round((mockLines * 1000) / testLines) / 10;
  // The seed's limit is on the change's test lines as a whole (总测试行), not file by file.
  const unjustified = testLines > 0 && mockLines * 100 > opts.maxMockPercent * testLines ? mocking : [];
  const shareOk = implLines === 0 || sharePercent >= opts.minSharePercent;
  const ok = shareOk && unjustified.length === 0;
  const parts = [
    `test lines ${testLines} / (test ${testLines} + implementation ${implLines}) = ${sharePercent}% (minimum ${opts.minSharePercent}%)`,
  ];
  if (!shareOk) parts.push(`too few test lines: write the tests for the acceptance criteria`);
  if (unjustified.length > 0)
    parts.push(
      `mock/spy/fn lines ${mockLines} are ${mockPercent}% of the test lines (limit ${opts.maxMockPercent}%): add a // @mock-justified: <reason> comment to ${unjustified.join(', ')}`,
    );
  return { ok, testLines, implLines, sharePercent, mockLines, mockPercent, unjustified, message: parts.join('\n') };
}

/**
 * The line coverage a tool printed, percent, or null when none is found: c8/istanbul
 * (`Lines : 85.71%`, `All files | 85.71 | … `), coverage.py (`TOTAL … 86%`), go (`coverage:
 * 85.0% of statements`), or a last resort `NN%` on a line that says coverage.
 */
export function parseCoveragePercent(output: string): number | null {
  const patterns = [
    /^\s*Lines\s*:\s*([\d.]+)\s*%/im,
    /^All files\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|\s*[\d.]+\s*\|\s*([\d.]+)/im,
    /^TOTAL\b.*?([\d.]+)%\s*$/im,
    /coverage:\s*([\d.]+)%\s*of statements/i,
    /coverage[^\n%]*?([\d.]+)\s*%/i,
  ];
  for (const p of patterns) {
    const m = p.exec(output);
    if (m?.[1] !== undefined) {
      const n = Number(m[1]);
      if (Number.isFinite(n) && n >= 0 && n <= 100) return n;
    }
  }
  return null;
}

/** The names a module's text exports (TS/JS `export`, Python top-level `def`/`class`, Go capitalised funcs). */
export function exportedNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/^export\s+(?:async\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm))
    if (m[1]) names.add(m[1]);
  for (const m of text.matchAll(/^export\s*\{([^}]*)\}/gm))
    for (const part of (m[1] ?? '').split(',')) {
      const n = part
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (n) names.add(n);
    }
  for (const m of text.matchAll(/^(?:module\.)?exports\.([A-Za-z_$][\w$]*)\s*=/gm)) if (m[1]) names.add(m[1]);
  for (const m of text.matchAll(/^module\.exports\s*=\s*\{([^}]*)\}/gm))
    for (const part of (m[1] ?? '').split(',')) {
      const n = part.trim().split(':')[0]?.trim();
      if (n && /^[A-Za-z_$][\w$]*$/.test(n)) names.add(n);
    }
  for (const m of text.matchAll(/^(?:def|class)\s+([A-Za-z]\w*)/gm)) if (m[1] && !m[1].startsWith('_')) names.add(m[1]);
  for (const m of text.matchAll(/^func\s+([A-Z]\w*)/gm)) if (m[1]) names.add(m[1]);
  return [...names];
}

/** The API summary of a test-utilities module for a REQ's context: its exported declarations' first lines. */
export function apiSummary(text: string): string {
  const names = new Set(exportedNames(text));
  const lines = text
    .split('\n')
    .filter((l) => /^(export\s|module\.exports|exports\.|def\s|class\s|func\s)/.test(l))
    .map((l) => l.replace(/\s*\{\s*$/, '').trimEnd())
    .slice(0, 60);
  return lines.length > 0 ? lines.join('\n') : [...names].join(', ');
}
