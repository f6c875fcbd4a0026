import { createClient, newPlantId } from '../../clients/typescript/src/index';
import { count, follow, plantEvents } from '../helpers/client-changes';
import { appForAll, identityProviderForAll, sleep } from '../helpers/fixtures';

const now = () => Math.floor(Date.now() / 1000);

describe('the TypeScript client\'s changes() when the service ends a stream for its token', () => {
  const idp = identityProviderForAll();
  const app = appForAll(() => ({ ...idp.env(), AUTH_CLOCK_TOLERANCE_S: '0' }));

  it('when each token lives two seconds and the token function mints a fresh one, then the stream ended at exp resumes with the new token and misses nothing', async () => {
    const client = createClient({
      baseUrl: app.url,
      token: () => idp.mint({ exp: now() + 2 }),
    });
    const controller = new AbortController();
    const feed = follow(client, { signal: controller.signal });
    await feed.until((seen) => count('open')(seen) === 1);
    const before = newPlantId();
    await client.createPlant({ id: before, name: 'Before expiry' });
    await feed.until((seen) => plantEvents(seen).length === 1);

    await feed.until((seen) => count('open')(seen) === 2, 5000);
    await sleep(100);
    const after = newPlantId();
    await client.createPlant({ id: after, name: 'After expiry' });
    await feed.until((seen) => plantEvents(seen).length === 2);
    controller.abort();
    await feed.done;

    expect(feed.state.failed).toBeUndefined();
    expect(plantEvents(feed.events).map((event) => (event.type === 'plant.created' ? event.plant.id : event.type))).toEqual([before, after]);
    expect(count('reset')(feed.events)).toBe(0);
  });
});
