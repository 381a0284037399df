// ESLint 9 flat config: the recommended JavaScript and typescript-eslint rules, and a few more
// that catch real mistakes. Syntax-only (no type information), so it stays fast; `tsc` checks
// the types of src/ and test/. `npm run lint` must find nothing.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // rich-editor.js is the generated bundle of src/web/editor.
  { ignores: ['dist/', 'node_modules/', 'data/', 'test-artifacts/', 'coverage/', 'src/web/assets/rich-editor.js'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always'],
      // The service logs through pino; a stray console line would break the CLI's promised stdout.
      'no-console': 'error',
      // Sanitising and validation match control characters on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // ICU's locale data: the first locale-aware call maps 5–7 MB of the node binary into the
    // server for good (`withThousands` in src/core/values.ts writes numbers instead). The editor
    // runs in the browser.
    files: ['src/**/*.ts'],
    ignores: ['src/web/editor/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString', 'localeCompare'].map((property) => ({
          property,
          message: 'Locale-aware calls load ICU data into the server (5–7 MB of RSS for good); see withThousands in src/core/values.ts.',
        })),
      ],
      'no-restricted-globals': ['error', { name: 'Intl', message: 'Intl loads ICU data into the server (5–7 MB of RSS for good).' }],
    },
  },
  {
    // Reports speak their site's language: the one module that formats with ICU, from a site's first report on.
    files: ['src/core/i18n/locale.ts'],
    rules: { 'no-restricted-globals': 'off' },
  },
  { files: ['test/**'], rules: { 'no-console': 'off' } },
  { files: ['src/web/assets/**/*.js'], languageOptions: { globals: globals.browser } },
  { files: ['bench/**', 'bin/**', 'scripts/**', '**/*.mjs', '*.js', '*.cjs'], languageOptions: { globals: globals.node }, rules: { 'no-console': 'off' } },
);
