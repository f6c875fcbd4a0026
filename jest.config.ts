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

// The HTTP files whose behaviour crosses workers, which the four-worker projects run on both stores: the change
// feed's wake-ups (commit notices on SQLite, LISTEN/NOTIFY on PostgreSQL), webhooks (the SQLite leader, SKIP LOCKED
// claims and a dispatcher per worker on PostgreSQL), idempotency keys in flight, batches and writes (the write turn,
// each worker's pool), the rate limit's credits, the merged scrape. The rest of tests/api (reads, validation, auth)
// runs at one worker on both stores: all of it at four too put .ci/run at 33 minutes on a machine with its images
// already built, too near its 40 (docs/performance/test-suites.md).
const CROSSING_WORKERS = [
  'change-feed',
  'change-feed-filters',
  'feed-burst',
  'feed-metrics',
  'feed-resume-race',
  'tenants-feed',
  'stream-credentials',
  'webhooks',
  'webhooks-postgres',
  'webhook-*',
  'tenants-webhooks',
  'idempotency-*',
  'batch-plants',
  'create-plant',
  'edit-plant',
  'put-plant',
  'delete-plant',
  'group-commit',
  'writes-stores-agree',
  'paging-under-writes',
  'tenant-auth-rate-limit',
  'metrics',
  'readiness-writable',
].map((name) => `<rootDir>/tests/api/${name}.test.ts`);

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
    // The process suite and the HTTP files that cross workers again with the service at WORKERS=4: the built
    // server, its supervisor and four forked workers (tests/helpers/test-app.workers.ts; docs/decisions/tests.md,
    // "Tests at several workers"), on SQLite, and the same HTTP files on PostgreSQL.
    { ...project, displayName: 'workers', testMatch: ['<rootDir>/tests/process/**/*.test.ts', ...CROSSING_WORKERS], setupFiles: ['<rootDir>/tests/helpers/workers-env.ts'] },
    ...(process.env.TEST_DATABASE_URL
      ? [
          {
            ...project,
            displayName: 'postgres-workers',
            testMatch: CROSSING_WORKERS,
            setupFiles: ['<rootDir>/tests/helpers/store-postgres.ts', '<rootDir>/tests/helpers/workers-env.ts'],
          },
        ]
      : []),
  ],
};

export default config;
