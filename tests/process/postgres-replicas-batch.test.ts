import { uniqueId } from '../helpers/plants';
import { plantRows, queryJson } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { rawRequest } from '../helpers/raw-request';
import { replicasForEach } from '../helpers/fixtures';
import type { ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

const json = { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` };
const batch = async (server: ServerProcess, operations: unknown[]) =>
  (await rawRequest(server.url, { path: '/plants/batch', headers: json, body: JSON.stringify({ operations }) })).status;

describeWith('postgres', 'POST /plants/batch across two replicas', (server) => {
  const replicas = replicasForEach(server);

  it('when both replicas get racing batches over the same two ids, then for each pair exactly one batch applies whole, its events consecutive', async () => {
    const [a, b] = await replicas.two();
    const pairs = Array.from({ length: 40 }, () => [uniqueId(), uniqueId()] as const);

    // A creates (x, y) and B creates (y, x) with other names, at once: each batch conflicts with the other.
    const raced = await Promise.all(
      pairs.map(async ([x, y]) => {
        const [onA, onB] = await Promise.all([
          batch(a, [{ op: 'create', plant: { id: x, name: `A ${x}` } }, { op: 'create', plant: { id: y, name: `A ${y}` } }]),
          batch(b, [{ op: 'create', plant: { id: y, name: `B ${y}` } }, { op: 'create', plant: { id: x, name: `B ${x}` } }]),
        ]);
        return { x, y, onA, onB };
      }),
    );
    const rows = new Map(plantRows(replicas.url).map((row) => [Number(row.id), row.name]));
    const events = queryJson<{ id: string; pos: string }[]>(replicas.url, "SELECT coalesce(json_agg(json_build_object('id', plant_id::text, 'pos', pos::text) ORDER BY pos), '[]') FROM plant_events");
    const posOf = new Map(events.map((event) => [Number(event.id), BigInt(event.pos)]));

    for (const { x, y, onA, onB } of raced) {
      const winner = rows.get(x)?.startsWith('A') === true ? 'A' : 'B';
      expect({ x, statuses: [onA, onB], names: [rows.get(x), rows.get(y)] }).toEqual({
        x,
        statuses: winner === 'A' ? [200, 400] : [400, 200],
        names: winner === 'A' ? [`A ${x}`, `A ${y}`] : [`B ${x}`, `B ${y}`],
      });
      const [first, second] = winner === 'A' ? [posOf.get(x), posOf.get(y)] : [posOf.get(y), posOf.get(x)];
      expect((second ?? 0n) - (first ?? 0n)).toBe(1n);
    }
    expect(events).toHaveLength(pairs.length * 2);
  }, 60_000);
});
