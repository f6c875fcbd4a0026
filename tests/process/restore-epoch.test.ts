import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { runCli } from '../helpers/plant-store-cli';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { openStream, type SseEvent } from '../helpers/sse';
import { TOKEN } from '../helpers/test-app';

const ID = 4242;
const auth = { Authorization: `Bearer ${TOKEN}` };

const create = (server: ServerProcess) =>
  fetch(`${server.url}/plants`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ id: ID, name: 'created' }) });

const edit = (server: ServerProcess, name: string, ifMatch?: string) =>
  fetch(`${server.url}/plants/${ID}`, {
    method: 'PATCH',
    headers: { ...auth, 'Content-Type': 'application/merge-patch+json', ...(ifMatch === undefined ? {} : { 'If-Match': ifMatch }) },
    body: JSON.stringify({ name }),
  });

const positionOf = (etag: string | null) => BigInt((etag ?? '""').slice(1, -1));

/** The stream's blocks up to and with its first change event, after one more edit. */
async function resumeFrom(server: ServerProcess, position: bigint, name: string): Promise<SseEvent[]> {
  const stream = await openStream(server.url, '/plants/events', { ...auth, 'Last-Event-ID': String(position) });
  try {
    await stream.waitFor((events) => events.some((event) => event.id !== undefined));
    expect((await edit(server, name)).status).toBe(200);
    const events = await stream.waitFor((seen) => seen.some((event) => event.event === 'plant.updated' && event.data?.includes(name) === true));
    return events.filter((event) => event.comment === undefined);
  } finally {
    stream.close();
  }
}

type Store = {
  env: Record<string, string>;
  /** Backs the store up while `server` serves it. */
  backup: () => Promise<void>;
  /** Restores the backup, the service stopped; resolves with the environment that serves the restored store. */
  restore: () => Promise<Record<string, string>>;
};

/**
 * The lost update of issue 30, item 6: create, backup, edit, restore, edit; then the ETag and the position handed
 * out by the edit before the restore must name nothing in the restored store.
 */
async function afterRestore(store: Store) {
  let server = await startServer(store.env);
  let created: Response;
  let before: Response;
  try {
    created = await create(server);
    await store.backup();
    before = await edit(server, 'edited before the restore');
  } finally {
    await server.stop();
  }
  const restoredEnv = await store.restore();
  server = await startServer(restoredEnv);
  try {
    const after = await edit(server, 'edited after the restore');
    const stale = await edit(server, 'edited with the tag from before the restore', before.headers.get('ETag') ?? '');
    const read = await fetch(`${server.url}/plants/${ID}`, { headers: auth });
    const fromBefore = await resumeFrom(server, positionOf(before.headers.get('ETag')), 'edited while a reader resumes');
    const fromBackup = await resumeFrom(server, positionOf(created.headers.get('ETag')), 'edited while another reader resumes');
    return {
      statuses: [created.status, before.status, after.status],
      tags: { created: created.headers.get('ETag'), before: before.headers.get('ETag'), after: after.headers.get('ETag') },
      stale: { status: stale.status, body: await stale.json() },
      read: await read.json(),
      fromBefore,
      fromBackup,
    };
  } finally {
    await server.stop();
  }
}

/** `history`: the restored store holds the backup's events (a backup or a dump does; an export holds plants only). */
function expectNoLostUpdate(outcome: Awaited<ReturnType<typeof afterRestore>>, history = true): void {
  const { tags, fromBefore, fromBackup } = outcome;
  const afterPos = positionOf(tags.after);
  expect(outcome).toMatchObject({
    statuses: [200, 200, 200],
    stale: { status: 412, body: { error: 41201 } },
    read: { id: ID, name: 'edited after the restore' },
  });
  // Every position after the restore is above every position handed out before it.
  expect(afterPos).toBeGreaterThan(positionOf(tags.before));
  // A reader at the edit the backup missed: exactly one reset, positioned at the store's head, then live changes.
  expect(fromBefore.map((event) => event.event ?? 'position')).toEqual(['reset', 'plant.updated']);
  expect(fromBefore[0]).toEqual({ event: 'reset', id: String(afterPos), data: '{"reason":"unknown_position"}' });
  expect(BigInt(fromBefore[1]?.id ?? '0')).toBeGreaterThan(afterPos);
  if (!history) {
    // No event came over with an export: every position handed out before is unknown here.
    expect(fromBackup.map((event) => event.event ?? 'position')).toEqual(['reset', 'plant.updated']);
    return;
  }
  // A reader at a position the backup holds resumes without a reset and sees the edit made after the restore.
  expect(fromBackup.map((event) => event.event ?? 'position').slice(0, 2)).toEqual(['position', 'plant.updated']);
  expect(fromBackup[0]).toEqual({ id: tags.created?.slice(1, -1) });
  expect(fromBackup.filter((event) => event.event === 'reset')).toEqual([]);
  expect(fromBackup.filter((event) => event.event === 'plant.updated').map((event) => event.id)).toContain(String(afterPos));
}

