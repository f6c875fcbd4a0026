import { plantsText } from '../helpers/plants';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describeWith } from '../helpers/optional-services';
import { createTestDatabase } from '../helpers/postgres';
import { startServer, tempDataDir } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';

// The service does not back PostgreSQL up itself; docs/backups.md gives the database's own commands. This runs them.
describeWith('postgres', 'PostgreSQL backups with pg_dump and pg_restore', (server) => {
  it('when a served database is dumped and restored into a fresh one, then a service on the fresh one serves the same plants', async () => {
    const original = await createTestDatabase(server);
    const restored = await createTestDatabase(server);
    const dump = path.join(tempDataDir(), 'plants.dump');
    let served: string | undefined;
    try {
      const first = await startServer({ DATABASE_URL: original.url });
      try {
        for (const plant of [{ id: '9223372036854775807', name: 'highest' }, { id: '1', name: 'Aloe', tag: 'succulent' }]) {
          const body = `{"id":${plant.id},"name":"${plant.name}"${plant.tag === undefined ? '' : `,"tag":"${plant.tag}"`}}`;
          const res = await fetch(`${first.url}/plants`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body });
          expect(res.status).toBe(200);
        }
        served = await (await fetch(`${first.url}/plants`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
      } finally {
        await first.stop();
      }

      execFileSync('pg_dump', ['--format=custom', '--no-owner', `--file=${dump}`, original.url]);
      execFileSync('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored.url}`, dump]);

      const second = await startServer({ DATABASE_URL: restored.url });
      try {
        const res = await fetch(`${second.url}/plants`, { headers: { Authorization: `Bearer ${TOKEN}` } });
        const ready = await fetch(`${second.url}/readyz`);

        // The same bytes, times included, as the original served before the dump.
        expect({ status: res.status, body: await res.text(), ready: ready.status }).toEqual({ status: 200, body: served, ready: 200 });
        expect(served).toEqual(plantsText(['{"id":1,"name":"Aloe","tag":"succulent"}', '{"id":9223372036854775807,"name":"highest"}']));
      } finally {
        await second.stop();
      }
    } finally {
      await original.drop();
      await restored.drop();
    }
  }, 60_000);
});
