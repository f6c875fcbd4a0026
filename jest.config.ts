import type { Config } from 'jest';

const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // Type checking is `npm run typecheck`'s job; here each file is only transpiled (isolatedModules in tsconfig).
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // Process tests run the compiled server, so the build happens once before any suite.
  globalSetup: '<rootDir>/tests/helpers/global-setup.ts',
  testTimeout: 30_000,
};

export default config;