describe('plant-store restore of a SQLite store', () => {
  it.each([
    ['over the store it replaces', 'plants.db'],
    ['into a new path, the store it replaces gone', path.join('new', 'plants.db')],
  ])('when a client holds an ETag and a reader a position from an edit the backup missed, restored %s, then 412 and a reset', async (_how, target) => {
    const dir = tempDataDir();
    const env = { DATABASE_URL: `file:${path.join(dir, 'plants.db')}` };
    const backup = path.join(dir, 'b.db');

    const outcome = await afterRestore({
      env,
      backup: async () => expect(await runCli(['backup', '--to', backup], env)).toMatchObject({ code: 0 }),
      restore: async () => {
        const restored = { DATABASE_URL: `file:${path.join(dir, target)}` };
        expect(await runCli(['restore', '--from', backup], restored)).toMatchObject({ code: 0 });
        return restored;
      },
    });

    expectNoLostUpdate(outcome);
  }, 60_000);

  it('when the store is rebuilt from an export with plant-store import, then the old ETag answers 412 and old positions a reset', async () => {
    const dir = tempDataDir();
    const env = { DATABASE_URL: `file:${path.join(dir, 'plants.db')}` };
    let exported = '';

    const outcome = await afterRestore({
      env,
      backup: async () => {
        exported = (await runCli(['export'], env)).stdout;
      },
      restore: async () => {
        const rebuilt = { DATABASE_URL: `file:${path.join(dir, 'rebuilt.db')}` };
        expect(await runCli(['import'], rebuilt, exported)).toMatchObject({ code: 0 });
        return rebuilt;
      },
    });

    expectNoLostUpdate(outcome, false);
  }, 60_000);
});

describeWith('postgres', 'pg_dump and pg_restore of a PostgreSQL store', (server) => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()));
  });

  it.each([
    ['into a fresh database, as docs/backups.md does', false],
    ['over the same database (pg_restore --clean)', true],
  ])('when a client holds an ETag and a reader a position from an edit the dump missed, restored %s, then 412 and a reset', async (_how, inPlace) => {
    const original = await createTestDatabase(server);
    databases.push(original);
    const dump = path.join(tempDataDir(), 'plants.dump');

    const outcome = await afterRestore({
      env: { DATABASE_URL: original.url },
      backup: () => Promise.resolve(execFileSync('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, original.url])).then(() => undefined),
      restore: async () => {
        if (inPlace) {
          execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--clean', '--if-exists', `--dbname=${original.url}`, dump]);
          return { DATABASE_URL: original.url };
        }
        const restored = await createTestDatabase(server);
        databases.push(restored);
        execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored.url}`, dump]);
        return { DATABASE_URL: restored.url };
      },
    });

    expectNoLostUpdate(outcome);
  }, 90_000);

  it('when a fresh database is filled from an export with plant-store import, then the old ETag answers 412 and old positions a reset', async () => {
    const original = await createTestDatabase(server);
    const rebuilt = await createTestDatabase(server);
    databases.push(original, rebuilt);
    let exported = '';

    const outcome = await afterRestore({
      env: { DATABASE_URL: original.url },
      backup: async () => {
        exported = (await runCli(['export'], { DATABASE_URL: original.url })).stdout;
      },
      restore: async () => {
        expect(await runCli(['import'], { DATABASE_URL: rebuilt.url }, exported)).toMatchObject({ code: 0 });
        return { DATABASE_URL: rebuilt.url };
      },
    });

    expectNoLostUpdate(outcome, false);
  }, 90_000);
});
