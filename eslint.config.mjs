// Flat ESLint config: typescript-eslint's recommended rules plus the layers, enforced by
// no-restricted-imports (test/unit/lint/layers.unit.test.ts proves each rule fails on a violation):
//   - only src/extension/ imports vscode;
//   - nothing in src/ imports test/ (test code must never be bundled into dist/);
//   - src/domain/ is pure: it imports only domain/, shared/ and libraries, no Node built-ins;
//   - webview-ui/ is browser code: of src/ it imports only protocol/;
//   - src/session/ (the host-neutral engine session) imports no host: not src/extension/;
//   - src/control/ sits on the store, domain/ and shared/, and of project/ only the config
//     module (project/config.ts with its parsers), which itself imports only domain/ and shared/.
// A later block replaces (does not merge) the rule's options for its files, so each block
// repeats the restrictions that still apply there.
// Files in src/ and webview-ui/ stay under 400 lines (ralph/max-lines): a longer one says why
// in its first line, `// Over 400 lines because <reason>`, the only way out (the lint test
// lints every long file with inline disables ignored).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const noVscode = { name: 'vscode', message: 'Only src/extension/ may import vscode.' };
const noTest = { regex: '(^|/)test/', message: 'Nothing in src/ imports test/: test code would be bundled into dist/.' };
const domainOnly = {
  regex: '^\\.\\./(?!shared/)|^node:',
  message: 'src/domain/ is pure: it imports only domain/, shared/ and libraries (no Node built-ins).',
};
const webviewOnlyProtocol = {
  regex: '(^|/)src/(?!protocol/)',
  message: 'webview-ui/ is browser code: of src/ it imports only protocol/.',
};
const noHost = {
  regex: '^\\.\\./extension/',
  message: 'src/session/ is host-neutral: it imports nothing from src/extension/ (the extension adapts it).',
};
const controlBelow = {
  regex: '^\\.\\./(?!(domain|shared|store)/|project/config$)',
  message: 'src/control/ imports only control/, store/, domain/, shared/ and the config module (project/config).',
};
// The config module: project/config.ts and the parsers it uses.
const CONFIG_MODULE = ['src/project/config.ts', 'src/project/jsonPositions.ts', 'src/project/result.ts', 'src/project/languages.ts'];
const configBelow = {
  regex: '^\\.\\./(?!(domain|shared)/)|^\\./(?!(config|jsonPositions|result|languages)$)',
  message: 'The config module (project/config.ts and its parsers) imports only domain/, shared/ and itself: control/ builds on it.',
};

const MAX_LINES = 400;
const REASON_LINE = /^\/\/ Over 400 lines because \S/;
const maxLinesOrReason = {
  meta: {
    type: 'suggestion',
    schema: [],
    messages: {
      tooLong:
        'This file has {{lines}} lines (over ' +
        MAX_LINES +
        '): split it into modules named for what they own, or give the reason in its first line: `// Over 400 lines because …`.',
    },
  },
  create(context) {
    return {
      Program() {
        const lines = context.sourceCode.lines;
        const count = lines.at(-1) === '' ? lines.length - 1 : lines.length;
        if (count <= MAX_LINES) return;
        const first = lines[0]?.startsWith('#!') ? lines[1] : lines[0];
        if (REASON_LINE.test(first ?? '')) return;
        context.report({ loc: { line: 1, column: 0 }, messageId: 'tooLong', data: { lines: String(count) } });
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', '.e2e/**', 'out/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [noVscode] }],
    },
  },
  {
    files: ['src/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode], patterns: [noTest] }] },
  },
  {
    files: ['src/extension/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noTest] }] },
  },
  {
    files: ['src/domain/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode], patterns: [noTest, domainOnly] }] },
  },
  {
    files: ['src/session/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode], patterns: [noTest, noHost] }] },
  },
  {
    files: ['src/control/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode], patterns: [noTest, controlBelow] }] },
  },
  {
    files: CONFIG_MODULE,
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode], patterns: [noTest, configBelow] }] },
  },
  {
    files: ['test/exthost/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['webview-ui/**'],
    languageOptions: { globals: { ...globals.browser } },
    rules: { 'no-restricted-imports': ['error', { paths: [noVscode], patterns: [webviewOnlyProtocol] }] },
  },
  {
    files: ['src/**/*.ts', 'webview-ui/**/*.ts'],
    plugins: { ralph: { rules: { 'max-lines': maxLinesOrReason } } },
    rules: { 'ralph/max-lines': 'error' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
