import { aNewPlant } from '../helpers/plants';
import { busy, pause, sustainedOverload } from '../helpers/event-loop';
import { postPlant } from '../helpers/test-app';
import { appForAll } from '../helpers/fixtures';

// Well above the stalls a busy CI machine causes by itself, well below the stall the tests make.
const app = appForAll({ LOAD_SHED_LAG_MS: '300' });

describe('load shedding', () => {
  it('when the event loop stays later than LOAD_SHED_LAG_MS, then a create gets 503 with Retry-After and nothing is stored', async () => {
    const plant = aNewPlant();
    const overload = sustainedOverload(400);
    await pause(2000);

    const response = await postPlant(app, plant);
    overload.stop();

    expect({ status: response.status, retryAfter: response.headers['retry-after'], body: response.body }).toEqual({
      status: 503,
      retryAfter: '1',
      body: { error: 50303, message: 'The service is over capacity; retry after the number of seconds in Retry-After.' },
    });
    await pause(200);
    expect((await postPlant(app, { ...plant, name: 'proves the first was not stored' })).status).toBe(200);
  });

  it('when the event loop stays late, then health checks still answer', async () => {
    const overload = sustainedOverload(400);
    await pause(2000);

    const health = await app.request.get('/healthz');
    overload.stop();

    expect(health.status).toBe(200);
  });

  it('when one freeze of 600 ms is over, then a request 20 ms later is admitted', async () => {
    await pause(100);
    busy(600);
    await pause(20);

    const response = await postPlant(app, aNewPlant());

    expect(response.status).toBe(200);
  });

  it('when the sustained overload ends, then creates are admitted as soon as the loop is on time', async () => {
    const overload = sustainedOverload(400);
    await pause(2000);
    overload.stop();
    await pause(100);

    const response = await postPlant(app, aNewPlant());

    expect(response.status).toBe(200);
  });
});
