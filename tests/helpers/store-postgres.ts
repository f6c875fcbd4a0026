// The jest project "postgres" (jest.config.ts): startTestApp builds every app on PostgreSQL.
process.env.TEST_STORE = 'postgres';
