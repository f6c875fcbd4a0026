import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { aNewPlant } from '../helpers/plants';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { WEBHOOK_SECRET } from '../helpers/webhook-receiver';
import { sleep } from '../helpers/common';
import { perProcess } from '../helpers/test-workers';

const PRELOAD = path.resolve(__dirname, '..', 'fixtures', 'report-loaded-modules.cjs');

/** The npm packages among the modules the running server has loaded, asked once it is listening and has served a create. */
async function packagesLoaded(env: Record<string, string>): Promise<Set<string>> {
  const file = path.join(tempDataDir(), 'modules.json');
  let server: ServerProcess | undefined;
  try {
    server = await startServer({ ...env, LOADED_MODULES_FILE: file }, { nodeArgs: ['--require', PRELOAD] });
    const created = await fetch(`${server.url}/plants`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(aNewPlant()),
    });
    expect(created.status).toBe(200);
    server.child.kill('SIGUSR2');
    const deadline = Date.now() + 5000;
    while (!existsSync(file) && Date.now() < deadline) await sleep(20);
    const modules = JSON.parse(readFileSync(file, 'utf8')) as string[];
    return new Set(modules.flatMap((module) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module)?.[1] ?? []));
  } finally {
    await server?.stop();
  }
}

perProcess('what one process loads; the supervisor\'s own modules are checked by workers-supervisor.test.ts').describeWith('postgres', 'the modules a PostgreSQL process loads', (serverUrl) => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase(serverUrl);
  });

  afterEach(async () => {
    await database.drop();
  });

  it('when no webhook is configured, then neither the SQLite driver nor undici is loaded', async () => {
    const packages = await packagesLoaded({ DATABASE_URL: database.url });

    expect({ pg: packages.has('pg'), betterSqlite3: packages.has('better-sqlite3'), undici: packages.has('undici') }).toEqual({
      pg: true,
      betterSqlite3: false,
      undici: false,
    });
  });

  it('when a webhook subscriber is configured, then undici is loaded for its deliveries, and still no SQLite driver', async () => {
    const packages = await packagesLoaded({ DATABASE_URL: database.url, WEBHOOK_URLS: 'http://127.0.0.1:9/hooks', WEBHOOK_SECRET });

    expect({ betterSqlite3: packages.has('better-sqlite3'), undici: packages.has('undici') }).toEqual({ betterSqlite3: false, undici: true });
  });
});

perProcess('what one process loads; the supervisor\'s own modules are checked by workers-supervisor.test.ts').describe('the modules a SQLite process loads', () => {
  it('when the store is a SQLite file, then the SQLite driver is loaded and pg is not', async () => {
    const packages = await packagesLoaded({});

    expect({ pg: packages.has('pg'), betterSqlite3: packages.has('better-sqlite3'), undici: packages.has('undici') }).toEqual({
      pg: false,
      betterSqlite3: true,
      undici: false,
    });
  });
});
