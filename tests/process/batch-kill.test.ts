import path from 'node:path';
import Database from 'better-sqlite3';
import { uniqueId } from '../helpers/plants';
import { createTestDatabase, queryJson } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { freePort } from '../helpers/ports';
import { requestsUntilKilled } from '../helpers/raw-request';
import { sendUntilKilled } from '../helpers/kill-midway';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { WEBHOOK_SECRET } from '../helpers/webhook-receiver';

// Issue 34: a batch is all or nothing, also when the process is killed (SIGKILL) while batches commit. After a
// restart on the same store, each batch sent is wholly there (its plants, its events consecutive in the feed, its
// webhook rows) or wholly absent; one answered 200 is there; one whose last operation fails is never there.
const requests = requestsUntilKilled(TOKEN);
afterAll(() => requests.close());

// Creates per batch, in turn; a batch of every third fails on a last operation, an update of an id no plant has.
const SIZES = [1000, 200, 999, 50, 1, 600];
const IN_FLIGHT = 6;
// The kill comes with this 200: batches sent after it are in flight (parsed, deciding, committing).
const KILL_AT = 6;
const KILLS = 3;

type Sent = { ids: number[]; failsLast: boolean; status?: number };
/** What the restarted store holds, by plant id: present plants, each event's position, the webhook rows. */
type Stored = { plants: Set<number>; positions: Map<number, bigint[]>; outbox: Map<number, number> };

function batchBody(ids: readonly number[], failsLast: boolean): string {
  const operations: unknown[] = ids.map((id) => ({ op: 'create', plant: { id, name: `batched ${id}`, tag: 'kill' } }));
  if (failsLast) operations.push({ op: 'update', id: uniqueId(), patch: { name: 'never' } });
  return JSON.stringify({ operations });
}

/** Sends batches, IN_FLIGHT at once, and SIGKILLs the server up to 40 ms after the KILL_AT-th 200; resolves once every request is settled. */
async function batchesUntilKilled(server: ServerProcess): Promise<Sent[]> {
  let index = 0;
  const { sent } = await sendUntilKilled<Sent>(server, {
    next: () => {
      const failsLast = index % 3 === 2;
      const size = (SIZES[index % SIZES.length] as number) - (failsLast ? 1 : 0);
      index += 1;
      const batch: Sent = { ids: Array.from({ length: size }, () => uniqueId()), failsLast };
      const send = async () => {
        batch.status = (await requests.send(server.url, 'POST', '/plants/batch', { body: batchBody(batch.ids, failsLast) })).status;
        return batch.status === 200;
      };
      return { item: batch, send };
    },
    inFlight: IN_FLIGHT,
    killAfter: KILL_AT,
    // A moment later, not at an answer (on SQLite a commit and its answers run in one event-loop turn), with
    // batches still being sent: IN_FLIGHT of them are in the process then.
    delayMs: () => 1 + Math.random() * 40,
  });
  return sent;
}

function storedOf(rows: { plants: string[]; events: [string, string][]; outbox: string[] }): Stored {
  const positions = new Map<number, bigint[]>();
  for (const [id, pos] of rows.events) positions.set(Number(id), [...(positions.get(Number(id)) ?? []), BigInt(pos)]);
  const outbox = new Map<number, number>();
  for (const id of rows.outbox) outbox.set(Number(id), (outbox.get(Number(id)) ?? 0) + 1);
  return { plants: new Set(rows.plants.map(Number)), positions, outbox };
}

function storedSqlite(file: string): Stored {
  const db = new Database(file, { readonly: true });
  const texts = (sql: string) => (db.prepare(sql).raw().all() as unknown[][]).map((row) => row.map(String));
  const rows = {
    plants: texts("SELECT id FROM plants WHERE tag = 'kill'").map(([id]) => id as string),
    events: texts('SELECT plant_id, pos FROM plant_events').map(([id, pos]) => [id, pos] as [string, string]),
    outbox: texts('SELECT plant_id FROM webhook_outbox').map(([id]) => id as string),
  };
  db.close();
  return storedOf(rows);
}

