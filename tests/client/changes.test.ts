import { withTimes } from '../helpers/plants';
import { createClient, newPlantId, PlantStoreError } from '../../clients/typescript/src/index';
import { count, follow, plantEvents, positionOf } from '../helpers/client-changes';
import { appForAll, sleep } from '../helpers/fixtures';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { TOKEN } from '../helpers/test-app';

const BIG = 9007199254740993n;

describe('the TypeScript client reading the change feed (changes())', () => {
  const app = appForAll();
  const direct = () => createClient({ baseUrl: app.url, token: TOKEN });

  it('when a plant past 2^53 is created, edited and deleted, then changes() yields each change in order with the exact id, its position and the ETag', async () => {
    const abort = new AbortController();
    const reader = follow(direct(), { signal: abort.signal });
    await reader.until((seen) => count('open')(seen) === 1);
    const writer = direct();

    const created = await writer.createPlant({ id: BIG, name: 'Fern', tag: 'shade' });
    const updated = await writer.updatePlant(BIG, { name: 'Fern renamed', tag: null });
    await writer.deletePlant(BIG);
    await reader.until((seen) => plantEvents(seen).length === 3);
    abort.abort();
    await reader.done;

    const [, first, second, third] = reader.events;
    expect(reader.events).toEqual([
      { type: 'open' },
      { type: 'plant.created', position: positionOf(first), plant: withTimes({ id: 9007199254740993n, name: 'Fern', tag: 'shade' }) },
      { type: 'plant.updated', position: positionOf(second), plant: withTimes({ id: 9007199254740993n, name: 'Fern renamed' }) },
      { type: 'plant.deleted', position: positionOf(third), id: 9007199254740993n },
    ]);
    expect(positionOf(first) < positionOf(second) && positionOf(second) < positionOf(third)).toBe(true);
    expect(first?.type === 'plant.created' && first.plant.etag).toBe(created.etag);
    expect(second?.type === 'plant.updated' && second.plant.etag).toBe(updated.etag);
    expect(reader.state).toEqual({ ended: true });
  });

  it('when a tag is given, then only changes of plants with that tag come', async () => {
    const abort = new AbortController();
    const tag = `feed-${newPlantId()}`;
    const reader = follow(direct(), { tag, signal: abort.signal });
    await reader.until((seen) => count('open')(seen) === 1);
    const [other, mine] = [BIG + 10n, BIG + 11n];

    await direct().createPlant({ id: other, name: 'Other', tag: `${tag}-not` });
    await direct().createPlant({ id: mine, name: 'Mine', tag });
    await reader.until((seen) => plantEvents(seen).length === 1);
    await sleep(200);
    abort.abort();
    await reader.done;

    expect(plantEvents(reader.events)).toEqual([{ type: 'plant.created', position: positionOf(reader.events[1]), plant: withTimes({ id: mine, name: 'Mine', tag }) }]);
  });

  it('when started after a position, then it yields exactly the changes after it', async () => {
    const writer = direct();
    const ids = [BIG + 20n, BIG + 21n, BIG + 22n];
    const abort = new AbortController();
    const first = follow(direct(), { signal: abort.signal });
    await first.until((seen) => count('open')(seen) === 1);
    for (const id of ids) await writer.createPlant({ id, name: 'Resumed' });
    await first.until((seen) => plantEvents(seen).length === 3);
    abort.abort();
    await first.done;
    const resumeAt = positionOf(first.events[1]);

    const again = new AbortController();
    const resumed = follow(direct(), { after: resumeAt, signal: again.signal });
    await resumed.until((seen) => plantEvents(seen).length === 2);
    await sleep(200);
    again.abort();
    await resumed.done;

    expect(resumed.events).toEqual([{ type: 'open' }, first.events[2], first.events[3]]);
  });

  it('when started after a position the service never wrote, then it yields the service\'s reset and then live changes', async () => {
    const abort = new AbortController();
    const reader = follow(direct(), { after: 2n ** 62n, signal: abort.signal });
    await reader.until((seen) => count('reset')(seen) === 1);
    await direct().createPlant({ id: BIG + 30n, name: 'After the reset' });
    await reader.until((seen) => plantEvents(seen).length === 1);
    abort.abort();
    await reader.done;

    const [, reset, created] = reader.events;
    expect(reader.events).toEqual([
      { type: 'open' },
      { type: 'reset', reason: 'unknown_position', position: positionOf(reset) },
      { type: 'plant.created', position: positionOf(created), plant: withTimes({ id: BIG + 30n, name: 'After the reset' }) },
    ]);
    expect(positionOf(created)).toBe(positionOf(reset) + 1n);
  });

  it('when the token is refused, then it throws the 401 and does not reconnect', async () => {
    const calls: string[] = [];
    const client = createClient({ baseUrl: app.url, token: 'not-a-token-0123456789abcdefghijklmnopq', fetch: (input, init) => (calls.push(input as string), fetch(input, init)) });

    const reader = follow(client, {});
    await reader.done;

    expect(reader.state.failed).toBeInstanceOf(PlantStoreError);
    expect({ status: (reader.state.failed as PlantStoreError).status, code: (reader.state.failed as PlantStoreError).code, calls }).toEqual({
      status: 401,
      code: 40102,
      calls: [`${app.url}/plants/events`],
    });
  });

  describe('through a connection that is cut', () => {
    let proxy: TcpProxy;

    beforeEach(async () => {
      proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(app.url).port) });
    });

    afterEach(async () => {
      await proxy.close();
    });

    const throughProxy = (fetchImpl?: typeof fetch) =>
      createClient({ baseUrl: `http://127.0.0.1:${proxy.port}`, token: TOKEN, retry: { maxDelayMs: 200 }, ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }) });

    it('when the connection drops and comes back, then it resumes with Last-Event-ID: every change made meanwhile comes once, in order', async () => {
      const writer = direct();
      const ids = [BIG + 40n, BIG + 41n, BIG + 42n, BIG + 43n];
      const abort = new AbortController();
      const reader = follow(throughProxy(), { signal: abort.signal });
      await reader.until((seen) => count('open')(seen) === 1);
      await writer.createPlant({ id: ids[0] as bigint, name: 'Before the cut' });
      await reader.until((seen) => plantEvents(seen).length === 1);

      await proxy.cut();
      await writer.createPlant({ id: ids[1] as bigint, name: 'During the cut' });
      await writer.updatePlant(ids[0] as bigint, { name: 'Edited during the cut' });
      await writer.createPlant({ id: ids[2] as bigint, name: 'During the cut' });
      await sleep(500);
      await proxy.restore();
      await reader.until((seen) => count('open')(seen) === 2);
      await writer.createPlant({ id: ids[3] as bigint, name: 'After the cut' });
      await reader.until((seen) => plantEvents(seen).length === 5);
      await sleep(200);
      abort.abort();
      await reader.done;

      const summary = reader.events.map((event) => (event.type === 'open' ? 'open' : event.type === 'plant.deleted' || event.type === 'reset' ? event.type : `${event.type} ${event.plant.id} ${event.plant.name}`));
      expect(summary).toEqual([
        'open',
        `plant.created ${ids[0]} Before the cut`,
        'open',
        `plant.created ${ids[1]} During the cut`,
        `plant.updated ${ids[0]} Edited during the cut`,
        `plant.created ${ids[2]} During the cut`,
        `plant.created ${ids[3]} After the cut`,
      ]);
      const positions = plantEvents(reader.events).map(positionOf);
      expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));
      expect(new Set(positions).size).toBe(5);
    });

    it('when the connection drops before any change, then it resumes from the position its stream started at: no reset, and the change made meanwhile comes once', async () => {
      const abort = new AbortController();
      const reader = follow(throughProxy(), { signal: abort.signal });
      await reader.until((seen) => count('open')(seen) === 1);

      await proxy.cut();
      await direct().createPlant({ id: BIG + 45n, name: 'While no position was known' });
      await sleep(300);
      await proxy.restore();
      await reader.until((seen) => plantEvents(seen).length === 1);
      await sleep(200);
      abort.abort();
      await reader.done;

      expect(reader.events).toEqual([
        { type: 'open' },
        { type: 'open' },
        { type: 'plant.created', position: positionOf(reader.events[2]), plant: withTimes({ id: BIG + 45n, name: 'While no position was known' }) },
      ]);
    });

    it('when the connection goes silent (no heartbeat within idleTimeoutMs), then it reconnects by itself and loses nothing', async () => {
      const opened: number[] = [];
      const counting: typeof fetch = (input, init) => {
        opened.push(Date.now());
        return fetch(input, init);
      };
      const abort = new AbortController();
      const reader = follow(throughProxy(counting), { signal: abort.signal, idleTimeoutMs: 300 });
      await reader.until((seen) => count('open')(seen) === 1);
      await direct().createPlant({ id: BIG + 50n, name: 'Before the silence' });
      await reader.until((seen) => plantEvents(seen).length === 1);

      proxy.stall();
      await direct().createPlant({ id: BIG + 51n, name: 'During the silence' });
      await sleep(1000);
      const triesWhileSilent = opened.length - 1;
      await proxy.restore();
      await reader.until((seen) => plantEvents(seen).length === 2);
      abort.abort();
      await reader.done;

      expect(triesWhileSilent).toBeGreaterThanOrEqual(1);
      expect(plantEvents(reader.events).map((event) => event.type === 'plant.created' && event.plant.name)).toEqual(['Before the silence', 'During the silence']);
    });

    it('when the signal aborts while it waits to reconnect, then the iteration ends at once', async () => {
      const abort = new AbortController();
      const reader = follow(throughProxy(), { signal: abort.signal });
      await reader.until((seen) => count('open')(seen) === 1);
      await proxy.cut();
      await sleep(100);

      const before = Date.now();
      abort.abort();
      await reader.done;

      expect(Date.now() - before).toBeLessThan(100);
      expect(reader.state).toEqual({ ended: true });
    });
  });

  it('when the signal aborts while the stream is open, then the iteration ends without an error', async () => {
    const abort = new AbortController();
    const reader = follow(direct(), { signal: abort.signal });
    await reader.until((seen) => count('open')(seen) === 1);

    abort.abort();
    await reader.done;
    await direct().createPlant({ id: BIG + 60n, name: 'Nobody listens' });
    await sleep(200);

    expect(reader.state).toEqual({ ended: true });
    expect(reader.events).toEqual([{ type: 'open' }]);
  });

  it('when the loop breaks, then the stream closes and the generator is done', async () => {
    const changes = direct().changes();

    const first = await changes.next();
    const after = await changes.return(undefined);

    expect({ first, after }).toEqual({ first: { done: false, value: { type: 'open' } }, after: { done: true, value: undefined } });
  });
});
