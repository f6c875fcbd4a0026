import type { Config } from 'jest';

const project = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // Type checking is `npm run typecheck`'s job; here each file is only transpiled (isolatedModules in tsconfig).
  transform: {
    // The client is an ES module package ("type": "module"); here its source runs under jest's CommonJS registry.
    '^.+/clients/typescript/src/.+\\.ts$': '<rootDir>/tests/helpers/client-transform.cjs',
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    // jose ships ES modules only; node runs them under require (dist/), jest's CommonJS registry needs them compiled.
    '^.+/node_modules/jose/.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
} satisfies Config;

const config: Config = {
  // Process tests run the compiled server, so the build happens once before any suite.
  globalSetup: '<rootDir>/tests/helpers/global-setup.ts',
  testTimeout: 30_000,
  projects: [
    { ...project, displayName: 'all' },
    // The HTTP suite again, every app on a PostgreSQL database of its own (tests/helpers/test-app.ts), when a
    // server is named; without one, global-setup prints the line saying which variable enables it.
    ...(process.env.TEST_DATABASE_URL
      ? [{ ...project, displayName: 'postgres', testMatch: ['<rootDir>/tests/api/**/*.test.ts'], setupFiles: ['<rootDir>/tests/helpers/store-postgres.ts'] }]
      : []),
    // The HTTP and process suites again with the service at WORKERS=4: the built server, its supervisor and four
    // forked workers (tests/helpers/test-app.workers.ts; docs/decisions/tests.md, "Tests at several workers").
    { ...project, displayName: 'workers', testMatch: ['<rootDir>/tests/{api,process}/**/*.test.ts'], setupFiles: ['<rootDir>/tests/helpers/workers-env.ts'] },
    ...(process.env.TEST_DATABASE_URL
      ? [
          {
            ...project,
            displayName: 'postgres-workers',
            testMatch: ['<rootDir>/tests/api/**/*.test.ts'],
            setupFiles: ['<rootDir>/tests/helpers/store-postgres.ts', '<rootDir>/tests/helpers/workers-env.ts'],
          },
        ]
      : []),
  ],
};

export default config;
