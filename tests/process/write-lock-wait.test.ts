import path from 'node:path';
import Database from 'better-sqlite3';
import { sleep } from '../helpers/fixtures';
import { aNewPlant } from '../helpers/plants';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process';
import { JSON_HEADERS } from '../helpers/workers';

// Issue 36, item 3 (docs/decisions/workers.md, "Writes and the event loop"): a write waiting for SQLite's write
// lock waits on timers, never inside the driver, so the process keeps answering everything else meanwhile.
describe('a SQLite write lock held by another process', () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('when creates wait 2 s for the lock, then /healthz and reads answer at once meanwhile, and every create is stored once it is released', async () => {
    const file = path.join(tempDataDir(), 'plants.db');
    server = await startServer({ DATABASE_URL: `file:${file}`, DATABASE_BUSY_TIMEOUT_MS: '5000' });
    const url = server.url;
    const stored = aNewPlant();
    expect((await fetch(`${url}/plants`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(stored) })).status).toBe(200);
    const locker = new Database(file);
    locker.exec('BEGIN IMMEDIATE');

    const plants = Array.from({ length: 20 }, () => aNewPlant());
    const creates = plants.map((plant) => fetch(`${url}/plants`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(plant) }));
    const waits: number[] = [];
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      const started = performance.now();
      const [health, read] = await Promise.all([fetch(`${url}/healthz`), fetch(`${url}/plants/${String(stored.id)}`, { headers: JSON_HEADERS })]);
      waits.push(performance.now() - started);
      expect([health.status, read.status]).toEqual([200, 200]);
      await sleep(50);
    }
    locker.exec('ROLLBACK');
    locker.close();
    const answers = await Promise.all(creates);
    const check = new Database(file, { readonly: true });
    const rows = (check.prepare('SELECT count(*) AS n FROM plants').get() as { n: number }).n;
    check.close();

    // Generous for a loaded CI machine: a loop stopped inside the driver would make these wait the whole 2 s.
    expect(waits.length).toBeGreaterThan(10);
    expect(Math.max(...waits)).toBeLessThan(500);
    expect(answers.map((answer) => answer.status)).toEqual(plants.map(() => 200));
    expect(rows).toBe(plants.length + 1);
  }, 30_000);
});
