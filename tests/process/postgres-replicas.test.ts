import { aNewPlant, uniqueId } from '../helpers/plants';
import { plantRows, queryJson } from '../helpers/postgres';
import { describeWith } from '../helpers/optional-services';
import { rawRequest } from '../helpers/raw-request';
import { replicasForEach } from '../helpers/fixtures';
import type { ServerProcess } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { startReceiver, WEBHOOK_SECRET, type Receiver } from '../helpers/webhook-receiver';
import { sleep } from '../helpers/common';
import { testWorkers } from '../helpers/test-workers';

const json = { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` };
const post = async (server: ServerProcess, body: unknown) => (await rawRequest(server.url, { headers: json, body: JSON.stringify(body) })).status;

describeWith('postgres', 'several replicas on one PostgreSQL database', (server) => {
  const replicas = replicasForEach(server);

  it('when three replicas start at once on an empty database, then each migration is applied exactly once and all are ready', async () => {
    const started = await replicas.start(3);

    const ready = await Promise.all(started.map(async (replica) => (await rawRequest(replica.url, { method: 'GET', path: '/readyz' })).status));
    // Every process migrates (each worker of each replica; startServer waits for all of their lines).
    const applied = started.flatMap((replica) => replica.lines.filter((line) => line.msg === 'database ready').map((line) => line.applied as string[]));
    const recorded = queryJson<string[]>(replicas.url, 'SELECT json_agg(name ORDER BY name) FROM schema_migrations');

    expect(ready).toEqual([200, 200, 200]);
    expect(recorded).toEqual(['001-create-plants.sql', '002-plants-by-tag.sql', '003-webhook-outbox.sql', '004-webhook-trace.sql', '005-plant-events.sql', '006-webhook-event-type.sql', '007-restore-marks.sql', '008-plants-write.sql', '009-plant-times-and-keys.sql', '010-plant-orders.sql', '011-plant-search.sql', '012-idempotency-keys.sql', '013-plant-name-covering.sql', '014-keyed-write-answers.sql', '015-tenant-columns.sql', '016-tenant-indexes.sql', '017-tenant-keys.sql']);
    expect(applied.flat().sort()).toEqual(recorded);
    expect(applied).toHaveLength(3 * testWorkers());
    expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
  });

  it('when both replicas get concurrent creates of the same ids, then one content wins per id and retries agree on either replica', async () => {
    const [a, b] = await replicas.two();
    const ids = Array.from({ length: 60 }, () => uniqueId());
    const contents = (id: number) => ({ A: { id, name: `from A ${id}` }, B: { id, name: `from B ${id}`, tag: 'b' } });

    // For each id: one content to A, another to B, and the A content again to B, all at once.
    const raced = await Promise.all(
      ids.map(async (id) => {
        const { A, B } = contents(id);
        const [onA, onB, sameAsAOnB] = await Promise.all([post(a, A), post(b, B), post(b, A)]);
        return { id, onA, onB, sameAsAOnB };
      }),
    );
    const rows = new Map(plantRows(replicas.url).map((row) => [Number(row.id), row]));

    for (const { id, onA, onB, sameAsAOnB } of raced) {
      const { A, B } = contents(id);
      const winner = rows.get(id)?.name === A.name ? 'A' : 'B';
      expect({ id, row: rows.get(id), statuses: [onA, onB, sameAsAOnB] }).toEqual({
        id,
        row: winner === 'A' ? { id: BigInt(id), name: A.name, tag: null } : { id: BigInt(id), name: B.name, tag: 'b' },
        statuses: winner === 'A' ? [200, 400, 200] : [400, 200, 400],
      });
    }
    const retries = await Promise.all(
      raced.flatMap(({ id }) => {
        const { A, B } = contents(id);
        const [won, lost] = rows.get(id)?.name === A.name ? [A, B] : [B, A];
        return [post(a, won), post(b, won), post(a, lost), post(b, lost)];
      }),
    );
    expect(retries).toEqual(raced.flatMap(() => [200, 200, 400, 400]));
    expect(rows.size).toBe(ids.length);
  });

  it('when a plant is created on one replica, then the other answers its retry 200 and the neighbouring id is still free', async () => {
    const [a, b] = await replicas.two();
    const plant = aNewPlant({ id: '9007199254740993' });
    const body = `{"id": 9007199254740993, "name": "${String(plant.name)}"}`;

    const created = await rawRequest((a).url, { headers: json, body });
    const retry = await rawRequest((b).url, { headers: json, body });
    const neighbour = await rawRequest((b).url, { headers: json, body: body.replace('9007199254740993', '9007199254740992') });

    expect([created.status, retry.status, neighbour.status]).toEqual([200, 200, 200]);
    expect(plantRows(replicas.url, 'id IN (9007199254740992, 9007199254740993)').map((row) => row.id)).toEqual([9007199254740992n, 9007199254740993n]);
  });

  it('when both replicas send webhooks, then each plant created on either is delivered once, signed, from the shared outbox', async () => {
    const hooks: Receiver = await startReceiver();
    const [a, b] = await replicas.two({ WEBHOOK_URLS: hooks.url, WEBHOOK_SECRET });
    const plants = Array.from({ length: 40 }, () => aNewPlant());
    const raced = aNewPlant();

    try {
      const statuses = await Promise.all([...plants.map((plant, i) => post(i % 2 === 0 ? a : b, plant)), post(a, raced), post(b, raced)]);
      await hooks.waitFor((all) => all.length >= plants.length + 1, 10_000);
      await sleep(1000);

      expect(statuses).toEqual(Array(plants.length + 2).fill(200));
      expect(hooks.deliveries.map((delivery) => delivery.body).sort()).toEqual([...plants, raced].map((plant) => JSON.stringify(plant)).sort());
      expect(hooks.deliveries.every((delivery) => delivery.verified === true)).toBe(true);
      expect(new Set(hooks.deliveries.map((delivery) => delivery.id)).size).toBe(plants.length + 1);
      expect(queryJson<string[]>(replicas.url, 'SELECT json_agg(DISTINCT status) FROM webhook_outbox')).toEqual(['delivered']);
    } finally {
      await hooks.close();
    }
  });
});
