import path from 'node:path';
import { aNewPlant } from '../helpers/plants';
import { startServer, tempDataDir } from '../helpers/server-process';
import { TOKEN } from '../helpers/test-app';
import { requestsUntilKilled } from '../helpers/raw-request';

const requests = requestsUntilKilled(TOKEN);

const send = async (url: string, method: string, pathname: string, body?: string): Promise<number> => (await requests.send(url, method, pathname, { body })).status;

afterAll(() => requests.close());

describe('deletes survive kill -9', () => {
  it('when the process is killed right after deletes were answered 204, then those plants stay deleted after a restart', async () => {
    const database = `file:${path.join(tempDataDir(), 'plants.db')}`;
    const first = await startServer({ DATABASE_URL: database });
    const plants = Array.from({ length: 400 }, () => aNewPlant());
    for (let i = 0; i < plants.length; i += 50) {
      await Promise.all(plants.slice(i, i + 50).map((plant) => send(first.url, 'POST', '/plants', JSON.stringify(plant))));
    }
    const deleted: number[] = [];
    let killed = false;

    await new Promise<void>((resolve) => {
      let next = 0;
      let running = 0;
      const launch = () => {
        while (!killed && running < 25 && next < plants.length) {
          const id = (plants[next++] as { id: number }).id;
          running += 1;
          void send(first.url, 'DELETE', `/plants/${id}`).then((status) => {
            running -= 1;
            if (status === 204) deleted.push(id);
            // SIGKILL the moment the hundredth 204 is in: deletes around it are still in flight.
            if (!killed && deleted.length >= 100) {
              killed = true;
              first.child.kill('SIGKILL');
            }
            if (running === 0 && (killed || next >= plants.length)) resolve();
            else launch();
          });
        }
      };
      launch();
    });
    await first.exited;
    const second = await startServer({ DATABASE_URL: database });
    const statuses = await Promise.all(deleted.map((id) => send(second.url, 'GET', `/plants/${id}`)));
    const survivor = await send(second.url, 'GET', `/plants/${(plants[plants.length - 1] as { id: number }).id}`);
    await second.stop();

    expect(deleted.length).toBeGreaterThanOrEqual(100);
    expect(statuses.filter((status) => status !== 404)).toEqual([]);
    expect(survivor).toBe(200);
  });
});
