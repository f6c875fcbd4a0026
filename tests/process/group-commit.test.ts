import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { aNewPlant } from '../helpers/plants';
import { startServer, tempDataDir } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { sleep } from '../helpers/common';

const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });

function create(url: string, plant: Record<string, unknown>): Promise<number> {
  return new Promise((resolve) => {
    const request = http.request(
      `${url}/plants`,
      { method: 'POST', agent, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', () => resolve(0));
    request.end(JSON.stringify(plant));
  });
}

afterAll(() => agent.destroy());

describe('group commit in the server process', () => {
  it('when 100 clients create 1,000 plants, then they share far fewer commits and every one is stored', async () => {
    const dir = tempDataDir();
    const server = await startServer({ LOG_LEVEL: 'debug', DATABASE_URL: `file:${path.join(dir, 'plants.db')}` });
    const plants = Array.from({ length: 1000 }, () => aNewPlant());
    let next = 0;
    const statuses: number[] = [];

    await Promise.all(
      Array.from({ length: 100 }, async () => {
        while (next < plants.length) {
          const plant = plants[next++] as Record<string, unknown>;
          statuses.push(await create(server.url, plant));
        }
      }),
    );
    await server.stop();

    const commits = server.lines.filter((line) => line.msg === 'group commit').map((line) => Number(line.rows));
    const db = new Database(path.join(dir, 'plants.db'), { readonly: true });
    const count = (db.prepare('SELECT count(*) AS n FROM plants').get() as { n: number }).n;
    db.close();
    expect(statuses.filter((status) => status === 200)).toHaveLength(1000);
    expect(commits.reduce((sum, rows) => sum + rows, 0)).toBe(1000);
    expect(commits.length).toBeLessThan(250);
    expect(count).toBe(1000);
  });

  it('when the process is killed mid-load, then every plant answered 200 is on disk', async () => {
    const dir = tempDataDir();
    const server = await startServer({ DATABASE_URL: `file:${path.join(dir, 'plants.db')}` });
    const answered: number[] = [];
    let stop = false;

    const clients = Array.from({ length: 50 }, async () => {
      while (!stop) {
        const plant = aNewPlant();
        if ((await create(server.url, plant)) === 200) answered.push(plant.id as number);
      }
    });
    await sleep(700);
    server.child.kill('SIGKILL');
    await server.exited;
    stop = true;
    await Promise.all(clients);

    const db = new Database(path.join(dir, 'plants.db'), { readonly: true });
    const stored = new Set((db.prepare('SELECT id FROM plants').pluck().all() as number[]).map(Number));
    db.close();
    expect(answered.length).toBeGreaterThan(100);
    expect(answered.filter((id) => !stored.has(id))).toEqual([]);
  });
});
