// ESLint 9 flat config (issue 17): eslint's and typescript-eslint's recommended basics, plus the
// type-aware rules that catch a promise nobody awaits and an error nobody handles.
// `npm run lint` runs it; test/lint.test.ts runs it under `npm test`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** The folders that hold TypeScript, as tsconfig.json includes them. */
const SOURCE_FOLDERS = ['core', 'log', 'projections', 'query', 'protocols', 'sinks', 'bin', 'bench', 'test'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: SOURCE_FOLDERS.map((folder) => `${folder}/**/*.ts`),
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // Rethrowing what a catch or an AbortSignal handed over (typed unknown or any) passes it on
      // unchanged; what these two refuse is making up a non-Error value.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // A leading underscore marks a binding kept on purpose (a parameter an interface requires).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'all',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      // Walking a scope's parent chain starts at `this` (`for (let s = this; s; s = s.parent)`).
      '@typescript-eslint/no-this-alias': 'off',
    },
  },
  {
    // Tests and benchmarks read JSON answers as `any`; production code keeps the rule.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
);
