import { Readable } from 'node:stream';
import pg from 'pg';
import { loadPostgresMigrations, migratePostgres } from '../../src/db/migrate.postgres';
import { exportPostgres, importPostgres } from '../../src/backup/transfer.postgres';
import { postgresPlantTransfer } from '../../src/plants/plant.transfer.postgres';
import type { Lines } from '../../src/transfer';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, queryJson, type TestDatabase } from '../helpers/postgres';
import { TENANTS_EXPORTED as EXPORTED, TIMES } from '../helpers/transfer-lines';

// Tenants through export and import on PostgreSQL (src/plants/plant.transfer.postgres.ts): the same id in three
// tenants stays three plants, an export pages in (tenant, id) order with each line naming its tenant (the shared
// tenant's none), and a line meets a stored plant only in its own tenant.

/** The text's lines as an import reads them, numbered from 1. */
const linesOf = (text: string): Lines => Readable.from(text.split('\n').flatMap((part, index) => (part === '' ? [] : [[part, index + 1]])));

describeWith('postgres', 'export and import with tenants (PostgreSQL)', (server) => {
  let database: TestDatabase;
  const options = () => ({ url: database.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 2000 });
  const exported = async () => {
    let text = '';
    for await (const chunk of (await exportPostgres(options(), postgresPlantTransfer)).chunks()) text += chunk;
    return text;
  };
  const stored = () => queryJson<[string, string, string][]>(database.url, "SELECT coalesce(json_agg(json_build_array(tenant, id::text, name) ORDER BY tenant, id), '[]') FROM plants /* unchecked: test */");

  beforeEach(async () => {
    database = await createTestDatabase(server);
  });

  afterEach(async () => {
    await database.drop();
  });

  it('when lines of three tenants share an id, then the import keeps them apart and the export gives the text back byte for byte', async () => {
    const imported = await importPostgres(options(), linesOf(EXPORTED), postgresPlantTransfer);
    const again = await importPostgres(options(), linesOf(EXPORTED), postgresPlantTransfer);

    expect({ imported: imported.inserted, again: again.unchanged, text: await exported() }).toEqual({ imported: 4, again: 4, text: EXPORTED });
    expect(stored()).toEqual([['', '1', 'shared one'], ['', '2', 'shared two'], ['acme', '1', 'acme one'], ['bob 🌿', '1', 'bob one']]);
  });

  it('when a line names the target\'s TENANT_DEFAULT, then its plant goes to the shared tenant and exports without a tenant', async () => {
    await migratePostgres(options(), loadPostgresMigrations());
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();

    await client.query('BEGIN');
    await postgresPlantTransfer.import(client, linesOf(`{"tenant":"alice","id":7,"name":"alice's",${TIMES}}\n{"tenant":"acme","id":7,"name":"acme's",${TIMES}}\n`), Date.now(), 'alice');
    await client.query('COMMIT');
    await client.end();

    expect(await exported()).toBe(`{"id":7,"name":"alice's",${TIMES}}\n{"tenant":"acme","id":7,"name":"acme's",${TIMES}}\n`);
  });

  it('when a line meets its id in another tenant only, then it is a new plant; in its own tenant with another name, the import stops', async () => {
    await importPostgres(options(), linesOf(EXPORTED), postgresPlantTransfer);

    const other = await importPostgres(options(), linesOf(`{"tenant":"carol","id":2,"name":"carol two"}\n`), postgresPlantTransfer);
    const conflict = importPostgres(options(), linesOf(`{"tenant":"acme","id":1,"name":"not acme's"}\n`), postgresPlantTransfer);

    expect(other.inserted).toBe(1);
    await expect(conflict).rejects.toThrow(/^line 1: plant 1 is stored as \{"tenant":"acme","id":1,"name":"acme one"/);
  });
});
