import path from 'node:path';
import { aNewPlant } from '../helpers/plants';
import { startServer, tempDataDir } from '../helpers/server-process';
import { sendUntilKilled } from '../helpers/kill-midway';
import { TOKEN } from '../helpers/test-app';
import { requestsUntilKilled } from '../helpers/raw-request';

// Issue 34: a keyed write's answer is committed with the write, so a kill -9 at any point leaves every write either
// not applied (its retry is processed) or applied with its answer (its retry replays it): a DELETE retried never 404s.
const requests = requestsUntilKilled(TOKEN);

type Answer = { status: number; replayed: boolean };

async function send(url: string, method: string, pathname: string, key?: string, body?: string): Promise<Answer> {
  const { status, headers } = await requests.send(url, method, pathname, { body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });
  return { status, replayed: headers['idempotent-replayed'] === 'true' };
}

afterAll(() => requests.close());

describe('Idempotency-Key survives kill -9', () => {
  it('when the process is killed while keyed deletes are in flight, then every delete retried with its key after a restart answers 204', async () => {
    const database = `file:${path.join(tempDataDir(), 'plants.db')}`;
    const first = await startServer({ DATABASE_URL: database });
    const plants = Array.from({ length: 300 }, () => aNewPlant());
    for (let i = 0; i < plants.length; i += 50) {
      await Promise.all(plants.slice(i, i + 50).map((plant) => send(first.url, 'POST', '/plants', undefined, JSON.stringify(plant))));
    }
    const keyOf = (id: number) => `delete-${id}`;
    const queue = plants.map(({ id }) => id as number);
    // SIGKILL the moment the hundredth 204 is in: deletes around it are committed, unanswered or not yet applied.
    const { sent, counted: answered } = await sendUntilKilled(first, {
      next: () => {
        const id = queue.shift();
        return id === undefined ? undefined : { item: id, send: async () => (await send(first.url, 'DELETE', `/plants/${id}`, keyOf(id))).status === 204 };
      },
      inFlight: 25,
      killAfter: 100,
    });
    await first.exited;
    const second = await startServer({ DATABASE_URL: database });
    const retries = await Promise.all(sent.map((id) => send(second.url, 'DELETE', `/plants/${id}`, keyOf(id))));
    await second.stop();

    expect(answered).toBeGreaterThanOrEqual(100);
    expect(retries.filter(({ status }) => status !== 204)).toEqual([]);
    // The answered ones at least were committed with their answers: replayed, not processed again.
    expect(retries.filter(({ replayed }) => replayed).length).toBeGreaterThanOrEqual(answered);
  });
});
