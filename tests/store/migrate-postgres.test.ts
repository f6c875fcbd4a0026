import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../../src/db/migrate.postgres';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';

describeWith('postgres', 'migrations on PostgreSQL', (server) => {
  let database: TestDatabase;
  const options = () => ({ url: database.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 });

  beforeEach(async () => {
    database = await createTestDatabase(server);
  });

  afterEach(async () => {
    await database.drop();
  });

  it('when run twice, then the first applies every file in order and the second applies nothing', async () => {
    const migrations = loadPostgresMigrations();

    const first = await migratePostgres(options(), migrations);
    const second = await migratePostgres(options(), migrations);

    expect({ first, second }).toEqual({ first: ['001-create-plants.sql', '002-plants-by-tag.sql', '003-webhook-outbox.sql', '004-webhook-trace.sql', '005-plant-events.sql', '006-webhook-event-type.sql', '007-restore-marks.sql', '008-plants-write.sql', '009-plant-times-and-keys.sql', '010-plant-orders.sql', '011-plant-search.sql', '012-idempotency-keys.sql', '013-plant-name-covering.sql', '014-keyed-write-answers.sql', '015-tenant-columns.sql', '016-tenant-indexes.sql', '017-tenant-keys.sql'], second: [] });
  });

  it('when an applied file was edited, then the run stops with a message naming it and applies nothing more', async () => {
    const migrations = loadPostgresMigrations();
    await migratePostgres(options(), migrations.slice(0, 1));
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query("UPDATE schema_migrations SET checksum = 'edited' WHERE name = '001-create-plants.sql'");

    const run = migratePostgres(options(), migrations);

    await expect(run).rejects.toThrow(/^migration 001-create-plants\.sql was edited after it was applied/);
    const { rows } = await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
    await client.end();
    expect(rows.map((row) => row.name)).toEqual(['001-create-plants.sql']);
  });

  it('when a file fails half way, then neither its changes nor its record stay', async () => {
    const broken = [{ name: '001-broken.sql', sql: 'CREATE TABLE half (id int); SELECT no_such_function();', checksum: 'x', crlfChecksum: 'y' }];

    await expect(migratePostgres(options(), broken)).rejects.toThrow(/no_such_function/);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const { rows } = await client.query<{ tables: string }>("SELECT count(*)::text AS tables FROM pg_tables WHERE tablename IN ('half') OR (tablename = 'schema_migrations' AND EXISTS (SELECT 1 FROM schema_migrations))");
    await client.end();
    expect(rows[0]?.tables).toBe('0');
  });
});
