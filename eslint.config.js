// One lint for the tree (npm run lint; .ci/run runs it). The rules chosen catch defects: a promise nobody awaits or
// catches (an app left waiting, an unhandled rejection that ends the process), a variable left unused, a switch
// over a generated union that misses a member (a new message type must fail until it is handled), `any` in what
// ships. Style is Prettier's (.prettierrc.json), so no rule here argues about layout.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // generated/ is written by `npm run gen` and checked by `npm run gen:check`; docs/ is rendered; the rest is what
  // .gitignore keeps out of the repository (compiled dist/, staged build/, databases, reports, results).
  globalIgnores([
    'generated/',
    'docs/',
    'dist/',
    'build/',
    'data/',
    'test-output/',
    'bench/results/',
    '**/node_modules/',
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      // A `let` assigned once, later, is often read first by a closure made before it (a handler, a getter).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Tests and tools read untyped JSON (frames, reports) on purpose; what ships may not.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error' },
  },
  {
    files: ['test/**/*.ts'],
    // chai's `expect(x).to.be.true` is an expression statement by design.
    rules: { '@typescript-eslint/no-unused-expressions': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: { globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The dashboard's scripts run in the browser, served as they are.
    files: ['src/dashboard/assets/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  prettier,
);