function storedPostgres(url: string): Stored {
  const column = <T>(sql: string) => queryJson<T[]>(url, `SELECT coalesce(json_agg(r), '[]') FROM (${sql}) q(r)`);
  return storedOf({
    plants: column<string>("SELECT id::text FROM plants WHERE tag = 'kill'"),
    events: column<[string, string]>('SELECT json_build_array(plant_id::text, pos::text) FROM plant_events'),
    outbox: column<string>('SELECT plant_id::text FROM webhook_outbox'),
  });
}

/** What is wrong with one batch, or nothing: all of it or none of it, in plants, feed and outbox. */
function problemsOf(batch: Sent, index: number, stored: Stored): string[] {
  const { ids, failsLast, status } = batch;
  const name = `batch ${index} (${ids.length} creates${failsLast ? ', failing last' : ''}, answered ${status ?? 'nothing'})`;
  const present = ids.filter((id) => stored.plants.has(id)).length;
  const positions = ids.flatMap((id) => stored.positions.get(id) ?? []).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const outbox = ids.reduce((sum, id) => sum + (stored.outbox.get(id) ?? 0), 0);
  const expectedStatus = failsLast ? 404 : 200;
  if (status !== 0 && status !== expectedStatus) return [`${name}: unexpected status`];
  if (present === 0) {
    if (positions.length > 0 || outbox > 0) return [`${name}: absent, yet ${positions.length} events and ${outbox} webhook rows`];
    return status === 200 ? [`${name}: answered 200 but absent`] : [];
  }
  if (failsLast) return [`${name}: ${present} plants of a failed batch`];
  if (present !== ids.length) return [`${name}: ${present} of ${ids.length} plants`];
  const consecutive = positions.length === ids.length && (positions.at(-1) as bigint) - (positions[0] as bigint) === BigInt(ids.length - 1);
  if (!consecutive) return [`${name}: ${positions.length} events, not consecutive`];
  return outbox === ids.length ? [] : [`${name}: ${outbox} webhook rows`];
}

/** Kills a server on `env`'s store while batches commit, KILLS times, each on the store the last one left; restarts it and answers each batch's problems. */
async function killAndCheck(env: Record<string, string>, read: () => Stored) {
  const hooks = { WEBHOOK_URLS: `http://127.0.0.1:${await freePort()}/hooks`, WEBHOOK_SECRET, ...env };
  const sent: Sent[] = [];
  for (let kill = 0; kill < KILLS; kill += 1) {
    const killed = await startServer(hooks);
    sent.push(...(await batchesUntilKilled(killed)));
    await killed.exited;
  }
  const second = await startServer(hooks);
  const stored = read();
  await second.stop();
  return { sent, problems: sent.flatMap((batch, index) => problemsOf(batch, index, stored)) };
}

function expectAllOrNothing({ sent, problems }: Awaited<ReturnType<typeof killAndCheck>>): void {
  expect(problems).toEqual([]);
  expect(sent.filter((batch) => batch.status === 200).length).toBeGreaterThanOrEqual(KILL_AT * KILLS);
  // The kill met batches in flight: some were never answered.
  expect(sent.filter((batch) => batch.status === 0).length).toBeGreaterThan(0);
}

describe('POST /plants/batch under kill -9 (SQLite)', () => {
  it('when the process is killed while batches of up to 1,000 creates commit, then after a restart each batch is all there or not at all', async () => {
    const file = path.join(tempDataDir(), 'plants.db');

    const checked = await killAndCheck({ DATABASE_URL: `file:${file}` }, () => storedSqlite(file));

    expectAllOrNothing(checked);
  }, 120_000);
});

describeWith('postgres', 'POST /plants/batch under kill -9 (PostgreSQL)', (server) => {
  it('when the process is killed while batches of up to 1,000 creates commit, then after a restart each batch is all there or not at all', async () => {
    const database = await createTestDatabase(server);

    try {
      const checked = await killAndCheck({ DATABASE_URL: database.url }, () => storedPostgres(database.url));

      expectAllOrNothing(checked);
    } finally {
      await database.drop();
    }
  }, 120_000);
});
