import { spawn } from 'node:child_process';
import { aNewPlant } from '../helpers/plants';
import { adminUrl, runSql } from '../helpers/postgres';
import { appForAll, sleep } from '../helpers/fixtures';
import { defaultStore, postPlant } from '../helpers/test-app';

// Ready means a write can commit, on both stores. SQLite's read-only store is in store-faults.test.ts; here the
// PostgreSQL database refuses writes while it still answers reads.
const postgresOnly = defaultStore() === 'postgres' ? describe : describe.skip;

const READ_ONLY = { error: 50301, message: 'The store is read-only; it cannot take writes.' };

postgresOnly('/readyz on a PostgreSQL database that refuses writes', () => {
  const app = appForAll();
  let database: string;
  // From the server's maintenance database: a session of the test database itself would be read-only too.
  const admin = (sql: string) => runSql(adminUrl() as string, sql);
  // The setting reaches new sessions only, as after a failover: the app's are ended and the pool makes new ones.
  const reconnect = async () => {
    admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND application_name = 'plant-store'`);
    await sleep(200);
  };
  /** /readyz until it answers `status` (a request on a connection that was just ended may fail first). */
  const readyz = async (status: number) => {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const response = await app.request.get('/readyz');
      if (response.status === status) return response;
      await sleep(100);
    }
    return app.request.get('/readyz');
  };

  beforeAll(() => {
    database = new URL(app.dbPath).pathname.slice(1);
  });

  it('when default_transaction_read_only is on, then /readyz and creates answer 503, and both recover when it is off again', async () => {
    const before = await readyz(200);

    admin(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
    await reconnect();
    const readOnly = await readyz(503);
    const create = await postPlant(app, aNewPlant());
    admin(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
    await reconnect();
    const after = await readyz(200);
    const createAfter = await postPlant(app, aNewPlant());

    expect(before.status).toBe(200);
    expect({ status: readOnly.status, retryAfter: readOnly.headers['retry-after'], body: readOnly.body }).toEqual({ status: 503, retryAfter: '1', body: READ_ONLY });
    expect({ status: create.status, error: create.body.error }).toEqual({ status: 503, error: 50301 });
    expect({ status: after.status, body: after.body }).toEqual({ status: 200, body: { status: 'ready' } });
    expect(createAfter.status).toBe(200);
  });

  it('when another session holds an exclusive lock on plants, then /readyz stays 200 and answers at once', async () => {
    const locker = runLockHolder(app.dbPath);
    await sleep(300);

    const started = performance.now();
    const response = await app.request.get('/readyz');
    const elapsed = performance.now() - started;
    locker.kill();

    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { status: 'ready' } });
    expect(elapsed).toBeLessThan(1000);
  });
});

/** psql holding ACCESS EXCLUSIVE on plants for three seconds, in a process of its own. */
function runLockHolder(url: string) {
  return spawn('psql', [url, '-X', '-q', '-c', 'BEGIN; LOCK TABLE plants IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;'], { stdio: 'ignore' });
}
