import Database from 'better-sqlite3';
import { appForAll, sleep } from '../helpers/fixtures';
import { aKey, answer, send } from '../helpers/keyed-requests';
import { storedFeed } from '../helpers/plant-writes';
import { aNewPlant } from '../helpers/plants';
import { queryJson } from '../helpers/postgres';
import type { TestApp } from '../helpers/test-app';

// A key lasts IDEMPOTENCY_TTL: past it, it is absent to a request at once and deleted by the background prune.
const app = appForAll();

/** The keys stored, read on a connection of their own. */
function storedKeys(target: TestApp): number {
  if (target.store === 'postgres') return queryJson<number>(target.dbPath, 'SELECT count(*) FROM idempotency_keys');
  const db = new Database(target.dbPath, { readonly: true });
  const count = db.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number };
  db.close();
  return count.n;
}

/** Makes every stored key expired, as time would, before the background prune (every minute here) comes by. */
function expireKeys(target: TestApp): void {
  if (target.store === 'postgres') {
    queryJson<number>(target.dbPath, "WITH expired AS (UPDATE idempotency_keys SET expires_at = now() - interval '1 second' RETURNING 1) SELECT count(*) FROM expired");
    return;
  }
  const db = new Database(target.dbPath);
  db.prepare('UPDATE idempotency_keys SET expires_at = ?').run(Date.now() - 1000);
  db.close();
}

describe('Idempotency-Key expiry', () => {
  const short = appForAll({ IDEMPOTENCY_TTL: '1s' });

  it('when a key has expired, then the background prune deletes it and the key may be used for a new request', async () => {
    const key = aKey();
    await send(short, 'post', '/plants', aNewPlant(), key);
    expect(storedKeys(short)).toBe(1);

    await sleep(2500);
    const plant = aNewPlant();
    const response = await send(short, 'post', '/plants', plant, key);

    expect(storedKeys(short)).toBe(1);
    expect({ status: response.status, replayed: response.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
    await sleep(2500);
    expect(storedKeys(short)).toBe(0);
  });

  it('when a key has expired and is not pruned yet, then it is absent already: another request with it is processed, and its answer stored', async () => {
    const key = aKey();
    await send(app, 'post', '/plants', aNewPlant(), key);
    expireKeys(app);

    const plant = aNewPlant();
    const response = await send(app, 'post', '/plants', plant, key);
    const again = await send(app, 'post', '/plants', plant, key);

    expect({ status: response.status, replayed: response.headers['idempotent-replayed'] }).toEqual({ status: 200, replayed: undefined });
    expect({ ...answer(again), replayed: again.headers['idempotent-replayed'] }).toEqual({ ...answer(response), replayed: 'true' });
    expect(storedFeed(app, [plant.id as number])).toHaveLength(1);
  });
});
