import pg from 'pg';
import { aNewPlant } from '../helpers/plants';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { rawRequest } from '../helpers/raw-request';
import { startServer, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

// The advisory lock key of src/db/migrate.postgres.ts: another replica migrating holds it.
const MIGRATION_LOCK_KEY = '724118305113';

const get = (server: ServerProcess, path: string) => rawRequest(server.url, { method: 'GET', path }).then(({ status, body }) => ({ status, body }));
const create = (server: ServerProcess) =>
  rawRequest(server.url, { headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(aNewPlant()) }).then(
    (response) => response.status,
  );

describeWith('postgres', 'a replica waiting for another replica’s migration', (adminUrl) => {
  let database: TestDatabase;
  let other: pg.Client;
  let server: ServerProcess | undefined;

  beforeEach(async () => {
    database = await createTestDatabase(adminUrl);
    other = new pg.Client({ connectionString: database.url });
    await other.connect();
  });

  afterEach(async () => {
    await server?.stop();
    await other.end();
    await database.drop();
  });

  it('when another session holds the migration lock, then it listens with /healthz 200 and /readyz 503, and is ready once the lock is released', async () => {
    await other.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);

    server = await startServer({ DATABASE_URL: database.url }, { waitForMigrations: false });
    const health = await get(server, '/healthz');
    const waiting = await get(server, '/readyz');
    const createWhileWaiting = await create(server);
    await other.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    await server.waitForLine((line) => line.msg === 'database ready');
    const ready = await get(server, '/readyz');
    const createWhenReady = await create(server);

    expect(health).toEqual({ status: 200, body: { status: 'ok' } });
    expect(waiting).toEqual({ status: 503, body: { error: 50301, message: 'The store is not migrated to the version this service needs.' } });
    expect(createWhileWaiting).toBe(503);
    expect(ready).toEqual({ status: 200, body: { status: 'ready' } });
    expect(createWhenReady).toBe(200);
  });
});
