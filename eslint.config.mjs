// Flat ESLint config: typescript-eslint's recommended rules plus the layering rule
// (only src/extension may import vscode).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tools/**', '.e2e/**', 'out/**', '**/*.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'Only src/extension/ may import vscode.' }] }],
    },
  },
  {
    files: ['src/extension/**', 'test/exthost/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['webview-ui/**'],
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
