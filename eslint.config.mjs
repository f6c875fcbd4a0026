import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';
import { layerZones } from './eslint.layers.mjs';

export default tseslint.config(
  // tests/fixtures/lint/ holds files that break the rules on purpose; tests/unit/layers.test.ts lints them.
  // tests/fixtures/*.cjs are preloads node runs as they are, outside the TypeScript project.
  { ignores: ['dist/', 'dist-bench/', 'coverage/', 'node_modules/', 'data/', 'tests/fixtures/lint/', 'tests/fixtures/*.cjs', 'clients/typescript/dist/', 'examples/web/dist/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.mjs', 'eslint.layers.mjs', 'tests/helpers/client-transform.cjs', 'bench/*.cjs'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Express 5 awaits the promise a handler returns and routes its rejection to the error middleware.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      'no-control-regex': 'off',
    },
  },
  {
    // The layers of docs/architecture.md: each folder imports only the ones below it, and no two modules import
    // each other. Relative imports name no extension, so the resolver is told to try .ts.
    files: ['src/**/*.ts', 'bench/**/*.ts', 'tests/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json', '.node'] })],
      // Which files import-x parses to follow their imports (no-cycle): without .ts here it would see none.
      'import-x/extensions': ['.ts', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layerZones }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
  {
    // Small enough to read at once (docs/decisions/architecture.md, "Size"); blank lines and comments are free.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 250, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // The composition root reads as a list of parts (docs/architecture.md, "The service's parts"): startService
    // stays under 40 lines.
    files: ['src/service.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 40, skipBlankLines: true, skipComments: true }] },
  },
  {
    files: ['tests/**/*.ts'],
    rules: {
      // supertest bodies are `any` by design; tests assert on them with jest.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  { files: ['eslint.config.mjs', 'eslint.layers.mjs'], ...tseslint.configs.disableTypeChecked },
  // Plain JavaScript run by node itself (the client's type generator, a jest transform, bench tools): no type information.
  {
    files: ['clients/typescript/scripts/*.mjs', 'tests/helpers/*.cjs', 'bench/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: { process: 'readonly', fetch: 'readonly', URL: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', console: 'readonly', performance: 'readonly' } },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
);
