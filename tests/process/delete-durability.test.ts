import path from 'node:path';
import { aNewPlant } from '../helpers/plants';
import { startServer, tempDataDir } from '../helpers/server-process';
import { sendUntilKilled } from '../helpers/kill-midway';
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
    const queue = plants.map(({ id }) => id as number);
    const deleted: number[] = [];
    // SIGKILL the moment the hundredth 204 is in: deletes around it are still in flight.
    await sendUntilKilled(first, {
      next: () => {
        const id = queue.shift();
        if (id === undefined) return undefined;
        return {
          item: id,
          send: async () => {
            const deletedNow = (await send(first.url, 'DELETE', `/plants/${id}`)) === 204;
            if (deletedNow) deleted.push(id);
            return deletedNow;
          },
        };
      },
      inFlight: 25,
      killAfter: 100,
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
