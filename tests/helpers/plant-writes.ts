/**
 * PUT and the feed as the write tests read them, on either store: requests with the test token, and the change
 * events as committed (a connection of their own), so an assertion holds the same on SQLite and PostgreSQL.
 */
import { queryJson } from './postgres';
import { bearer, type TestApp } from './test-app';

/** PUT /plants/{id} with a JSON body (or a raw string sent as is). */
export function putPlant(app: TestApp, id: number | string, body: unknown, headers: Record<string, string> = {}) {
  return app.request
    .put(`/plants/${id}`)
    .set({ 'Content-Type': 'application/json', ...bearer(), ...headers })
    .send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** One change event as stored: its position, kind and plant. */
export type StoredEvent = { pos: bigint; kind: string; id: bigint; name: string | null };

/** The change events of the given plants (every plant: none given), in position order. */
export function storedFeed(app: TestApp, ids: readonly (number | bigint | string)[] = []): StoredEvent[] {
  const where = ids.length === 0 ? 'TRUE' : `plant_id IN (${ids.map((id) => BigInt(id)).join(', ')})`;
  if (app.store === 'postgres') {
    const rows = queryJson<{ pos: string; kind: string; id: string; name: string | null }[]>(
      app.dbPath,
      `SELECT coalesce(json_agg(json_build_object('pos', pos::text, 'kind', kind, 'id', plant_id::text, 'name', name) ORDER BY pos), '[]') FROM plant_events WHERE ${where}`,
    );
    return rows.map((row) => ({ pos: BigInt(row.pos), kind: row.kind, id: BigInt(row.id), name: row.name }));
  }
  return app.inspect().prepare(`SELECT pos, kind, plant_id AS id, name FROM plant_events WHERE ${where} ORDER BY pos`).all() as StoredEvent[];
}
