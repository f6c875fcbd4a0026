// The jest projects "workers" and "postgres-workers" (jest.config.ts): the service at four workers (tests/helpers/test-workers.ts).
process.env.TEST_WORKERS = '4';
