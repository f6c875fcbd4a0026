import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../../src/db/migrate.postgres';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';

/**
 * A sort=name page on PostgreSQL is an index-only scan of plants_tenant_by_name (migrations/postgres/016, as 013's
 * plants_by_name before tenants): the index must hold every column GET /plants answers, and the tenant it leads with. A member added to plants without being added to the index would
 * turn every name page back into one heap read per plant; this names the missing column.
 */
describeWith('postgres', 'the name order index on PostgreSQL', (server) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(server);
  });

  afterEach(async () => {
    await database.drop();
  });

  it('when the store is migrated, then plants_tenant_by_name holds every column of plants but version', async () => {
    await migratePostgres({ url: database.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 }, loadPostgresMigrations());
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();

    const table = await client.query<{ name: string }>("SELECT attname AS name FROM pg_attribute WHERE attrelid = 'plants'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attname");
    const index = await client.query<{ name: string }>(
      "SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) WHERE i.indexrelid = 'plants_tenant_by_name'::regclass ORDER BY a.attname",
    );
    await client.end();

    expect(index.rows.map((row) => row.name)).toEqual(table.rows.map((row) => row.name).filter((name) => name !== 'version'));
  });
});
